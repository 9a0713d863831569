// The ten cases of the KVM selftest hyperv_ipi (tools/testing/selftests/kvm/x86/hyperv_ipi.c) against
// Partition::execute:
// exact status, RAX, delivered VPs/vCPUs/vector, and the host work each form costs.
#include <gtest/gtest.h>

#include "partition_cases.h"

namespace ipilab::hv {
namespace {

using testdata::SelftestCase;
using testdata::vps_of;

class KvmSelftestHypervIpi : public ::testing::TestWithParam<SelftestCase> {};

TEST_P(KvmSelftestHypervIpi, SucceedsAndDeliversExactlyTheSelftestTargets) {
  const SelftestCase& c = GetParam();
  const Partition p(testdata::selftest_config());
  const auto mem = testdata::memory_with(c.page);
  const HypercallOutcome o = p.execute(0, c.regs, mem);
  EXPECT_FALSE(o.inject_ud);
  EXPECT_EQ(o.status, HvStatus::HV_STATUS_SUCCESS);
  EXPECT_EQ(o.rax, 0u);  // status 0, reps completed 0: the selftest asserts (status & 0xFFFF) == 0
  EXPECT_TRUE(o.rejected_by.empty()) << o.rejected_by;
  EXPECT_TRUE(o.modelled);
  EXPECT_EQ(o.control, c.control);
  EXPECT_EQ(vps_of(o), c.expect_vps);
  for (const auto& d : o.delivered) {
    EXPECT_EQ(d.vector, testdata::kVector);
    EXPECT_EQ(p.vp_index(d.vcpu), d.vp_index);
  }
  EXPECT_TRUE(o.dropped_vcpus.empty());
  EXPECT_EQ(o.work.vcpus_scanned, 3u);  // kvm_hv_send_ipi_to_many walks every vCPU
  EXPECT_EQ(o.work.apic_set_irq_calls, c.expect_vps.size());
}

INSTANTIATE_TEST_SUITE_P(Cases1To10, KvmSelftestHypervIpi, ::testing::ValuesIn(testdata::selftest_cases()),
                         [](const auto& info) { return "Case" + std::to_string(info.param.number); });

// Expected (R1, R2) deltas summed over the selftest's ten cases: R1 = 8, R2 = 6 (the selftest's totals).
TEST(KvmSelftestHypervIpi, FinalCountersAreEightAndSix) {
  const Partition p(testdata::selftest_config());
  int r1 = 0, r2 = 0, sender = 0;
  for (const auto& c : testdata::selftest_cases()) {
    const auto o = p.execute(0, c.regs, testdata::memory_with(c.page));
    for (const auto& d : o.delivered) {
      r1 += d.vp_index == 2;
      r2 += d.vp_index == 65;
      sender += d.vp_index == 0;
    }
  }
  EXPECT_EQ(r1, 8);
  EXPECT_EQ(r2, 6);
  EXPECT_EQ(sender, 2);  // cases 9 and 10 (SET_ALL) include the sender
}

TEST(KvmSelftestHypervIpi, Case1SlowSendIpiReadsSixteenBytes) {
  const auto c = testdata::selftest_cases()[0];
  const auto o = Partition(testdata::selftest_config()).execute(0, c.regs, testdata::memory_with(c.page));
  EXPECT_EQ(o.work, (HostWork{1, 16, 0, 1, 3, 1}));
  ASSERT_TRUE(std::holds_alternative<SendIpiInput>(o.input));
  EXPECT_EQ(std::get<SendIpiInput>(o.input), (SendIpiInput{0xFE, 0, 1ull << 2}));
}

TEST(KvmSelftestHypervIpi, Case2FastSendIpiTouchesNoMemoryAndNoXmm) {
  const auto c = testdata::selftest_cases()[1];
  const auto o = Partition(testdata::selftest_config()).execute(0, c.regs, FlatGuestMemory{});
  EXPECT_EQ(o.status, HvStatus::HV_STATUS_SUCCESS);
  EXPECT_EQ(o.work, (HostWork{0, 0, 0, 1, 3, 1}));  // plain SEND_IPI is never an XMM call
}

TEST(KvmSelftestHypervIpi, Case7SlowExReadsHeaderThenTwoBanks) {
  const auto c = testdata::selftest_cases()[6];
  const auto o = Partition(testdata::selftest_config()).execute(0, c.regs, testdata::memory_with(c.page));
  EXPECT_EQ(o.work, (HostWork{2, 24 + 16, 0, 2, 3, 2}));
  ASSERT_TRUE(std::holds_alternative<SendIpiExInput>(o.input));
  EXPECT_EQ(std::get<SendIpiExInput>(o.input).vp_set,
            (VpSet{HV_GENERIC_SET_SPARSE_4K, 0x3, {1ull << 2, 1ull << 1}}));
}

TEST(KvmSelftestHypervIpi, Case8XmmExReadsSixXmmRegistersAndNoMemory) {
  const auto c = testdata::selftest_cases()[7];
  const auto o = Partition(testdata::selftest_config()).execute(0, c.regs, FlatGuestMemory{});
  EXPECT_EQ(o.status, HvStatus::HV_STATUS_SUCCESS);
  EXPECT_EQ(o.work, (HostWork{0, 0, 6, 2, 3, 2}));
}

TEST(KvmSelftestHypervIpi, Case9SetAllReadsOnlyTheHeader) {
  const auto c = testdata::selftest_cases()[8];
  const auto o = Partition(testdata::selftest_config()).execute(0, c.regs, testdata::memory_with(c.page));
  EXPECT_EQ(o.work, (HostWork{1, 24, 0, 0, 3, 3}));
  ASSERT_EQ(o.delivered.size(), 3u);
  EXPECT_EQ(o.delivered[0], (Delivery{0, 0, 0xFE}));  // the sender, first in vCPU order
  EXPECT_EQ(o.delivered[2], (Delivery{2, 65, 0xFE}));
}

// The same cases issued by another vCPU give the same targets: the sender is not special to KVM.
TEST(KvmSelftestHypervIpi, SenderDoesNotChangeTheTargets) {
  const Partition p(testdata::selftest_config());
  for (const auto& c : testdata::selftest_cases()) {
    const auto mem = testdata::memory_with(c.page);
    EXPECT_EQ(vps_of(p.execute(2, c.regs, mem)), c.expect_vps) << "case " << c.number;
  }
}

// Xen viridian accepts the six memory/16-byte-fast forms with the same targets and refuses the
// four XMM-fast Ex forms with INVALID_PARAMETER (xen/arch/x86/hvm/viridian/viridian.c hvcall_ipi_ex).
TEST(XenViridianSelftest, SlowAndNonExFastCasesAgreeXmmExCasesAreInvalidParameter) {
  auto cfg = testdata::selftest_config();
  cfg.flavor = ErrorFlavor::XenViridian;
  const Partition p(cfg);
  for (const auto& c : testdata::selftest_cases()) {
    const auto o = p.execute(0, c.regs, testdata::memory_with(c.page));
    const bool xmm_ex = c.control.fast && c.control.call_code == HVCALL_SEND_IPI_EX;
    if (xmm_ex) {
      EXPECT_EQ(o.status, HvStatus::HV_STATUS_INVALID_PARAMETER) << "case " << c.number;
      EXPECT_TRUE(o.delivered.empty());
      EXPECT_EQ(o.rax, 0x5u);
    } else {
      EXPECT_EQ(o.status, HvStatus::HV_STATUS_SUCCESS) << "case " << c.number;
      EXPECT_EQ(vps_of(o), c.expect_vps) << "case " << c.number;
    }
  }
}

}  // namespace
}  // namespace ipilab::hv
