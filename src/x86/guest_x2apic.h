// ipilab/x86/guest_x2apic.h — Linux's native x2APIC IPI send paths, as the ICR MSR writes they make.
//
// Two APIC drivers (Linux arch/x86/kernel/apic/):
//  - "physical x2apic" (x2apic_phys.c, __x2apic_send_IPI_mask): walks the mask and writes the ICR
//    once per destination CPU, destination = that CPU's x2APIC ID, physical mode; with
//    APIC_DEST_ALLBUT it skips the sending CPU. One WRMSR 0x830 (one exit) per target.
//  - "cluster x2apic" (x2apic_cluster.c, __x2apic_send_IPI_mask): copies the mask to a per-CPU
//    scratch mask (ipi_mask), clears the sender unless APIC_DEST_ALLINC, then for each remaining CPU
//    ORs the logical IDs (LDR) of the mask's CPUs in that CPU's cluster (cluster_masks), writes the
//    ICR once with that combined logical destination, and removes the cluster from the scratch mask.
//    One WRMSR per 16-CPU x2APIC cluster touched.
// Both build the low word with __prepare_ICR (NMI_VECTOR -> APIC_DM_NMI, else APIC_DM_FIXED|vector)
// and write it with native_x2apic_icr_write ((u64)dest << 32 | low) through __x2apic_send_IPI_dest.
// The shorthand sends (__x2apic_send_IPI_shorthand, Linux >= 5.4) write one ICR with destination 0;
// send_IPI_self writes the vector to the SELF IPI MSR (x2apic_send_IPI_self).
//
// Preconditions (std::invalid_argument otherwise): mask.nbits() >= vm.nr_vcpus() and no CPU
// >= vm.nr_vcpus() set in it; this_cpu / cpu < vm.nr_vcpus().
#pragma once

#include <cstdint>

#include "x86/apic_icr.h"
#include "x86/cpumask.h"
#include "x86/guest_send.h"
#include "x86/vm.h"

namespace ipilab::x86 {

/// Which Linux x2APIC driver the guest runs. Physical with the `x2apic_phys` boot option or when the
/// FADT asks for it; Linux also forces physical mode in try_to_enable_x2apic() when interrupt
/// remapping is not in x2APIC mode, i.e. a KVM guest without a vIOMMU (recalled from
/// arch/x86/kernel/apic/apic.c, not re-read for this model). Cluster otherwise.
enum class X2apicMode : std::uint8_t { Physical, Cluster };

/// apic->send_IPI_mask (exclude_self = false, APIC_DEST_ALLINC) or apic->send_IPI_mask_allbutself
/// (exclude_self = true, APIC_DEST_ALLBUT) of the chosen driver, sent from `this_cpu`.
GuestSend x2apic_send_ipi_mask(const X86Vm& vm, X2apicMode mode, std::uint32_t this_cpu,
                               const Cpumask& mask, std::uint8_t vector, bool exclude_self);

/// apic->send_IPI(cpu, vector): one ICR write; physical destination = APIC ID (x2apic_phys.c
/// x2apic_send_IPI), cluster destination = the CPU's logical ID (x2apic_cluster.c x2apic_send_IPI).
GuestSend x2apic_send_ipi_one(const X86Vm& vm, X2apicMode mode, std::uint32_t cpu,
                              std::uint8_t vector);

/// __x2apic_send_IPI_shorthand(vector, which): one ICR write, destination 0, shorthand bits set.
/// `which` must be Self, AllIncludingSelf or AllExcludingSelf (std::invalid_argument for None).
GuestSend x2apic_send_ipi_shorthand(std::uint8_t vector, Shorthand which);

/// x2apic_send_IPI_self: WRMSR 0x83F with the vector (no ICR write).
GuestSend x2apic_send_ipi_self(std::uint8_t vector);

}  // namespace ipilab::x86
