// x2apic-physical: Linux arch/x86/kernel/apic/x2apic_phys.c — one x2APIC ICR write (WRMSR 0x830,
// physical destination) per target CPU, each a VM exit handled by KVM (kvm_x2apic_icr_write).
#include "workload/mechanisms/builtin.h"
#include "workload/mechanisms/x86_common.h"

namespace ipilab::workload {

MechanismInfo describe_x2apic_physical() {
  return x2apic_mechanism_info("x2apic-physical",
                               "Linux x2APIC physical mode (x2apic_phys.c): one ICR write, hence one VM exit, per destination",
                               x86::X2apicMode::Physical);
}

}  // namespace ipilab::workload
