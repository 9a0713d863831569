// KVM versions of the Hyper-V IPI hypercalls (see kvm_version.h for the commits).
#include "hv/kvm_version.h"

#include <array>

#include "common/enum_names.h"

namespace ipilab::hv {
namespace {

constexpr std::array<KvmVersionInfo, 4> kVersions{{
    {KvmVersion::kV5_15, name_of(kKvmVersionNames, KvmVersion::kV5_15), "v4.20 .. v5.15; --enforce-cpuid: v5.14 .. v5.15", "before 3244867af8c0",
     "HV_GENERIC_SET_ALL with valid_bank_mask 0 returns SUCCESS and delivers nothing (the bank count, "
     "popcount(valid_bank_mask), is tested before the format); plus everything v5.16 lacks"},
    {KvmVersion::kV5_16, name_of(kKvmVersionNames, KvmVersion::kV5_16), "v5.16 .. v5.17", "3244867af8c0, before bd1ba5732bb9 / 47d3e5cdfe60",
     "varhead ignored: the bank count is popcount(valid_bank_mask) and every bank is read; SEND_IPI with a "
     "varhead and reserved control bits accepted; fast (XMM) SEND_IPI_EX rejected with "
     "HV_STATUS_INVALID_HYPERCALL_INPUT"},
    {KvmVersion::kV5_18, name_of(kKvmVersionNames, KvmVersion::kV5_18), "v5.18 .. v6.13",
     "bd1ba5732bb9 79661c3766f8 40421f38f637 413af6601f76 47d3e5cdfe60",
     "without an in-kernel LAPIC an IPI hypercall dereferences a NULL APIC (host oops; refused by the model)"},
    {KvmVersion::kMainline, name_of(kKvmVersionNames, KvmVersion::kMainline), "v6.14 ..",
     "\"Reject Hyper-V's SEND_IPI hypercalls if local APIC isn't in-kernel\" (Feb 2025)",
     "the model's default: Linux 6.12+ arch/x86/kvm/hyperv.c with the 2025 in-kernel-LAPIC check"},
}};

}  // namespace

KvmBehaviour kvm_behaviour(KvmVersion v) noexcept {
  KvmBehaviour b;  // mainline: everything fixed
  switch (v) {
    case KvmVersion::kMainline:
      break;
    case KvmVersion::kV5_15:
      b.set_all_ignores_bank_count = false;
      [[fallthrough]];
    case KvmVersion::kV5_16:
      b.banks_from_varhead = false;
      b.sparse_reads_capped = false;
      b.fixed_size_varhead_rejected = false;
      b.reserved_control_bits_rejected = false;
      b.xmm_fast_send_ipi_ex = false;
      [[fallthrough]];
    case KvmVersion::kV5_18:
      b.lapic_in_kernel_checked = false;
      break;
  }
  return b;
}

std::span<const KvmVersionInfo> kvm_versions() noexcept { return kVersions; }

std::string_view kvm_version_name(KvmVersion v) noexcept { return name_of(kKvmVersionNames, v); }

std::optional<KvmVersion> kvm_version_from_name(std::string_view name) noexcept {
  return value_named(kKvmVersionNames, name);
}

}  // namespace ipilab::hv
