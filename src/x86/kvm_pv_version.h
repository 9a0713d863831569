// ipilab/x86/kvm_pv_version.h — KVM's IPI-related paravirtual hypercalls (KVM_HC_SEND_IPI,
// KVM_HC_SCHED_YIELD) as each upstream KVM version answers them, including the host memory-safety
// bugs of the first versions and the speculative loads the later hardening bounds.
//
// The upstream changes (arch/x86/kvm/lapic.c kvm_pv_send_ipi / __pv_send_ipi, arch/x86/kvm/x86.c
// kvm_sched_yield and the hypercall switch), oldest first:
//  * 4180bf1b655a "KVM: X86: Implement "send IPI" hypercall" (v4.19-rc1): `int min`; for every set
//    bit i of each 64-bit half, vcpu = map->phys_map[min + i]->vcpu, with no bound on min + i and no
//    test of the entry: a negative or too large index reads outside phys_map (Dan Carpenter's smatch
//    report "buffer underflow 'map->phys_map' 's32min-s32max'"), an absent APIC ID dereferences a
//    NULL entry, and a VM without an APIC map dereferences a NULL map.
//  * bdf7ffc89922 "KVM: LAPIC: Fix pv ipis out-of-bounds access" (v4.19-rc3): `u32 min`;
//    `if (min > map->max_apic_id) goto out;` before the low half and again before the high half
//    (so a low half out of range skips the high half too); loops bounded by
//    min(BITS_PER_LONG, max_apic_id - min + 1); NULL phys_map entries skipped.
//  * "KVM: LAPIC: Fix pv ipis use-before-initialization" (Wanpeng Li, Nov 2018, v4.20): no APIC map
//    -> -EOPNOTSUPP (before: NULL dereference, syzkaller).
//  * 715062970f37 "KVM: X86: Implement PV sched yield hypercall" (v5.2): KVM_HC_SCHED_YIELD (11),
//    a0 = the APIC ID to yield to; ret 0.
//  * "KVM: APIC: add helper func to remove duplicate code in kvm_pv_send_ipi" (Miaohe Lin, Nov 2019,
//    v5.5): __pv_send_ipi() tests each half on its own, so the high half is sent even when the low
//    half is out of range (min = 0xFFFFFFC0 reaches APIC IDs 0..63 through the u32 wrap).
//  * c87bd4dd43a6 "KVM: x86: use array_index_nospec with indices that come from guest" (Thijs
//    Raymakers, Aug 2025, v6.17 and stable): min = array_index_nospec(min, max_apic_id + 1) after the
//    bounds test, likewise dest_id in kvm_sched_yield. Architecturally a no-op; under a mispredicted
//    bounds test the index is forced to 0 instead of reading past phys_map. Its first posting
//    (kvm@vger, 24 Jul 2025, never merged) clamped with array_index_nospec(min, max_apic_id): Sean
//    Christopherson pointed out that max_apic_id is inclusive while the nospec bound is not, so
//    min == max_apic_id became 0 even architecturally — the IPI (and the directed yield) for the
//    highest APIC ID went to the window at APIC ID 0. That posting is the version "nospec-v1".
//  * Not modelled: the 2026 posting that moves the clamp onto min + i inside the loop (David
//    Woodhouse / Anel Orazgaliyeva; speculation only).
// KVM_CAP_ENFORCE_PV_FEATURE_CPUID (v5.10) made both calls return -KVM_ENOSYS when the guest's
// CPUID lacks KVM_FEATURE_PV_SEND_IPI / KVM_FEATURE_PV_SCHED_YIELD; earlier KVM never looked.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "x86/kvm_pv_ipi.h"
#include "x86/vm.h"

namespace ipilab::x86 {

inline constexpr std::uint64_t kKvmHcSchedYield = 11;          ///< KVM_HC_SCHED_YIELD
inline constexpr std::uint32_t kKvmFeaturePvSchedYield = 13;   ///< KVM_FEATURE_PV_SCHED_YIELD

enum class KvmPvVersion : std::uint8_t {
  kV4_19_rc2,  ///< 4180bf1b655a, before bdf7ffc89922 (v4.19-rc1, -rc2)
  kV4_19,      ///< bdf7ffc89922 .. v4.19, before the use-before-initialization fix
  kV5_1,       ///< v4.20 .. v5.1: -EOPNOTSUPP without a map; no SCHED_YIELD
  kV5_4,       ///< v5.2 .. v5.4: SCHED_YIELD; one bounds test skips both halves
  kV6_16,      ///< v5.5 .. v6.16: halves tested on their own; no array_index_nospec
  kNospecV1,   ///< the first posting of c87bd4dd43a6 (exclusive clamp), never merged
  kMainline,   ///< c87bd4dd43a6 (v6.17 ..), the model's default
};

/// How array_index_nospec() bounds the guest's index after the architectural test.
enum class NospecClamp : std::uint8_t { kNone, kExclusive, kInclusive };

struct KvmPvBehaviour {
  bool bounds_checked = true;        ///< bdf7ffc89922
  bool null_map_checked = true;      ///< use-before-initialization fix (v4.20)
  bool sched_yield = true;           ///< 715062970f37 (v5.2)
  bool halves_independent = true;    ///< __pv_send_ipi helper (v5.5)
  bool pv_feature_cpuid_checked = true;  ///< KVM_CAP_ENFORCE_PV_FEATURE_CPUID exists (v5.10)
  NospecClamp clamp = NospecClamp::kInclusive;  ///< c87bd4dd43a6 (kExclusive: its first posting)
};

KvmPvBehaviour kvm_pv_behaviour(KvmPvVersion v) noexcept;

struct KvmPvVersionInfo {
  KvmPvVersion version;
  std::string_view name;      ///< "v4.19-rc2", ..., "mainline"
  std::string_view releases;
  std::string_view commits;
  std::string_view changes;   ///< what differs from the next newer version
};
std::span<const KvmPvVersionInfo> kvm_pv_versions() noexcept;
std::string_view kvm_pv_version_name(KvmPvVersion v) noexcept;
/// The names above; aliases "v6.17" = mainline.
std::optional<KvmPvVersion> kvm_pv_version_from_name(std::string_view name) noexcept;

/// A host memory-safety bug the call reaches (the model stops there: what real KVM does next is
/// undefined — typically a host oops, or a read of whatever lies past phys_map).
struct KvmHostFault {
  enum class Kind : std::uint8_t { kPhysMapOutOfBounds, kNullPhysMapEntry, kNullApicMap };
  Kind kind = Kind::kPhysMapOutOfBounds;
  std::int64_t index = 0;  ///< the phys_map index (min + i as the kernel computed it)
  std::uint32_t map_entries = 0;  ///< max_apic_id + 1
  friend bool operator==(const KvmHostFault&, const KvmHostFault&) = default;
};

/// One half of the bitmap that the architectural bounds test skipped, and what a mispredicted
/// test lets the loop load (Spectre v1): the phys_map indices of the set bits the loop would visit.
struct KvmSpeculativeWindow {
  int half = 0;                  ///< 0 low (RBX), 1 high (RCX)
  std::uint32_t min = 0;         ///< the half's min as the kernel holds it (u32)
  std::uint32_t effective_min = 0;  ///< min after array_index_nospec under misprediction
  std::vector<std::uint32_t> indices;  ///< phys_map indices loaded speculatively (u32, as the kernel adds)
  std::uint32_t out_of_bounds = 0;     ///< how many of them are >= max_apic_id + 1
};

/// A half whose in-range min array_index_nospec changed (only the exclusive bound of nospec-v1
/// does that: min == max_apic_id becomes 0).
struct KvmArchitecturalClamp {
  int half = 0;
  std::uint32_t min = 0;
  std::uint32_t effective_min = 0;
};

/// KVM_HC_SCHED_YIELD: the vCPU whose APIC ID is a0 and whether KVM would yield to it.
struct KvmSchedYield {
  std::uint64_t dest_id = 0;
  std::optional<std::uint32_t> looked_up_apic_id;  ///< the phys_map index actually read
  std::optional<std::uint32_t> target_vcpu;
  bool yield_attempted = false;  ///< target found and its `ready` flag set -> kvm_vcpu_yield_to()
};

/// What one hypercall did on the host of a given version.
struct KvmCallOutcome {
  std::uint64_t nr = 0;
  std::int64_t ret = 0;           ///< the kernel's signed return (meaningless when fault)
  std::uint64_t rax = 0;          ///< as the guest reads it (u32 in 32-bit mode)
  std::string_view rejected_by;   ///< empty when the call ran
  bool modelled = true;           ///< false: a hypercall x86 KVM implements but this model does not (ret unknown)
  bool send_ipi_ran = false;
  bool sched_yield_ran = false;
  std::vector<PvIpiTarget> targets;   ///< SEND_IPI: APICs reached, in delivery order
  PvIpiHostWork work;
  bool high_half_skipped = false;     ///< a version before v5.5 skipped the high half
  std::optional<KvmHostFault> fault;
  std::vector<KvmSpeculativeWindow> speculation;
  std::vector<KvmArchitecturalClamp> clamped;
  KvmSchedYield yield;
  std::vector<std::uint32_t> delivered_vcpus() const;
};

/// Host facts beyond the VM description.
struct KvmCallHost {
  KvmPvVersion version = KvmPvVersion::kMainline;
  bool apic_map_present = true;
  std::vector<bool> vcpu_ready;  ///< per vCPU: kvm_vcpu->ready (preempted while runnable); empty = none
};

struct KvmCallCaller {
  bool op_64_bit = true;
  std::uint32_t cpl = 0;
  bool has_pv_send_ipi = true;     ///< guest CPUID KVM_FEATURE_PV_SEND_IPI (checked only when enforced)
  bool has_pv_sched_yield = true;  ///< guest CPUID KVM_FEATURE_PV_SCHED_YIELD
};

/// The hypercall switch (____kvm_emulate_hypercall) for SEND_IPI and SCHED_YIELD as `host.version`
/// runs it: 32-bit truncation, CPL check (-KVM_EPERM), a number KVM does not know (-KVM_ENOSYS) or
/// one it knows but this model does not (modelled = false), feature check (v5.10+), then the call. For v6.16 and mainline the result
/// equals kvm_emulate_send_ipi_hypercall() (kvm_pv_ipi.h) on every input.
KvmCallOutcome kvm_emulate_pv_hypercall(const X86Vm& vm, const KvmCallHost& host,
                                        const KvmCallCaller& caller, const HypercallRegs& regs);

}  // namespace ipilab::x86
