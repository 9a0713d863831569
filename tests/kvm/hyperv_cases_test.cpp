// The KVM hyperv_ipi selftest cases, the hyperv_features stages and the extra validation cases as
// real guest code against ipilab's VMM and its user-space Hyper-V (hv::Partition).
#include <gtest/gtest.h>

#include "kvm/hyperv_cases.h"
#include "kvm_test_util.h"

namespace ipilab::kvm {
namespace {

TEST(HypervInRealGuest, SelftestHypervIpiCasesAndValidationCasesPass) {
  IPILAB_SKIP_WITHOUT_KVM(true);
  const std::vector<HvCaseResult> r = run_hyperv_ipi_cases();
  ASSERT_EQ(r.size(), 28u);
  for (const auto& c : r) EXPECT_TRUE(c.passed()) << c.name;
  // The hyperv_ipi selftest's final totals: R1 (VP 2) = 8, R2 (VP 65) = 6 after case 10.
  EXPECT_EQ(r[9].r1, 8u);
  EXPECT_EQ(r[9].r2, 6u);
  EXPECT_EQ(r[10].status, 0x2);  // 0xBEEF -> HV_STATUS_INVALID_HYPERCALL_CODE
}

TEST(HypervInRealGuest, XmmFastCallWithoutXmmCpuidBitGetsUndefinedOpcode) {
  IPILAB_SKIP_WITHOUT_KVM(true);
  EXPECT_TRUE(run_hyperv_xmm_without_cpuid_gets_ud());
}

}  // namespace
}  // namespace ipilab::kvm
