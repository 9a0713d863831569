// Propagation and sensitivity on a model with a known answer (sum_workload.h): a sum of costs, each
// uniform over its range. Exact: the interval of one uniform cost, of a sum of two equal ones (a
// triangle), of a difference that common random numbers reduce to one cost; the swings and the
// variance shares of a sum; the same seed giving the same intervals, whatever -j.
#include "evidence/propagate.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "evidence/report.h"
#include "evidence/sensitivity.h"
#include "scenario/report.h"
#include "scenario/scenario.h"
#include "sum_workload.h"

namespace ipilab::evidence {
namespace {

namespace fs = std::filesystem;

constexpr const char* kProfile = R"TOML([profile]
name = "sum-test"
clock_ghz = 1.0
clock_source = "test"

[cost.vm.exit_entry]
value = 100
unit = "ns"
range = [50, 150]
range_reason = "test: width 100"
source = "ESTIMATE: test"

[cost.guest.eoi]
value = 200
unit = "ns"
range = 0.25
range_reason = "test: 150 to 250"
source = "SOURCED: test"

[cost.guest.callback]
value = 40
unit = "ns"
source = "ESTIMATE: test, no range (class default: +-50 %, 20 to 60)"

[cost.guest.irq_entry]
value = 10
unit = "ns"
source = "MEASURED: test"
)TOML";

constexpr const char* kScenario = R"([scenario]
name = "sum"
workload = "sum"
iterations = 4
warmup = 0
[host]
preset = "kunpeng920-2s"
[vm]
vcpus = 2
pin = [0, 1]
[profile]
file = "profile.toml"
[[variant]]
name = "one"
workload.costs = ["vm.exit_entry"]
[[variant]]
name = "two"
workload.costs = ["vm.exit_entry", "guest.eoi"]
[[variant]]
name = "three"
workload.costs = ["vm.exit_entry", "guest.callback"]
[[variant]]
name = "fixed"
workload.costs = ["vm.exit_entry"]
profile.override."vm.exit_entry" = { value = 70, unit = "ns" }
)";

class PropagateTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string templ = (fs::temp_directory_path() / "ipilab-evidence-test-XXXXXX").string();
    ASSERT_NE(::mkdtemp(templ.data()), nullptr);
    dir_ = templ;
    std::ofstream(dir_ / "profile.toml") << kProfile;
    std::ofstream(dir_ / "s.toml") << kScenario;
    prepared_ = scenario::prepare(scenario::load_scenario((dir_ / "s.toml").string()), {}, testing::sum_lookup);
    base_ = scenario::run(prepared_);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  const MetricInterval& metric(const Propagation& p, std::size_t v, const std::string& name) {
    for (const auto& m : p.variants[v].metrics)
      if (m.name == name) return m;
    ADD_FAILURE() << name;
    return p.variants[v].metrics[0];
  }
  const DifferenceInterval& diff(const Propagation& p, const std::string& variant) {
    for (const auto& d : p.differences)
      if (d.variant == variant && d.metric == "total") return d;
    ADD_FAILURE() << variant;
    return p.differences[0];
  }
  fs::path dir_;
  scenario::PreparedScenario prepared_;
  scenario::ScenarioResult base_;
};

TEST_F(PropagateTest, OneUniformCostGivesItsCentralNinetyPercent) {
  const Propagation p = propagate(prepared_, base_, {1000, 1, 0});
  const MetricInterval& m = metric(p, 0, "total");
  EXPECT_DOUBLE_EQ(m.point, 100.0);
  ASSERT_TRUE(m.has_interval);
  // U(50, 150): the 5th and 95th percentiles are 55 and 145; a 1000-point hypercube hits each
  // 0.1 % stratum once, so the estimate is within a stratum's width (0.1 ns) and rounding to ps.
  EXPECT_NEAR(m.interval.lo, 55.0, 0.15);
  EXPECT_NEAR(m.interval.hi, 145.0, 0.15);
  EXPECT_NEAR(m.draws_mean, 100.0, 0.05);
}

TEST_F(PropagateTest, SumOfTwoEqualUniformsIsATriangle) {
  const Propagation p = propagate(prepared_, base_, {4000, 2, 0});
  const MetricInterval& m = metric(p, 1, "total");
  EXPECT_DOUBLE_EQ(m.point, 300.0);
  // U(50,150) + U(150,250): triangular on [200, 400]; P(Y < 200 + x) = x^2 / (2 * 100^2) = 0.05
  // at x = 100 * sqrt(0.1) = 31.62. The hypercube makes each marginal exact but pairs the two
  // columns at random, so the sum's quantiles carry sampling error: about 1.1 ns (one standard
  // error) for 4000 draws; the tolerance is three. A uniform or a normal of the same variance
  // would miss by 10 ns or more.
  const double x = 100.0 * std::sqrt(0.1);
  EXPECT_NEAR(m.interval.lo, 200.0 + x, 3.5);
  EXPECT_NEAR(m.interval.hi, 400.0 - x, 3.5);
  // Two uniforms of width 100: 2 * 100^2 / 12; one standard error of the estimate is 31.
  EXPECT_NEAR(variance(m.draws), 2 * 100.0 * 100.0 / 12, 95.0);
}

TEST_F(PropagateTest, CommonRandomNumbersLeaveOnlyTheCostThatDiffers) {
  const Propagation p = propagate(prepared_, base_, {1000, 1, 0});
  // two - one = guest.eoi alone (vm.exit_entry moves both together and cancels): U(150, 250).
  const DifferenceInterval& d = diff(p, "two");
  EXPECT_DOUBLE_EQ(d.point, 200.0);
  ASSERT_TRUE(d.has_interval);
  EXPECT_NEAR(d.interval.lo, 155.0, 0.15);
  EXPECT_NEAR(d.interval.hi, 245.0, 0.15);
  EXPECT_FALSE(d.interval.spans_zero());
  // fixed - one: the override holds vm.exit_entry at 70 in "fixed", so the difference is
  // 70 - U(50, 150): from -75 to +15, spanning zero ("the change may not matter here").
  const DifferenceInterval& f = diff(p, "fixed");
  EXPECT_NEAR(f.interval.lo, 70 - 145.0, 0.15);
  EXPECT_NEAR(f.interval.hi, 70 - 55.0, 0.15);
  EXPECT_TRUE(f.interval.spans_zero());
  EXPECT_NE(format_uncertainty(p, false).find("the change may not matter here"), std::string::npos);
}

TEST_F(PropagateTest, RangesComeFromTheProfileOrTheClassDefault) {
  const CostInventory inv = inventory(prepared_, base_);
  ASSERT_EQ(inv.uncertain.size(), 3u);  // callback, eoi, exit_entry (irq_entry is never used)
  EXPECT_EQ(inv.uncertain[0].key, "guest.callback");
  EXPECT_TRUE(inv.uncertain[0].range.is_default);
  EXPECT_DOUBLE_EQ(inv.uncertain[0].range.lo, 0.5);
  EXPECT_DOUBLE_EQ(inv.uncertain[0].range.hi, 1.5);
  EXPECT_EQ(inv.uncertain[1].key, "guest.eoi");
  EXPECT_DOUBLE_EQ(inv.uncertain[1].range.lo, 0.75);
  EXPECT_FALSE(inv.uncertain[1].range.is_default);
  EXPECT_EQ(inv.uncertain[2].key, "vm.exit_entry");
  EXPECT_DOUBLE_EQ(inv.uncertain[2].range.hi, 1.5);
  EXPECT_EQ(inv.estimates(), 2u);
  EXPECT_EQ(inv.defaults(), 1u);
}

TEST_F(PropagateTest, SameSeedSameIntervalsWhateverTheJobs) {
  const Propagation a = propagate(prepared_, base_, {64, 1, 0});
  const Propagation b = propagate(prepared_, base_, {64, 2, 0});
  for (std::size_t v = 0; v < a.variants.size(); ++v) EXPECT_EQ(a.variants[v].metrics[0].draws, b.variants[v].metrics[0].draws);
  scenario::RunOverrides ov;
  ov.seed = 99;
  const auto other = scenario::prepare(scenario::load_scenario((dir_ / "s.toml").string()), ov, testing::sum_lookup);
  const Propagation c = propagate(other, scenario::run(other), {64, 1, 0});
  EXPECT_NE(a.variants[1].metrics[0].draws, c.variants[1].metrics[0].draws);
}

TEST_F(PropagateTest, SwingsAndSharesOfASumAreItsRangesWidths) {
  const CostInventory inv = inventory(prepared_, base_);
  const Propagation draws = propagate(prepared_, base_, {2000, 2, 0});
  const Sensitivity s = sensitivity(prepared_, base_, inv, RunOptions{2, 0, false}, &draws);
  ASSERT_EQ(s.variants.size(), 4u);
  // "three" = exit_entry (width 100) + callback (default range, width 40): swings 100 and 40,
  // shares 100^2 / (100^2 + 40^2) = 0.862 and 0.138, exactly for an additive model.
  const VariantSensitivity& t = s.variants[2];
  ASSERT_EQ(t.swings.size(), 2u);
  EXPECT_EQ(t.swings[0].key, "vm.exit_entry");
  EXPECT_DOUBLE_EQ(t.swings[0].low, 50 + 40);
  EXPECT_DOUBLE_EQ(t.swings[0].high, 150 + 40);
  EXPECT_DOUBLE_EQ(t.swings[0].swing, 100);
  EXPECT_DOUBLE_EQ(t.swings[1].swing, 40);
  EXPECT_NEAR(t.swings[0].share, 10000.0 / 11600.0, 1e-12);
  EXPECT_NEAR(t.swings[1].share, 1600.0 / 11600.0, 1e-12);
  // First-order indices from the 2000 draws estimate the same shares.
  ASSERT_TRUE(t.swings[0].first_order && t.swings[1].first_order);
  EXPECT_NEAR(*t.swings[0].first_order, 0.862, 0.05);
  EXPECT_NEAR(*t.swings[1].first_order, 0.138, 0.05);
  // "two": two equal widths, 50 % each; "fixed" holds its only cost: no swing at all.
  EXPECT_NEAR(s.variants[1].swings[0].share, 0.5, 1e-12);
  EXPECT_TRUE(s.variants[3].swings.empty());
}

TEST_F(PropagateTest, JsonPutsTheIntervalBesideTheMean) {
  const Propagation p = propagate(prepared_, base_, {100, 1, 0});
  nlohmann::ordered_json j = scenario::to_json(base_);
  add_uncertainty_json(j, p);
  const auto& m = j["variants"][0]["metrics"]["total"];
  auto it = m.begin();
  while (it != m.end() && it.key() != "mean") ++it;
  ASSERT_NE(it, m.end());
  ++it;
  EXPECT_EQ(it.key(), "interval");
  EXPECT_EQ(j["variants"][1]["difference_vs_first"]["total"]["may_not_matter"], false);
  EXPECT_EQ(j["variants"][3]["difference_vs_first"]["total"]["may_not_matter"], true);
  EXPECT_EQ(j["uncertainty"]["draws"], 100);
}

}  // namespace
}  // namespace ipilab::evidence
