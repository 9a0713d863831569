// ipilab/evidence/measured_figures.h — the figures of an `ipilab measure --json` result, for
// `ipilab calibrate --measured FILE.json`: which measured number is which scenario variant's metric.
//
// The mapping is fixed and small (docs/uncertainty.md, "Calibration from a measurement"):
//
//   measured (JSON)                               figure (scenario / variant / metric, stat)
//   kvm.cases[] MECHANISM/WORKLOAD/TARGET, ok  -> this-host / the variant of the same name / sample, median in ns
//   kvm.cases[] cpuid-exit, ok                 -> this-host / cpuid-exit / sample, median in ns (only when named:
//                                                 it is the measured vm.exit_entry run back through the model)
//   kvm.cases[] counter-read, loop             -> none: primitives, the profile entries guest.counter_read and
//                                                 guest.bench_loop themselves (measure --profile-out)
//   c2c.pairs[]                                -> none: the profile entries mem.cacheline_* themselves
//   a case with status unavailable or failed   -> none: nothing was measured
//   a spinning target on the PVM backend       -> none: it sees an IPI only at its next VM exit, which the
//                                                 simulator's delivery to a running vCPU does not describe
//                                                 (the rule of docs/measure.md, "Said per case")
//
// The figure is the case's median (the statistic the measurement bounds, with its 95 % interval),
// per iteration of the timed sample, exactly what the this-host variant's `sample` metric simulates
// (workload kvm_bench). Nothing is guessed: a case that is named (`--figure`) and maps to none of
// the above, or whose variant the scenario lacks, is an InputError naming the JSON place and the
// reason; without names, every composite case that maps is taken and the others are listed, each
// with its reason, in `left_out`.
#pragma once

#include <string>
#include <vector>

#include "evidence/validate.h"
#include "measure/report.h"

namespace ipilab::evidence {

inline constexpr const char* kMeasuredScenario = "this-host";
inline constexpr const char* kMeasuredMetric = "sample";

struct MeasuredFigures {
  std::vector<Figure> figures;        ///< kind fitted, stat median, unit ns, profile = `profile`
  std::vector<std::string> left_out;  ///< "CASE: why" for what no figure was made of (default selection)
  std::string host;                   ///< "HOST (CPU, N CPUs), kernel K, KVM backend B, DATE"
};

/// The figures of `r` (read from `file`) for the profile `profile`; `names` selects cases by name
/// (empty: every composite case that maps). `variants` are the scenario's variant names.
MeasuredFigures measured_figures(const measure::MeasureReport& r, const std::string& file, const std::string& profile,
                                 const std::vector<std::string>& names, const std::vector<std::string>& variants);

}  // namespace ipilab::evidence
