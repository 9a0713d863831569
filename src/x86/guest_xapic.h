// ipilab/x86/guest_xapic.h — Linux's x86-64 xAPIC IPI send paths, as the MMIO ICR2/ICR writes they
// make (GuestSend::mmio_writes), and KVM's handling of such a write.
//
// Two xAPIC drivers (Linux arch/x86/kernel/apic/apic_flat_64.c, sends in ipi.c):
//  - "flat" (apic_flat): logical flat mode. Each CPU's LDR holds 1 << cpu (flat_init_apic_ldr, DFR
//    flat), so one ICR write with the logical destination = the mask's first word reaches up to 8
//    CPUs at once (default_send_IPI_mask_logical / flat_send_IPI_mask: __default_send_IPI_dest_field
//    with APIC_DEST_LOGICAL). send_IPI_mask_allbutself clears the sender's bit first.
//  - "physflat" (apic_physflat): physical destination, one ICR write per target CPU
//    (default_send_IPI_single_phys, default_send_IPI_mask_sequence_phys,
//    default_send_IPI_mask_allbutself_phys). Linux picks it over flat when more than 8 CPUs are
//    possible (physflat_probe: num_possible_cpus() > 8), or when the FADT asks for physical mode.
// Both send the shorthands (default_send_IPI_allbutself / _all / _self ->
// __default_send_IPI_shortcut) as one ICR write with destination 0, and build the low word with
// __prepare_ICR. Each IPI is __default_send_IPI_dest_field: wait for ICR idle (an ICR read), ICR2 =
// SET_XAPIC_DEST_FIELD(dest), then ICR = the low word (the write that sends).
// xAPIC logical CLUSTER mode (DFR 0x0FFFFFFF) is used by no x86-64 Linux driver (the 32-bit
// summit/es7000/numaq drivers that used it are gone): neither side models it.
// xAPIC addresses 8-bit APIC IDs: 0xFF is the broadcast, so a VM of more than 255 vCPUs needs x2APIC.
//
// Preconditions as guest_x2apic.h (std::invalid_argument otherwise), and every APIC ID < 0xFF.
#pragma once

#include <cstdint>

#include "x86/cpumask.h"
#include "x86/guest_send.h"
#include "common/enum_names.h"
#include "x86/kvm_icr.h"
#include "x86/vm.h"

namespace ipilab::x86 {

enum class XapicDriver : std::uint8_t { Flat, Physflat };
/// apic_flat / apic_physflat as parameters name them (to_string gives the display form).
inline constexpr EnumName<XapicDriver> kXapicDriverNames[] = {{XapicDriver::Flat, "flat"}, {XapicDriver::Physflat, "physflat"}};

/// Linux x86-64's choice for a VM of `possible_cpus` CPUs: flat up to 8, physflat above.
constexpr XapicDriver linux_xapic_driver(std::uint32_t possible_cpus) {
  return possible_cpus > 8 ? XapicDriver::Physflat : XapicDriver::Flat;
}
const char* to_string(XapicDriver d);

/// The logical APIC ID (LDR[31:24]) Linux's flat driver gives CPU `cpu`: 1 << cpu, 0 from CPU 8 on.
constexpr std::uint32_t xapic_flat_ldr(std::uint32_t cpu) { return cpu < 8 ? 1u << cpu : 0u; }

/// apic->send_IPI(cpu, vector) of the driver.
GuestSend xapic_send_ipi_one(const X86Vm& vm, XapicDriver d, std::uint32_t cpu, std::uint8_t vector);
/// apic->send_IPI_mask (exclude_self = false) / send_IPI_mask_allbutself (true) of the driver.
GuestSend xapic_send_ipi_mask(const X86Vm& vm, XapicDriver d, std::uint32_t this_cpu, const Cpumask& mask,
                              std::uint8_t vector, bool exclude_self);
/// __default_send_IPI_shortcut: one ICR write, destination 0, the shorthand bits set (not None).
GuestSend xapic_send_ipi_shorthand(std::uint8_t vector, Shorthand which);

/// KVM's handling of the xAPIC ICR write `w` by vCPU `sender` (kvm_lapic_reg_write(APIC_ICR) ->
/// kvm_apic_send_ipi, reached from an APIC-write exit with APICv or MMIO emulation without):
/// destination ICR2[31:24]; physical: the vCPU with that APIC ID, 0xFF everybody; logical: the LDRs
/// the guest's `driver` set (flat: a common bit; kvm_apic_match_logical_addr, APIC_DFR_FLAT).
/// Shorthands, lowest priority and acceptance as kvm_x2apic_icr_write. Reserved bits are ignored
/// (the xAPIC ICR has no #GP); `fastpath` is always false (KVM's fastpath is x2APIC only).
void kvm_xapic_icr_write(const X86Vm& vm, XapicDriver driver, std::uint32_t sender, XapicIcr w, IcrWriteOutcome& out);

}  // namespace ipilab::x86
