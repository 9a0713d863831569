// CPUID 0x40000004 as KVM's kvm_get_hv_cpuid() reports it (see hv_cpuid.h).
#include "hv/hv_cpuid.h"

namespace ipilab::hv {

HvEnlightenmentInfo kvm_hv_enlightenment_info(KvmVersion v, bool per_vcpu, bool lapic_in_kernel) noexcept {
  HvEnlightenmentInfo l;
  l.eax = kHvRemoteTlbFlushRecommended | kHvApicAccessRecommended | kHvRelaxedTimingRecommended |
          kHvExProcessorMasksRecommended;
  // The same 2025 commit that rejects SEND_IPI without an in-kernel LAPIC (KvmBehaviour::
  // lapic_in_kernel_checked) made the recommendation per-vCPU.
  if (!kvm_behaviour(v).lapic_in_kernel_checked || !per_vcpu || lapic_in_kernel) l.eax |= kHvClusterIpiRecommended;
  l.ebx = 0x00000FFF;
  return l;
}

}  // namespace ipilab::hv
