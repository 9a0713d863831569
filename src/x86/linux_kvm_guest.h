// ipilab/x86/linux_kvm_guest.h — which mechanism a Linux x2APIC guest on KVM uses for each IPI
// entry point, given its APIC driver, whether PV send-IPI is installed and whether IPI shorthands
// are enabled. Returns the same GuestSend records as the individual policies.
//
// Sources (Linux): arch/x86/kernel/apic/ipi.c apic_send_IPI_allbutself (num_online_cpus() < 2 -> no
// IPI; apic_use_ipi_shorthand -> apic->send_IPI_allbutself, else send_IPI_mask_allbutself(online));
// arch/x86/kernel/smp.c native_send_call_func_ipi (shorthand enabled and mask | self == online ->
// send_IPI_all if the mask holds self, else send_IPI_allbutself; otherwise send_IPI_mask);
// arch/x86/kernel/kvm.c kvm_setup_pv_ipi (PV replaces send_IPI_mask and send_IPI_mask_allbutself
// only). apic_use_ipi_shorthand (Thomas Gleixner, Linux 5.4) is on when every present CPU has been
// online once and `no_ipi_broadcast=1` is not given; the same series removed KVM's PV versions of
// send_IPI_all/allbutself (Wanpeng Li, 2019).
//
// `before_5_4` models the kernels the PV-IPI figures were measured on (4.19): no shorthand;
// send_IPI_allbutself / send_IPI_all are the x2APIC driver's mask walks over cpu_online_mask, or with
// PV kvm_send_ipi_allbutself / kvm_send_ipi_all (PV windows); native_send_call_func_ipi sends
// send_IPI_allbutself when the mask is every online CPU but self, else send_IPI_mask.
// The online mask is CPUs [0, vm.nr_vcpus()).
#pragma once

#include <cstdint>

#include "x86/cpumask.h"
#include "x86/guest_send.h"
#include "x86/guest_x2apic.h"
#include "x86/guest_xapic.h"
#include "x86/vm.h"

namespace ipilab::x86 {

struct LinuxKvmGuestConfig {
  X2apicMode x2apic_mode = X2apicMode::Physical;
  bool pv_send_ipi = false;     ///< kvm_setup_pv_ipi() ran (see linux_pv_ipi_supported)
  bool ipi_shorthand = true;    ///< apic_use_ipi_shorthand static key (ignored when before_5_4)
  bool before_5_4 = false;      ///< 4.19-era entry points (see header comment)
  /// The guest runs in xAPIC mode (no x2APIC: guest_xapic.h) with `xapic_driver`; x2apic_mode is
  /// then unused. The entry points are the same (ipi.c, smp.c): only the driver's writes differ.
  bool xapic = false;
  XapicDriver xapic_driver = XapicDriver::Physflat;
};

/// apic->send_IPI(cpu, vector): the driver's own single send, which PV does not replace — except that
/// apic_flat's is default_send_IPI_single (arch/x86/kernel/apic/ipi.c), which calls
/// apic->send_IPI_mask(cpumask_of(cpu)): with PV send-IPI installed (kvm_setup_pv_ipi) that is
/// kvm_send_ipi_mask, one KVM_HC_SEND_IPI. x2APIC physical / cluster and apic_physflat
/// (default_send_IPI_single_phys) write the ICR themselves.
GuestSend linux_send_ipi(const X86Vm& vm, const LinuxKvmGuestConfig& cfg, std::uint32_t cpu,
                         std::uint8_t vector);
/// apic->send_IPI_mask / send_IPI_mask_allbutself: PV windows if installed, else the x2APIC driver.
GuestSend linux_send_ipi_mask(const X86Vm& vm, const LinuxKvmGuestConfig& cfg, std::uint32_t this_cpu,
                              const Cpumask& mask, std::uint8_t vector, bool exclude_self);
/// apic_send_IPI_allbutself(vector) from this_cpu.
GuestSend linux_send_ipi_allbutself(const X86Vm& vm, const LinuxKvmGuestConfig& cfg,
                                    std::uint32_t this_cpu, std::uint8_t vector);
/// apic->send_IPI_all(vector) as reached from native_send_call_func_ipi.
GuestSend linux_send_ipi_all(const X86Vm& vm, const LinuxKvmGuestConfig& cfg, std::uint32_t this_cpu,
                             std::uint8_t vector);
/// native_send_call_func_ipi(mask) (smp_call_function_many's IPI): CALL_FUNCTION_VECTOR 0xFC.
GuestSend linux_send_call_func_ipi(const X86Vm& vm, const LinuxKvmGuestConfig& cfg,
                                   std::uint32_t this_cpu, const Cpumask& mask);

}  // namespace ipilab::x86
