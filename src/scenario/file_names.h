// ipilab/scenario/file_names.h — how a scenario or sweep file names itself (the heading of its main
// table) and how outputs name the file (relative to the data folder when it lies there).
#pragma once

#include <filesystem>
#include <string>

#include "topology/toml_read.h"

namespace ipilab::scenario {

/// name (default: the file's stem; never empty), title (default: the name) and description
/// (default: empty) of a [scenario] or [sweep] table.
struct FileHeading {
  std::string name, title, description;
};
FileHeading read_file_heading(toml_read::TableReader& table, const std::string& file);

/// `p` relative to the data folder (common/file.h) when it lies inside it ("scenarios/x.toml"), so
/// outputs do not depend on where ipilab was built or installed; empty otherwise.
std::string path_in_data_dir(const std::filesystem::path& p);

}  // namespace ipilab::scenario
