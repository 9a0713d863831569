// ipi_hw (kvm-unit-tests arm/micro-bench): CPU0 clears irq_received, sends SGI 1 to CPU1
// (gic_ipi_send_single: an ICC_SGI1R_EL1 write, trapped to KVM), then spins until CPU1's handler set
// irq_received. CPU1 spins in cpu_relax() (its vCPU state is "running"): with GICv4.1 its vPE is
// resident and the redistributor presents the vSGI directly (mechanism gicv4.1-vsgi); with nASSGIreq
// clear (micro-bench's `ipi` test) KVM injects it through a list register after a kick
// (gicv3-emulated-sgi). Reported in ns per round trip, as micro-bench prints it. Seed 003: 850 ns
// (remote ITS) / 750 ns.
#include <fmt/format.h>

#include "workload/builtin.h"
#include "workload/builtin_parts.h"

namespace ipilab::workload {
namespace {

using namespace cost::keys;
const IntParam kSender{"sender", 0, 0, 65535, "guest CPU that sends (micro-bench CPU0)"};
const IntParam kTarget{"target", 1, 0, 65535, "guest CPU that takes the SGI (micro-bench CPU1)"};
const IntParam kSgi{"sgi", 1, 0, 15, "SGI number (vINTID 0..15)"};
constexpr std::string_view kDefaultMechanism = "gicv4.1-vsgi";

std::vector<ParamInfo> params() { return {info(kSender), info(kTarget), info(kSgi), info(kUnitNsParam)}; }

class IpiHw final : public Workload {
 public:
  RunResult run(const RunSpec& spec) const override {
    const auto [sender, target] = sender_and_target(spec, kSender, kTarget);
    const auto sgi = static_cast<std::uint32_t>(spec.params.get(kSgi));
    const FigureUnit unit = spec.params.get(kUnitNsParam);
    Bound b(spec, kDefaultMechanism);
    require_arch(spec, b, Arch::Arm, "ipi_hw");

    RunConfig cfg = run_config(spec, b);
    cfg.compute_steps = {b.pricer.step("sender", "benchmark loop (irq_received = false, loop control)", guest_bench_loop)};
    cfg.ipi_bodies = {HandlerBody{{}, true}};  // the handler's store to irq_received is the flag
    cfg.programs.resize(static_cast<std::size_t>(spec.vm.size()));
    cfg.programs[sender] = std::make_unique<LoopProgram>(
        std::vector<unsigned>{target}, std::vector<Op>{Op::mark(), Op::compute_step(0), Op::ipi({}, sgi, 0, true)});
    RunOutput out = run_vm(cfg, b.pricer);

    MetricList m(spec, unit);
    m.add("ipi_round_trip",
          "micro-bench ipi_hw: sender SGI write -> SGI at the target -> handler sets irq_received -> sender sees it",
          std::move(out.iteration));
    m.add("send_cost", "ICC_SGI1R_EL1 trap to the return to the guest on the sender", std::move(out.send_cost));
    m.add("delivery_latency", "send start -> first handler instruction on the target", std::move(out.delivery));
    const int spcpu = spec.vm.pcpu_of(static_cast<int>(sender));
    return finish(spec, b, std::move(out), std::move(m),
                  {{"sender pCPU", fmt::format("{} (socket {})", spcpu, spec.host->cpu(spcpu).socket)}});
  }
};

}  // namespace

WorkloadInfo describe_ipi_hw() {
  return builtin_workload<IpiHw>({"ipi_hw",
                                  "Arm kvm-unit-tests micro-bench ipi_hw: SGI round trip between two vCPUs (seed 003's "
                                  "benchmark); main metric: ns "
                                  "per IPI",
                                  params(),
                                  kDefaultMechanism,
                                  Arch::Arm,
                                  {"ipi_round_trip", "send_cost", "delivery_latency"},
                                  {guest_bench_loop}});
}

}  // namespace ipilab::workload
