// Tests of sim/resource.h: FIFO service, exact queueing delays, counters.
#include "sim/resource.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

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

TEST(Occupancy, LeaveAll_GivesTheFiguresOfLeavingOneByOne) {
  // A queue taken whole at one instant (llist_del_all): one clock advance, the same figures.
  Occupancy one("q1", Ps{1000}), all("q2", Ps{1000});
  const std::vector<Ps> entered{Ps{100}, Ps{2500}, Ps{2500}, Ps{7000}};
  for (Occupancy* q : {&one, &all}) {
    q->enter(Ps{0});
    q->leave(Ps{50}, Ps{0});
    q->reset_stats(Ps{60});
    for (Ps e : entered) q->enter(e);
  }
  for (Ps e : entered) one.leave(Ps{9000}, e);
  all.leave_all(Ps{9000}, entered.begin(), entered.end(), [](Ps e) { return e; });
  const ResourceStats a = one.stats(Ps{12000}), b = all.stats(Ps{12000});
  EXPECT_EQ(b.arrivals, 4u);
  EXPECT_EQ(b.elapsed_ps, a.elapsed_ps);
  EXPECT_EQ(b.utilisation, a.utilisation);
  EXPECT_EQ(b.wait_mean_ps, a.wait_mean_ps);
  EXPECT_EQ(b.wait_mean_ps, (8900.0 + 6500.0 + 6500.0 + 2000.0) / 4.0);
  EXPECT_EQ(b.wait_p99_ps, a.wait_p99_ps);
  EXPECT_EQ(b.wait_max_ps, 8900.0);
  EXPECT_EQ(b.l_time_average, a.l_time_average);
  EXPECT_EQ(b.w_mean_ps, a.w_mean_ps);
  EXPECT_EQ(b.carried, a.carried);
  EXPECT_EQ(b.little_exact, a.little_exact);
  EXPECT_EQ(all.size(), 0);
}

TEST(Resource, NegativeDuration_IsRejected) {
  Resource r;
  EXPECT_THROW(r.request(Ps{0}, Ps{-1}), std::invalid_argument);
}

}  // namespace
}  // namespace ipilab::sim
