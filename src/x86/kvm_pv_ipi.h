// ipilab/x86/kvm_pv_ipi.h — KVM's paravirtual send-IPI hypercall (KVM_HC_SEND_IPI), both sides.
//
// ABI (Documentation/virt/kvm/x86/hypercalls.rst; include/uapi/linux/kvm_para.h;
// arch/x86/include/uapi/asm/kvm_para.h): RAX = KVM_HC_SEND_IPI (10); RBX = a0 = bitmap bits 0..63,
// RCX = a1 = bitmap bits 64..127, RDX = a2 = min (bit i of the 128-bit bitmap names APIC ID min+i),
// RSI = a3 = ICR low word (vector | delivery mode). RAX out = number of APICs the IPI was delivered
// to, or a negative KVM_E*. Guest may use it only if CPUID 0x40000001 EAX bit KVM_FEATURE_PV_SEND_IPI
// (11) is set. Introduced by commit 4180bf1b655a "KVM: X86: Implement "send IPI" hypercall" (host)
// and aaffcfd1e82 "KVM: X86: Implement PV IPIs in linux guest" (guest), Linux 4.19 (Wanpeng Li).
//
// How many exits a broadcast costs — the counts the simulator calibrates against (the commit message
// of 4180bf1b655a: Skylake, 80-vCPU VM, Yury Norov's IPI benchmark module, LKML
// <20171219085010.4081-1-ynorov@caviumnetworks.com>, broadcast to 79 targets; per-IPI times here are
// the commit's totals over 10^5 IPIs divided by 10^5):
//   x2APIC physical, vanilla : 79 ICR writes = 79 exits           -> 198.5 us; with PV IPI 78.1 us
//   x2APIC cluster,  vanilla : 5 ICR writes (clusters 0..4 of 16)  ->  92.8 us; with PV IPI 75.7 us
//   PV send-IPI              : 1 hypercall (APIC IDs 1..79 fit one 128-bit window) = 1 exit
// (counted by tests/x86 "Broadcast79" from the policies below with identity APIC IDs; a QEMU
// 2-socket x 20-core x 2-thread layout gives 79 / 6 / 1.) Exits alone do not explain the figures: a
// fit t = a + b * exits through the two vanilla points gives b ~= 1.43 us per exit and a ~= 85.7 us
// of per-target kick/wait work, which would predict ~87 us for PV against the measured 75.7-78.1 us;
// keep the per-target delivery term separate from the per-exit term when calibrating.
// Those counts are the Linux 4.19 paths the commit measured. Since Linux 5.4 a broadcast through
// smp_call_function_many to every other online CPU takes the IPI shorthand instead: ONE native ICR
// write (all-but-self), with or without PV IPI (see linux_kvm_guest.h, tests "LinuxKvmGuest.*").
//
// Which Linux sends use it: kvm_setup_pv_ipi() (arch/x86/kernel/kvm.c) replaces only
// apic->send_IPI_mask and ->send_IPI_mask_allbutself when pv_ipi_supported() (feature bit and more
// than one possible CPU). Single-target send_IPI, send_IPI_self and (since Linux 5.4, when
// kvm_send_ipi_all/allbutself were removed) the shorthand all/allbutself stay native x2APIC.
#pragma once

#include <cstdint>
#include <vector>

#include "x86/apic_icr.h"
#include "x86/cpumask.h"
#include "x86/guest_send.h"
#include "x86/vm.h"

namespace ipilab::x86 {

inline constexpr std::uint64_t kKvmHcSendIpi = 10;         ///< KVM_HC_SEND_IPI
inline constexpr std::uint32_t kKvmFeaturePvSendIpi = 11;  ///< KVM_FEATURE_PV_SEND_IPI (CPUID 0x40000001 EAX bit)
inline constexpr std::uint32_t kKvmIpiClusterSize = 128;   ///< KVM_IPI_CLUSTER_SIZE = 2 * BITS_PER_LONG (64-bit guest)
/// Hypercall error numbers (include/uapi/linux/kvm_para.h); KVM returns their negation.
inline constexpr std::int64_t kKvmEnosys = 1000;
inline constexpr std::int64_t kKvmEperm = 1;
inline constexpr std::int64_t kKvmEinval = 22;
inline constexpr std::int64_t kKvmEopnotsupp = 95;

// ---------------------------------------------------------------------------------------------
// Guest side (Linux arch/x86/kernel/kvm.c)

/// pv_ipi_supported(): the feature bit and num_possible_cpus() != 1 (the second test since 5.x).
constexpr bool linux_pv_ipi_supported(bool has_pv_send_ipi_feature, std::uint32_t num_possible_cpus) {
  return has_pv_send_ipi_feature && num_possible_cpus != 1;
}

/// __send_ipi_mask(mask, vector) of a 64-bit guest (kvm_send_ipi_mask): walks the mask in CPU order
/// keeping a 128-bit bitmap relative to `min`. A CPU whose APIC ID is below min joins the window by
/// shifting the bitmap if max - apic_id < 128; one above min joins if apic_id < min + 128; any other
/// (including apic_id == min on a non-empty bitmap, the Li RongQing 2022 fix "apic_id > min") flushes
/// the window as one hypercall and starts a new one at this APIC ID. The last window is flushed at the
/// end. ICR word: APIC_DM_FIXED | vector, or APIC_DM_NMI (vector bits 0) for NMI_VECTOR (2).
/// Empty mask -> no hypercall. Work: one find_next_bit walk of the mask.
/// Preconditions as x2apic_send_ipi_mask (std::invalid_argument otherwise).
GuestSend kvm_guest_send_ipi_mask(const X86Vm& vm, const Cpumask& mask, std::uint8_t vector);

/// kvm_send_ipi_mask_allbutself(mask, vector): copies the mask into the per-CPU __pv_cpu_mask, clears
/// this_cpu, then __send_ipi_mask. Work adds the copy (mask.words() words written).
GuestSend kvm_guest_send_ipi_mask_allbutself(const X86Vm& vm, std::uint32_t this_cpu,
                                             const Cpumask& mask, std::uint8_t vector);

// ---------------------------------------------------------------------------------------------
// Host side (Linux arch/x86/kvm/lapic.c kvm_pv_send_ipi / __pv_send_ipi, arch/x86/kvm/x86.c
// ____kvm_emulate_hypercall). Total over all inputs: any a0..a3 is safe and bounded (<= 128 bits).

/// One APIC the bitmap reached through KVM's phys_map, and whether __apic_accept_irq took the IPI.
struct PvIpiTarget {
  std::uint32_t vcpu = 0;
  std::uint32_t apic_id = 0;
  bool accepted = false;
  friend bool operator==(const PvIpiTarget&, const PvIpiTarget&) = default;
};

/// Host work for one call: bitmap bits the loops were allowed to scan, set bits examined, phys_map hits.
struct PvIpiHostWork {
  std::uint32_t bits_in_range = 0;   ///< sum over both halves of min(BITS_PER_LONG, max_apic_id - min + 1)
  std::uint32_t set_bits_examined = 0;
  std::uint32_t set_irq_calls = 0;   ///< kvm_apic_set_irq() calls (phys_map entries found)
  friend bool operator==(const PvIpiHostWork&, const PvIpiHostWork&) = default;
};

/// Result of kvm_pv_send_ipi(): `ret` is the kernel's int return (count of accepting APICs, or
/// -KVM_EINVAL, or -EOPNOTSUPP); `targets` in delivery order (low half, then high half, bit order).
struct PvIpiHostResult {
  std::int64_t ret = 0;
  std::vector<PvIpiTarget> targets;
  PvIpiHostWork work;
  /// vCPUs that took the interrupt (accepted == true), in delivery order.
  std::vector<std::uint32_t> delivered_vcpus() const;
};

/// Host-side facts that are not part of the VM description.
struct KvmPvIpiHostState {
  /// kvm->arch.apic_map is non-NULL (it is NULL only while KVM could not build a map, e.g. during a
  /// failed allocation, or in versions that dropped the map on conflicting APIC IDs).
  bool apic_map_present = true;
};

/// Whether __apic_accept_irq() returns 1 for this vCPU (arch/x86/kvm/lapic.c): Fixed/LowestPriority
/// need a software-enabled APIC and not (level-triggered && deassert); SMI needs host SMM support;
/// RemoteRead (KVM's PV unhalt kick), NMI and StartUp always; Init unless level-triggered deassert;
/// ExtInt never. Lowest priority is NOT arbitrated on this path: every target gets it.
bool kvm_apic_accepts(const X86Vcpu& vcpu, bool smm_supported, DeliveryMode mode, bool level_assert,
                      TriggerMode trigger);

/// kvm_pv_send_ipi(kvm, ipi_bitmap_low, ipi_bitmap_high, min, icr, op_64_bit), current mainline:
///  1. icr & (APIC_DEST_MASK | APIC_SHORT_MASK) (logical destination or any shorthand) -> -KVM_EINVAL.
///  2. vector = icr[7:0], delivery mode = icr[10:8], level = icr[14], trigger = icr[15]; other bits
///     of `icr` (it is a full unsigned long) are ignored.
///  3. no APIC map -> -EOPNOTSUPP (-95).
///  4. __pv_send_ipi(low, min) + __pv_send_ipi(high, min + cluster_size), cluster_size 64 (op_64_bit)
///     or 32, with `min` a u32 (a2 is truncated to 32 bits by the prototype; min + cluster_size wraps
///     modulo 2^32, so min = 0xFFFFFFC0 sends the high half relative to APIC ID 0).
///  __pv_send_ipi: min > max_apic_id -> 0 (bdf7ffc89922 "KVM: LAPIC: Fix pv ipis out-of-bounds
///  access", 4.19-rc3); otherwise bits i < min(64, max_apic_id - min + 1) with phys_map[min + i]
///  present get kvm_apic_set_irq(); the count of accepted deliveries is returned. Bits naming absent
///  APIC IDs are ignored. array_index_nospec() on min (c87bd4dd43a6, Aug 2025, 6.17 and stable) only
///  bounds speculation and changes no result. 32-bit-mode truncation of a0..a3 is done by the caller
///  (kvm_emulate_send_ipi_hypercall), as in KVM.
PvIpiHostResult kvm_pv_send_ipi(const X86Vm& vm, const KvmPvIpiHostState& host,
                                std::uint64_t ipi_bitmap_low, std::uint64_t ipi_bitmap_high,
                                std::uint32_t min, std::uint64_t icr, bool op_64_bit);

/// Register state of the hypercall as KVM reads it.
struct HypercallRegs {
  std::uint64_t rax = kKvmHcSendIpi;  ///< nr
  std::uint64_t rbx = 0;              ///< a0
  std::uint64_t rcx = 0;              ///< a1
  std::uint64_t rdx = 0;              ///< a2
  std::uint64_t rsi = 0;              ///< a3
};

/// The registers as kvm_emulate_hypercall reads them: outside 64-bit mode (!is_64_bit_hypercall)
/// the number and every argument are truncated to their low 32 bits.
inline HypercallRegs kvm_hypercall_args(const HypercallRegs& regs, bool op_64_bit) {
  if (op_64_bit) return regs;
  constexpr std::uint64_t lo = 0xFFFFFFFFull;
  return {regs.rax & lo, regs.rbx & lo, regs.rcx & lo, regs.rdx & lo, regs.rsi & lo};
}

/// The calling vCPU's state that the dispatcher checks.
struct HypercallCaller {
  bool op_64_bit = true;              ///< is_64_bit_hypercall(): long mode (or protected guest state)
  std::uint32_t cpl = 0;              ///< non-zero -> -KVM_EPERM
  bool has_pv_send_ipi = true;        ///< guest_pv_has(vcpu, KVM_FEATURE_PV_SEND_IPI)
};

/// The value left in RAX and what happened.
struct HypercallOutcome {
  std::uint64_t rax = 0;              ///< as the guest reads it (sign-extended, or (u32) if !op_64_bit)
  std::int64_t ret = 0;               ///< the kernel's signed ret before the RAX write
  bool send_ipi_ran = false;          ///< kvm_pv_send_ipi() was called
  PvIpiHostResult ipi;                ///< valid when send_ipi_ran
};

/// ____kvm_emulate_hypercall() restricted to KVM_HC_SEND_IPI (arch/x86/kvm/x86.c): in 32-bit mode
/// nr and a0..a3 are truncated to 32 bits; cpl != 0 -> -KVM_EPERM; nr != 10 -> -KVM_ENOSYS (other
/// hypercalls are outside this model); no KVM_FEATURE_PV_SEND_IPI in the guest's CPUID ->
/// -KVM_ENOSYS; else kvm_pv_send_ipi(a0, a1, (u32)a2, a3). RAX = ret, truncated to u32 in 32-bit mode.
HypercallOutcome kvm_emulate_send_ipi_hypercall(const X86Vm& vm, const KvmPvIpiHostState& host,
                                                const HypercallCaller& caller,
                                                const HypercallRegs& regs);

// ---------------------------------------------------------------------------------------------
// Both sides together

/// Guest state that outlives one send: WARN_ONCE in __send_ipi_mask fires once per boot.
struct KvmPvGuestState {
  bool warned = false;
};

/// The guest's hypercalls run on the host, in order. Linux checks each return only with
/// WARN_ONCE(ret < 0, "kvm-guest: failed to send PV IPI: %ld") and carries on: a failed window is
/// neither retried nor sent through the native APIC, so its targets simply do not get the IPI.
struct PvIpiExecution {
  std::vector<HypercallOutcome> calls;
  std::vector<std::uint32_t> delivered_vcpus;   ///< accepted, in delivery order
  std::uint32_t failed_calls = 0;               ///< calls with ret < 0
  bool warn_fired_now = false;                  ///< this execution printed the WARN_ONCE
};

/// Runs every hypercall of `send` through kvm_emulate_send_ipi_hypercall (64-bit, CPL 0) and applies
/// the guest's WARN_ONCE rule to `guest`.
PvIpiExecution kvm_pv_execute(const X86Vm& vm, const KvmPvIpiHostState& host,
                              bool guest_has_pv_send_ipi, const GuestSend& send,
                              KvmPvGuestState& guest);

}  // namespace ipilab::x86
