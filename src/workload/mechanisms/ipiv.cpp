// ipiv: Intel IPI virtualisation (Sapphire Rapids and later; KVM support by Zeng Guang and Chao Gao,
// Linux 5.19, module parameter kvm_intel.enable_ipiv). The guest's x2APIC ICR write that is fixed,
// physical, without shorthand and to one APIC ID inside the PID-pointer table causes no VM exit: the
// CPU sets the vector in the target's posted-interrupt descriptor and sends its notification (Intel
// SDM Vol. 3C, "IPI Virtualization"). Any other write (a shorthand, a logical destination, the
// broadcast ID) is an APIC-write exit that KVM emulates as without IPIv. The guest is Linux's x2APIC
// physical driver (one write per target). A running target takes the posted interrupt without an exit;
// a blocked one is woken (KVM points the PID's notification at its wake-up vector while it blocks).
#include "workload/mechanisms/builtin.h"
#include "workload/mechanisms/x86_common.h"

namespace ipilab::workload {

using namespace cost::keys;

MechanismInfo describe_ipiv() {
  return {"ipiv",
          Arch::X86,
          "Intel IPI virtualisation (KVM enable_ipiv, Linux 5.19): an eligible x2APIC ICR write causes no exit, the "
          "CPU posts into the target's PID; shorthand or logical writes are APIC-write exits",
          x86_mechanism_params(false),
          joined(x86_icr_cost_keys(), {ipiv_icr_write, ipiv_pid_post}),
          x86_native_make("ipiv", x86::X2apicMode::Physical, false, {.ipiv = true})};
}

}  // namespace ipilab::workload
