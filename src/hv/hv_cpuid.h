// ipilab/hv/hv_cpuid.h — the Hyper-V enlightenment-info leaf (CPUID 0x40000004,
// HYPERV_CPUID_ENLIGHTMENT_INFO) that KVM reports, per KVM version, as KVM_GET_SUPPORTED_HV_CPUID
// computes it: the system ioctl (no vCPU) and the per-vCPU ioctl (arch/x86/kvm/hyperv.c
// kvm_get_hv_cpuid(vcpu, ...); Documentation/virt/kvm/api.rst "KVM_GET_SUPPORTED_HV_CPUID").
//
// EAX bits set unconditionally in every version modelled (v5.15 .. mainline):
// HV_X64_REMOTE_TLB_FLUSH_RECOMMENDED (2), HV_X64_APIC_ACCESS_RECOMMENDED (3),
// HV_X64_RELAXED_TIMING_RECOMMENDED (5), HV_X64_EX_PROCESSOR_MASKS_RECOMMENDED (11), and
// HV_X64_CLUSTER_IPI_RECOMMENDED (10) — which "KVM: x86: Reject Hyper-V's SEND_IPI hypercalls if
// local APIC isn't in-kernel" (Feb 2025, v6.14) made conditional: `if (!vcpu || lapic_in_kernel(vcpu))`.
// So from v6.14 the per-vCPU answer for a vCPU without an in-kernel LAPIC drops the recommendation
// (the system-wide answer keeps it). EBX = 0xFFF (spinlock retries, "matches HyperV 2016").
// Not modelled (they depend on the host, not on the VM): HV_X64_ENLIGHTENED_VMCS_RECOMMENDED (14,
// nested eVMCS enabled), HV_X64_NO_NONARCH_CORESHARING (18, !cpu_smt_possible()),
// HV_DEPRECATING_AEOI_RECOMMENDED (9); `eax_modelled_mask` says which bits the value covers.
#pragma once

#include <cstdint>

#include "hv/kvm_version.h"

namespace ipilab::hv {

inline constexpr std::uint32_t kHypervCpuidEnlightmentInfo = 0x40000004;
inline constexpr std::uint32_t kHvRemoteTlbFlushRecommended = 1u << 2;
inline constexpr std::uint32_t kHvApicAccessRecommended = 1u << 3;
inline constexpr std::uint32_t kHvRelaxedTimingRecommended = 1u << 5;
inline constexpr std::uint32_t kHvClusterIpiRecommended = 1u << 10;
inline constexpr std::uint32_t kHvExProcessorMasksRecommended = 1u << 11;
/// The EAX bits kvm_hv_enlightenment_info() decides (the others are left 0 and not claimed).
inline constexpr std::uint32_t kHvEnlightmentInfoModelledMask =
    kHvRemoteTlbFlushRecommended | kHvApicAccessRecommended | kHvRelaxedTimingRecommended |
    kHvClusterIpiRecommended | kHvExProcessorMasksRecommended;

struct HvEnlightenmentInfo {
  std::uint32_t eax = 0;  ///< the modelled bits only
  std::uint32_t ebx = 0;  ///< spinlock retry count
  bool cluster_ipi_recommended() const { return (eax & kHvClusterIpiRecommended) != 0; }
  bool ex_processor_masks_recommended() const { return (eax & kHvExProcessorMasksRecommended) != 0; }
  friend bool operator==(const HvEnlightenmentInfo&, const HvEnlightenmentInfo&) = default;
};

/// The leaf as KVM `v` reports it. `per_vcpu` false: the system ioctl (vcpu == NULL); true: the
/// vCPU ioctl for a vCPU whose LAPIC is (`lapic_in_kernel`) or is not in the kernel.
HvEnlightenmentInfo kvm_hv_enlightenment_info(KvmVersion v, bool per_vcpu, bool lapic_in_kernel) noexcept;

}  // namespace ipilab::hv
