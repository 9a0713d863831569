// The delivery oracle (src/hv/oracle.h): intended CPUs vs VPs the host delivered to (mapped back via
// hv_vp_index) plus native sends: the seed v2's lost and misdelivered IPIs (Michael Kelley's review).
#include "hv/oracle.h"

#include <gtest/gtest.h>

namespace ipilab::hv {
namespace {

GuestConfig four_cpus() {
  GuestConfig c = GuestConfig::identity(4, 64);
  c.hv_vp_index = {10, 11, 70, 13};
  return c;
}

SendResult intended(std::vector<unsigned> cpus) {
  SendResult s;
  s.intended_cpus = std::move(cpus);
  return s;
}

TEST(Oracle, ExactDeliveryIsOk) {
  const auto r = judge_send(four_cpus(), intended({1, 2}), std::vector<std::uint32_t>{70, 11});
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.delivered, (std::vector<unsigned>{1, 2}));
}

TEST(Oracle, LostAndMisdeliveredAreReported) {
  const auto r = judge_send(four_cpus(), intended({2}), std::vector<std::uint32_t>{13});
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.missing, (std::vector<unsigned>{2}));
  EXPECT_EQ(r.extra, (std::vector<unsigned>{3}));
}

TEST(Oracle, VpsNoCpuOwnsAreUnmapped) {
  const auto r = judge_send(four_cpus(), intended({0}), std::vector<std::uint32_t>{10, 6, 6});
  EXPECT_FALSE(r.ok());
  EXPECT_TRUE(r.missing.empty());
  EXPECT_EQ(r.unmapped_vps, (std::vector<std::uint32_t>{6}));
}

TEST(Oracle, NativeSendsCountAndDuplicatesAreReported) {
  SendResult s = intended({0, 1});
  s.native = NativeSend{SendHook::kSendIpiMask, {0, 1}, 0xFB, std::vector<unsigned>{0, 1}};
  const auto r = judge_send(four_cpus(), s, std::vector<std::uint32_t>{11});
  EXPECT_EQ(r.delivered, (std::vector<unsigned>{0, 1}));
  EXPECT_EQ(r.duplicated, (std::vector<unsigned>{1}));
  EXPECT_FALSE(r.ok());
}

TEST(Oracle, PartitionConfigForSkipsCpusWithoutVp) {
  GuestConfig c = four_cpus();
  c.hv_vp_index[1] = VP_INVAL;
  EXPECT_EQ(partition_config_for(c).vp_index_of_vcpu, (std::vector<std::uint32_t>{10, 70, 13}));
}

TEST(Oracle, V2AgainstV3OnTheSameMachine) {
  // The seed's review point end to end on one partition: 8 CPUs, CPU 1 has VP 70.
  GuestConfig cfg = GuestConfig::identity(8, 8192);
  cfg.hv_vp_index = {0, 70, 2, 3, 4, 5, 6, 7};
  Partition p(partition_config_for(cfg));
  LinuxHvGuest v2(cfg, GuestPolicy::seed_v2());
  LinuxHvGuest v3(cfg, GuestPolicy::mainline());
  LinuxHvGuest pre(cfg, GuestPolicy::pre_seed());
  unsigned v2_bad = 0;
  for (unsigned target = 1; target < 8; ++target) {
    const SendRequest r{SendHook::kSendIpi, 0, 0xFB, target, std::nullopt};
    const auto a = run_on_partition(v2, p, r);
    if (!a.oracle.ok()) ++v2_bad;
    EXPECT_TRUE(run_on_partition(v3, p, r).oracle.ok()) << "target " << target;
    EXPECT_TRUE(run_on_partition(pre, p, r).oracle.ok()) << "target " << target;
  }
  EXPECT_EQ(v2_bad, 1u);  // only CPU 1 (VP 70) goes wrong
}

}  // namespace
}  // namespace ipilab::hv
