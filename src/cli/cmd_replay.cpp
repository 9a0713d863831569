// ipilab replay TRACE --scenario S: a recorded IPI stream (ftrace ipi:* / irq_vectors:*) replayed
// through each variant of a scenario, measured send->entry latency next to the modelled one.
#include <algorithm>
#include <cstdio>
#include <map>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "common/error.h"
#include "common/file.h"
#include "scenario/catalog.h"
#include "scenario/runner.h"
#include "scenario/scenario.h"
#include "trace/analysis.h"
#include "sim/histogram.h"
#include "workload/replay.h"

namespace ipilab::cli {
namespace {

struct ReplayArgs {
  std::string trace;
  std::string scenario;
  std::vector<std::string> variants;
  std::string json;
  std::uint64_t max_ipis = 1'000'000;
  std::uint64_t seed = 1;
};

std::uint32_t vector_of(trace::IpiKind k) {
  switch (k) {
    case trace::IpiKind::Reschedule: return 0xFD;
    case trace::IpiKind::CallFunction: return 0xFC;
    case trace::IpiKind::IrqWork: return 0xF6;
    default: return 0xFB;
  }
}

nlohmann::json stats_json(double count, double mean, double p50, double p90, double p99, double max) {
  return {{"count", count}, {"mean", mean}, {"p50", p50}, {"p90", p90}, {"p99", p99}, {"max", max}};
}

void run_replay(const ReplayArgs& a) {
  // 1. The scenario (validated in full before anything runs).
  scenario::RunOverrides ov;
  ov.variants = a.variants;
  ov.seed = a.seed;
  scenario::PreparedScenario ps = scenario::prepare(scenario::load_scenario(scenario::resolve_scenario(a.scenario)), ov,
                                                    workload::find_workload);
  const bool gic = ps.workload == "ipi_hw";
  const int vcpus = ps.variants.front().spec.vm.size();

  // 2. The trace: sends (mapped onto the VM's vCPUs) and measured deliveries.
  std::vector<workload::ReplaySend> sends;
  std::set<std::uint32_t> trace_cpus;
  std::uint64_t dropped_self = 0, total = 0;
  trace::for_each_ipi_send(a.trace, [&](const trace::IpiSend& s) {
    ++total;
    if (sends.size() >= a.max_ipis) return;
    workload::ReplaySend r;
    r.time_ns = s.time_ns;
    r.src = s.src_cpu % static_cast<std::uint32_t>(vcpus);
    trace_cpus.insert(s.src_cpu);
    for (auto t : s.targets) {
      trace_cpus.insert(t);
      const unsigned m = t % static_cast<std::uint32_t>(vcpus);
      if (m == r.src) {
        ++dropped_self;
        continue;
      }
      if (std::find(r.targets.begin(), r.targets.end(), m) == r.targets.end()) r.targets.push_back(m);
    }
    r.vector = vector_of(s.kind);
    r.kind = std::string(trace::kind_name(s.kind));
    if (!r.targets.empty()) sends.push_back(std::move(r));
  });
  std::map<std::string, sim::Histogram> measured;  // ns
  trace::for_each_ipi_delivery(a.trace, [&](const trace::IpiDelivery& d) {
    measured[std::string(trace::kind_name(d.kind))].record(static_cast<std::int64_t>(d.entry_ns - d.send_ns));
  });

  // 3. Each variant.
  struct Row {
    std::string name;
    workload::ReplayResult r;
  };
  std::vector<Row> rows;
  for (auto& v : ps.variants) rows.push_back({v.name, workload::replay(v.spec, sends, gic)});

  std::string mapping;
  for (auto c : trace_cpus) mapping += fmt::format("{}{}->vCPU{}", mapping.empty() ? "" : ", ", c, c % vcpus);
  std::set<std::string> kinds;
  for (const auto& [k, h] : measured) kinds.insert(k);
  for (const auto& row : rows)
    for (const auto& [k, h] : row.r.latency_by_kind) kinds.insert(k);

  nlohmann::json j;
  j["trace"] = a.trace;
  j["scenario"] = ps.name;
  j["ipis_in_trace"] = total;
  j["ipis_replayed"] = sends.size();
  j["self_targets_dropped"] = dropped_self;
  j["cpu_mapping"] = mapping;
  for (const auto& [k, h] : measured)
    j["measured"][k] = stats_json(static_cast<double>(h.count()), h.mean(), h.percentile(50), h.percentile(90),
                                  h.percentile(99), static_cast<double>(h.max()));
  for (const auto& row : rows) {
    nlohmann::json v;
    v["name"] = row.name;
    for (const auto& [k, val] : row.r.settings) v["settings"][k] = val;
    for (const auto& [k, h] : row.r.latency_by_kind)
      v["latency_ns"][k] = stats_json(static_cast<double>(h.count()), h.mean() / 1000, h.percentile(50) / 1000,
                                      h.percentile(90) / 1000, h.percentile(99) / 1000, static_cast<double>(h.max()) / 1000);
    v["counters"] = row.r.counters;
    v["notes"] = row.r.notes;
    v["provenance"] = row.r.provenance;
    j["variants"].push_back(std::move(v));
  }

  // Text: one row per kind, measured next to each variant's model (p50 / p99, ns).
  std::string txt = fmt::format("== replay of {} through scenario {} ==\n", a.trace, ps.name);
  txt += fmt::format("  IPIs       {} sends in the trace, {} replayed{}\n", total, sends.size(),
                     dropped_self ? fmt::format(" ({} targets dropped: same vCPU as the sender after mapping)", dropped_self) : "");
  txt += fmt::format("  mapping    trace CPU -> vCPU of a {}-vCPU VM: {}\n", vcpus, mapping);
  txt += "  latency    send -> handler entry, ns: p50 / p99 (count)\n\n";
  std::string header = fmt::format("  {:<22} {:>24}", "kind", "measured (trace)");
  for (const auto& row : rows) header += fmt::format(" {:>26}", row.name.substr(0, 26));
  txt += header + "\n";
  for (const auto& k : kinds) {
    std::string line = fmt::format("  {:<22}", k);
    auto it = measured.find(k);
    line += it == measured.end() ? fmt::format(" {:>24}", "-")
                                 : fmt::format(" {:>24}", fmt::format("{:.0f} / {:.0f} ({})", it->second.percentile(50),
                                                                     it->second.percentile(99), it->second.count()));
    for (const auto& row : rows) {
      auto m = row.r.latency_by_kind.find(k);
      line += m == row.r.latency_by_kind.end()
                  ? fmt::format(" {:>26}", "-")
                  : fmt::format(" {:>26}", fmt::format("{:.0f} / {:.0f} ({})", m->second.percentile(50) / 1000,
                                                      m->second.percentile(99) / 1000, m->second.count()));
    }
    txt += line + "\n";
  }
  txt += "\n";
  for (const auto& row : rows) {
    std::string s;
    for (const auto& [k, v] : row.r.settings) s += (s.empty() ? "" : ", ") + k + "=" + v;
    txt += fmt::format("  {}: {}\n", row.name, s);
    for (const auto& n : row.r.notes) txt += fmt::format("    note: {}\n", n);
  }
  txt += "\n  The measured column is what the traced machine did; each variant column is what the modelled\n"
         "  mechanism would give for the same sends, at the same times, on the scenario's host and profile.\n";

  if (!a.json.empty()) {
    const std::string doc = j.dump(2) + "\n";
    if (a.json == "-") {
      std::fputs(doc.c_str(), stdout);
      return;
    }
    write_file_atomically(a.json, doc);
  }
  std::fputs(txt.c_str(), stdout);
}

}  // namespace

void add_replay_command(CLI::App& root) {
  auto args = std::make_shared<ReplayArgs>();
  auto* cmd = root.add_subcommand(
      "replay",
      "Replay a recorded IPI trace through a scenario's delivery mechanisms: measured send->entry latency "
      "next to what each modelled mechanism would give");
  cmd->footer(R"(Every IPI send of the trace (ipi:ipi_send_cpu / ipi_send_cpumask, Linux >= 6.4) is re-issued at its
recorded time from the same CPU, mapped onto the scenario VM's vCPUs (trace CPU c -> vCPU c mod N; the
mapping is printed), through each variant of the scenario (its host, VM, cost profile and mechanism).
The modelled latency is send start -> first handler instruction, the span the trace measures
(ipi_send_* -> irq_vectors:*_entry). Kinds map to x86 vectors: reschedule 0xFD, call-function 0xFC,
call-function-single 0xFB, irq-work 0xF6.

Examples:
  ipilab replay "$(ipilab list --data-dir)/data/traces/mixed.dat" --scenario seed000-send-ipi-one
  ipilab replay mytrace.txt --scenario seed000-send-ipi-one --variant mainline --json out.json)");
  cmd->add_option("TRACE", args->trace, "trace file: trace.dat (v6/v7), trace-cmd report text, or tracefs trace text")
      ->required();
  cmd->add_option("--scenario,-s", args->scenario, "built-in scenario name or scenario file")->required();
  cmd->add_option("--variant", args->variants, "replay only these variants (repeatable)");
  cmd->add_option("--json", args->json, "write the results as JSON to FILE ('-' = stdout instead of the table)");
  cmd->add_option("--max-ipis", args->max_ipis, "replay at most N sends (default 1000000)");
  cmd->add_option("--seed", args->seed, "RNG seed of the model (default 1)");
  cmd->callback([args] { run_replay(*args); });
}

}  // namespace ipilab::cli
