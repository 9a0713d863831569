#include "evidence/measured_figures.h"

#include <algorithm>

#include <fmt/format.h>

#include "common/error.h"
#include "measure/profile_writer.h"
#include "measure/stats.h"

namespace ipilab::evidence {

namespace {

// Why case `c` makes no figure ("" when it makes one); `named`: the user asked for it by name.
std::string unmapped(const measure::MeasureReport& r, const measure::CaseReport& c, bool named,
                     const std::vector<std::string>& variants) {
  const kvm::BenchCase& b = c.result.bench;
  if (b.kind == kvm::CaseKind::CounterRead)
    return "a primitive, not a figure: it is the profile entry guest.counter_read (ipilab measure --profile-out writes it)";
  if (b.kind == kvm::CaseKind::Loop)
    return "a primitive, not a figure: it is the profile entry guest.bench_loop (ipilab measure --profile-out writes it)";
  if (c.status != measure::CaseStatus::Ok || !c.cycles)
    return fmt::format("nothing measured (status {}{})", c.status == measure::CaseStatus::Failed ? "failed" : "unavailable",
                       c.reason.empty() ? "" : ": " + c.reason);
  if (b.kind == kvm::CaseKind::CpuidExit && !named)
    return "the measured vm.exit_entry run back through the model (a consistency check); name it with --figure to fit to it";
  if (b.kind == kvm::CaseKind::Ipi && b.target == kvm::TargetState::Spin && r.host.kvm_backend == "kvm_pvm")
    return "a spinning target on the PVM backend (kvm_pvm) sees an IPI only at its next VM exit, which the simulator's "
           "delivery to a running vCPU does not describe";
  if (std::find(variants.begin(), variants.end(), c.name()) == variants.end())
    return fmt::format("the {} scenario has no variant of that name", kMeasuredScenario);
  return {};
}

Figure figure_of(const measure::MeasureReport& r, const measure::CaseReport& c, const std::string& place, const std::string& profile,
                 const std::string& host) {
  Figure f;
  f.id = c.name();
  f.profile = profile;
  f.figure = fmt::format("{}: median per iteration, measured", c.name());
  f.unit = "ns";
  f.value = measure::cycles_to_ns(c.cycles->median, r.tsc_khz);
  f.stat = "median";
  f.kind = FigureKind::Fitted;
  f.scenario = kMeasuredScenario;
  f.variant = c.name();
  f.metric = kMeasuredMetric;
  f.source = fmt::format("MEASURED by ipilab measure {}: {} samples{}", host, c.cycles->count,
                         c.median_ci ? fmt::format(", 95 % interval of the median [{:.6g}, {:.6g}] ns",
                                                   measure::cycles_to_ns(c.median_ci->lo, r.tsc_khz),
                                                   measure::cycles_to_ns(c.median_ci->hi, r.tsc_khz))
                                     : std::string());
  f.place = place;
  return f;
}

}  // namespace

MeasuredFigures measured_figures(const measure::MeasureReport& r, const std::string& file, const std::string& profile,
                                 const std::vector<std::string>& names, const std::vector<std::string>& variants) {
  MeasuredFigures out;
  out.host = measure::measured_where(r.host) + ", " + r.host.date_utc;
  if (r.kvm.empty())
    throw InputError(file, fmt::format("holds no KVM case ({}): a c2c matrix is the profile entries mem.cacheline_*, not figures of a "
                                       "scenario variant, so there is nothing to fit to (measure kvm --json gives the cases)",
                                       r.kvm_unavailable.empty() ? "c2c only" : "KVM unavailable: " + r.kvm_unavailable));
  if (r.tsc_khz == 0) throw InputError(file + ": kvm.tsc_khz", "missing or 0: the medians cannot be converted to ns");
  for (const auto& n : names) {
    if (n.rfind("c2c", 0) == 0 || n.rfind("mem.", 0) == 0)
      throw InputError("--figure " + n, "a c2c pair is a profile entry (mem.cacheline_*), not a figure of a scenario variant");
    const auto it = std::find_if(r.kvm.begin(), r.kvm.end(), [&](const measure::CaseReport& c) { return c.name() == n; });
    if (it == r.kvm.end()) {
      std::string all;
      for (const auto& c : r.kvm) all += (all.empty() ? "" : ", ") + c.name();
      throw InputError("--figure " + n, fmt::format("{} measured no such case (it holds: {})", file, all));
    }
  }
  for (std::size_t i = 0; i < r.kvm.size(); ++i) {
    const measure::CaseReport& c = r.kvm[i];
    const bool named = std::find(names.begin(), names.end(), c.name()) != names.end();
    if (!names.empty() && !named) continue;
    const std::string place = fmt::format("{}: kvm.cases[{}] ({})", file, i, c.name());
    const std::string why = unmapped(r, c, named, variants);
    if (!why.empty()) {
      if (named) throw InputError(place, "maps to no scenario variant: " + why);
      out.left_out.push_back(c.name() + ": " + why);
      continue;
    }
    out.figures.push_back(figure_of(r, c, place, profile, out.host));
  }
  if (out.figures.empty()) throw InputError(file, "no measured case maps to a scenario variant (see --help for the mapping)");
  return out;
}

}  // namespace ipilab::evidence
