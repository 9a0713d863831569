// ipilab list — what ipilab ships: host presets, cost keys, scenarios.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <toml++/toml.h>

#include "cli/commands.h"
#include "common/error.h"
#include "common/file.h"
#include "cost/catalog.h"
#include "topology/presets.h"

namespace ipilab::cli {

namespace {

constexpr const char* kListHelp = R"(Lists what ipilab ships. With no flag, every section.
  --presets    host presets (use with 'ipilab topo --preset NAME' or host = "NAME" in a scenario)
  --costs      the cost-key catalog: every primitive operation a cost profile may price, its unit
               kind (durations: cycles, ns, ps or us), what it is, and which workloads need it
  --scenarios  built-in scenarios (scenarios/*.toml in the data folder)
  --json       the same as JSON

Examples:
  ipilab list --costs
  ipilab list --presets --json)";

struct ScenarioInfo {
  std::string name, description;
};

// HOOK(scenario layer): built-in scenarios are the files <data_dir>/scenarios/*.toml; this reads
// only their optional [scenario] description (or first comment line) and does not validate them.
// When src/scenario/ provides a catalog function, call it here instead.
std::vector<ScenarioInfo> list_scenarios() {
  std::vector<ScenarioInfo> out;
  const std::filesystem::path dir = data_dir() / "scenarios";
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) return out;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    if (e.path().extension() != ".toml") continue;
    ScenarioInfo s{e.path().stem().string(), ""};
    try {
      const std::string text = read_text_file(e.path());
      try {
        const toml::table doc = toml::parse(text, e.path().string());
        if (auto d = doc["scenario"]["description"].value<std::string>()) s.description = *d;
      } catch (const toml::parse_error&) {
        s.description = "(not valid TOML)";
      }
      if (s.description.empty() && text.rfind("# ", 0) == 0) s.description = text.substr(2, text.find('\n') - 2);
    } catch (const InputError&) {
      s.description = "(unreadable)";
    }
    out.push_back(std::move(s));
  }
  std::sort(out.begin(), out.end(), [](const ScenarioInfo& a, const ScenarioInfo& b) { return a.name < b.name; });
  return out;
}

std::string_view kind_name(cost::UnitKind k) {
  switch (k) {
    case cost::UnitKind::Duration: return "duration";
  }
  return "?";
}

}  // namespace

void add_list_command(CLI::App& root) {
  auto* cmd = root.add_subcommand("list", "List host presets, cost keys and built-in scenarios");
  cmd->footer(kListHelp);
  struct Opts {
    bool presets = false, costs = false, scenarios = false, json = false;
  };
  auto opts = std::make_shared<Opts>();
  cmd->add_flag("--presets", opts->presets, "Host presets");
  cmd->add_flag("--costs", opts->costs, "Cost-key catalog (name, unit kind, description, used by)");
  cmd->add_flag("--scenarios", opts->scenarios, "Built-in scenarios");
  cmd->add_flag("--json", opts->json, "Print JSON");
  cmd->callback([opts] {
    const bool all = !opts->presets && !opts->costs && !opts->scenarios;
    nlohmann::json j = nlohmann::json::object();
    std::string text;
    if (all || opts->presets) {
      auto& arr = j["presets"] = nlohmann::json::array();
      text += "Host presets (ipilab topo --preset NAME):\n";
      for (const auto& p : topology::list_presets()) {
        arr.push_back({{"name", p.name}, {"description", p.description}});
        text += fmt::format("  {:<22} {}\n", p.name, p.description);
      }
    }
    if (all || opts->costs) {
      auto& arr = j["costs"] = nlohmann::json::array();
      if (!text.empty()) text += "\n";
      text += "Cost keys (set them in a profile as [cost.<key>] value, unit, spread, source):\n";
      for (const auto& k : cost::catalog()) {
        arr.push_back({{"name", k.name}, {"kind", kind_name(k.kind)}, {"units", cost::units_of(k.kind)},
                       {"description", k.description}, {"used_by", k.used_by}});
        text += fmt::format("  {:<28} {:<8} {}\n  {:<28} {:<8} used by: {}\n", k.name, kind_name(k.kind), k.description, "", "", k.used_by);
      }
    }
    if (all || opts->scenarios) {
      auto& arr = j["scenarios"] = nlohmann::json::array();
      if (!text.empty()) text += "\n";
      text += "Built-in scenarios (ipilab run NAME):\n";
      const auto list = list_scenarios();
      if (list.empty()) text += "  (none yet)\n";
      for (const auto& s : list) {
        arr.push_back({{"name", s.name}, {"description", s.description}});
        text += fmt::format("  {:<22} {}\n", s.name, s.description);
      }
    }
    if (opts->json) std::fputs((j.dump(2) + "\n").c_str(), stdout);
    else std::fputs(text.c_str(), stdout);
  });
}

}  // namespace ipilab::cli
