// Tests of sim/resource.h: FIFO service, exact queueing delays, counters.
#include "sim/resource.h"

#include <gtest/gtest.h>

#include <stdexcept>

namespace ipilab::sim {
namespace {

TEST(Resource, OverlappingRequests_SecondWaitsExactlyForTheFirst) {
  Resource its("ITS0 GITS_SGIR");
  const Grant a = its.request(Ps{1000}, Ps{500});
  const Grant b = its.request(Ps{1200}, Ps{300});
  EXPECT_EQ(a.start, Ps{1000});
  EXPECT_EQ(a.end, Ps{1500});
  EXPECT_EQ(a.wait, Ps{0});
  EXPECT_EQ(b.start, Ps{1500});
  EXPECT_EQ(b.wait, Ps{300});
  EXPECT_EQ(b.end, Ps{1800});
  EXPECT_EQ(its.busy_until(), Ps{1800});
  EXPECT_EQ(its.requests(), 2u);
  EXPECT_EQ(its.waited(), 1u);
  EXPECT_EQ(its.total_wait(), Ps{300});
  EXPECT_EQ(its.max_wait(), Ps{300});
  EXPECT_EQ(its.busy_time(), Ps{800});
}

TEST(Resource, RequestAfterIdleGap_DoesNotWait) {
  Resource r;
  r.request(Ps{0}, Ps{100});
  const Grant g = r.request(Ps{250}, Ps{10});
  EXPECT_EQ(g.start, Ps{250});
  EXPECT_EQ(g.wait, Ps{0});
  EXPECT_TRUE(r.idle_at(Ps{260}));
  EXPECT_FALSE(r.idle_at(Ps{259}));
  EXPECT_DOUBLE_EQ(r.utilization(Ps{1100}), 0.1);
}

TEST(Resource, ThreeSimultaneousSenders_QueueInCallOrder) {
  Resource rd("redistributor");
  const Grant a = rd.request(Ps{0}, Ps{40});
  const Grant b = rd.request(Ps{0}, Ps{40});
  const Grant c = rd.request(Ps{0}, Ps{40});
  EXPECT_EQ(a.wait, Ps{0});
  EXPECT_EQ(b.wait, Ps{40});
  EXPECT_EQ(c.wait, Ps{80});
  EXPECT_EQ(c.end, Ps{120});
  rd.reset_stats();
  EXPECT_EQ(rd.requests(), 0u);
  EXPECT_EQ(rd.busy_until(), Ps{120});
}

TEST(Resource, NegativeDuration_IsRejected) {
  Resource r;
  EXPECT_THROW(r.request(Ps{0}, Ps{-1}), std::invalid_argument);
}

}  // namespace
}  // namespace ipilab::sim
