// kvm-pv: Linux arch/x86/kernel/kvm.c __send_ipi_mask — one KVM_HC_SEND_IPI hypercall per window of
// 128 APIC IDs, executed by KVM's kvm_pv_send_ipi (src/x86/kvm_pv_ipi.h). PV replaces send_IPI_mask and
// send_IPI_mask_allbutself only: a single-target apic->send_IPI is still one x2APIC ICR write.
// PV TLB flush (kvm_flush_tlb_multi, Wanpeng Li, Linux 4.16, KVM_FEATURE_PV_TLB_FLUSH with steal
// time): before the flush IPIs the guest reads each target's steal-time record; a target the host
// marked KVM_VCPU_PREEMPTED gets KVM_VCPU_FLUSH_TLB set there (cmpxchg) and is dropped from the mask,
// the host flushing its TLB at its next entry (record_steal_time -> kvm_vcpu_flush_tlb_guest); the
// others get native_flush_tlb_multi's call-function IPIs. Off by default so that the shipped fits'
// runs, which have no preempted vCPU, stay as they were; the per-target steal-time read is not priced.
#include "workload/mechanisms/builtin.h"
#include "workload/mechanisms/x86_common.h"

namespace ipilab::workload {

namespace {
const BoolParam kPvTlbFlush{"pv_tlb_flush", false,
                            "KVM PV TLB flush (kvm_flush_tlb_multi, Linux >= 4.16): a TLB-flush call skips the "
                            "targets whose steal-time record says preempted (vm.preempted), flagging "
                            "KVM_VCPU_FLUSH_TLB instead (counter pv_tlb_flush_skips); false = native_flush_tlb_multi "
                            "IPIs every target"};
}  // namespace

MechanismInfo describe_kvm_pv() {
  return {"kvm-pv",
          Arch::X86,
          "KVM PV send-IPI (kvm.c __send_ipi_mask): one KVM_HC_SEND_IPI per 128-APIC-ID window; single-target "
          "sends stay x2APIC physical ICR writes; PV TLB flush skips preempted targets (pv_tlb_flush)",
          [] {
            auto v = x86_mechanism_params(true);
            v.push_back(info(kPvTlbFlush));
            return v;
          }(),
          joined(joined(x86_icr_cost_keys(), kvm_pv_cost_keys()), {cost::keys::x2apic_icr_write_fastpath}),
          [](MechanismContext& ctx) {
            X86SendOptions o;
            o.pv_tlb_flush = ctx.params.get(kPvTlbFlush);
            return std::make_unique<X86NativeMechanism>(ctx, "kvm-pv", x86::X2apicMode::Physical, true, o);
          }};
}

}  // namespace ipilab::workload
