// wakeup: producer/consumer pairs across vCPUs that wake each other, the wake-up-heavy case where
// skipping IPIs to polling targets wins (perf bench sched pipe's shape). Pair i is vCPU i (producer)
// and vCPU i + pairs (consumer). Each side works for work_ns, wakes the other (try_to_wake_up ->
// ttwu_queue_wakelist: the wake entry goes through the target's call_single_queue, and
// send_call_function_single_ipi sends CALL_FUNCTION_SINGLE_VECTOR — or, under skip-if-polling, sets
// need_resched on a polling idle target, the sched_wake_idle_without_ipi case), then blocks. The woken
// side's vCPU runs sched_ttwu_pending from the interrupt or from its idle loop, switches to the task
// and goes on. What the vCPUs do while their task is blocked is their VM state (halted / polling).
// Since Linux 5.8 (a1488664 "sched: Replace rq::wake_list") remote wake-ups use the call-single queue;
// before, ttwu_queue_remote sent the reschedule IPI with the same polling test.
#include <fmt/format.h>

#include "common/error.h"
#include "workload/builtin.h"
#include "workload/builtin_parts.h"

namespace ipilab::workload {
namespace {

using namespace cost::keys;
constexpr auto kUnits = unit_choices(FigureUnit::Ns, FigureUnit::Us, FigureUnit::Cycles);
const IntParam kPairs{"pairs", 0, 1, 32768, "producer/consumer pairs: vCPU i wakes vCPU i + pairs and back", "vCPUs / 2"};
const FloatParam kWork{"work_ns", 2000, 0, 1e12, "what each side computes before waking the other, ns"};
const EnumParam<FigureUnit> kUnit{"unit", FigureUnit::Ns, kUnits, "unit of the figures"};
constexpr std::string_view kDefaultMechanism = "x2apic-physical";

std::vector<ParamInfo> params() { return {info(kPairs), info(kWork), info(kPollingParam), info(kUnit)}; }

class Side final : public Program {
 public:
  Side(bool producer, int partner, sim::Ps work, std::uint32_t vector) {
    Op wake = Op::wake(partner);
    wake.vector = vector;
    ops_ = producer ? std::vector<Op>{Op::mark(), Op::compute(work), wake, Op::block()}
                    : std::vector<Op>{Op::block(), Op::compute(work), wake};
  }
  Op next(ProgramCtx&) override {
    if (i_ == ops_.size()) i_ = 0;
    return ops_[i_++];
  }

 private:
  std::vector<Op> ops_;
  std::size_t i_ = 0;
};

class Wakeup final : public Workload {
 public:
  RunResult run(const RunSpec& spec) const override {
    const int n = spec.vm.size();
    if (n < 2) throw InputError(spec.params.place("pairs"), "wakeup needs a VM of at least 2 vCPUs");
    const auto pairs = static_cast<int>(spec.params.get(kPairs, n / 2, n / 2));
    const FigureUnit unit = spec.params.get(kUnit);
    Bound b(spec, kDefaultMechanism);
    RunConfig cfg = run_config(spec, b);
    cfg.uses_wakeups = true;
    const PollingPolicy polling = polling_policy(spec);
    cfg.polling = polling;
    const auto vector = vector_of(b.arch(), IpiKind::CallFunctionSingle, spec.params.place("mechanism"));
    cfg.call_single_vector = vector;
    const sim::Ps work = sim::from_ns(spec.params.get(kWork));
    cfg.programs.resize(static_cast<std::size_t>(n));
    for (int i = 0; i < pairs; ++i) {
      cfg.programs[static_cast<std::size_t>(i)] = std::make_unique<Side>(true, i + pairs, work, vector);
      cfg.programs[static_cast<std::size_t>(i + pairs)] = std::make_unique<Side>(false, i, work, vector);
    }
    RunOutput out = run_vm(cfg, b.pricer);
    MetricList m(spec, unit);
    m.add("wake_latency", "try_to_wake_up on one vCPU -> the woken task runs on the other", std::move(out.wake));
    m.add("round_trip", "one producer iteration: work, wake the consumer, be woken back", std::move(out.iteration));
    m.add("send_cost", "time inside the send hook, for the wake-ups that sent an IPI", std::move(out.send_cost));
    return finish(spec, b, std::move(out), std::move(m),
                  {{"pairs", std::to_string(pairs)},
                   {"polling", std::string(name_of(kPollingPolicyNames, polling))},
                   {"work", fmt::format("{} ns", spec.params.get(kWork))}});
  }
};

}  // namespace

WorkloadInfo describe_wakeup() {
  return builtin_workload<Wakeup>(
      {"wakeup",
       "producer/consumer pairs waking each other (remote wake-ups through the call-single queue); main metric: wake "
       "latency",
       params(),
       kDefaultMechanism,
       std::nullopt,
       {"wake_latency", "round_trip", "send_cost"}});
}

}  // namespace ipilab::workload
