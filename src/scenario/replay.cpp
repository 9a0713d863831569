#include "scenario/replay.h"

#include <algorithm>
#include <map>
#include <optional>
#include <ostream>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/error.h"
#include "common/file.h"
#include "scenario/catalog.h"
#include "scenario/replay_join.h"
#include "scenario/report_format.h"
#include "scenario/runner.h"
#include "scenario/scenario.h"
#include "sim/histogram.h"
#include "trace/analysis.h"
#include "trace/export.h"
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

// Both observers of a variant's run (its simulated timeline, the --ipi-csv join).
class TeeObserver final : public workload::Observer {
 public:
  std::vector<workload::Observer*> to;
  void on_send(sim::Ps s, sim::Ps e, unsigned sender, std::uint32_t v, std::span<const unsigned> t) override {
    for (auto* o : to) o->on_send(s, e, sender, v, t);
  }
  void on_request(sim::Ps t, unsigned s, unsigned d, workload::Served how, std::uint64_t ipi, std::string_view r) override {
    for (auto* o : to) o->on_request(t, s, d, how, ipi, r);
  }
  void on_arrival(sim::Ps t, unsigned d, std::uint64_t ipi, bool merged) override {
    for (auto* o : to) o->on_arrival(t, d, ipi, merged);
  }
  void on_handler(unsigned cpu, std::uint64_t ipi, sim::Ps s, sim::Ps entry, sim::Ps e) override {
    for (auto* o : to) o->on_handler(cpu, ipi, s, entry, e);
  }
  void on_mark(sim::Ps t, unsigned cpu, std::uint64_t n) override {
    for (auto* o : to) o->on_mark(t, cpu, n);
  }
  void on_queue(sim::Ps t, unsigned s, unsigned d, bool wake) override {
    for (auto* o : to) o->on_queue(t, s, d, wake);
  }
  void on_merge(sim::Ps t, unsigned d, std::uint64_t ipi, std::uint64_t into) override {
    for (auto* o : to) o->on_merge(t, d, ipi, into);
  }
  void on_send_step(unsigned cpu, sim::Ps s, sim::Ps e, std::string_view label) override {
    for (auto* o : to) o->on_send_step(cpu, s, e, label);
  }
  void on_resource(std::string_view r, sim::Ps asked, sim::Ps s, sim::Ps e, std::string_view label) override {
    for (auto* o : to) o->on_resource(r, asked, s, e, label);
  }
};

// What the trace is read for besides the replay itself: the recorded timeline's first sends and the join.
struct TraceSides {
  trace::TraceExports* recorded = nullptr;  // --perfetto's recorded group
  std::uint64_t window_sends = 0;           // its window: the first N sends of the trace
  ReplayJoin* join = nullptr;               // --ipi-csv
};

ReplayTrace read_replay_trace(const ReplayOptions& a, int vcpus, const TraceSides& sides = {}) {
  ReplayTrace t;
  trace::AnalysisOptions options;
  trace::TeeAnalysisObserver tee;
  if (sides.recorded) tee.to.push_back(sides.recorded->observer_for(""));
  if (sides.join) tee.to.push_back(sides.join->recorded());
  if (!tee.to.empty()) options.observer = &tee;
  auto on_send = [&](const trace::IpiSend& s) {
    ++t.total;
    if (sides.recorded && t.total == sides.window_sends) sides.recorded->set_window(s.time_ns, options.pair_limit_ns);
    if (t.sends.size() >= a.max_ipis) {
      if (sides.join) sides.join->on_trace_send(s, -1, true);
      return;
    }
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
    if (sides.join) sides.join->on_trace_send(s, r.targets.empty() ? -1 : static_cast<std::int64_t>(t.sends.size()), false);
    if (!r.targets.empty()) t.sends.push_back(std::move(r));
  };
  auto on_delivery = [&](const trace::IpiDelivery& d) {
    t.measured[std::string(trace::kind_name(d.kind))].record(static_cast<std::int64_t>(d.entry_ns - d.send_ns));
  };
  trace::IpiAnalysis analysis(on_send, on_delivery, options);  // one pass over the trace for all
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
  if (!a.ipi_csv.empty() && std::filesystem::path(a.ipi_csv).extension() != ".csv")
    throw InputError("--ipi-csv", fmt::format("'{}': the file name must end in .csv", a.ipi_csv));
  {
    std::vector<output::OutputRequest> outs = {{"--json", a.json, true}, {"--ipi-csv", a.ipi_csv, false}};
    for (auto& r : output_requests(a.timeline)) outs.push_back(std::move(r));
    output::check_outputs(outs, {{"TRACE", a.trace}, {"--scenario", resolve_scenario(a.scenario)}});
  }
  // 1. The scenario (validated in full before anything runs).
  RunOverrides ov;
  ov.variants = a.variants;
  ov.seed = a.seed;
  PreparedScenario ps = prepare(load_scenario(resolve_scenario(a.scenario)), ov, workload::find_workload);
  const int vcpus = ps.variants.front().spec.vm.size();

  // 2. The trace: sends mapped onto the VM's vCPUs, and the measured deliveries; its own timeline
  //    (--perfetto's recorded group) and its IPIs for the join (--ipi-csv) in the same pass.
  const std::string trace_name = std::filesystem::path(a.trace).filename().string();
  SimTimeline timeline(a.timeline, SimTimeline::Unit::Sends, fmt::format("ipilab replay {}", trace_name));
  std::ostringstream recorded_json;
  std::unique_ptr<trace::TraceExports> recorded;
  constexpr int kRecordedGroup = 1000;  // after the variants' pids (1, 2, ...), sorted above them
  if (!a.timeline.perfetto.empty())
    recorded = std::make_unique<trace::TraceExports>(recorded_json, fmt::format("recorded — {}", trace_name), kRecordedGroup, 0);
  std::unique_ptr<ReplayJoin> join;
  if (!a.ipi_csv.empty()) join = std::make_unique<ReplayJoin>(static_cast<unsigned>(vcpus), a.max_ipis);
  const ReplayTrace t = read_replay_trace(a, vcpus, {recorded.get(), std::min(timeline.limit(), a.max_ipis), join.get()});
  const std::uint64_t origin = t.sends.empty() ? 0 : t.sends.front().time_ns;  // workload::replay's time 0

  // 3. Each variant.
  std::vector<ReplayRow> rows;
  timeline.set_origin_ns(origin);
  std::vector<std::unique_ptr<TeeObserver>> tees;
  for (auto& v : ps.variants) {
    timeline.observe(v.spec, ps.name, v.name, ps.info->default_mechanism);
    if (!join) continue;
    tees.push_back(std::make_unique<TeeObserver>());
    if (v.spec.observer) tees.back()->to.push_back(v.spec.observer);
    tees.back()->to.push_back(
        join->observe(v.name, t.sends, workload::chosen_mechanism(v.spec.params, ps.info->default_mechanism).arch));
    v.spec.observer = tees.back().get();
  }
  for (auto& v : ps.variants) rows.push_back({v.name, workload::replay(v.spec, t.sends, ps.info->default_mechanism)});
  output::OutputSet files_out;  // the timeline, the join and the JSON, renamed together at the end
  if (recorded) {
    recorded->prepare();
    timeline.add_leading_fragment(recorded_json.str(),
                                  fmt::format("the recorded timeline (first {} sends of the trace, {} flows send -> arrival)",
                                              std::min({timeline.limit(), a.max_ipis, t.total}), recorded->flows()));
  }
  const std::string timeline_note = timeline.write(files_out);
  std::string join_note;
  if (join) {
    std::map<std::string, std::uint64_t> counts;
    files_out.write(a.ipi_csv, "--ipi-csv", join->csv(origin, &counts));
    std::string c;
    for (const auto& [k, n] : counts) c += fmt::format("{}{} {}", c.empty() ? "" : ", ", k, n);
    join_note = fmt::format("ipilab: wrote {}: {} recorded IPIs x {} variant{} joined with the simulated ones ({})\n", a.ipi_csv,
                            join->recorded_ipis(), ps.variants.size(), ps.variants.size() == 1 ? "" : "s", c);
  }

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
  err << timeline_note << join_note << std::flush;
  if (a.json == "-") {
    out << j.dump(2) << "\n";
    return;
  }
  out << txt;
}

}  // namespace ipilab::scenario
