// ipilab/measure/this_host.h — the measured cases simulated (`ipilab measure --compare`,
// `--profile-out`): the cost profile of this machine with the values a measurement fits, the built-in
// `this-host` scenario (workload kvm_bench: the harness's guest programs through the simulator's
// mechanisms) run on it in the same process, and measured vs modelled medians per case.
//
// What maps to what. Measured primitives are profile entries (profile_writer.h): counter-read ->
// guest.counter_read, loop -> guest.bench_loop, cpuid-exit -> vm.exit_entry, c2c -> mem.cacheline_*
// (priced by kvm_bench for the flag and CSD lines). Every composite case (mechanism x workload x
// target) is the this-host variant of the same name. The composite cases also need what no case here
// measures on its own; those keys keep the base's values (estimates), except one per fit step below,
// fitted in this order so that the variant's median equals the measured median:
//
//   vcpu.halt_wakeup          <- x2apic-physical/ipi-roundtrip/halt
//   guest.callback            <- x2apic-physical/call-single/halt
//   hv.hypercall_entry_exit   <- hyperv/ipi-roundtrip/halt
//   hv.slow_input_map         <- hyperv-ex/ipi-roundtrip/halt
//   apic.interrupt_injection  <- x2apic-physical/ipi-roundtrip/spin  (not on PVM: see below)
//   kvm.pv_send_ipi_call      <- kvm-pv/ipi-roundtrip/halt           (when KVM PV could run)
//
// (fit_plan() says for each what the one measured figure holds that cannot be told apart.) A step
// whose case was not measured, or is not covered, fits nothing: its key stays the base's. Every other
// covered case is PREDICTED: its modelled median comes from measured and fitted values without a fit of
// its own, and is what the 10 % target is about. Each fit is a one-dimensional root search on the
// simulated median (the key is on the critical path once per iteration: secant steps from 0, at most
// 12 runs of that variant, to 0.05 %); a median the model already exceeds with the key at 0 cannot be
// fitted: the key is 0 and the case is a miss, said so.
//
// Not covered, per case and said so: a spinning target on the PVM backend (kvm_pvm) sees an IPI only at
// its next VM exit, which the simulator's posted-interrupt delivery does not describe; cases this KVM
// could not run (KVM PV on PVM) are unavailable: they are modelled on the inherited values and shown,
// never compared. counter-read and loop are primitives (the profile holds them as measured); cpuid-exit
// is the primitive vm.exit_entry run back through the model (a consistency check, not a prediction).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "measure/profile_writer.h"
#include "measure/report.h"

namespace ipilab::measure {

struct FitStep {
  std::string key;
  std::string case_name;
  std::string absorbs;  ///< what the one figure holds besides the key, which this measurement cannot separate
};
/// The fit steps, in order (see the file comment).
const std::vector<FitStep>& fit_plan();

enum class Role { Primitive, Fitted, Predicted, NotCovered, Unavailable, Failed, NotMeasured };
const char* to_string(Role r);

struct CaseComparison {
  std::string name;
  Role role = Role::Predicted;
  std::string detail;                        ///< the key (primitive, fitted) or why (not covered, ...)
  std::optional<double> measured_ns;         ///< median
  std::optional<Interval> measured_ci_ns;    ///< 95 % interval of the median
  std::optional<double> modelled_ns;         ///< median of the variant's `sample` metric
  std::optional<double> diff;                ///< (modelled - measured) / measured
  std::optional<double> measured_ratio;      ///< to the reference (cpuid-exit), as measured
  std::optional<Interval> measured_ratio_ci;
  std::optional<double> modelled_ratio;      ///< modelled / modelled reference
  bool counted = false;                      ///< fitted or predicted: held to the target
  bool within_target = false;
};

struct FitOutcome {
  FitStep step;
  double value_ns = 0;
  double measured_ns = 0;
  double modelled_ns = 0;  ///< the variant's median with the value
  unsigned runs = 0;
  bool fitted = false;     ///< false: the measured median is below the model without the key (value 0)
};

struct ThisHostModel {
  std::string profile_text;                ///< the complete profile, fitted entries included
  std::vector<FittedCost> fitted_entries;  ///< what profile_text holds as fitted
  std::vector<FitOutcome> fits;
  std::vector<CaseComparison> cases;       ///< in the measured order, then variants nobody measured
  std::string scenario_file;
  std::uint64_t iterations = 0, seed = 0;
  double target = 0.10;
  // Counts: fitted values, cases predicted without a fit of their own, of those within the target.
  unsigned fitted_count = 0, predicted_count = 0, predicted_within = 0;
  unsigned not_covered = 0, unavailable = 0;
  double max_abs_predicted_diff = 0;
};

struct ModelOptions {
  std::string scenario = "this-host";       ///< built-in name or file
  std::optional<std::uint64_t> iterations;  ///< per variant (default: the scenario's)
  double target = 0.10;
  std::function<void(const std::string&)> progress;
};

/// The profile of `r` over `base` with the fits, and the this-host scenario run on exactly that text
/// (cost::Profile::parse of it, as `ipilab run this-host --profile F` reads F). Throws InputError when
/// `r` has no KVM case (nothing to compare), or what the scenario or profile throw.
ThisHostModel model_this_host(const MeasureReport& r, const BaseProfile& base, const ModelOptions& o = {});

/// The side-by-side table (measured and modelled median, relative difference, ratio to the reference,
/// role) with the fitted values and the counts.
std::string compare_table(const ThisHostModel& m);
/// {"scenario", "iterations", "seed", "target", "fitted": [{key, case, value_ns, measured_ns, modelled_ns,
///  fitted, absorbs}], "cases": [{name, role, detail, measured_median_ns, measured_ci95_ns, modelled_median_ns,
///  relative_difference, measured_ratio, measured_ratio_ci95, modelled_ratio, counted, within_target}],
///  "counts": {fitted_values, predicted, predicted_within_target, not_covered, unavailable},
///  "max_abs_predicted_difference"}
nlohmann::json compare_json(const ThisHostModel& m);

}  // namespace ipilab::measure
