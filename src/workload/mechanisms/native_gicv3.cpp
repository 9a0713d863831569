// native-gicv3: bare-metal arm64 (no hypervisor). Linux's GICv3 driver sends an IPI with
// gic_ipi_send_mask (drivers/irqchip/irq-gic-v3.c): for each group of targets that share
// Aff3.Aff2.Aff1 (gic_compute_target_list: at most 16 Aff0 values per write) one write of
// ICC_SGI1R_EL1 (gic_send_sgi; Arm GIC architecture specification IHI 0069, "ICC_SGI1R_EL1"), then
// an ISB. The CPU interface hands the SGI to the redistributors, which pend it at each target's CPU
// interface: no trap, no hypervisor. A running CPU takes it as is; a CPU idle in WFI (cpu_do_idle)
// leaves its low-power state first (cpu.idle_exit). The handler reads ICC_IAR1_EL1 (gic.ack_iar).
// The VM of the scenario is read as the machine's CPUs (vCPU n = CPU n on its pinned CPU), and the
// grouping is arm_common.h's (CPU n: Aff0 = n % 16, Aff1 = n / 16), as on a host whose MPIDRs number
// 16 CPUs per cluster.
#include "workload/counters.h"
#include "workload/mechanisms/arm_common.h"
#include "workload/mechanisms/builtin.h"

namespace ipilab::workload {
namespace {

using namespace cost::keys;
constexpr std::string_view kSender = "sender";

class NativeGicv3 final : public ArmMechanism {
 public:
  explicit NativeGicv3(MechanismContext& ctx) : ArmMechanism(ctx) {
    Pricer& pr = *pricer_;
    arrival_.native = true;
    arrival_.halted = {pr.step("target", "leave WFI (the idle state's exit latency)", cpu_idle_exit, 1, Lane::Guest)};
    arrival_.prologue = {pr.step("target", "acknowledge: ICC_IAR1_EL1 read", gic_ack_iar)};
  }

  SendPlan plan(const SendRequest& r) override {
    Pricer& pr = *pricer_;
    SendPlan p;
    const int snode = host_->cpu(vm_->pcpu_of(static_cast<int>(r.sender))).node;
    std::uint64_t writes = 0;
    for (const auto& [b, e] : sgi1r_writes(r.targets)) {
      p.sender.push_back(pr.step(kSender, "ICC_SGI1R_EL1 write (no trap: bare metal)", gic_native_sgi1r_write, 1, Lane::Guest));
      ++writes;
      for (std::size_t i = b; i < e; ++i) {
        p.deliveries.push_back(
            delivery_after_last_step(p, pr, *host_, *vm_, snode, r.targets[i], "SGI to the target's redistributor"));
      }
    }
    if (writes) add_counter(p, pr, counters::sgi1r_writes, writes);
    return p;
  }

  std::vector<std::pair<std::string, std::string>> settings() const override {
    return {{"mechanism", "native-gicv3"}, {"SGI delivery", "bare metal: ICC_SGI1R_EL1 writes, one per 16-CPU Aff1 group"}};
  }
};

}  // namespace

MechanismInfo describe_native_gicv3() {
  return {"native-gicv3",
          Arch::Arm,
          "bare metal arm64 (no hypervisor): Linux gic_ipi_send_mask, one ICC_SGI1R_EL1 write per group of 16 "
          "Aff0 targets, no trap; idle targets leave WFI (cpu.idle_exit)",
          {},
          {gic_native_sgi1r_write, gic_ack_iar, cpu_idle_exit},
          [](MechanismContext& ctx) { return std::make_unique<NativeGicv3>(ctx); }};
}

}  // namespace ipilab::workload
