// ipilab/x86/kvm_icr.h — KVM's handling of a guest's x2APIC ICR write (WRMSR 0x830) and SELF IPI
// write (WRMSR 0x83F): whether it faults, whether the exit can take the IRQs-off fastpath, and which
// vCPUs the IPI reaches. All vCPUs are assumed to be in x2APIC mode.
//
// Sources (Linux arch/x86/kvm/lapic.c unless said): kvm_x2apic_icr_write — bits 31:20, 17:16 and 13
// set -> #GP (X2APIC_ICR_RESERVED_BITS, Sean Christopherson, 2024, Linux 6.11 and stable), the BUSY
// bit 12 is cleared; kvm_apic_send_ipi -> kvm_irq_delivery_to_apic; kvm_apic_match_dest /
// kvm_apic_match_physical_addr / kvm_apic_match_logical_addr for who matches (x2APIC broadcast
// 0xFFFFFFFF matches everybody in both modes; logical: same cluster (LDR[31:16] == dest[31:16]) and
// a common bit in [15:0]); __apic_accept_irq for acceptance (kvm_apic_accepts). Fastpath:
// arch/x86/kvm/x86.c handle_fastpath_set_x2apic_icr_irqoff, added by 1e9e2622a149 "KVM: VMX:
// FIXED+PHYSICAL mode single target IPI fastpath" (Wanpeng Li, Linux 5.5): no shorthand, physical,
// fixed, destination not the broadcast ID. (A 2025 rework lets the fastpath take whatever
// kvm_irq_delivery_to_apic_fast can deliver; not modelled.)
// Lowest priority: one target, chosen as KVM's vector hashing does by default (kvm_vector_to_index):
// the (vector mod n)-th of the n matching, software-enabled APICs in APIC-ID order. KVM's corner
// cases for absent APICs inside a logical cluster bitmap are not modelled.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "x86/apic_icr.h"
#include "x86/kvm_pv_ipi.h"
#include "x86/vm.h"

namespace ipilab::x86 {

/// What one ICR (or SELF IPI) write does on the host.
struct IcrWriteOutcome {
  bool inject_gp = false;              ///< WRMSR faults; nothing is sent
  bool fastpath = false;               ///< handled in the IRQs-off exit fastpath (5.5+ classic rule)
  std::uint64_t effective_icr = 0;     ///< the value KVM acts on (BUSY cleared)
  std::vector<PvIpiTarget> targets;    ///< matched vCPUs (after lowest-priority selection), in order
  std::int64_t accepted = 0;           ///< targets whose APIC took the interrupt
};

/// The start of every ICR write's handling, in both APIC modes: `sender` must be a vCPU of `vm`
/// (std::invalid_argument otherwise); `out` is cleared, its targets' storage kept for reuse.
void kvm_begin_icr_write(const X86Vm& vm, std::uint32_t sender, IcrWriteOutcome& out);

/// The tests of KVM's kvm_apic_match_dest() that both APIC modes share: a vCPU without an in-kernel
/// APIC never matches (kvm_apic_present), a shorthand alone decides, and the mode's broadcast ID
/// (`broadcast`: 0xFF xAPIC, 0xFFFFFFFF x2APIC) matches everybody. nullopt: the destination field
/// decides, by the mode's physical or logical rule.
inline std::optional<bool> kvm_match_shorthand_or_broadcast(const X86Vm& vm, std::uint32_t sender, std::uint32_t v,
                                                            const Icr& f, std::uint32_t broadcast) {
  if (!vm.vcpu(v).apic_present) return false;
  switch (f.shorthand) {
    case Shorthand::Self: return v == sender;
    case Shorthand::AllIncludingSelf: return true;
    case Shorthand::AllExcludingSelf: return v != sender;
    case Shorthand::None: break;
  }
  if (f.destination == broadcast) return true;
  return std::nullopt;
}

/// The vCPUs an IPI described by `f` matched (ascending), after KVM's lowest-priority selection (one
/// of them, by vector hashing) and acceptance (__apic_accept_irq), appended to out.targets: the part
/// of kvm_irq_delivery_to_apic both APIC modes share.
void kvm_deliver_to_matched(const X86Vm& vm, const Icr& f, std::span<const std::uint32_t> matched, IcrWriteOutcome& out);

/// handle_fastpath_set_x2apic_icr_irqoff's test on the written value.
bool kvm_x2apic_icr_fastpath_eligible(std::uint64_t icr);

/// KVM's handling of WRMSR 0x830 by vCPU `sender` (std::invalid_argument if sender is not a vCPU).
IcrWriteOutcome kvm_x2apic_icr_write(const X86Vm& vm, std::uint32_t sender, std::uint64_t icr);
/// The same into `out` (replaced whole; its targets' storage is reused: a caller issuing many writes
/// allocates nothing per write).
void kvm_x2apic_icr_write(const X86Vm& vm, std::uint32_t sender, std::uint64_t icr, IcrWriteOutcome& out);

/// WRMSR 0x83F: bits 63:32 set -> #GP (kvm_x2apic_msr_write: reserved in every register but the
/// ICR), bits 31:8 set -> #GP (kvm_lapic_reg_write APIC_SELF_IPI, Sean Christopherson, 2022,
/// stable-tagged); otherwise kvm_apic_send_ipi(APIC_DEST_SELF | vector): fixed, edge, to the sender.
IcrWriteOutcome kvm_x2apic_self_ipi_write(const X86Vm& vm, std::uint32_t sender, std::uint64_t value);
void kvm_x2apic_self_ipi_write(const X86Vm& vm, std::uint32_t sender, std::uint64_t value, IcrWriteOutcome& out);

}  // namespace ipilab::x86
