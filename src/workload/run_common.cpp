#include "workload/run_common.h"

#include <algorithm>

#include <fmt/format.h>

#include "common/error.h"
#include "workload/counters.h"

namespace ipilab::workload {

Bound::Bound(const RunSpec& spec, std::string_view default_mechanism)
    : pricer(spec.profile, breakdown, counters) {
  if (!spec.host) throw std::logic_error("workload run without a host");
  info = &chosen_mechanism(spec.params, default_mechanism);
  MechanismContext ctx{*spec.host, spec.vm, spec.params, pricer};
  mechanism = info->make(ctx);
}

LoopProgram::LoopProgram(std::vector<unsigned> targets, std::vector<Op> ops) : targets_(std::move(targets)), ops_(std::move(ops)) {
  for (Op& o : ops_)
    if (o.code == Op::Code::Call || o.code == Op::Code::Ipi) {
      o.targets = targets_;
      if (o.code == Op::Code::Ipi) o.addressing = targets_.size() == 1 ? Addressing::One : Addressing::Mask;
    }
}

Op LoopProgram::next(ProgramCtx&) {
  if (i_ == ops_.size()) i_ = 0;
  return ops_[i_++];
}

RunConfig run_config(const RunSpec& spec, const Bound& b) {
  RunConfig cfg;
  cfg.spec = &spec;
  cfg.mechanism = b.mechanism.get();
  cfg.warmup = spec.warmup;
  cfg.iterations = spec.iterations;
  return cfg;
}

PollingPolicy polling_policy(const RunSpec& spec) {
  return spec.params.get(kPollingParam);
}

namespace {
constexpr auto kNsOrCycles = unit_choices(FigureUnit::Ns, FigureUnit::Cycles);
constexpr auto kCyclesOrNs = unit_choices(FigureUnit::Cycles, FigureUnit::Ns);
}  // namespace

const EnumParam<FigureUnit> kUnitNsParam{"unit", FigureUnit::Ns, kNsOrCycles, "unit of the figures: ns or cycles (profile clock)"};
const EnumParam<FigureUnit> kUnitCyclesParam{"unit", FigureUnit::Cycles, kCyclesOrNs,
                                             "unit of the figures: cycles (profile clock) or ns"};

double ps_per_unit(const RunSpec& spec, FigureUnit unit) {
  if (unit == FigureUnit::Cycles) {
    const double ghz = spec.profile.clock_ghz();
    if (ghz <= 0) throw InputError(spec.profile.file(), "reporting in cycles needs [profile] clock_ghz");
    return 1000.0 / ghz;
  }
  if (unit == FigureUnit::Us) return 1e6;
  return 1000.0;
}

Metric make_metric(std::string name, std::string unit, std::string description, sim::Histogram h, double ps_per_unit) {
  Metric m;
  m.name = std::move(name);
  m.unit = std::move(unit);
  m.description = std::move(description);
  m.ps_per_unit = ps_per_unit;
  m.summary = h.summary();
  for (double* v : {&m.summary.mean, &m.summary.stddev, &m.summary.min, &m.summary.max, &m.summary.p50,
                    &m.summary.p90, &m.summary.p99, &m.summary.p999})
    *v /= ps_per_unit;
  m.histogram = std::move(h);
  return m;
}

RunResult assemble(const RunSpec& spec, Bound& b, RunOutput&& out, std::vector<Metric> metrics,
                   std::vector<std::pair<std::string, std::string>> settings, std::uint64_t per_iteration) {
  RunResult r;
  r.metrics = std::move(metrics);
  r.counters = out.counters;
  for (CounterKey k : {counters::sends, counters::misdelivered, counters::lost, counters::native_fallbacks,
                       counters::hypercalls})
    r.counters.try_emplace(std::string(k), 0);
  const double unit = r.metrics.empty() ? 1000.0 : r.metrics.front().ps_per_unit;
  const double iters = static_cast<double>(std::max<std::uint64_t>(1, per_iteration));
  for (const auto& row : b.breakdown.rows()) {
    if (row.count == 0) continue;
    r.breakdown.push_back({row.name, static_cast<double>(row.total.v) / iters / unit, row.share});
  }
  r.throughput = out.throughput;
  r.resources = std::move(out.resources);
  r.provenance = spec.profile.provenance_json(b.pricer.used());
  r.provenance["host"] = {{"name", spec.host->name}, {"source", spec.host->source},
                          {"latency_source", spec.host->latency.source}};
  if (out.lost_iterations)
    r.notes.push_back(fmt::format(
        "{} of {} iterations lost an IPI (never served); a real sender would spin in csd_lock_wait until the CSD-lock "
        "timeout, so these iterations are left out of the latency figures",
        out.lost_iterations, out.measured_iterations));
  for (auto& n : out.notes) r.notes.push_back(std::move(n));
  for (auto& n : b.mechanism->notes()) r.notes.push_back(std::move(n));
  if (!out.conservation.holds()) {
    const Conservation& c = out.conservation;
    r.notes.push_back(fmt::format(
        "MODEL ERROR: the request/IPI counts do not add up (requests {} = own IPI {} + coalesced {} + polling {} + lost {}; "
        "served {} + queued {}; IPIs sent {} = delivered {} + merged {} + lost {} + in flight {})",
        c.requests, c.own_ipi, c.coalesced, c.polling, c.lost_requests, c.served, c.queued_at_end, c.ipis_sent,
        c.ipis_delivered, c.ipis_merged, c.ipis_lost, c.ipis_in_flight));
  }
  r.settings = std::move(settings);
  r.events = out.events;
  r.sample_hypercall = b.mechanism->sample_hypercall();
  return r;
}

std::vector<ParamInfo> with_mechanism(std::vector<ParamInfo> own, std::string_view def) {
  own.insert(own.begin(), mechanism_param(def));
  return own;
}

std::function<void(const Params&)> validator(std::string workload, std::vector<ParamInfo> own, std::string def,
                                             std::optional<Arch> arch) {
  return [workload = std::move(workload), own = std::move(own), def = std::move(def), arch](const Params& p) {
    const MechanismInfo& m = chosen_mechanism(p, def);
    if (arch && m.arch != *arch)
      throw InputError(p.place("mechanism"), fmt::format("mechanism \"{}\" is {}; this workload runs on {}", m.name,
                                                         arch_name(m.arch), arch_name(*arch)));
    std::vector<ParamInfo> all = with_mechanism(own, def);
    for (const auto& q : m.params) all.push_back(q);
    p.reject_unknown(all, fmt::format("workload '{}' with mechanism \"{}\"", workload, m.name));
  };
}

void require_arch(const RunSpec& spec, const Bound& b, Arch arch, std::string_view workload) {
  if (b.arch() != arch)
    throw InputError(spec.params.place("mechanism"), fmt::format("workload {} needs an {} mechanism; \"{}\" is {}", workload,
                                                                 arch_name(arch), b.info->name, arch_name(b.arch())));
}

std::string cpu_list(const std::vector<unsigned>& cpus) {
  std::vector<int> v(cpus.begin(), cpus.end());
  std::sort(v.begin(), v.end());
  return topology::Host::format_cpu_list(v);
}

}  // namespace ipilab::workload
