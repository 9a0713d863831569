// xapic: a Linux guest in xAPIC mode (no x2APIC) on KVM. The guest's driver is apic_flat (logical
// flat, up to 8 CPUs: one ICR write reaches every target) or apic_physflat (one physical ICR write per
// target), chosen as Linux does (arch/x86/kernel/apic/apic_flat_64.c; sends in ipi.c:
// default_send_IPI_mask_logical, default_send_IPI_mask_sequence_phys, __default_send_IPI_shortcut;
// src/x86/guest_xapic.h). Each IPI is the MMIO pair ICR2 then ICR. With APICv (Intel APIC-register
// virtualisation, SDM Vol. 3C "APIC Virtualization") the ICR2 write and the idle wait's ICR read
// are virtualised and the ICR write is a trap-like APIC-write exit (KVM handle_apic_write ->
// kvm_apic_write_nodecode -> kvm_apic_send_ipi); without APICv (enable_apicv = 0, or AMD without
// AVIC) each of the three accesses is an MMIO exit KVM emulates. KVM's x2APIC ICR fastpath does not
// apply. The target side is every hosted x86 mechanism's (x86_target.cpp).
#include "workload/mechanisms/builtin.h"
#include "workload/mechanisms/x86_common.h"

namespace ipilab::workload {

using namespace cost::keys;

MechanismInfo describe_xapic() {
  return {"xapic",
          Arch::X86,
          "Linux xAPIC guest (apic_flat / apic_physflat as Linux picks them): MMIO ICR2 + ICR writes, the ICR write an "
          "APIC-write exit (APICv) or three MMIO exits (apicv = false)",
          x86_mechanism_params(false, {xapic_driver_param()}, false),
          joined({guest_ipi_path_call, guest_cpumask_word, vm_exit_entry, xapic_icr_write_exit, xapic_mmio_exit,
                  x2apic_icr_dest_per_target},
                 x86_target_cost_keys()),
          x86_native_make("xapic", x86::X2apicMode::Physical, false, {.xapic = true})};
}

}  // namespace ipilab::workload
