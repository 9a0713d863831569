#include "measure/this_host.h"

#include <algorithm>
#include <functional>
#include <cmath>
#include <map>
#include <memory>

#include <fmt/format.h>

#include "common/error.h"
#include "common/enum_names.h"
#include "cost/profile.h"
#include "scenario/catalog.h"
#include "scenario/runner.h"
#include "scenario/scenario.h"
#include "workload/workload.h"

namespace ipilab::measure {

namespace {

constexpr const char* kInMemory = "the measured profile (in memory)";
// The simulated median is a histogram percentile (sim/histogram.h: within 1/256 of the sample), so a fit
// can get within about that of the measured median, not closer.
constexpr double kFitTolerance = 0.0025;
constexpr unsigned kMaxFitRuns = 12;

bool is_spin(const kvm::BenchCase& b) { return b.kind == kvm::CaseKind::Ipi && b.target == kvm::TargetState::Spin; }

// One run of the scenario (all variants, or one) on profile `p`: each variant's median of `sample`, ns.
class ScenarioRunner {
 public:
  ScenarioRunner(std::string file, std::optional<std::uint64_t> iterations)
      : file_(std::move(file)), iterations_(iterations) {}

  std::map<std::string, double> medians(const cost::Profile& p, const std::vector<std::string>& variants = {}) {
    scenario::RunOverrides ov;
    ov.iterations = iterations_;
    ov.variants = variants;
    ov.profile = std::make_shared<const cost::Profile>(p);
    ov.profile_shown = kInMemory;
    const scenario::PreparedScenario ps = scenario::prepare(scenario::load_scenario(file_), ov, workload::find_workload);
    iterations = ps.iterations;
    seed = ps.seed;
    if (names.empty())
      for (const auto& v : ps.variants) names.push_back(v.name);
    const scenario::ScenarioResult r = scenario::run(ps);
    std::map<std::string, double> out;
    for (const auto& v : r.variants) {
      const workload::Metric& m = v.result.metrics.front();  // kvm_bench: `sample`
      if (m.summary.count > 0) out[v.name] = m.summary.p50 * m.ps_per_unit / 1000.0;
    }
    ++runs;
    return out;
  }
  double median(const cost::Profile& p, const std::string& variant) {
    const auto m = medians(p, {variant});
    const auto it = m.find(variant);
    if (it == m.end())
      throw std::runtime_error(fmt::format("this-host variant '{}' produced no sample", variant));
    return it->second;
  }
  std::vector<std::string> names;  ///< the scenario's variants (after the first run)
  std::uint64_t iterations = 0, seed = 0;
  unsigned runs = 0;

 private:
  std::string file_;
  std::optional<std::uint64_t> iterations_;
};

std::string ns_text(double v) { return v >= 100000 ? fmt::format("{:.0f}", v) : fmt::format("{:.1f}", v); }

}  // namespace

const std::vector<FitStep>& fit_plan() {
  static const std::vector<FitStep> plan = {
      {"vcpu.halt_wakeup", "x2apic-physical/ipi-roundtrip/halt",
       "the ICR write's handling in KVM (x2apic.icr_write_exit, x2apic.icr_dest_per_target and the sender's kick of "
       "a blocked thread, vcpu.kick_blocked: the base's), waking the halted vCPU thread (KVM's halt polling, the host scheduler), the guest's interrupt entry, and the EOI, which "
       "the harness's handler writes before it sets the flag (an exit without APICv) while the simulator takes it "
       "after the body: the round trip holds them all, so the wake-up is fitted as what the measured and inherited "
       "entries leave"},
      {"guest.callback", "x2apic-physical/call-single/halt",
       "the call-single case's extra over the round trip: the CSD slot's stores on the sender (guest.csd_queue), the "
       "load of func + arg, the call, the release (guest.csd_unlock); one figure, so func(arg) is fitted and the "
       "others keep the base's"},
      {"hv.hypercall_entry_exit", "hyperv/ipi-roundtrip/halt",
       "the user-space hypercall beyond one exit (vm.exit_entry): the I/O exit to ipilab's VMM, hv::Partition, "
       "KVM_SIGNAL_MSI and the return into KVM_RUN, plus the guest's hv_apic.c path; hv.fast_input_decode and "
       "hv.ipi_post_per_target keep the base's"},
      {"hv.slow_input_map", "hyperv-ex/ipi-roundtrip/halt",
       "the Ex call's extra over the fast one: building the sparse vpset in guest memory and the VMM reading it "
       "(hv.slow_input_copy_per_8b and hv.vpset_bank_decode keep the base's)"},
      {"apic.interrupt_injection", "x2apic-physical/ipi-roundtrip/spin",
       "interrupting the running target: the notification, the interrupt window and the injection, and whatever else "
       "a spinning target's round trip holds that a halted one's does not"},
      {"kvm.pv_send_ipi_call", "kvm-pv/ipi-roundtrip/halt",
       "KVM_HC_SEND_IPI's fixed work (kvm.pv_send_ipi_per_dest keeps the base's) and its difference to the ICR "
       "write's exit"},
  };
  return plan;
}

constexpr EnumName<Role> kRoleNames[] = {
    {Role::Primitive, "primitive"},
    {Role::Fitted, "fitted"},
    {Role::Predicted, "predicted"},
    {Role::NotCovered, "not covered"},
    {Role::Unavailable, "unavailable"},
    {Role::Failed, "failed"},
    {Role::NotMeasured, "not measured"},
};

const char* to_string(Role r) { return name_of(kRoleNames, r).data(); }
namespace {

// The secant search of one fit step: the key's value (ns, as written) for which the scenario's
// variant has the case's measured median, within kFitTolerance, in at most kMaxFitRuns runs.
// `at_zero` is the model's error with the key at 0 (what an unfittable key's note reports).
void search_fit(FitOutcome& f, double target, cost::Profile& work, ScenarioRunner& runner, const ModelOptions& o,
                double& best_v, double& best_e, double& at_zero) {
  const FitStep& step = f.step;
  auto eval = [&](double v) {
    work.set(step.key, v, cost::Unit::Ns, 0, "fit candidate");
    if (o.progress) o.progress(fmt::format("fitting {} to {} (run {})", step.key, step.case_name, f.runs + 1));
    ++f.runs;
    return runner.median(work, step.case_name) - target;
  };
  double v0 = 0, e0 = eval(0);
  at_zero = e0;
  best_v = 0, best_e = e0;
  if (e0 <= kFitTolerance * target) {  // the key can make up the rest
    double v1 = as_written(std::max(0.0, -e0)), e1 = eval(v1);
    if (std::fabs(e1) < std::fabs(best_e)) best_v = v1, best_e = e1;
    while (std::fabs(best_e) > kFitTolerance * target && f.runs < kMaxFitRuns) {
      double slope = v1 != v0 ? (e1 - e0) / (v1 - v0) : 1.0;
      if (!(slope > 0.1)) slope = 1.0;  // the key is on the critical path once: the median moves with it
      const double v2 = as_written(std::max(0.0, v1 - e1 / slope));
      if (v2 == v1) break;
      v0 = v1, e0 = e1;
      v1 = v2, e1 = eval(v2);
      if (std::fabs(e1) < std::fabs(best_e)) best_v = v1, best_e = e1;
    }
    f.fitted = true;
  }
}

FittedCost fitted_entry(const FitOutcome& f, double at_zero, const ScenarioRunner& runner, const std::string& where) {
  const FitStep& step = f.step;
  const double target = f.measured_ns;
  const double e0 = at_zero;
  const double best_v = f.value_ns;
  FittedCost e;
  e.key = step.key;
  e.value_ns = best_v;
  e.source = fmt::format(
      "FITTED by `ipilab measure` {}: the value for which the this-host scenario's variant '{}' (workload kvm_bench, "
      "{} iterations, seed {}) has that case's measured median, {} ns (model {} ns; {} runs)",
      where, step.case_name, runner.iterations, runner.seed, ns_text(target), ns_text(f.modelled_ns), f.runs);
  e.note = f.fitted ? "Absorbs what this one figure holds and this measurement cannot separate: " + step.absorbs
                    : fmt::format("Could not be fitted: with this key at 0 the model already gives {} ns, above the "
                                  "measured {} ns; left at 0. It would absorb: {}",
                                  ns_text(target + e0), ns_text(target), step.absorbs);
  return e;
}

// What a measured case is in the comparison: a measured primitive, fitted, predicted, or why not.
void classify_case(CaseComparison& x, const CaseReport& c, const ThisHostModel& m,
                   const std::function<std::string(const kvm::BenchCase&)>& not_covered) {
  const auto fit = std::find_if(m.fits.begin(), m.fits.end(), [&](const FitOutcome& f) { return f.step.case_name == x.name; });
  const kvm::BenchCase& b = c.result.bench;
  if (b.kind == kvm::CaseKind::CounterRead) {
    x.role = Role::Primitive, x.detail = "measured entry guest.counter_read";
  } else if (b.kind == kvm::CaseKind::Loop) {
    x.role = Role::Primitive, x.detail = "measured entry guest.bench_loop";
  } else if (b.kind == kvm::CaseKind::CpuidExit) {
    x.role = Role::Primitive, x.detail = "measured entry vm.exit_entry, run back through the model";
  } else if (c.status == CaseStatus::Unavailable) {
    x.role = Role::Unavailable, x.detail = c.reason + "; modelled on the inherited values";
  } else if (c.status == CaseStatus::Failed) {
    x.role = Role::Failed, x.detail = c.reason;
  } else if (const std::string why = not_covered(b); !why.empty()) {
    x.role = Role::NotCovered, x.detail = why;
  } else if (fit != m.fits.end()) {
    x.role = Role::Fitted;
    x.detail = fit->fitted ? fmt::format("{} = {} ns", fit->step.key, ns_text(fit->value_ns))
                           : fmt::format("{} could not be fitted (left at 0)", fit->step.key);
  } else {
    x.role = Role::Predicted, x.detail = "from measured and fitted values, no fit of its own";
  }
}

void count_roles(ThisHostModel& m) {
  for (const FitOutcome& f : m.fits) m.fitted_count += f.fitted;
  for (const CaseComparison& x : m.cases) {
    if (x.role == Role::Predicted) {
      ++m.predicted_count;
      m.predicted_within += x.within_target;
      if (x.diff) m.max_abs_predicted_diff = std::max(m.max_abs_predicted_diff, std::fabs(*x.diff));
    }
    m.not_covered += x.role == Role::NotCovered;
    m.unavailable += x.role == Role::Unavailable;
  }
}

}  // namespace

ThisHostModel model_this_host(const MeasureReport& r, const BaseProfile& base, const ModelOptions& o) {
  if (r.kvm.empty())
    throw InputError("--compare", r.kvm_unavailable.empty()
                                      ? "needs the KVM cases (ipilab measure kvm or all): c2c alone has nothing to compare"
                                      : "needs the KVM cases, and KVM was unavailable: " + r.kvm_unavailable);
  ThisHostModel m;
  m.target = o.target;
  m.scenario_file = scenario::resolve_scenario(o.scenario);
  const bool pvm = r.host.kvm_backend == "kvm_pvm";
  auto ns = [&](double cycles) { return cycles_to_ns(cycles, r.tsc_khz); };
  auto not_covered = [&](const kvm::BenchCase& b) -> std::string {
    if (pvm && is_spin(b))
      return "the PVM backend (kvm_pvm): a spinning target sees an IPI only at its next VM exit, which the "
             "simulator's delivery to a running vCPU (posted interrupt, apic.interrupt_injection) does not describe";
    return {};
  };

  // The measured entries over the base, then the fits, in order, each on the values before it.
  const std::string text0 = to_profile_toml(r, base);
  cost::Profile work = cost::Profile::parse(text0, kInMemory);
  ScenarioRunner runner(m.scenario_file, o.iterations);
  const std::string where = fmt::format("on {}, {}", measured_where(r.host), r.host.date_utc);
  for (const FitStep& step : fit_plan()) {
    const CaseReport* c = r.find(step.case_name);
    if (!c || c->status != CaseStatus::Ok || !not_covered(c->result.bench).empty()) continue;
    const double target = ns(c->cycles->median);
    FitOutcome f;
    f.step = step;
    f.measured_ns = target;
    double best_v = 0, best_e = 0, e0 = 0;
    search_fit(f, target, work, runner, o, best_v, best_e, e0);
    f.value_ns = best_v;
    f.modelled_ns = target + best_e;
    work.set(step.key, best_v, cost::Unit::Ns, 0, "fitted");
    FittedCost e = fitted_entry(f, e0, runner, where);
    m.fitted_entries.push_back(std::move(e));
    m.fits.push_back(std::move(f));
  }

  // The profile as written, read back the way `ipilab run --profile` reads it, and every variant on it.
  m.profile_text = to_profile_toml(r, base, m.fitted_entries);
  const cost::Profile final_profile = cost::Profile::parse(m.profile_text, kInMemory);
  if (o.progress) o.progress("running the this-host scenario on the measured profile");
  const std::map<std::string, double> modelled = runner.medians(final_profile);
  m.iterations = runner.iterations;
  m.seed = runner.seed;

  const CaseReport* ref = r.find(r.options.k.reference);
  const auto ref_model = ref ? modelled.find(ref->name()) : modelled.end();
  std::vector<std::string> seen;
  for (const CaseReport& c : r.kvm) {
    CaseComparison x;
    x.name = c.name();
    seen.push_back(x.name);
    if (c.status == CaseStatus::Ok) {
      x.measured_ns = ns(c.cycles->median);
      if (c.median_ci) x.measured_ci_ns = Interval{ns(c.median_ci->lo), ns(c.median_ci->hi)};
      if (c.ratio) {
        x.measured_ratio = c.ratio->value;
        x.measured_ratio_ci = c.ratio->ci;
      }
    }
    if (const auto it = modelled.find(x.name); it != modelled.end()) {
      x.modelled_ns = it->second;
      if (ref_model != modelled.end() && ref_model->second > 0) x.modelled_ratio = it->second / ref_model->second;
    }
    classify_case(x, c, m, not_covered);
    if (x.measured_ns && x.modelled_ns && *x.measured_ns > 0) x.diff = (*x.modelled_ns - *x.measured_ns) / *x.measured_ns;
    x.counted = x.role == Role::Fitted || x.role == Role::Predicted;
    x.within_target = x.counted && x.diff && std::fabs(*x.diff) <= o.target;
    m.cases.push_back(std::move(x));
  }
  for (const std::string& v : runner.names) {
    if (std::find(seen.begin(), seen.end(), v) != seen.end()) continue;
    CaseComparison x;
    x.name = v;
    x.role = Role::NotMeasured;
    x.detail = "not measured in this run";
    if (const auto it = modelled.find(v); it != modelled.end()) x.modelled_ns = it->second;
    m.cases.push_back(std::move(x));
  }
  count_roles(m);
  return m;
}

std::string compare_table(const ThisHostModel& m) {
  std::string o = fmt::format(
      "Measured vs modelled (this-host scenario on the measured profile: {} iterations per case, seed {}; medians of "
      "the per-iteration samples, ns):\n",
      m.iterations, m.seed);
  o += fmt::format("{:<34} {:>10} {:>21} {:>10} {:>8} {:>22} {:>9}  {}\n", "case", "measured", "95 % CI", "modelled",
                   "diff", "ratio to ref measured", "modelled", "role");
  auto pct = [](double d) { return fmt::format("{:+.1f} %", 100 * d); };
  for (const CaseComparison& x : m.cases) {
    const std::string meas = x.measured_ns ? ns_text(*x.measured_ns) : std::string(to_string(x.role) == std::string("unavailable") ? "unavail." : "-");
    const std::string ci =
        x.measured_ci_ns ? fmt::format("[{}, {}]", ns_text(x.measured_ci_ns->lo), ns_text(x.measured_ci_ns->hi)) : "-";
    const std::string model = x.modelled_ns ? ns_text(*x.modelled_ns) : "-";
    std::string diff = x.diff ? pct(*x.diff) : "-";
    if (x.diff && !x.counted) diff = "(" + diff + ")";
    const std::string mr = x.measured_ratio ? fmt::format("{:.4g} [{:.4g}, {:.4g}]", *x.measured_ratio,
                                                          x.measured_ratio_ci->lo, x.measured_ratio_ci->hi)
                                            : "-";
    const std::string dr = x.modelled_ratio ? fmt::format("{:.4g}", *x.modelled_ratio) : "-";
    std::string role = to_string(x.role);
    if (x.counted) role += x.within_target ? " ✓" : " ✗";
    if (x.role == Role::Fitted) role += ": " + x.detail;
    if (x.role == Role::Primitive) role += " (" + x.detail + ")";
    o += fmt::format("{:<34} {:>10} {:>21} {:>10} {:>8} {:>22} {:>9}  {}\n", x.name, meas, ci, model, diff, mr, dr, role);
  }
  o += fmt::format("\n{} value{} fitted to {} measured figure{} (one each); {} figure{} predicted without a fit of its "
                   "own: {} within ±{:.0f} %{}.\n",
                   m.fitted_count, m.fitted_count == 1 ? "" : "s", m.fitted_count, m.fitted_count == 1 ? "" : "s",
                   m.predicted_count, m.predicted_count == 1 ? "" : "s", m.predicted_within, 100 * m.target,
                   m.predicted_count ? fmt::format(" (largest |diff| {:.1f} %)", 100 * m.max_abs_predicted_diff) : "");
  std::vector<std::string> nc, un;
  for (const CaseComparison& x : m.cases) {
    if (x.role == Role::NotCovered) nc.push_back(x.name);
    if (x.role == Role::Unavailable) un.push_back(x.name);
  }
  if (!nc.empty()) {
    const auto it = std::find_if(m.cases.begin(), m.cases.end(), [](const CaseComparison& x) { return x.role == Role::NotCovered; });
    o += fmt::format("Not covered ({}; the diff in parentheses is shown, not counted): {}.\n", it->detail, fmt::join(nc, ", "));
  }
  if (!un.empty()) o += fmt::format("Unavailable here, modelled on the inherited values only: {}.\n", fmt::join(un, ", "));
  if (!m.fits.empty()) {
    o += "Fitted (each to one measured median, in this order; the rest of each figure is measured or inherited):\n";
    for (const FitOutcome& f : m.fits)
      o += fmt::format("  {:<25} = {:>10} ns  <- {} ({} ns measured, {} ns modelled{})\n", f.step.key, ns_text(f.value_ns),
                       f.step.case_name, ns_text(f.measured_ns), ns_text(f.modelled_ns),
                       f.fitted ? "" : "; NOT fitted: the model is above the measurement with the key at 0");
  }
  return o;
}

nlohmann::json compare_json(const ThisHostModel& m) {
  using nlohmann::json;
  auto opt = [](const std::optional<double>& v) { return v ? json(*v) : json(nullptr); };
  auto iv = [](const std::optional<Interval>& v) { return v ? json{v->lo, v->hi} : json(nullptr); };
  json fits = json::array();
  for (const FitOutcome& f : m.fits)
    fits.push_back({{"key", f.step.key}, {"case", f.step.case_name}, {"value_ns", f.value_ns},
                    {"measured_ns", f.measured_ns}, {"modelled_ns", f.modelled_ns}, {"runs", f.runs},
                    {"fitted", f.fitted}, {"absorbs", f.step.absorbs}});
  json cases = json::array();
  for (const CaseComparison& x : m.cases)
    cases.push_back({{"name", x.name},
                     {"role", to_string(x.role)},
                     {"detail", x.detail},
                     {"measured_median_ns", opt(x.measured_ns)},
                     {"measured_ci95_ns", iv(x.measured_ci_ns)},
                     {"modelled_median_ns", opt(x.modelled_ns)},
                     {"relative_difference", opt(x.diff)},
                     {"measured_ratio", opt(x.measured_ratio)},
                     {"measured_ratio_ci95", x.measured_ratio_ci ? json{x.measured_ratio_ci->lo, x.measured_ratio_ci->hi}
                                                                 : json(nullptr)},
                     {"modelled_ratio", opt(x.modelled_ratio)},
                     {"counted", x.counted},
                     {"within_target", x.within_target}});
  return {{"scenario", m.scenario_file},
          {"iterations", m.iterations},
          {"seed", m.seed},
          {"target", m.target},
          {"fitted", fits},
          {"cases", cases},
          {"counts",
           {{"fitted_values", m.fitted_count},
            {"predicted", m.predicted_count},
            {"predicted_within_target", m.predicted_within},
            {"not_covered", m.not_covered},
            {"unavailable", m.unavailable}}},
          {"max_abs_predicted_difference", m.max_abs_predicted_diff}};
}

}  // namespace ipilab::measure
