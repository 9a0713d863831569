// ipi_hw (kvm-unit-tests arm/micro-bench): CPU0 clears irq_received, sends SGI 1 to CPU1
// (gic_ipi_send_single: an ICC_SGI1R_EL1 write, trapped to KVM), then spins until CPU1's handler set
// irq_received. CPU1 spins in cpu_relax() (its vCPU state is "running"): with GICv4.1 its vPE is
// resident and the redistributor presents the vSGI directly (mechanism gicv4.1-vsgi); with nASSGIreq
// clear (micro-bench's `ipi` test) KVM injects it through a list register after a kick
// (gicv3-emulated-sgi). Reported in ns per round trip, as micro-bench prints it. Seed 003: 850 ns
// (remote ITS) / 750 ns.
#include <fmt/format.h>

#include "common/error.h"
#include "workload/builtin.h"
#include "workload/run_common.h"

namespace ipilab::workload {
namespace {

using namespace cost::keys;
constexpr std::string_view kUnits[] = {"ns", "cycles"};
const IntParam kSender{"sender", 0, 0, 65535, "guest CPU that sends (micro-bench CPU0)"};
const IntParam kTarget{"target", 1, 0, 65535, "guest CPU that takes the SGI (micro-bench CPU1)"};
const IntParam kSgi{"sgi", 1, 0, 15, "SGI number (vINTID 0..15)"};
const ChoiceParam kUnit{"unit", "ns", kUnits, "unit of the figures: ns or cycles (profile clock)"};
constexpr std::string_view kDefaultMechanism = "gicv4.1-vsgi";

std::vector<ParamInfo> params() { return {info(kSender), info(kTarget), info(kSgi), info(kUnit)}; }

class IpiHw final : public Workload {
 public:
  RunResult run(const RunSpec& spec) const override {
    const int n = spec.vm.size();
    const auto sender = static_cast<unsigned>(spec.params.get(kSender, kSender.def, n - 1));
    const auto target = static_cast<unsigned>(spec.params.get(kTarget, kTarget.def, n - 1));
    if (target == sender) throw InputError(spec.params.place("target"), fmt::format("target CPU {} is the sender", target));
    const auto sgi = static_cast<std::uint32_t>(spec.params.get(kSgi));
    const std::string unit = spec.params.get(kUnit);
    Bound b(spec, kDefaultMechanism);
    require_arch(spec, b, Arch::Arm, "ipi_hw");

    RunConfig cfg = run_config(spec, b);
    cfg.compute_steps = {b.pricer.step("sender", "benchmark loop (irq_received = false, loop control)", guest_bench_loop)};
    cfg.ipi_bodies = {HandlerBody{{}, true}};  // the handler's store to irq_received is the flag
    cfg.programs.resize(static_cast<std::size_t>(n));
    cfg.programs[sender] = std::make_unique<LoopProgram>(
        std::vector<unsigned>{target}, std::vector<Op>{Op::mark(), Op::compute_step(0), Op::ipi({}, sgi, 0, true)});
    RunOutput out = run_vm(cfg, b.pricer);

    const double ppu = ps_per_unit(spec, unit);
    std::vector<Metric> m;
    m.push_back(make_metric("ipi_round_trip", unit,
                            "micro-bench ipi_hw: sender SGI write -> SGI at the target -> handler sets irq_received -> "
                            "sender sees it",
                            std::move(out.iteration), ppu));
    m.push_back(make_metric("send_cost", unit, "ICC_SGI1R_EL1 trap to the return to the guest on the sender",
                            std::move(out.send_cost), ppu));
    m.push_back(make_metric("delivery_latency", unit, "send start -> first handler instruction on the target",
                            std::move(out.delivery), ppu));
    auto settings = b.mechanism->settings();
    const int spcpu = spec.vm.pcpu_of(static_cast<int>(sender));
    settings.emplace_back("sender pCPU", fmt::format("{} (socket {})", spcpu, spec.host->cpu(spcpu).socket));
    return assemble(spec, b, std::move(out), std::move(m), std::move(settings), spec.iterations);
  }
};

}  // namespace

WorkloadInfo describe_ipi_hw() {
  WorkloadInfo w{"ipi_hw",
                 "Arm kvm-unit-tests micro-bench ipi_hw: SGI round trip between two vCPUs (seed 003's benchmark); "
                 "main metric: ns per IPI",
                 with_mechanism(params(), kDefaultMechanism), [] { return std::make_unique<IpiHw>(); }};
  w.metrics = {"ipi_round_trip", "send_cost", "delivery_latency"};
  w.cost_keys = {guest_bench_loop};
  w.validate = validator("ipi_hw", params(), std::string(kDefaultMechanism), Arch::Arm);
  w.default_mechanism = std::string(kDefaultMechanism);
  return w;
}

}  // namespace ipilab::workload
