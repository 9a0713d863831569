// Engine + Resource + Histogram + Breakdown together: a modelled total is the exact sum of its
// steps, and contention on one resource shows up as queueing.
#include <gtest/gtest.h>

#include "sim/breakdown.h"
#include "sim/engine.h"
#include "sim/histogram.h"
#include "sim/resource.h"

namespace ipilab::sim {
namespace {

TEST(Model, UnicastRoundTrip_IsExactSumOfSteps_AndBreakdownSharesMatch) {
  Simulator sim;
  Resource sender("vCPU0"), target("vCPU1");
  Histogram lat;
  Breakdown bd;
  const auto s_send = bd.step("send"), s_wire = bd.step("wire"), s_handler = bd.step("handler"), s_ack = bd.step("ack");
  const Ps send = from_ns(120), wire = from_ns(250), handler = from_ns(200), ack = from_ns(180);
  int left = 1000;
  Ps started{};
  struct Loop {
    Simulator& sim; Resource& sender; Resource& target; Histogram& lat; Breakdown& bd;
    Breakdown::StepId s_send, s_wire, s_handler, s_ack;
    Ps send, wire, handler, ack;
    int& left; Ps& started;
    void start() {
      started = sim.now();
      const Grant g = sender.request(sim.now(), send);
      bd.add(s_send, send);
      bd.add(s_wire, wire);
      sim.at(g.end + wire, [this] {
        const Grant h = target.request(sim.now(), handler);
        bd.add(s_handler, handler);
        bd.add(s_ack, ack);
        sim.at(h.end + ack, [this] {
          lat.record(sim.now() - started);
          if (--left > 0) start();
        });
      });
    }
  } loop{sim, sender, target, lat, bd, s_send, s_wire, s_handler, s_ack, send, wire, handler, ack, left, started};
  loop.start();
  sim.run();
  EXPECT_EQ(lat.count(), 1000u);
  EXPECT_EQ(lat.min(), 750'000);
  EXPECT_EQ(lat.max(), 750'000);
  EXPECT_EQ(sim.now(), Ps{750'000'000});
  EXPECT_EQ(bd.total(), Ps{750'000'000});
  EXPECT_DOUBLE_EQ(bd.rows()[1].share, 250.0 / 750.0);
  EXPECT_EQ(target.waited(), 0u);
}

TEST(Model, TwoSendersOneTarget_SecondWaitsForFirstHandler) {
  Simulator sim;
  Resource target("vCPU2");
  Histogram lat;
  for (int s = 0; s < 2; ++s)
    sim.at(Ps{0}, [&](Simulator& k) {
      k.after(from_ns(250), [&](Simulator& k2) {
        const Grant g = target.request(k2.now(), from_ns(200));
        k2.at(g.end, [&lat](Simulator& k3) { lat.record(k3.now()); });
      });
    });
  sim.run();
  EXPECT_EQ(lat.min(), 450'000);
  EXPECT_EQ(lat.max(), 650'000);
  EXPECT_EQ(target.total_wait(), from_ns(200));
}

}  // namespace
}  // namespace ipilab::sim
