// ipilab/topology/presets.h — named hosts shipped with ipilab.
//
// The presets are the files profiles/hosts/<name>.toml (same TOML form as host_toml.h), compiled
// into the library at configure time (src/topology/CMakeLists.txt), so the binary needs no data
// folder to use them. Adding a preset = adding one file there and re-running cmake.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "topology/host.h"

namespace ipilab::topology {

struct PresetInfo {
  std::string name;
  std::string description;
};

/// Every preset, sorted by name, with the description from its [host] table.
std::vector<PresetInfo> list_presets();
/// The TOML text of a preset, or empty if there is none by that name.
std::string_view preset_text(std::string_view name);
/// Loads a preset. Unknown name -> InputError(place "preset '<name>'", reason listing the names).
Host load_preset(std::string_view name);

}  // namespace ipilab::topology
