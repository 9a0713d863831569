// kick (x86): a PV spinlock unlock waking the halted waiter — Hyper-V's hv_qlock_kick sends
// X86_PLATFORM_IPI_VECTOR (0xF7) with apic->send_IPI(cpu) (arch/x86/hyperv/hv_spinlock.c), which is
// __send_ipi_one on an enlightened guest (seed 000: "send_ipi_one() is important for PV spinlock
// kick"). The target idles in HLT; the metric is the wake latency: send start -> the target's first
// handler instruction. The sender does not wait for the handler; like pv_kick_node, which kicks only a
// waiter in vcpu_halted state, it kicks again once the target is back in HLT, after a think time.
#include <fmt/format.h>

#include "common/error.h"
#include "workload/builtin.h"
#include "workload/builtin_parts.h"

namespace ipilab::workload {
namespace {

using namespace cost::keys;
const IntParam kSender{"sender", 0, 0, 65535, "guest CPU that releases the lock and kicks"};
const IntParam kTarget{"target", 1, 0, 65535, "halted guest CPU that is kicked (vm.halted must list it)"};
const IntParam kVector{"vector", 0xF7, 0, 255, "IPI vector (X86_PLATFORM_IPI_VECTOR)", "247 (0xF7)"};
const FloatParam kThink{"think_ns", 1000, 0, 1e9, "sender idle time between kicks, ns"};
constexpr std::string_view kDefaultMechanism = "hyperv";

std::vector<ParamInfo> params() {
  return {info(kSender), info(kTarget), info(kVector), info(kThink), info(kUnitCyclesParam)};
}

class Kick final : public Workload {
 public:
  RunResult run(const RunSpec& spec) const override {
    const auto [sender, target] = sender_and_target(spec, kSender, kTarget);
    if (spec.vm.vcpus[target].initial_state != topology::VcpuState::Halted)
      throw InputError(spec.params.place("target"),
                       fmt::format("the kicked vCPU {} must idle in HLT (list it in vm.halted): a PV spinlock waiter "
                                   "halts in pv_wait",
                                   target));
    const FigureUnit unit = spec.params.get(kUnitCyclesParam);
    Bound b(spec, kDefaultMechanism);
    require_arch(spec, b, Arch::X86, "kick");

    RunConfig cfg = run_config(spec, b);
    cfg.ipi_bodies = {HandlerBody{}};
    cfg.delivery_tags = 1;
    cfg.programs.resize(static_cast<std::size_t>(spec.vm.size()));
    cfg.programs[sender] = std::make_unique<LoopProgram>(
        std::vector<unsigned>{target},
        std::vector<Op>{Op::mark(), Op::ipi({}, static_cast<std::uint32_t>(spec.params.get(kVector)), 0, false, 0),
                        Op::wait_idle(static_cast<int>(target)), Op::compute(sim::from_ns(spec.params.get(kThink)))});
    RunOutput out = run_vm(cfg, b.pricer);

    MetricList m(spec, unit);
    m.add("wake_latency", "kick start on the sender -> first handler instruction on the halted target",
          std::move(out.delivery_by_tag[0]));
    m.add("send_cost", "time inside the send hook on the sender (apic->send_IPI entry to return)",
          std::move(out.send_cost));
    return finish(spec, b, std::move(out), std::move(m), {{"target idle", "HLT (kicked)"}});
  }
};

}  // namespace

WorkloadInfo describe_kick() {
  return builtin_workload<Kick>(
      {"kick",
       "x86 PV spinlock kick: one IPI to a halted vCPU (hv_qlock_kick -> send_IPI); main metric: wake latency",
       params(),
       kDefaultMechanism,
       Arch::X86,
       {"wake_latency", "send_cost"}});
}

}  // namespace ipilab::workload
