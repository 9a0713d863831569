// ipilab/scenario/catalog.h — the built-in scenarios: <data_dir>/scenarios/<name>.toml, and the
// default set <data_dir>/scenarios/default.list (one name per line, '#' comments) that a bare
// `ipilab run` runs.
#pragma once

#include <string>
#include <vector>

namespace ipilab::scenario {

struct BuiltinInfo {
  std::string name;         ///< file name without .toml
  std::string title;        ///< from [scenario] (empty if the file does not parse)
  std::string description;  ///< from [scenario]
  std::string workload;
  std::string reproduces;
  std::string file;         ///< full path
  std::string error;        ///< the parse error when the file is invalid (it is still listed)
  bool in_default = false;  ///< listed in default.list
};

/// Every <data_dir>/scenarios/*.toml, sorted by name, each parsed (not prepared) for its header.
std::vector<BuiltinInfo> list_builtin();

/// The file for a SCENARIO argument: an existing file path as is; else a built-in name (no '/' and
/// no ".toml") -> <data_dir>/scenarios/<name>.toml. Neither -> InputError(arg, reason listing the
/// built-in names).
std::string resolve_scenario(const std::string& arg);

/// The names in default.list, in order. Missing or empty list -> InputError naming the file.
std::vector<std::string> default_scenarios();

}  // namespace ipilab::scenario
