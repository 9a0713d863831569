// kvm-pv: Linux arch/x86/kernel/kvm.c __send_ipi_mask — one KVM_HC_SEND_IPI hypercall per window of
// 128 APIC IDs, executed by KVM's kvm_pv_send_ipi (src/x86/kvm_pv_ipi.h). PV replaces send_IPI_mask and
// send_IPI_mask_allbutself only: a single-target apic->send_IPI is still one x2APIC ICR write.
#include "workload/mechanisms/builtin.h"
#include "workload/mechanisms/x86_common.h"

namespace ipilab::workload {

MechanismInfo describe_kvm_pv() {
  return {"kvm-pv",
          Arch::X86,
          "KVM PV send-IPI (kvm.c __send_ipi_mask): one KVM_HC_SEND_IPI per 128-APIC-ID window; single-target "
          "sends stay x2APIC physical ICR writes",
          x86_mechanism_params(true),
          [] {
            auto k = x86_icr_cost_keys();
            for (auto x : kvm_pv_cost_keys()) k.push_back(x);
            k.push_back(cost::keys::x2apic_icr_write_fastpath);
            return k;
          }(),
          [](MechanismContext& ctx) {
            return std::make_unique<X86NativeMechanism>(ctx, "kvm-pv", x86::X2apicMode::Physical, true);
          }};
}

}  // namespace ipilab::workload
