// kvm-pv: Linux arch/x86/kernel/kvm.c __send_ipi_mask — one KVM_HC_SEND_IPI hypercall per window of
// 128 APIC IDs, executed by KVM's kvm_pv_send_ipi (src/x86/kvm_pv_ipi.h). PV replaces send_IPI_mask and
// send_IPI_mask_allbutself only: a single-target apic->send_IPI is still one x2APIC ICR write. An
// xAPIC guest (xapic = true) has apic_flat or apic_physflat; apic_flat's single send goes through
// send_IPI_mask (default_send_IPI_single), so there one target is a hypercall too.
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
const BoolParam kXapic{"xapic", false,
                       "the guest runs in xAPIC mode (QEMU -cpu ...,-x2apic; apic_driver picks flat / physflat): PV "
                       "replaces send_IPI_mask, which apic_flat's single-target send also calls, so with flat one "
                       "target is a KVM_HC_SEND_IPI; physflat's single send is an MMIO ICR write"};
}  // namespace

MechanismInfo describe_kvm_pv() {
  return {"kvm-pv",
          Arch::X86,
          "KVM PV send-IPI (kvm.c __send_ipi_mask): one KVM_HC_SEND_IPI per 128-APIC-ID window; single-target "
          "sends stay x2APIC physical ICR writes (xapic = true: MMIO writes with physflat, a hypercall with flat); PV TLB flush skips preempted targets (pv_tlb_flush)",
          [] {
            auto v = x86_mechanism_params(true);
            v.push_back(info(kPvTlbFlush));
            v.push_back(info(kXapic));
            v.push_back(xapic_driver_param());
            return v;
          }(),
          joined(joined(x86_icr_cost_keys(), kvm_pv_cost_keys()),
                 {cost::keys::x2apic_icr_write_fastpath, cost::keys::xapic_icr_write_exit, cost::keys::xapic_mmio_exit}),
          [](MechanismContext& ctx) {
            X86SendOptions o;
            o.pv_tlb_flush = ctx.params.get(kPvTlbFlush);
            o.xapic = ctx.params.get(kXapic);
            return std::make_unique<X86NativeMechanism>(ctx, "kvm-pv", x86::X2apicMode::Physical, true, o);
          }};
}

}  // namespace ipilab::workload
