#include "scenario/replay.h"

#include <algorithm>
#include <map>
#include <optional>
#include <ostream>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/error.h"
#include "common/file.h"
#include "scenario/catalog.h"
#include "scenario/report_format.h"
#include "scenario/runner.h"
#include "scenario/scenario.h"
#include "sim/histogram.h"
#include "trace/analysis.h"
#include "workload/mechanism.h"
#include "workload/replay.h"

namespace ipilab::scenario {
namespace {

struct KindMap {
  IpiKind kind;
  bool exact;  ///< false: the trace's kind has no vector of its own here
};

KindMap kind_of(IpiKind k) {
  switch (k) {
    case IpiKind::Reschedule:
    case IpiKind::CallFunction:
    case IpiKind::CallFunctionSingle:
    case IpiKind::IrqWork: return {k, true};
    default: return {IpiKind::CallFunctionSingle, false};
  }
}

// x86 interrupt vectors as irq_vectors:<name>_entry/_exit name them (arch/x86/include/asm/trace/
// irq_vectors.h): events arm64 kernels do not have.
constexpr std::string_view kX86Vectors[] = {"local_timer", "spurious_apic", "error_apic", "x86_platform_ipi", "irq_work",
                                            "reschedule", "call_function", "call_function_single", "threshold_apic",
                                            "deferred_error_apic", "thermal_apic", "reboot"};

}  // namespace

std::optional<TraceArch> trace_arch(const std::map<std::string, std::uint64_t>& event_counts) {
  bool x86 = false, arm = false;
  for (const auto& [name, n] : event_counts) {
    if (n == 0) continue;
    if (name == "ipi_raise" || name == "ipi_entry" || name == "ipi_exit") arm = true;
    for (const std::string_view suffix : {std::string_view("_entry"), std::string_view("_exit")}) {
      if (name.size() <= suffix.size() || name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0) continue;
      const std::string_view base = std::string_view(name).substr(0, name.size() - suffix.size());
      if (std::find(std::begin(kX86Vectors), std::end(kX86Vectors), base) != std::end(kX86Vectors)) x86 = true;
    }
  }
  if (x86 == arm) return std::nullopt;  // neither, or both (a merged or doctored file): no claim
  return x86 ? TraceArch{workload::Arch::X86, "irq_vectors:* handler events"}
             : TraceArch{workload::Arch::Arm, "ipi:ipi_raise / ipi_entry events"};
}

namespace {

nlohmann::json stats_json(const sim::Histogram& h, double scale) {
  return {{"count", h.count()},          {"mean", h.mean() / scale},          {"p50", h.percentile(50) / scale},
          {"p90", h.percentile(90) / scale}, {"p99", h.percentile(99) / scale}, {"max", static_cast<double>(h.max()) / scale}};
}

// The trace side of a replay: the sends mapped onto the VM's vCPUs and the measured deliveries.
struct ReplayTrace {
  std::vector<workload::ReplaySend> sends;
  std::set<std::uint32_t> trace_cpus;
  std::uint64_t dropped_self = 0, total = 0, inexact = 0;
  std::map<std::string, sim::Histogram> measured;  // ns
  std::optional<TraceArch> arch;
};

struct ReplayRow {
  std::string name;
  workload::ReplayResult r;
};

ReplayTrace read_replay_trace(const ReplayOptions& a, int vcpus) {
  ReplayTrace t;
  auto on_send = [&](const trace::IpiSend& s) {
    ++t.total;
    if (t.sends.size() >= a.max_ipis) return;
    workload::ReplaySend r;
    r.time_ns = s.time_ns;
    r.src = s.src_cpu % static_cast<std::uint32_t>(vcpus);
    t.trace_cpus.insert(s.src_cpu);
    for (auto target : s.targets) {
      t.trace_cpus.insert(target);
      const unsigned m = target % static_cast<std::uint32_t>(vcpus);
      if (m == r.src) {
        ++t.dropped_self;
        continue;
      }
      if (std::find(r.targets.begin(), r.targets.end(), m) == r.targets.end()) r.targets.push_back(m);
    }
    std::sort(r.targets.begin(), r.targets.end());
    const KindMap km = kind_of(s.kind);
    if (!km.exact) ++t.inexact;
    r.kind = km.kind;
    r.kind_name = std::string(trace::kind_name(s.kind));
    if (!r.targets.empty()) t.sends.push_back(std::move(r));
  };
  auto on_delivery = [&](const trace::IpiDelivery& d) {
    t.measured[std::string(trace::kind_name(d.kind))].record(static_cast<std::int64_t>(d.entry_ns - d.send_ns));
  };
  trace::IpiAnalysis analysis(on_send, on_delivery);  // one pass over the trace for both
  trace::analyse_trace(a.trace, analysis);
  t.arch = trace_arch(analysis.event_counts());
  return t;
}

// The architecture the trace was recorded on against each variant's mechanism's.
std::vector<std::string> arch_warnings(const PreparedScenario& ps, const std::optional<TraceArch>& arch) {
  std::vector<std::string> warnings;
  std::vector<std::pair<const workload::MechanismInfo*, std::string>> mechs;  // mechanism, its variants
  for (const auto& v : ps.variants) {
    const workload::MechanismInfo& m = workload::chosen_mechanism(v.spec.params, ps.info->default_mechanism);
    auto it = std::find_if(mechs.begin(), mechs.end(), [&](const auto& p) { return p.first == &m; });
    if (it == mechs.end()) mechs.emplace_back(&m, "'" + v.name + "'");
    else it->second += ", '" + v.name + "'";
  }
  if (arch)
    for (const auto& [m, who] : mechs)
      if (m->arch != arch->arch)
        warnings.push_back(fmt::format(
            "the trace was recorded on {} ({}), but {} ({}) is an {} mechanism: its sends go out as {} and the measured "
            "column is another architecture's latency; compare with care",
            workload::arch_name(arch->arch), arch->evidence, m->name,
            mechs.size() == 1 ? std::string("every variant") : (who.find(',') == std::string::npos ? "variant " : "variants ") + who,
            workload::arch_name(m->arch), m->arch == workload::Arch::Arm ? "arm64 SGIs" : "x86 vectors"));
  return warnings;
}

nlohmann::json replay_json(const ReplayOptions& a, const PreparedScenario& ps, const ReplayTrace& t,
                           const std::vector<ReplayRow>& rows, const std::vector<std::string>& warnings,
                           const std::string& mapping) {
  nlohmann::json j;
  j["trace"] = a.trace;
  j["scenario"] = ps.name;
  j["ipis_in_trace"] = t.total;
  j["ipis_replayed"] = t.sends.size();
  j["self_targets_dropped"] = t.dropped_self;
  j["kinds_without_vector"] = t.inexact;
  j["cpu_mapping"] = mapping;
  j["trace_arch"] = t.arch ? nlohmann::json(workload::arch_name(t.arch->arch)) : nlohmann::json(nullptr);
  j["warnings"] = warnings;
  for (const auto& [k, h] : t.measured) j["measured"][k] = stats_json(h, 1.0);
  for (const auto& row : rows) {
    nlohmann::json v;
    v["name"] = row.name;
    for (const auto& [k, val] : row.r.settings) v["settings"][k] = val;
    for (const auto& [k, h] : row.r.latency_by_kind) v["latency_ns"][k] = stats_json(h, 1000.0);
    v["counters"] = row.r.counters;
    v["notes"] = row.r.notes;
    v["provenance"] = row.r.provenance;
    j["variants"].push_back(std::move(v));
  }
  return j;
}

// Text: one row per kind, measured next to each variant's model (p50 / p99, ns).
std::string replay_text(const ReplayOptions& a, const PreparedScenario& ps, const ReplayTrace& t,
                        const std::vector<ReplayRow>& rows, const std::vector<std::string>& warnings,
                        const std::string& mapping, const std::set<std::string>& kinds, int vcpus) {
  std::string txt = fmt::format("== replay of {} through scenario {} ==\n", a.trace, ps.name);
  txt += fmt::format("  IPIs       {} sends in the trace, {} replayed{}\n", report::format_count(t.total), report::format_count(t.sends.size()),
                     t.dropped_self ? fmt::format(" ({} targets dropped: same vCPU as the sender after mapping)",
                                                  report::format_count(t.dropped_self))
                                  : "");
  if (t.inexact)
    txt += fmt::format("  kinds      {} sends of a kind without a vector of its own went out as call-function-single\n",
                       report::format_count(t.inexact));
  txt += fmt::format("  mapping    trace CPU -> vCPU of a {}-vCPU VM: {}\n", vcpus, mapping);
  txt += fmt::format("  arch       trace: {}\n", t.arch ? fmt::format("{} ({})", workload::arch_name(t.arch->arch), t.arch->evidence)
                                                      : std::string("not known (no handler events of either architecture)"));
  for (const auto& w : warnings) txt += report::wrap("  WARNING   ", w, std::string(13, ' '));
  txt += "  latency    send -> handler entry, ns: p50 / p99 (count); whole ns, thousands grouped\n\n";
  // One format in every cell: whole ns and counts, ',' between thousands; "—" without samples.
  auto cell = [](double p50, double p99, std::uint64_t n) {
    return fmt::format("{} / {} ({})", report::format_fixed(p50, {0}), report::format_fixed(p99, {0}), report::format_count(n));
  };
  std::vector<std::string> head = {"kind", "measured (trace)"};
  for (const auto& row : rows) head.push_back(row.name);
  report::Table table(head, {0});
  for (const auto& k : kinds) {
    std::vector<std::string> line = {k};
    auto it = t.measured.find(k);
    line.push_back(it == t.measured.end() ? "—" : cell(it->second.percentile(50), it->second.percentile(99), it->second.count()));
    for (const auto& row : rows) {
      auto m = row.r.latency_by_kind.find(k);
      line.push_back(m == row.r.latency_by_kind.end() || m->second.count() == 0
                         ? "—"
                         : cell(m->second.percentile(50) / 1000, m->second.percentile(99) / 1000, m->second.count()));
    }
    table.add(std::move(line));
  }
  txt += table.render("  ");
  txt += "\n";
  for (const auto& row : rows) {
    std::string s;
    for (const auto& [k, v] : row.r.settings) s += (s.empty() ? "" : ", ") + k + "=" + v;
    txt += fmt::format("  {}: {}\n", row.name, s);
    for (const auto& n : row.r.notes) txt += fmt::format("    note: {}\n", n);
  }
  txt += "\n  The measured column is what the traced machine did; each variant column is what the modelled\n"
         "  mechanism would give for the same sends, at the same times, on the scenario's host and profile.\n";
  return txt;
}

}  // namespace

void run_replay_command(const ReplayOptions& a, std::ostream& out, std::ostream& err) {
  check_timeline_options(a.timeline);
  {
    std::vector<output::OutputRequest> outs = {{"--json", a.json, true}};
    for (auto& r : output_requests(a.timeline)) outs.push_back(std::move(r));
    output::check_outputs(outs, {{"TRACE", a.trace}, {"--scenario", resolve_scenario(a.scenario)}});
  }
  // 1. The scenario (validated in full before anything runs).
  RunOverrides ov;
  ov.variants = a.variants;
  ov.seed = a.seed;
  PreparedScenario ps = prepare(load_scenario(resolve_scenario(a.scenario)), ov, workload::find_workload);
  const int vcpus = ps.variants.front().spec.vm.size();

  // 2. The trace: sends mapped onto the VM's vCPUs, and the measured deliveries.
  const ReplayTrace t = read_replay_trace(a, vcpus);

  // 3. Each variant.
  std::vector<ReplayRow> rows;
  SimTimeline timeline(a.timeline, SimTimeline::Unit::Sends,
                       fmt::format("ipilab replay {}", std::filesystem::path(a.trace).filename().string()));
  for (auto& v : ps.variants) timeline.observe(v.spec, ps.name, v.name, ps.info->default_mechanism);
  for (auto& v : ps.variants) rows.push_back({v.name, workload::replay(v.spec, t.sends, ps.info->default_mechanism)});
  output::OutputSet files_out;  // the timeline and the JSON, renamed together at the end
  const std::string timeline_note = timeline.write(files_out);

  const std::vector<std::string> warnings = arch_warnings(ps, t.arch);
  std::string mapping;
  for (auto c : t.trace_cpus) mapping += fmt::format("{}{}->vCPU{}", mapping.empty() ? "" : ", ", c, c % vcpus);
  std::set<std::string> kinds;
  for (const auto& [k, h] : t.measured) kinds.insert(k);
  for (const auto& row : rows)
    for (const auto& [k, h] : row.r.latency_by_kind) kinds.insert(k);

  const nlohmann::json j = replay_json(a, ps, t, rows, warnings, mapping);
  const std::string txt = replay_text(a, ps, t, rows, warnings, mapping, kinds, vcpus);
  for (const auto& w : warnings) err << "ipilab: warning: " << w << "\n";
  if (!a.json.empty() && a.json != "-") files_out.write(a.json, "--json", j.dump(2) + "\n");
  files_out.commit_all();
  err << timeline_note << std::flush;
  if (a.json == "-") {
    out << j.dump(2) << "\n";
    return;
  }
  out << txt;
}

}  // namespace ipilab::scenario
