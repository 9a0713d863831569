#include "topology/presets.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/error.h"
#include "common/suggest.h"
#include "topology/host_toml.h"
#include "topology/presets_data.h"

namespace ipilab::topology {

std::string_view preset_text(std::string_view name) {
  for (const auto& p : detail::kPresetFiles)
    if (p.name == name) return p.text;
  return {};
}

std::vector<PresetInfo> list_presets() {
  std::vector<PresetInfo> out;
  for (const auto& p : detail::kPresetFiles) {
    const Host h = load_host_text(p.text, fmt::format("profiles/hosts/{}.toml", p.name));
    out.push_back({std::string(p.name), h.description});
  }
  std::sort(out.begin(), out.end(), [](const PresetInfo& a, const PresetInfo& b) { return a.name < b.name; });
  return out;
}

Host load_preset(std::string_view name) {
  const std::string_view text = preset_text(name);
  if (text.empty()) {
    std::vector<std::string> names;
    for (const auto& p : detail::kPresetFiles) names.emplace_back(p.name);
    std::sort(names.begin(), names.end());
    throw InputError(fmt::format("preset '{}'", name),
                     fmt::format("no such host preset{} (known: {})", did_you_mean(name, names), fmt::join(names, ", ")));
  }
  return load_host_text(text, fmt::format("profiles/hosts/{}.toml", name));
}

}  // namespace ipilab::topology
