// ipilab/evidence/sensitivity.h — `ipilab run --sensitivity`: which costs decide each variant's main
// metric (a tornado), and what share of its variance each explains (docs/uncertainty.md).
//
// One-at-a-time swings: for every uncertain cost (draws.h), every variant runs twice more with that
// cost at the low and at the high end of its range, all others at their means. The swing is
// |high - low| of the main metric's mean; the rows are sorted by swing (largest first: the value
// to measure first), ties by key. Shares: with each cost uniform over its range and the metric
// additive in the costs (a sum of priced steps, as the model's figures are), cost i's part of the
// variance is swing_i^2 / 12 and its share swing_i^2 / sum_j swing_j^2 (stats.h additive_shares).
// When --uncertainty's draws are there too (at least kMinDrawsForIndices of them), each cost's first-order index estimated from them
// (stats.h first_order_index) is reported beside it: a sum of first-order indices well below 1
// says the metric is not additive in its costs (interactions, thresholds), and the additive
// shares are then only indicative.
// A difference between two variants is not swung (its interval is --uncertainty's).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "evidence/draws.h"
#include "evidence/propagate.h"

namespace ipilab::evidence {

struct Swing {
  std::string key;
  cost::CostClass cls = cost::CostClass::Unclassified;
  double low = 0, high = 0;      ///< the metric with the cost at its range's low / high end
  double range_lo = 1, range_hi = 1;  ///< the range's factors in this variant
  double swing = 0;              ///< |high - low|
  double share = 0;              ///< additive share of variance
  std::optional<double> first_order;  ///< from --uncertainty's draws (kMinDrawsForIndices or more)
  /// False when the metric is not additive in this cost over its range: a time that falls as the
  /// cost rises, or both ends moving it the same way from the mean (a change of path: a target
  /// caught on its way into HLT, a poll window missed). Its share is then no share of variance.
  bool additive = true;
};

/// Swing::additive for a metric of unit `unit` at `point`, with the cost at its range's ends.
bool additive_in(std::string_view unit, double point, double low, double high);

struct VariantSensitivity {
  std::string variant, metric, unit;
  double point = 0;
  std::vector<Swing> swings;     ///< sorted by swing, largest first; costs this variant holds fixed left out
  std::optional<double> first_order_sum;
  std::size_t draws = 0;         ///< --uncertainty's draws (0: none), to say why indices are missing
};

struct Sensitivity {
  std::vector<VariantSensitivity> variants;
};

/// Swings of every variant's main metric over `costs`; `draws` (may be null) adds first-order
/// indices from a propagation over the same costs.
Sensitivity sensitivity(const scenario::PreparedScenario& p, const scenario::ScenarioResult& base,
                        const CostInventory& costs, const RunOptions& opt, const Propagation* draws);

/// The swings' table from given runs (exposed for tests): runs[2k] = cost k low, runs[2k+1] high.
Sensitivity summarise_swings(const scenario::PreparedScenario& p, const scenario::ScenarioResult& base,
                             const CostInventory& costs, const std::vector<std::vector<MetricMeans>>& runs,
                             const Propagation* draws);

}  // namespace ipilab::evidence
