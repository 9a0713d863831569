// x2apic-cluster: Linux arch/x86/kernel/apic/x2apic_cluster.c — one ICR write in logical cluster mode
// per cluster of 16 x2APIC IDs that holds targets (each a VM exit; KVM delivers to every destination
// of the write).
#include "workload/mechanisms/builtin.h"
#include "workload/mechanisms/x86_common.h"

namespace ipilab::workload {

MechanismInfo describe_x2apic_cluster() {
  return {"x2apic-cluster",
          Arch::X86,
          "Linux x2APIC cluster mode (x2apic_cluster.c): one ICR write (one VM exit) per cluster of 16 APIC IDs",
          x86_mechanism_params(true),
          joined(x86_icr_cost_keys(), {cost::keys::x2apic_icr_write_fastpath}),
          x86_native_make("x2apic-cluster", x86::X2apicMode::Cluster, false)};
}

}  // namespace ipilab::workload
