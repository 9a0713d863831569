// evidence/draws.h: a host latency class with a stated range is an uncertain input like a cost.
// seed 003's remote ITS costs cross_socket_ns - same_node_ns (two hops of half that), so moving
// cross_socket_ns moves only the variant whose sender writes the other socket's ITS.
#include "evidence/draws.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "evidence/propagate.h"
#include "evidence/report.h"
#include "scenario/catalog.h"
#include "workload/workload.h"

namespace ipilab::evidence {
namespace {

scenario::PreparedScenario seed003() {
  scenario::RunOverrides ov;
  ov.iterations = 2000;
  return scenario::prepare(scenario::load_scenario(scenario::resolve_scenario("seed003-ipi-hw")), ov, workload::find_workload);
}

TEST(HostLatencyDraw, InventoryListsTheRangedClassesAsEstimates) {
  const auto p = seed003();
  const auto inv = inventory(p, scenario::run(p));
  const auto it = std::find_if(inv.uncertain.begin(), inv.uncertain.end(),
                               [](const UncertainCost& c) { return c.key == "host.latency.cross_socket_ns"; });
  ASSERT_NE(it, inv.uncertain.end());
  EXPECT_EQ(it->cls, cost::CostClass::Estimate);
  EXPECT_DOUBLE_EQ(it->value, 150.0);
  EXPECT_EQ(it->unit, "ns");
  EXPECT_DOUBLE_EQ(it->range.lo, 138.6 / 150.0);
  EXPECT_DOUBLE_EQ(it->range.hi, 230.0 / 150.0);
  EXPECT_TRUE(std::any_of(inv.uncertain.begin(), inv.uncertain.end(),
                          [](const UncertainCost& c) { return c.key == "host.latency.same_node_ns"; }));
}

TEST(HostLatencyDraw, CrossSocketMovesOnlyTheRemoteItsVariant) {
  const auto p = seed003();
  const auto base = scenario::run(p);
  RunOptions opt;
  opt.iterations = 2000;
  const auto runs = run_scaled(p, {"host.latency.cross_socket_ns"}, {{230.0 / 150.0}}, opt);
  ASSERT_EQ(runs.size(), 1u);
  ASSERT_EQ(runs[0].size(), p.variants.size());
  auto mean = [](const workload::RunResult& r) { return r.metrics[0].summary.mean; };
  // Two hops of (230 - 50) / 2 = 90 ns instead of (150 - 50) / 2 = 50: +80 ns, bit-identical draws otherwise.
  EXPECT_NEAR(runs[0][0].at("ipi_round_trip") - mean(base.variants[0].result), 80.0, 0.5);
  for (std::size_t vi = 1; vi < p.variants.size(); ++vi)
    EXPECT_DOUBLE_EQ(runs[0][vi].at("ipi_round_trip"), mean(base.variants[vi].result)) << p.variants[vi].name;
  // The prepared host itself is untouched: the draw moved a copy.
  EXPECT_DOUBLE_EQ(p.variants[0].spec.host->node_latency_ns(0, 1), 150.0);
}

// The written 150 ns sits near the low end of [138.6, 230]: the draws of the remote-ITS
// difference lie below -100 (more negative) except near the point, and the report says the
// point is outside its interval instead of printing it as if it were central.
TEST(HostLatencyDraw, ReportSaysWhatIsDrawnAndFlagsAPointOutsideItsInterval) {
  const auto p = seed003();
  const Propagation u = propagate(p, scenario::run(p), PropagateOptions{32, 2, 2000});
  const std::string text = format_uncertainty(u, false);
  EXPECT_NE(text.find("drawn from the host file: 2 latency classes with a stated range"), std::string::npos) << text;
  EXPECT_NE(text.find("lies outside the 90 % interval of the draws"), std::string::npos) << text;
  bool found = false;
  for (const auto& d : u.differences)
    if (d.metric == "ipi_round_trip" && d.variant == "pre-seed, VM on socket 1") {
      found = true;
      EXPECT_LT(d.interval.lo, -150.0);  // the draws reach (230 - 30) = 200 ns more for the remote ITS
      EXPECT_LT(d.interval.hi, -78.6);   // never less than 138.6 - 60 ns
    }
  EXPECT_TRUE(found);
}

}  // namespace
}  // namespace ipilab::evidence
