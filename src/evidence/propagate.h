// ipilab/evidence/propagate.h — `ipilab run --uncertainty [N]`: every metric's mean with a 90 %
// interval, per variant and per difference against the first variant (docs/uncertainty.md).
//
// Method: N points of a Latin hypercube (stats.h) over the uncertain costs (draws.h), each cost
// uniform over its range and independent of the others; every variant runs at every point with
// the scenario's seed (common random numbers: draws.h). The interval of a metric is the central
// 90 % of its N means (5th and 95th percentiles); the point value is the unmoved run's (the table
// the scenario prints). A difference is variant minus first variant, point by point, so costs
// that move both together cancel; its interval spanning zero is said in words. The same seed
// and N give the same intervals; -j changes only the wall time.
//
// What it does not cover: correlations between costs (ranges are independent unless the profile
// ties them), the simulation's own sampling noise (the seed is held fixed), and errors of the
// model's structure (a step it does not model has no range).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "evidence/draws.h"
#include "evidence/stats.h"

namespace ipilab::evidence {

inline constexpr std::size_t kDefaultDraws = 32;
inline constexpr double kLevel = 0.9;

struct MetricInterval {
  std::string name, unit;
  double point = 0;            ///< the unmoved run's mean (NaN: no samples)
  std::vector<double> draws;   ///< one mean per point (NaN: no samples at that point)
  bool has_interval = false;   ///< false when a point had no samples, or there is no draw
  Interval interval;
  double draws_mean = 0;
};

struct VariantIntervals {
  std::string variant;
  std::vector<MetricInterval> metrics;  ///< in the workload's order (metrics[0] = main)
};

struct DifferenceInterval {
  std::string variant;          ///< minus the first variant
  std::string metric, unit;
  double point = 0;
  bool has_interval = false;
  Interval interval;
  double point_pct = 0;         ///< change of the point value in % of the first's
  Interval interval_pct;        ///< the same per draw, in %
};

struct Propagation {
  std::size_t draws = 0;
  std::uint64_t seed = 0;       ///< of the design (the scenario's seed unless --seed)
  std::uint64_t iterations = 0; ///< per run
  CostInventory costs;
  std::vector<Point> design;    ///< draws x uncertain costs, u in [0, 1)
  std::vector<VariantIntervals> variants;
  std::vector<DifferenceInterval> differences;  ///< for variants 1.., every metric both have
};

struct PropagateOptions {
  std::size_t draws = kDefaultDraws;
  unsigned jobs = 1;
  std::uint64_t iterations = 0;  ///< per run; 0 = the scenario's
};

/// Runs the draws of `p` (already run once as `base`, whose figures are the point values).
Propagation propagate(const scenario::PreparedScenario& p, const scenario::ScenarioResult& base, const PropagateOptions& opt);

/// Intervals from given draws (exposed for tests): per variant the metric means at each point.
void summarise(Propagation& out, const scenario::ScenarioResult& base, const std::vector<std::vector<MetricMeans>>& runs);

}  // namespace ipilab::evidence
