// avic: AMD's Advanced Virtual Interrupt Controller for an xAPIC guest (AMD64 APM Vol. 2, "Advanced
// Virtual Interrupt Controller"; KVM arch/x86/kvm/svm/avic.c, kvm_amd.avic=1). The guest is Linux in
// xAPIC mode (apic_flat / apic_physflat, src/x86/guest_xapic.h): without x2AVIC, KVM inhibits AVIC
// once a guest enables x2APIC, so an AVIC guest is an xAPIC guest. Its ICR writes go to the vAPIC
// backing page: a fixed, edge-triggered IPI (physical, logical or shorthand destination) is sent by
// the CPU with no exit: the vector set in each target's backing page and, for a target whose
// physical APIC ID table entry has IsRunning set, a doorbell to the pCPU running it (the target
// takes it as a posted interrupt, no exit there either). A target not running (its thread blocked
// in HLT past KVM's halt-polling, avic_vcpu_blocking; or scheduled out, avic_vcpu_put) makes the
// write end in #VMEXIT(AVIC_INCOMPLETE_IPI, IPI target not running) on the sender, which KVM
// handles in avic_incomplete_ipi_interception -> avic_kick_target_vcpus (waking the targets). Other
// delivery modes (NMI, INIT, lowest priority...) exit and are emulated. AVIC's physical APIC ID table
// has entries 0..0xFE (AVIC_MAX_PHYSICAL_ID), which xAPIC's 8-bit IDs cannot exceed.
// AVIC off is mechanism xapic with apicv = false (no APICv on AMD without AVIC).
#include "workload/mechanisms/builtin.h"
#include "workload/mechanisms/x86_common.h"

namespace ipilab::workload {

using namespace cost::keys;

std::vector<cost::CostKey> avic_cost_keys() {
  return joined({guest_ipi_path_call, guest_cpumask_word, vm_exit_entry, avic_icr_write, avic_doorbell,
                 avic_incomplete_ipi, x2apic_icr_dest_per_target},
                x86_target_cost_keys());
}

MechanismInfo describe_avic() {
  return {
      "avic",
      Arch::X86,
      "AMD AVIC, xAPIC guest: a fixed ICR write causes no exit, the CPU rings a running target's doorbell; a target "
      "not running costs the sender an AVIC_INCOMPLETE_IPI exit",
      x86_mechanism_params(false, {xapic_driver_param()}, true),
      joined(avic_cost_keys(), {xapic_icr_write_exit}),
      x86_native_make("avic", x86::X2apicMode::Physical, false, {.xapic = true, .avic = true})};
}

}  // namespace ipilab::workload
