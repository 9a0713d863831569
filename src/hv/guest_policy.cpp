// Guest policy names (see guest_policy.h).
#include "hv/guest_policy.h"

#include "common/enum_names.h"
#include "common/error.h"
#include "common/suggest.h"

#include <array>

namespace ipilab::hv {
namespace {

constexpr std::array<LinuxVersionInfo, 5> kLinuxVersions{{
    {LinuxVersion::kV5_4, name_of(kLinuxVersionNames, LinuxVersion::kV5_4),
     "v4.18 (68bb7bfb7985d) .. v5.4, arch/x86/hyperv/hv_apic.c before the seed patch",
     "__send_ipi_one builds a cpumask on the stack (CPU_MASK_NONE, NR_CPUS bits) and calls __send_ipi_mask; "
     "allbutself copies the mask and clears self; results judged as int (bits 31:0); a VP index >= 4096 makes "
     "cpumask_to_vpset return 0, which means SET_ALL",
     GuestPolicy::pre_seed()},
    {LinuxVersion::kSeedV2, name_of(kLinuxVersionNames, LinuxVersion::kSeedV2),
     "the seed patch v2 on v5.4 (LKML 25 Oct 2019, <20191025131546.18794-1-vkuznets@redhat.com>)",
     "__send_ipi_one tests the CPU number (cpu >= 64), not the VP number, and has no VP_INVAL check: "
     "BIT_ULL(vp) with vp >= 64 or VP_INVAL shifts by vp & 63 on x86; its fast call is judged on all 64 bits",
     GuestPolicy::seed_v2()},
    {LinuxVersion::kV5_10, name_of(kLinuxVersionNames, LinuxVersion::kV5_10),
     "b264f57fde0c (seed v3, merged for v5.5) .. v5.12, before 753ed9c95c37 and dfb5c1e12c28",
     "__send_ipi_one looks up the VP number first: VP_INVAL -> native, VP >= 64 -> Ex with cpumask_of(cpu), "
     "else one fast HVCALL_SEND_IPI with BIT_ULL(vp), judged on all 64 bits (!status)",
     GuestPolicy::seed_v3()},
    {LinuxVersion::kExcludeSelfUnfixed, name_of(kLinuxVersionNames, LinuxVersion::kExcludeSelfUnfixed),
     "dfb5c1e12c28 without f5c20e4a5f18 (upstream Sep - Oct 2021, v5.15 release candidates)",
     "allbutself passes exclude_self instead of a stack copy; but mask == cpu_present_mask still means SET_ALL, "
     "so the sender gets its own IPI; results judged by hv_result_success (bits 15:0, since 753ed9c95c37)",
     GuestPolicy{SendIpiOneVersion::kSeedV3, MaskPathVersion::kExcludeSelfUnfixed}},
    {LinuxVersion::kMainline, name_of(kLinuxVersionNames, LinuxVersion::kMainline),
     "f5c20e4a5f18 .. current (as in Linux 6.12)",
     "SET_ALL only when mask == cpu_present_mask and not exclude_self; nr_bank <= 0 (VP_INVAL, or a VP index "
     ">= 4096) falls back to the native APIC; fully enlightened TDX guests send without a hypercall page",
     GuestPolicy::mainline()},
}};

}  // namespace

const LinuxVersionInfo* linux_versions_begin() noexcept { return kLinuxVersions.data(); }
const LinuxVersionInfo* linux_versions_end() noexcept { return kLinuxVersions.data() + kLinuxVersions.size(); }

const LinuxVersionInfo& linux_version_info(LinuxVersion v) noexcept {
  for (const auto& i : kLinuxVersions)
    if (i.version == v) return i;
  return kLinuxVersions.back();
}

std::optional<LinuxVersion> linux_version_from_name(std::string_view name) noexcept {
  return value_named(kLinuxVersionNames, name);
}

bool judges_success(const GuestPolicy& policy, bool one, std::uint64_t rax) noexcept {
  if (policy.mask_path != MaskPathVersion::kV54) return (rax & 0xFFFF) == 0;  // hv_result_success
  return one ? rax == 0 : static_cast<std::uint32_t>(rax) == 0;
}

std::string_view success_rule(const GuestPolicy& policy, bool one) noexcept {
  if (policy.mask_path != MaskPathVersion::kV54) return "bits 15:0 must be 0 (hv_result_success)";
  return one ? "all 64 bits must be 0 (return !hv_do_fast_hypercall16(...))"
             : "bits 31:0 must be 0 (int ret = hv_do_*(...); ret == 0)";
}


std::string_view to_string(SendIpiOneVersion v) noexcept { return name_of(kSendIpiOneNames, v); }

std::string_view to_string(MaskPathVersion v) noexcept { return name_of(kMaskPathNames, v); }

std::string policy_name(const GuestPolicy& p) {
  const std::string_view preset = name_of(kGuestPolicyPresets, p, {});
  if (!preset.empty()) return std::string(preset);
  return std::string(to_string(p.send_ipi_one)) + "/" + std::string(to_string(p.mask_path));
}

GuestPolicy policy_from_name(std::string_view name) {
  if (const auto p = value_named(kGuestPolicyPresets, name)) return *p;
  std::string list;
  for (const auto& n : kGuestPolicyPresets) list += (list.empty() ? "" : ", ") + std::string(n.name);
  throw InputError("policy", "unknown guest policy '" + std::string(name) + "'" +
                                 did_you_mean_in(name, kGuestPolicyPresets, [](const auto& n) { return n.name; }) +
                                 " (known: " + list + ")");
}

}  // namespace ipilab::hv
