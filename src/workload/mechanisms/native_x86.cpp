// native-x86: bare metal, no hypervisor. The same Linux send paths as the guests (x2APIC physical
// driver, arch/x86/kernel/apic/x2apic_phys.c; shorthands per `shorthand`), each ICR write a WRMSR
// that the local APIC sends (x2apic.native_icr_write); the message crosses the interconnect as in a
// VM (host latency matrix). A running CPU takes the interrupt as is; a CPU idle in HLT/MWAIT leaves
// its C-state first (cpu.idle_exit, the C-state's exit latency: intel_idle's tables). The VM of the
// scenario is read as the machine's CPUs (vCPU n = CPU n on its pinned CPU).
#include "workload/mechanisms/builtin.h"
#include "workload/mechanisms/x86_common.h"

namespace ipilab::workload {

using namespace cost::keys;

MechanismInfo describe_native_x86() {
  return {"native-x86",
          Arch::X86,
          "bare metal x86 (no hypervisor): Linux's x2APIC physical ICR writes (WRMSR, no exit); idle targets leave "
          "HLT/MWAIT (cpu.idle_exit)",
          x86_send_params(false),
          {guest_ipi_path_call, guest_cpumask_word, x2apic_native_icr_write, cpu_idle_exit},
          x86_native_make("native-x86", x86::X2apicMode::Physical, false, {.native = true})};
}

}  // namespace ipilab::workload
