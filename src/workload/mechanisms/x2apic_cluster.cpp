// x2apic-cluster: Linux arch/x86/kernel/apic/x2apic_cluster.c — one ICR write in logical cluster mode
// per cluster of 16 x2APIC IDs that holds targets (each a VM exit; KVM delivers to every destination
// of the write).
#include "workload/mechanisms/builtin.h"
#include "workload/mechanisms/x86_common.h"

namespace ipilab::workload {

MechanismInfo describe_x2apic_cluster() {
  return x2apic_mechanism_info(
      "x2apic-cluster", "Linux x2APIC cluster mode (x2apic_cluster.c): one ICR write (one VM exit) per cluster of 16 APIC IDs",
      x86::X2apicMode::Cluster);
}

}  // namespace ipilab::workload
