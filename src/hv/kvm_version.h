// ipilab/hv/kvm_version.h — which KVM (arch/x86/kvm/hyperv.c) the partition model runs: the upstream
// changes that changed the answer KVM gives to a Hyper-V IPI hypercall, as named versions.
//
// Every behaviour below was read from the upstream commits (kernel.org / LKML / stable-queue mails):
//  * 214ff83d4473 "KVM: x86: hyperv: implement PV IPI send hypercalls" (v4.20) started the IPI
//    emulation: kvm_hv_send_ipi(vcpu, ingpa, outgpa, ex, fast). In kvm_hv_hypercall, SEND_IPI with rep
//    and SEND_IPI_EX with fast or rep were INVALID_HYPERCALL_INPUT; the variable-header size (bits
//    26:17) was not decoded at all and reserved control bits were not checked. For Ex, KVM read the
//    24-byte header, then sparse_banks_len = bitmap_weight(valid_bank_mask) * 8 and
//        if (!sparse_banks_len) goto ret_success;            <- before looking at the format
//        if (!all_cpus && kvm_read_guest(bank_contents, sparse_banks_len)) -> INVALID_HYPERCALL_INPUT
//    so HV_GENERIC_SET_ALL with valid_bank_mask == 0 (what Linux sends) returned SUCCESS and
//    delivered nothing, without checking the vector.
//  * d8f5537a8816 "KVM: hyper-v: Advertise support for fast XMM hypercalls" (v5.14) made the FLUSH
//    calls XMM-fast (is_xmm_fast_hypercall) but not SEND_IPI_EX, which stayed rejected when fast;
//    KVM_CAP_HYPERV_ENFORCE_CPUID (v5.14) added the access check and the XMM #UD gate (flush only).
//  * 3244867af8c0 "KVM: x86: Ignore sparse banks size for an "all CPUs", non-sparse IPI req"
//    (Sean Christopherson, v5.16-rc5): `if (all_cpus) goto check_and_send_ipi;` before the
//    sparse_banks_len test, so SET_ALL delivers to every vCPU whatever valid_bank_mask says.
//  * v5.18 merge window (kvm/next, Dec 2021 - Mar 2022), Sean Christopherson's Hyper-V series:
//      bd1ba5732bb9 "Get the number of Hyper-V sparse banks from the VARHEAD field": var_cnt decoded;
//                   var_cnt != hweight64(valid_bank_mask) -> INVALID_HYPERCALL_INPUT (SET_ALL too);
//                   var_cnt > 64 -> INVALID_HYPERCALL_INPUT; banks read = var_cnt.
//      79661c3766f8 "Don't bother reading sparse banks that end up being ignored": reads capped at
//                   KVM_MAX_VCPUS / 64 banks.
//      40421f38f637 "Reject fixeds-size Hyper-V hypercalls with non-zero "var_cnt"": SEND_IPI with a
//                   varhead -> INVALID_HYPERCALL_INPUT.
//      413af6601f76 "Add checks for reserved-to-zero Hyper-V hypercall fields": any bit of
//                   HV_HYPERCALL_RSVD_MASK -> INVALID_HYPERCALL_INPUT (after the access check).
//    and Vitaly Kuznetsov's kvm-hv-xmm-hypercall-fixes branch, merged in the same window:
//      47d3e5cdfe60 "KVM: x86: hyper-v: HVCALL_SEND_IPI_EX is an XMM fast hypercall": fast Ex reads
//                   vector = RDX[31:0], format = R8, valid_bank_mask = XMM0.lo, banks from XMM0.hi
//                   (at most 11); the XMM #UD gate now covers it. (Windows Server 2019 with > 64
//                   vCPUs crashed on the INVALID_HYPERCALL_INPUT it got before.)
//    All of these reached Linus's tree in one push (24 Mar 2022), so no upstream release has some
//    of them without the others; stable trees (5.15.y, 5.16.y) got 3244867af8c0 and 47d3e5cdfe60
//    without the VARHEAD series — such mixtures are not named here.
//  * "KVM: x86: Reject Hyper-V's SEND_IPI hypercalls if local APIC isn't in-kernel" (Sean
//    Christopherson, Feb 2025, v6.14-rc, backported): without an in-kernel LAPIC the IPI calls return
//    INVALID_HYPERCALL_INPUT; before it, kvm_apic_set_irq dereferenced a NULL vcpu->arch.apic (a host
//    oops), which this model refuses to run (Partition throws std::invalid_argument).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "common/enum_names.h"

namespace ipilab::hv {

/// Upstream KVM versions that answer Hyper-V IPI hypercalls differently (oldest first).
enum class KvmVersion : std::uint8_t {
  kV5_15,     ///< v4.20 (214ff83d4473) .. v5.15: before 3244867af8c0
  kV5_16,     ///< v5.16 .. v5.17: 3244867af8c0, before bd1ba5732bb9 and 47d3e5cdfe60
  kV5_18,     ///< v5.18 .. v6.13: VARHEAD series + XMM-fast SEND_IPI_EX, no in-kernel-LAPIC check
  kMainline,  ///< v6.14 and later (the model's default)
};
/// Their names, oldest first, with the release names that behave as one of them (aliases: v5.17 is
/// v5.16, v6.14 is mainline), as `ipilab hv call --kvm` and the hyperv mechanism accept them.
inline constexpr EnumName<KvmVersion> kKvmVersionNames[] = {
    {KvmVersion::kV5_15, "v5.15"}, {KvmVersion::kV5_16, "v5.16"},   {KvmVersion::kV5_16, "v5.17", true},
    {KvmVersion::kV5_18, "v5.18"}, {KvmVersion::kMainline, "v6.14", true}, {KvmVersion::kMainline, "mainline"}};

/// The individual behaviours; kvm_behaviour() gives them per version. True = the fixed behaviour.
struct KvmBehaviour {
  /// 3244867af8c0: SET_ALL is sent to every vCPU even when valid_bank_mask has no bits (before: the
  /// call returned SUCCESS and delivered nothing).
  bool set_all_ignores_bank_count = true;
  /// bd1ba5732bb9: the bank count is the control word's varhead, which must equal
  /// popcount(valid_bank_mask) (before: varhead was ignored, banks = popcount(valid_bank_mask)).
  bool banks_from_varhead = true;
  /// 79661c3766f8: slow sparse reads stop at KVM_MAX_VCPUS / 64 banks (before: every announced bank).
  bool sparse_reads_capped = true;
  /// 40421f38f637: SEND_IPI (a fixed-size call) with a varhead is rejected (before: ignored).
  bool fixed_size_varhead_rejected = true;
  /// 413af6601f76: reserved control bits (31:27, 47:44, 63:60) are rejected (before: ignored).
  bool reserved_control_bits_rejected = true;
  /// 47d3e5cdfe60: SEND_IPI_EX accepts the XMM fast form (before: fast Ex was INVALID_HYPERCALL_INPUT
  /// and no XMM register was read for it).
  bool xmm_fast_send_ipi_ex = true;
  /// Feb 2025: no in-kernel LAPIC -> INVALID_HYPERCALL_INPUT (before: NULL dereference in the host).
  bool lapic_in_kernel_checked = true;
  friend bool operator==(const KvmBehaviour&, const KvmBehaviour&) = default;
};

KvmBehaviour kvm_behaviour(KvmVersion v) noexcept;

struct KvmVersionInfo {
  KvmVersion version;
  std::string_view name;      ///< "v5.15", "v5.16", "v5.18", "mainline"
  std::string_view releases;  ///< upstream releases that behave so
  std::string_view commits;   ///< the commit(s) this version is "before" / "after"
  std::string_view changes;   ///< what differs from the next newer version, in one sentence
};

/// Every version, oldest first.
std::span<const KvmVersionInfo> kvm_versions() noexcept;
std::string_view kvm_version_name(KvmVersion v) noexcept;
/// Accepts the names above and the aliases "v5.17" (= v5.16) and "v6.14" (= mainline).
std::optional<KvmVersion> kvm_version_from_name(std::string_view name) noexcept;

}  // namespace ipilab::hv
