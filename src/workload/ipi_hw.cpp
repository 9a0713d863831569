// ipi_hw (kvm-unit-tests arm/micro-bench, fact sheet gicv41-vsgi.md §3): CPU0 clears irq_received,
// sends SGI 1 to CPU1 (ICC_SGI1R_EL1, trapped to KVM, which makes the vSGI pending with one GITS_SGIR
// write to find_4_1_its() of the sender's pCPU), then spins until CPU1's handler set irq_received.
// CPU1 spins in cpu_relax(), so its vPE is resident and the redistributor delivers directly.
// Reported in ns per round trip, as micro-bench prints it. Seed 003: 850 ns (remote ITS) / 750 ns.
#include <fmt/format.h>

#include "common/error.h"
#include "workload/builtin.h"
#include "workload/loop.h"

namespace ipilab::workload {
namespace {

std::vector<ParamInfo> params() {
  return {
      {"find_4_1_its", "string", "\"post-seed\"",
       "ITS choice for GITS_SGIR: pre-seed (first v4.1 ITS in its_nodes = the last one firmware reported) or "
       "post-seed (per-CPU local_4_1_its, f1a3fac4095c)"},
      {"sender", "int", "0", "guest CPU that sends (micro-bench CPU0)"},
      {"target", "int", "1", "guest CPU that takes the vSGI (micro-bench CPU1)"},
      {"sgi", "int", "1", "vINTID (SGI number, 0..15)"},
      {"unit", "string", "\"ns\"", "unit of the figures: ns or cycles (profile clock)"},
  };
}

class IpiHw final : public Workload {
 public:
  RunResult run(const RunSpec& spec) const override {
    spec.params.reject_unknown(params());
    const int n = spec.vm.size();
    LoopSpec loop;
    loop.sender = static_cast<unsigned>(spec.params.get_int("sender", 0, 0, n - 1));
    loop.targets = {static_cast<unsigned>(spec.params.get_int("target", 1, 0, n - 1))};
    const auto sgi = static_cast<std::uint8_t>(spec.params.get_int("sgi", 1, 0, 15));
    loop.unit = spec.params.get_choice("unit", "ns", {"ns", "cycles"});
    const std::string pol = spec.params.get_choice("find_4_1_its", "post-seed", {"pre-seed", "post-seed"});
    loop.main_metric = "ipi_round_trip";
    loop.main_description =
        "micro-bench ipi_hw: sender SGI write -> vSGI at the target -> handler sets irq_received -> sender sees it";

    sim::Breakdown bd;
    Pricer pr(spec.profile, bd);
    VsgiPath path(*spec.host, spec.vm, pol == "pre-seed" ? gic::Find41Policy::PreSeed : gic::Find41Policy::PostSeed);
    loop.before_send = {pr.step("sender", "benchmark loop (irq_received = false, loop control)", "guest.bench_loop")};
    loop.plan = path.plan(pr, loop.sender, loop.targets[0], sgi);
    loop.inject_key.clear();  // resident vPE: the redistributor presents the vSGI, no hypervisor on the target
    loop.handler_before_ack = target_steps(pr, {{"target", "interrupt entry", "guest.irq_entry"},
                                                {"target", "acknowledge: ICC_IAR1_EL1 read", "gic.ack_iar"}});
    loop.handler_reads_sender_line = true;  // the store to irq_received takes the line from the sender
    loop.handler_after_ack = interrupt_tail(pr);
    const bool halted = spec.vm.vcpus[loop.targets[0]].initial_state == topology::VcpuState::Halted;
    if (halted)
      loop.back_to_idle = target_steps(pr, {{"target", "WFI: vCPU blocks, vPE made non-resident", "vcpu.halt_exit"}});
    else
      loop.wake_key.clear();

    const gic::ItsChoice c = path.choice(loop.sender);
    std::vector<std::pair<std::string, std::string>> settings{
        {"mechanism", "gicv4.1-vsgi"},
        {"find_4_1_its", pol},
        {"sender pCPU", fmt::format("{} (socket {})", spec.vm.pcpu_of(static_cast<int>(loop.sender)), c.sender_socket)},
        {"ITS written", fmt::format("ITS{} on socket {} ({})", c.its, c.its_socket, c.its_local ? "local" : "remote")},
    };
    return run_loop(spec, loop, bd, std::move(settings));
  }
};

}  // namespace

WorkloadInfo describe_ipi_hw() {
  return {"ipi_hw",
          "Arm kvm-unit-tests micro-bench ipi_hw: vSGI round trip between two vCPUs through GICv4.1 direct "
          "injection (seed 003's benchmark); main metric: ns per IPI",
          params(), [] { return std::make_unique<IpiHw>(); }};
}

}  // namespace ipilab::workload
