// ipilab/hv/guest_policy.h — which version of Linux's Hyper-V IPI code (arch/x86/hyperv/hv_apic.c) the
// guest runs. Two independent axes, because the seed patch (2019) and the exclude_self rework (2021)
// changed different functions.
//
// SendIpiOneVersion — `__send_ipi_one(cpu, vector)` (hv_apic.c; the seed's v1-v3 postings on LKML):
//  * kPreSeed (v4.18, where 68bb7bfb7985d added the IPI hooks, through v5.4): `struct cpumask mask = CPU_MASK_NONE;`
//    cpumask_set_cpu(cpu, &mask); return __send_ipi_mask(&mask, vector). No tracepoint of its own.
//  * kSeedV2 (LKML 25 Oct 2019, <20191025131546.18794-1-vkuznets@redhat.com>; never merged):
//    trace_hyperv_send_ipi_one; no page or vector outside 0x10..0xFF -> false; `cpu >= 64` ->
//    __send_ipi_mask_ex(cpumask_of(cpu)); else !fast_hypercall16(SEND_IPI, vector,
//    BIT_ULL(hv_cpu_number_to_vp_number(cpu))). It tests the CPU number, has no VP_INVAL check, and
//    shifts by the VP number: BIT_ULL(vp) with vp >= 64 (or VP_INVAL = -1) is undefined in C. The model
//    does what x86-64 SHL does with a 64-bit operand (the count is masked to 6 bits):
//    mask = 1 << (vp & 63). So VP 70 -> bit 6 (VP 6), VP_INVAL -> 1 << (0xFFFFFFFF & 63) = bit 63.
//  * kSeedV3 (LKML 27 Oct 2019, merged as b264f57fde0c in v5.5; same logic in mainline): vp =
//    hv_cpu_number_to_vp_number(cpu); trace; no page (mainline: unless fully enlightened TDX) or
//    vp == VP_INVAL -> false; bad vector -> false; vp >= 64 -> __send_ipi_mask_ex(cpumask_of(cpu));
//    else fast SEND_IPI with BIT_ULL(vp).
//
// MaskPathVersion — `__send_ipi_mask`, `__send_ipi_mask_ex`, `cpumask_to_vpset`, allbutself (hv_apic.c,
// include/asm-generic/mshyperv.h):
//  * kV54 (the code of v5.4, the seed's base; the same check order lasted until v5.14, but later
//    kernels judge statuses with hv_result_success, which kV54 does not model): no exclude_self. hv_send_ipi_mask_allbutself copies the mask
//    into an on-stack `struct cpumask` (NR_CPUS bits, not zeroed) with cpumask_copy and clears self.
//    __send_ipi_mask: trace; cpumask_empty -> true; no page -> false; bad vector -> false; VP of
//    cpumask_last >= 64 -> Ex; per CPU: VP_INVAL -> false, VP >= 64 -> Ex, else set bit. Ex: no
//    EX_PROCESSOR_MASKS -> false; irq save; no input page -> fail; mask == cpu_present_mask -> SET_ALL,
//    else cpumask_to_vpset; nr_bank < 0 -> fail; nr_bank == 0 (VP index >= 4096 exists) -> SET_ALL
//    (a bug: it then targets every VP). Results are judged `(int)status == 0` (low 32 bits).
//  * kExcludeSelfUnfixed (dfb5c1e12c28, Wei Liu, Sep 2021, "remove on-stack cpumask from
//    hv_send_ipi_mask_allbutself"): exclude_self parameter; __send_ipi_mask starts with cpumask_weight
//    (empty, or only self with exclude_self -> true) and skips self in its loop; Ex skips self in
//    cpumask_to_vpset_noself, but still uses SET_ALL when mask == present *even with exclude_self*, which
//    sends a spurious IPI to self (and keeps nr_bank == 0 -> SET_ALL). hv_result_success (low 16 bits).
//  * kMainline (Vitaly Kuznetsov, Oct 2021, <20211006125016.941616-1-vkuznets@redhat.com>, as in
//    Linux 6.12 and newer): SET_ALL only when mask == present and !exclude_self; nr_bank <= 0 -> fail; the
//    fully-enlightened-TDX exception to the hypercall-page check. hv_result_success.
// How __send_ipi_one's own fast call is judged: with kV54, `!status` (all 64 bits, as the seed patch
// wrote it); otherwise hv_result_success.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/enum_names.h"

namespace ipilab::hv {

enum class SendIpiOneVersion : std::uint8_t { kPreSeed, kSeedV2, kSeedV3 };
enum class MaskPathVersion : std::uint8_t { kV54, kExcludeSelfUnfixed, kMainline };
inline constexpr EnumName<SendIpiOneVersion> kSendIpiOneNames[] = {{SendIpiOneVersion::kPreSeed, "pre-seed"},
                                                                   {SendIpiOneVersion::kSeedV2, "seed-v2"},
                                                                   {SendIpiOneVersion::kSeedV3, "seed-v3"}};
inline constexpr EnumName<MaskPathVersion> kMaskPathNames[] = {{MaskPathVersion::kV54, "v5.4"},
                                                               {MaskPathVersion::kExcludeSelfUnfixed, "exclude-self-unfixed"},
                                                               {MaskPathVersion::kMainline, "mainline"}};

struct GuestPolicy {
  SendIpiOneVersion send_ipi_one = SendIpiOneVersion::kSeedV3;
  MaskPathVersion mask_path = MaskPathVersion::kMainline;

  /// Linux v5.4 as released: pre-seed __send_ipi_one, 2019 mask paths.
  static constexpr GuestPolicy pre_seed() { return {SendIpiOneVersion::kPreSeed, MaskPathVersion::kV54}; }
  /// The seed patch v2 on v5.4 (tests the CPU number).
  static constexpr GuestPolicy seed_v2() { return {SendIpiOneVersion::kSeedV2, MaskPathVersion::kV54}; }
  /// The seed patch v3 on v5.4 = v5.5 (b264f57fde0c).
  static constexpr GuestPolicy seed_v3() { return {SendIpiOneVersion::kSeedV3, MaskPathVersion::kV54}; }
  /// Current upstream (Linux 6.12 and newer).
  static constexpr GuestPolicy mainline() { return {SendIpiOneVersion::kSeedV3, MaskPathVersion::kMainline}; }

  friend bool operator==(const GuestPolicy&, const GuestPolicy&) = default;
};
/// The four named presets (policy_name, policy_from_name, the hyperv mechanism's send_ipi_one).
inline constexpr EnumName<GuestPolicy> kGuestPolicyPresets[] = {{GuestPolicy::pre_seed(), "pre-seed"},
                                                                {GuestPolicy::seed_v2(), "seed-v2"},
                                                                {GuestPolicy::seed_v3(), "seed-v3"},
                                                                {GuestPolicy::mainline(), "mainline"}};

/// The Linux versions `ipilab hv send --linux` names: each a (send_ipi_one, mask_path) pair that
/// existed as real code (read at the commits below; see docs/hv.md):
///  * kV5_4: v4.18 (68bb7bfb7985d "X86/Hyper-V: Enable IPI enlightenments") .. v5.4.
///  * kSeedV2: the seed patch v2 (LKML 25 Oct 2019) on v5.4; never merged.
///  * kV5_10: b264f57fde0c "x86/hyperv: Micro-optimize send_ipi_one()" (v5.5) .. v5.12 (v5.10 is the
///    LTS in that range): int-typed results, before 753ed9c95c37 (hv_result_success, v5.13).
///  * kExcludeSelfUnfixed: dfb5c1e12c28 "x86/hyperv: remove on-stack cpumask from
///    hv_send_ipi_mask_allbutself" without f5c20e4a5f18 "x86/hyperv: Avoid erroneously sending IPI to
///    'self'" (upstream Sep - Oct 2021, during the v5.15 release candidates).
///  * kMainline: f5c20e4a5f18 and later (Linux 6.12 .. current; linux-next's hv_setup_in_array rework
///    was pulled again and would not change the bytes: its batch size, 509 banks, exceeds 64).
enum class LinuxVersion : std::uint8_t { kV5_4, kSeedV2, kV5_10, kExcludeSelfUnfixed, kMainline };
/// Their names, oldest first (linux_version_info's table and every parameter that names one read it).
inline constexpr EnumName<LinuxVersion> kLinuxVersionNames[] = {{LinuxVersion::kV5_4, "v5.4"},
                                                                {LinuxVersion::kSeedV2, "seed-v2"},
                                                                {LinuxVersion::kV5_10, "v5.10"},
                                                                {LinuxVersion::kExcludeSelfUnfixed, "exclude-self-unfixed"},
                                                                {LinuxVersion::kMainline, "mainline"}};

struct LinuxVersionInfo {
  LinuxVersion version;
  std::string_view name;     ///< "v5.4", "seed-v2", "v5.10", "exclude-self-unfixed", "mainline"
  std::string_view commits;  ///< the code it is
  std::string_view changes;  ///< what it does differently from the previous entry
  GuestPolicy policy;
};
/// Every version, oldest first.
const LinuxVersionInfo* linux_versions_begin() noexcept;
const LinuxVersionInfo* linux_versions_end() noexcept;
const LinuxVersionInfo& linux_version_info(LinuxVersion v) noexcept;
/// Accepts the names above; nullopt otherwise.
std::optional<LinuxVersion> linux_version_from_name(std::string_view name) noexcept;
/// How `version`'s callers judge a hypercall's 64-bit result (RAX). `one`: __send_ipi_one's own fast
/// call; otherwise __send_ipi_mask / __send_ipi_mask_ex.
///  v5.4 / seed-v2 / v5.10: `int ret = hv_do_*(); return ret == 0;` -> bits 31:0 must be 0 in the mask
///    paths; the seed's `return !hv_do_fast_hypercall16(...)` -> all 64 bits must be 0 in __send_ipi_one.
///  exclude-self-unfixed / mainline: hv_result_success() -> only bits 15:0 (HV_HYPERCALL_RESULT_MASK).
/// (hv_do_rep_hypercall itself stops on bits 15:0 != 0 in every version.)
bool judges_success(const GuestPolicy& policy, bool one, std::uint64_t rax) noexcept;
/// "bits 15:0 (hv_result_success)", "bits 31:0 ((int)ret == 0)", "bits 63:0 (!status)".
std::string_view success_rule(const GuestPolicy& policy, bool one) noexcept;

std::string_view to_string(SendIpiOneVersion v) noexcept;  ///< "pre-seed", "seed-v2", "seed-v3"
std::string_view to_string(MaskPathVersion v) noexcept;    ///< "v5.4", "exclude-self-unfixed", "mainline"
/// "pre-seed", "seed-v2", "seed-v3", "mainline" for the presets, else "<one>/<mask>".
std::string policy_name(const GuestPolicy& p);
/// Accepts the preset names above (case-sensitive). Throws InputError("policy", ...) otherwise.
GuestPolicy policy_from_name(std::string_view name);

}  // namespace ipilab::hv
