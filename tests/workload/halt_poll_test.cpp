// The halt-polling windows step as KVM's kvm_vcpu_halt / grow_halt_poll_ns / shrink_halt_poll_ns and
// the haltpoll governor's adjust_poll_limit do (halt_poll.h).
#include "workload/halt_poll.h"

#include <gtest/gtest.h>

namespace ipilab::workload {
namespace {

TEST(HostHaltPoll, GrowsFromZeroOnShortHaltsUpToTheMaximum) {
  HostHaltPollConfig c;
  c.max_ns = 200000;
  HostHaltPoll p;
  EXPECT_EQ(p.poll_for(c), 0u);
  p.after_halt(c, 3000);  // short halt, nothing polled: grow to grow_start
  EXPECT_EQ(p.window_ns, 10000u);
  p.after_halt(c, 3000);  // caught by the poll: unchanged
  EXPECT_EQ(p.window_ns, 10000u);
  p.after_halt(c, 150000);  // missed but below max: grow x2
  EXPECT_EQ(p.window_ns, 20000u);
  for (int i = 0; i < 4; ++i) p.after_halt(c, 190000);
  EXPECT_EQ(p.window_ns, 320000u);  // grow_halt_poll_ns does not cap ...
  EXPECT_EQ(p.poll_for(c), 200000u);  // ... the next kvm_vcpu_halt does
}

TEST(HostHaltPoll, LongBlockShrinksToZeroWithTheDefaultShrink) {
  HostHaltPollConfig c;
  c.max_ns = 200000;
  HostHaltPoll p;
  p.window_ns = 40000;
  p.after_halt(c, 5'000'000);
  EXPECT_EQ(p.window_ns, 0u);  // halt_poll_ns_shrink = 0
  c.shrink = 2;
  p.window_ns = 40000;
  p.after_halt(c, 5'000'000);
  EXPECT_EQ(p.window_ns, 20000u);
  p.after_halt(c, 5'000'000);
  EXPECT_EQ(p.window_ns, 10000u);
  p.after_halt(c, 5'000'000);
  EXPECT_EQ(p.window_ns, 0u);  // 5000 < grow_start
  p.after_halt(c, 5'000'000);  // window 0 and a long block: nothing to shrink, no growth
  EXPECT_EQ(p.window_ns, 0u);
}

TEST(HostHaltPoll, DisabledStaysZero) {
  HostHaltPollConfig c;  // max 0
  HostHaltPoll p;
  p.after_halt(c, 100);
  EXPECT_EQ(p.window_ns, 0u);
  EXPECT_EQ(p.poll_for(c), 0u);
}

TEST(GuestHaltPoll, GrowsCappedAndShrinksByHalf) {
  GuestHaltPollConfig c;
  c.max_ns = 200000;
  GuestHaltPoll p;
  p.after_idle(c, 3000);  // 0 < 3000 <= max: grow to grow_start
  EXPECT_EQ(p.limit_ns, 50000u);
  p.after_idle(c, 3000);  // within the limit: unchanged
  EXPECT_EQ(p.limit_ns, 50000u);
  p.after_idle(c, 120000);
  EXPECT_EQ(p.limit_ns, 100000u);
  p.after_idle(c, 150000);
  EXPECT_EQ(p.limit_ns, 200000u);
  p.after_idle(c, 199999);  // within
  EXPECT_EQ(p.limit_ns, 200000u);
  p.after_idle(c, 1'000'000);  // long: shrink by 2
  EXPECT_EQ(p.limit_ns, 100000u);
  p.after_idle(c, 1'000'000);
  EXPECT_EQ(p.limit_ns, 50000u);
  p.after_idle(c, 1'000'000);  // 25000 < grow_start: 0
  EXPECT_EQ(p.limit_ns, 0u);
  c.allow_shrink = false;
  p.limit_ns = 100000;
  p.after_idle(c, 1'000'000);
  EXPECT_EQ(p.limit_ns, 100000u);
}

}  // namespace
}  // namespace ipilab::workload
