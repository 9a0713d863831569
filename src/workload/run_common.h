// ipilab/workload/run_common.h — what every workload does around the core: bind the mechanism the
// scenario names, turn the core's output into a RunResult (metrics in the workload's unit, counters,
// breakdown per iteration, resources, throughput, provenance), validate parameters.
#pragma once

#include <array>

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/breakdown.h"
#include "workload/mechanism.h"
#include "workload/program.h"
#include "workload/vm_run.h"
#include "workload/workload.h"

namespace ipilab::workload {

/// A run's pricing context and its mechanism. Not movable (the pricer points at the members).
struct Bound {
  Bound(const RunSpec& spec, std::string_view default_mechanism);
  Bound(const Bound&) = delete;
  Bound& operator=(const Bound&) = delete;

  sim::Breakdown breakdown;
  Counters counters;
  Pricer pricer;
  const MechanismInfo* info = nullptr;
  std::unique_ptr<Mechanism> mechanism;
  Arch arch() const { return info->arch; }
};

/// A program that repeats `ops` forever (the core stops the run by counting marks).
class LoopProgram final : public Program {
 public:
  LoopProgram() = default;
  /// `targets` is copied first; ops' `targets` spans are pointed at the copy (use an empty span in
  /// the ops given: every Call/Ipi op of a LoopProgram goes to `targets`).
  LoopProgram(std::vector<unsigned> targets, std::vector<Op> ops);
  Op next(ProgramCtx& ctx) override;

 private:
  std::vector<unsigned> targets_;
  std::vector<Op> ops_;
  std::size_t i_ = 0;
};

/// The run settings every workload starts from: its spec, the bound mechanism, the scenario's warm-up
/// and iterations.
RunConfig run_config(const RunSpec& spec, const Bound& b);

/// The `polling` parameter (kPollingParam) as the driver's policy.
PollingPolicy polling_policy(const RunSpec& spec);

/// The function a call-function workload runs on each target (`handler`): flush_tlb_func, priced as
/// guest.tlb_flush_handler, or a plain callback (guest.callback).
enum class CallHandler : std::uint8_t { TlbFlush, Callback };
inline constexpr EnumName<CallHandler> kCallHandlerNames[] = {{CallHandler::TlbFlush, "tlb_flush"},
                                                              {CallHandler::Callback, "callback"}};
/// How a sender's think time between sends is drawn (`arrivals`): fixed, or exponential with that
/// mean (Poisson sends).
enum class Arrivals : std::uint8_t { Fixed, Poisson };
inline constexpr EnumName<Arrivals> kArrivalsNames[] = {{Arrivals::Fixed, "fixed"}, {Arrivals::Poisson, "poisson"}};

/// The unit a workload's figures are printed in (`unit`): ns, us, or cycles of the profile clock.
enum class FigureUnit : std::uint8_t { Ns, Us, Cycles };
inline constexpr EnumName<FigureUnit> kFigureUnitNames[] = {
    {FigureUnit::Ns, "ns"}, {FigureUnit::Us, "us"}, {FigureUnit::Cycles, "cycles"}};
/// "ns", "us", "cycles" (the label every metric of the run carries).
constexpr std::string_view unit_name(FigureUnit u) { return name_of(kFigureUnitNames, u); }
/// A workload's allowed units, in the order its `unit` parameter lists them, named by kFigureUnitNames.
template <class... U>
constexpr std::array<EnumName<FigureUnit>, sizeof...(U)> unit_choices(U... units) {
  return {EnumName<FigureUnit>{units, unit_name(units)}...};
}

/// The `unit` parameter of the workloads whose figures are ns by default (or cycles of the profile clock).
extern const EnumParam<FigureUnit> kUnitNsParam;
/// The `unit` parameter of the workloads whose figures are cycles by default (or ns).
extern const EnumParam<FigureUnit> kUnitCyclesParam;

/// ps in one `unit` (cycles use the profile clock, InputError naming the profile when it has none).
double ps_per_unit(const RunSpec& spec, FigureUnit unit);

Metric make_metric(std::string name, std::string unit, std::string description, sim::Histogram h, double ps_per_unit);

/// The RunResult of a core run: counters (sends, hypercalls, native_fallbacks, misdelivered, lost
/// always present), breakdown per `per_iteration` (in the main metric's unit), resources, throughput,
/// provenance (profile + host), notes (lost iterations, the mechanism's, a broken conservation count).
RunResult assemble(const RunSpec& spec, Bound& bound, RunOutput&& out, std::vector<Metric> metrics,
                   std::vector<std::pair<std::string, std::string>> settings, std::uint64_t per_iteration);

/// A validate function for WorkloadInfo: the workload's own parameters + `mechanism` + the chosen
/// mechanism's parameters are known; anything else is an error. `arch` restricts the mechanisms.
std::function<void(const Params&)> validator(std::string workload, std::vector<ParamInfo> own,
                                             std::string default_mechanism, std::optional<Arch> arch);
/// own + the mechanism parameter, for listings.
std::vector<ParamInfo> with_mechanism(std::vector<ParamInfo> own, std::string_view default_mechanism);

/// The mechanism of `spec` restricted to `arch` (InputError naming workload.mechanism otherwise).
void require_arch(const RunSpec& spec, const Bound& b, Arch arch, std::string_view workload);

/// Guest CPU numbers "0-3,8" for settings.
std::string cpu_list(const std::vector<unsigned>& cpus);

}  // namespace ipilab::workload
