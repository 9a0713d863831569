// gicv3-emulated-sgi: the Arm baseline before GICv4.1 direct injection (or with nASSGIreq = 0, as
// kvm-unit-tests micro-bench's `ipi` test sets it). KVM traps the guest's ICC_SGI1R_EL1 write
// (access_gic_sgi -> vgic_v3_dispatch_sgi); for each target, vgic_v3_queue_sgi sets the SGI's
// pending_latch and vgic_queue_irq_unlock puts it on the target vCPU's ap_list and kicks it
// (kvm_vcpu_kick: a physical IPI to the pCPU running it, or a wake-up if it blocked in WFI). The
// kicked vCPU exits, vgic_flush_lr_state writes the SGI into one of its list registers (vgic-v3),
// and it re-enters with the virtual interrupt pending.
//
// Pricing (cost keys, src/cost/catalog.h), per ICC_SGI1R_EL1 write (arm_common.h) on the sender:
//   gic.sgi_trap_entry, then per target gic.vgic_queue_sgi and gic.vcpu_kick (the delivery leaves
//   after the kick), then gic.sgi_trap_return; in flight: the interconnect from the sender's node to
//   the target's (host latency matrix).
// Arrival: running target: gic.kick_exit on its pCPU (exit, list-register injection, re-entry);
// halted: vcpu.halt_wakeup. Handler prologue: gic.ack_iar (ICV_IAR1_EL1, no trap with vgic-v3).
#include <fmt/format.h>

#include "workload/mechanisms/arm_common.h"
#include "workload/mechanisms/builtin.h"
#include "workload/counters.h"

namespace ipilab::workload {
namespace {

using namespace cost::keys;
constexpr std::string_view kSender = "sender";

class EmulatedSgi final : public ArmMechanism {
 public:
  explicit EmulatedSgi(MechanismContext& ctx) : ArmMechanism(ctx) {
    Pricer& pr = *pricer_;
    arrival_.running = {pr.step("target", "kicked: exit, vgic_flush_lr_state writes the LR, re-entry", gic_kick_exit, 1, Lane::TargetHv)};
    arrival_.halted = {pr.step("target", "WFI: kvm_vcpu_kick wakes the blocked vCPU", vcpu_halt_wakeup, 1, Lane::TargetHv)};
    arrival_.posted = false;  // a running target is kicked out to have the LR written
    arrival_.prologue = {pr.step("target", "acknowledge: ICC_IAR1_EL1 read", gic_ack_iar)};
  }

  SendPlan plan(const SendRequest& r) override {
    Pricer& pr = *pricer_;
    SendPlan p;
    const int snode = host_->cpu(vm_->pcpu_of(static_cast<int>(r.sender))).node;
    plan_trapped_sgi1r_writes(p, r, [&](unsigned target) {
      p.sender.push_back(pr.step(kSender, "vgic_v3_queue_sgi: pending_latch, ap_list", gic_vgic_queue_sgi, 1, Lane::Exit));
      p.sender.push_back(pr.step(kSender, "kvm_vcpu_kick: physical IPI to the target's pCPU", gic_vcpu_kick, 1, Lane::Exit));
      add_counter(p, pr, counters::kicks);
      p.deliveries.push_back(delivery_after_last_step(p, pr, *host_, *vm_, snode, target, "kick IPI to the target's CPU"));
    });
    return p;
  }

  std::vector<std::pair<std::string, std::string>> settings() const override {
    return {{"mechanism", "gicv3-emulated-sgi"}, {"SGI delivery", "trapped, list registers (vgic-v3), kick to running targets"}};
  }
};

}  // namespace

MechanismInfo describe_gicv3_emulated_sgi() {
  return {"gicv3-emulated-sgi",
          Arch::Arm,
          "GICv3 emulated SGI (no direct vSGI): KVM traps ICC_SGI1R_EL1, queues the SGI on the target's ap_list and "
          "kicks it; the target exits and takes it from a list register",
          {},
          {gic_sgi_trap_entry, gic_vgic_queue_sgi, gic_vcpu_kick, gic_sgi_trap_return, gic_kick_exit, gic_ack_iar,
           vcpu_halt_wakeup},
          [](MechanismContext& ctx) { return std::make_unique<EmulatedSgi>(ctx); }};
}

}  // namespace ipilab::workload
