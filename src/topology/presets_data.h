// ipilab/topology/presets_data.h — (internal) the preset files compiled in; generated definition in
// the build folder (host_presets_data.cpp, written by src/topology/CMakeLists.txt).
#pragma once

#include <span>
#include <string_view>

namespace ipilab::topology::detail {

struct PresetFile {
  std::string_view name;  ///< file stem
  std::string_view text;  ///< whole TOML text
};

extern const std::span<const PresetFile> kPresetFiles;

}  // namespace ipilab::topology::detail
