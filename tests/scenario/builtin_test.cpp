// Every built-in scenario with the real workloads: it prepares, runs (few iterations), and each
// variant used only cost keys its workload, its mechanism or the core declares (so the catalog's
// "who reads it" is true and every used cost shows up in `ipilab list --mechanisms`), and its
// counters balance exactly over the measured window (docs/json.md, "Counters that add up").
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

#include <cmath>
#include <sstream>

#include "scenario/catalog.h"
#include "scenario/plot.h"
#include "scenario/runner.h"
#include "scenario/scenario.h"
#include "workload/mechanism.h"
#include "workload/vm_run.h"
#include "workload/workload.h"

namespace ipilab::scenario {
namespace {

// The window's two balances, exactly: every IPI sent (or in flight when the window began) is taken
// (ipis_delivered counts those merged into a pending one too), lost, or still in flight at its end;
// every request (a CSD, a wake entry, a raw IPI's target; coalesced ones included) is served
// (deliveries), lost, or still pending at its end.
void expect_balanced(const std::map<std::string, std::uint64_t>& c, const std::string& where) {
  auto at = [&](const char* k) -> std::uint64_t {
    const auto it = c.find(k);
    if (it == c.end()) ADD_FAILURE() << where << ": no counter " << k;
    return it == c.end() ? 0 : it->second;
  };
  EXPECT_EQ(at("ipis_sent") + at("ipis_in_flight_at_start"), at("ipis_delivered") + at("lost") + at("ipis_in_flight_at_end"))
      << where << ": ipis_sent " << at("ipis_sent") << " + at start " << at("ipis_in_flight_at_start") << " vs delivered "
      << at("ipis_delivered") << " + lost " << at("lost") << " + at end " << at("ipis_in_flight_at_end");
  EXPECT_EQ(at("requests") + at("requests_pending_at_start"), at("deliveries") + at("requests_lost") + at("requests_pending_at_end"))
      << where << ": requests " << at("requests") << " + at start " << at("requests_pending_at_start") << " vs deliveries "
      << at("deliveries") << " + lost " << at("requests_lost") << " + at end " << at("requests_pending_at_end");
  EXPECT_LE(at("coalesced") + at("polling_skips"), at("requests")) << where;  // requests that sent no IPI of their own
  EXPECT_LE(at("lost"), at("requests_lost")) << where;  // a lost IPI loses its request (and those queued behind it)
}

TEST(BuiltinScenarios, RunAndUseOnlyDeclaredCosts) {
  const auto list = list_builtin();
  ASSERT_GE(list.size(), 11u);
  for (const auto& b : list) {
    ASSERT_TRUE(b.error.empty()) << b.name << ": " << b.error;
    RunOverrides ov;
    ov.iterations = 300;
    const PreparedScenario ps = prepare(load_scenario(b.file), ov, workload::find_workload);
    const ScenarioResult r = run(ps);
    ASSERT_EQ(r.variants.size(), ps.variants.size()) << b.name;
    for (std::size_t i = 0; i < r.variants.size(); ++i) {
      const auto& spec = ps.variants[i].spec;
      const auto& mech = workload::chosen_mechanism(spec.params, ps.info->default_mechanism);
      std::set<std::string> declared;
      for (const auto& k : mech.cost_keys) declared.emplace(k.name);
      for (const auto& k : ps.info->cost_keys) declared.emplace(k.name);
      for (const auto& k : workload::core_cost_keys()) declared.emplace(k.name);
      for (const auto& c : r.variants[i].result.provenance.at("costs"))
        EXPECT_TRUE(declared.count(c.at("key").get<std::string>()))
            << b.name << " / " << r.variants[i].name << " used undeclared " << c.at("key");
      for (const auto& n : r.variants[i].result.notes) EXPECT_EQ(n.find("MODEL ERROR"), std::string::npos) << b.name << ": " << n;
      expect_balanced(r.variants[i].result.counters, b.name + " / " + r.variants[i].name);
    }
  }
}

// Expected counts are written for the scenario's own iteration count: under --iterations they are
// reported as not checked (never failed, never passed), while metric expectations are still
// evaluated; at the scenario's own count every one is evaluated and holds.
TEST(BuiltinScenarios, CounterChecksAreSkippedOnlyWhenIterationsAreOverridden) {
  const auto file = resolve_scenario("its-command-wait");
  RunOverrides few;
  few.iterations = 200;
  const ScenarioResult r = run(prepare(load_scenario(file), few, workload::find_workload));
  std::size_t counters = 0, metrics = 0;
  for (const auto& c : r.checks) {
    if (c.counter) {
      ++counters;
      EXPECT_EQ(c.skipped, "the expected count is for the scenario's " + std::to_string(r.scenario_iterations) +
                               " iterations, this run had 200")
          << c.expect.key;
    } else {
      ++metrics;
      EXPECT_TRUE(c.skipped.empty()) << c.expect.key;
      EXPECT_TRUE(c.pass) << c.expect.key << " " << c.actual;
    }
  }
  EXPECT_GE(counters, 8u);
  EXPECT_GE(metrics, 2u);
  EXPECT_EQ(r.checks_evaluated(), metrics);
  EXPECT_EQ(r.checks_passed(), metrics);
  EXPECT_TRUE(r.checks_pass());

  const ScenarioResult full = run(prepare(load_scenario(file), RunOverrides{}, workload::find_workload));
  EXPECT_EQ(full.checks_evaluated(), full.checks.size());
  EXPECT_EQ(full.checks_passed(), full.checks.size());
}

}  // namespace
}  // namespace ipilab::scenario

namespace ipilab::scenario {
namespace {

// The model-mean dot of `run --plot` lies on the curve gnuplot draws for its variant: on the
// straight segment between the two quantile points around the mean (in log x on a log axis).
TEST(BuiltinScenarios, PlotMeanDotSitsOnItsCurve) {
  RunOverrides few;
  few.iterations = 3000;
  const ScenarioResult r = run(prepare(load_scenario(resolve_scenario("seed000-send-ipi-one")), few, workload::find_workload));
  const PlotScript ps = plot_script(r, "d.txt", "o.png", true);
  std::map<std::string, std::vector<std::pair<double, double>>> curves, dots;
  std::istringstream in(ps.data);
  std::string line, block;
  while (std::getline(in, line)) {
    if (line.rfind("# ", 0) == 0) block = line.substr(2);
    else if (!line.empty()) {
      double x = 0, y = 0;
      std::istringstream(line) >> x >> y;
      (block.rfind("mean of ", 0) == 0 ? dots[block.substr(8)] : curves[block]).emplace_back(x, y);
    }
  }
  ASSERT_GE(dots.size(), 4u);
  for (const auto& [name, d] : dots) {
    ASSERT_EQ(d.size(), 1u);
    const auto& c = curves.at(name);
    const auto [mx, my] = d.front();
    bool on = false;
    for (std::size_t j = 1; j < c.size() && !on; ++j) {
      const auto [x0, y0] = c[j - 1];
      const auto [x1, y1] = c[j];
      if (mx < x0 || mx > x1) continue;
      if (x1 == x0) on = my >= y0 - 1e-6 && my <= y1 + 1e-6;
      else {
        const double t = ps.log_x ? (std::log(mx) - std::log(x0)) / (std::log(x1) - std::log(x0)) : (mx - x0) / (x1 - x0);
        on = std::fabs(my - (y0 + (y1 - y0) * t)) < 0.05;  // the data's 6 significant digits
      }
    }
    EXPECT_TRUE(on) << name << ": dot (" << mx << ", " << my << ") is off its curve";
  }
}

}  // namespace
}  // namespace ipilab::scenario
