// ipilab list — what ipilab ships: host presets, cost keys, counters, scenarios, profiles, the data folder.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/list_data.h"
#include "common/error.h"
#include "common/file.h"
#include "cost/catalog.h"
#include "scenario/catalog.h"
#include "sweep/command.h"
#include "topology/presets.h"
#include "workload/counters.h"
#include "workload/mechanism.h"
#include "workload/workload.h"

namespace ipilab::cli {

namespace {

constexpr const char* kListHelp = R"(Lists what ipilab ships. With no flag, every section.
  --presets    host presets (use with 'ipilab topo --preset NAME' or host = "NAME" in a scenario)
  --costs      the cost-key catalog: every primitive operation a cost profile may price, its unit
               kind (durations: cycles, ns, ps or us), what it is, and which workloads need it
  --counters   the counter catalog: every event a run counts (sends, hypercalls, VM exits, ITS
               commands...), its unit, what it is and who counts it; a scenario's expect may name
               them beside the workload's metrics
  --scenarios  built-in scenarios (scenarios/*.toml in the data folder; * = run by a bare 'ipilab run')
  --workloads  the workloads a scenario can run, with their parameters ([workload] keys)
  --mechanisms the IPI delivery mechanisms (workload.mechanism = "NAME"), with their parameters
               (also [workload] keys) and the cost keys each reads
  --profiles   cost profiles shipped in the data folder (profiles/*.toml), with their host and clock
  --sweeps     built-in sweeps (scenarios/sweeps/*.toml: run with 'ipilab sweep NAME')
  --data       the data folder (scenarios, profiles, example traces) and every place looked at for it:
               beside the binary (../share/ipilab), then $IPILAB_DATA, then the source tree
  --data-dir   only the data folder's path, for scripts
  --json       the same as JSON

Examples:
  ipilab list --scenarios
  ipilab list --costs
  ipilab list --counters
  ipilab list --mechanisms
  ipilab list --presets --json
  ipilab trace "$(ipilab list --data-dir)/data/traces/mixed.dat")";

std::string_view kind_name(cost::UnitKind k) {
  switch (k) {
    case cost::UnitKind::Duration: return "duration";
  }
  return "?";
}

using nlohmann::json;

// One function per section: each adds its JSON array under its name and its text block.
void section_break(std::string& text) {
  if (!text.empty()) text += "\n";
}

void presets_section(json& j, std::string& text) {
  auto& arr = j["presets"] = json::array();
  section_break(text);
  text += "Host presets (ipilab topo --preset NAME):\n";
  for (const auto& p : topology::list_presets()) {
    arr.push_back({{"name", p.name}, {"description", p.description}});
    text += fmt::format("  {:<22} {}\n", p.name, p.description);
  }
}

void costs_section(json& j, std::string& text) {
  auto& arr = j["costs"] = json::array();
  section_break(text);
  text += "Cost keys (set them in a profile as [cost.<key>] value, unit, spread, source):\n";
  for (const auto& k : cost::catalog()) {
    arr.push_back({{"name", k.name}, {"kind", kind_name(k.kind)}, {"units", cost::units_of(k.kind)},
                   {"description", k.description}, {"used_by", k.used_by}});
    text += fmt::format("  {:<28} {:<8} {}\n  {:<28} {:<8} used by: {}\n", k.name, kind_name(k.kind), k.description, "", "", k.used_by);
  }
}

void counters_section(json& j, std::string& text) {
  auto& arr = j["counters"] = json::array();
  section_break(text);
  text += "Counters (what a run counts; name them in a scenario's [scenario.expect.<variant>] or a sweep's counter.NAME):\n";
  for (const auto& c : workload::counter_catalog()) {
    json e = {{"name", c.name}, {"unit", c.unit}, {"description", c.description}, {"used_by", c.used_by}};
    if (c.name.starts_with(workload::kPerCallPrefix)) {
      auto calls = json::array();
      for (std::string_view call : workload::per_call_names()) calls.push_back(call);
      e["calls"] = std::move(calls);
    }
    arr.push_back(std::move(e));
    text += fmt::format("  {:<38} {:<16} {}\n  {:<38} {:<16} counted by: {}\n", c.name, c.unit, c.description, "", "", c.used_by);
  }
}

json params_json(const std::vector<workload::ParamInfo>& params) {
  auto out = json::array();
  for (const auto& p : params)
    out.push_back({{"name", p.name}, {"type", p.type}, {"default", p.default_text}, {"description", p.description}});
  return out;
}

void workloads_section(json& j, std::string& text) {
  auto& arr = j["workloads"] = json::array();
  section_break(text);
  text += "Workloads (workload = \"NAME\" in a scenario; parameters go in its [workload] table):\n";
  for (const auto* w : workload::list_workloads()) {
    text += fmt::format("  {:<26} {}\n", w->name, w->description);
    for (const auto& p : w->params) {
      const std::string def = p.default_text.empty() ? "(required)" : p.default_text;
      if (def.size() <= 14) text += fmt::format("      {:<22} {:<9} {:<14} {}\n", p.name, p.type, def, p.description);
      else text += fmt::format("      {:<22} {:<9} {}\n      {:<22} {:<9} {:<14} {}\n", p.name, p.type, def, "", "", "", p.description);
    }
    arr.push_back({{"name", w->name}, {"description", w->description}, {"params", params_json(w->params)}});
  }
}

void mechanisms_section(json& j, std::string& text) {
  auto& arr = j["mechanisms"] = json::array();
  section_break(text);
  text += "Mechanisms (workload.mechanism = \"NAME\"; their parameters go in the [workload] table too):\n";
  for (const auto* m : workload::list_mechanisms()) {
    auto keys = json::array();
    text += fmt::format("  {:<20} {:<6} {}\n", m->name, workload::arch_name(m->arch), m->description);
    for (const auto& p : m->params) text += fmt::format("      {:<22} {:<9} {:<14} {}\n", p.name, p.type, p.default_text, p.description);
    std::string key_list;
    for (const auto& k : m->cost_keys) {
      keys.push_back(k.name);
      key_list += (key_list.empty() ? "" : ", ") + std::string(k.name);
    }
    text += fmt::format("      cost keys: {}\n", key_list);
    arr.push_back({{"name", m->name}, {"arch", workload::arch_name(m->arch)}, {"description", m->description},
                   {"params", params_json(m->params)}, {"cost_keys", std::move(keys)}});
  }
}

void scenarios_section(json& j, std::string& text) {
  auto& arr = j["scenarios"] = json::array();
  section_break(text);
  text += "Built-in scenarios (ipilab run NAME; * = in the default set a bare 'ipilab run' runs):\n";
  const auto list = scenario::list_builtin();
  if (list.empty()) text += "  (none: no data folder with scenarios/; 'ipilab list --data' shows where it looked)\n";
  for (const auto& s : list) {
    arr.push_back({{"name", s.name}, {"title", s.title}, {"description", s.description}, {"workload", s.workload},
                   {"reproduces", s.reproduces}, {"default", s.in_default}, {"error", s.error}});
    text += fmt::format("{} {:<26} {}\n", s.in_default ? "*" : " ", s.name, s.error.empty() ? s.title : "(invalid) " + s.error);
    if (s.error.empty())
      text += fmt::format("  {:<26} workload {}{}{}\n", "", s.workload, s.reproduces.empty() ? "" : "; reproduces: ", s.reproduces);
  }
}

void sweeps_section(json& j, std::string& text) {
  auto& arr = j["sweeps"] = json::array();
  section_break(text);
  text += "Built-in sweeps (ipilab sweep NAME):\n";
  const auto list = sweep::list_builtin_sweeps();
  if (list.empty()) text += "  (none)\n";
  for (const auto& s : list) {
    arr.push_back({{"name", s.name}, {"title", s.title}, {"description", s.description}, {"scenario", s.scenario},
                   {"points", s.points}, {"error", s.error}});
    text += fmt::format("  {:<26} {}\n", s.name, s.error.empty() ? s.title : "(invalid) " + s.error);
    if (s.error.empty()) text += fmt::format("  {:<26} base scenario {}; {} points\n", "", s.scenario, s.points);
  }
}

struct ListOptions {
  bool presets = false, costs = false, counters = false, scenarios = false, workloads = false, mechanisms = false,
       sweeps = false;
  bool json = false;
  bool profiles = false, data = false, data_dir = false;
};

void run_list(const ListOptions& o) {
  if (o.data_dir) {
    std::fputs(data_dir_line().c_str(), stdout);
    return;
  }
  const bool all = !o.presets && !o.costs && !o.counters && !o.scenarios && !o.workloads && !o.mechanisms &&
                   !o.profiles && !o.data && !o.sweeps;
  json j = json::object();
  std::string text;
  if (all || o.data) list_data_section(j, text);
  if (all || o.presets) presets_section(j, text);
  if (all || o.profiles) {
    section_break(text);
    list_profiles_section(j, text);
  }
  if (all || o.costs) costs_section(j, text);
  if (all || o.counters) counters_section(j, text);
  if (all || o.workloads) workloads_section(j, text);
  if (all || o.mechanisms) mechanisms_section(j, text);
  if (all || o.scenarios) scenarios_section(j, text);
  if (all || o.sweeps) sweeps_section(j, text);
  if (o.json) std::fputs((j.dump(2) + "\n").c_str(), stdout);
  else std::fputs(text.c_str(), stdout);
}

}  // namespace

void add_list_command(CLI::App& root) {
  auto* cmd = root.add_subcommand("list", "List built-in scenarios, profiles, host presets, cost keys, counters, workloads and the data folder");
  cmd->footer(kListHelp);
  auto opts = std::make_shared<ListOptions>();
  cmd->add_flag("--presets", opts->presets, "Host presets");
  cmd->add_flag("--costs", opts->costs, "Cost-key catalog (name, unit kind, description, used by)");
  cmd->add_flag("--counters", opts->counters, "Counter catalog (name, unit, description, counted by)");
  cmd->add_flag("--scenarios", opts->scenarios, "Built-in scenarios");
  cmd->add_flag("--workloads", opts->workloads, "Workloads and their parameters");
  cmd->add_flag("--mechanisms", opts->mechanisms, "IPI delivery mechanisms, their parameters and cost keys");
  cmd->add_flag("--profiles", opts->profiles, "Cost profiles");
  cmd->add_flag("--sweeps", opts->sweeps, "Built-in sweeps (ipilab sweep NAME)");
  cmd->add_flag("--data", opts->data, "The data folder and where it looked");
  cmd->add_flag("--data-dir", opts->data_dir, "Print only the data folder's path");
  cmd->add_flag("--json", opts->json, "Print JSON");
  cmd->callback([opts] { run_list(*opts); });
}

}  // namespace ipilab::cli
