// ipilab/common/file.h — reading inputs with clear errors, and
// finding the data shipped with ipilab (profiles/, scenarios/, data/).
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "common/output.h"

namespace ipilab {

/// Reads a whole file. Throws InputError(path, reason) if it is missing, unreadable or a directory.
std::string read_text_file(const std::filesystem::path& path);

// Writing outputs (write_file_atomically and the rest): common/output.h.

/// The folder holding ipilab's shipped data (profiles/, scenarios/, data/): <exe>/../share/ipilab
/// when installed, else $IPILAB_DATA (or $IPILAB_DATA_DIR), else the source tree the binary was
/// built from. The order and the record of where it looked: common/data_lookup.h.
std::filesystem::path data_dir();

}  // namespace ipilab
