#include "evidence/sensitivity.h"

#include <algorithm>
#include <cmath>

namespace ipilab::evidence {

namespace {

bool used_by(const workload::RunResult& r, const std::string& key) {
  if (!r.provenance.contains("costs")) return false;
  for (const auto& e : r.provenance["costs"])
    if (e.value("key", "") == key) return true;
  return false;
}

}  // namespace

bool additive_in(std::string_view unit, double point, double low, double high) {
  if (!std::isfinite(point) || !std::isfinite(low) || !std::isfinite(high)) return true;
  const double eps = 1e-3 * std::fabs(point);
  const double dl = low - point, dh = high - point;
  if ((dl > eps && dh > eps) || (dl < -eps && dh < -eps)) return false;  // both ends on one side
  // A time (every main metric but a rate) grows with each of its parts; one that shrinks took another path.
  static constexpr std::string_view kTimes[] = {"ps", "ns", "us", "µs", "ms", "s", "cycles"};
  const bool time = std::find(std::begin(kTimes), std::end(kTimes), unit) != std::end(kTimes);
  return !(time && high < low - eps);
}

Sensitivity summarise_swings(const scenario::PreparedScenario& p, const scenario::ScenarioResult& base,
                             const CostInventory& costs, const std::vector<std::vector<MetricMeans>>& runs,
                             const Propagation* draws) {
  Sensitivity out;
  const auto& uc = costs.uncertain;
  for (std::size_t vi = 0; vi < base.variants.size(); ++vi) {
    const auto& metrics = base.variants[vi].result.metrics;
    if (metrics.empty()) continue;
    VariantSensitivity vs;
    vs.variant = base.variants[vi].name;
    vs.metric = metrics[0].name;
    vs.unit = metrics[0].unit;
    vs.point = metrics[0].summary.count > 0 ? metrics[0].summary.mean : std::nan("");
    std::vector<double> swings;
    vs.draws = draws ? draws->draws : 0;
    for (std::size_t k = 0; k < uc.size(); ++k) {
      const std::optional<cost::CostRange> range = variant_range(p.variants[vi], uc[k].key);
      // A host latency class is in no cost provenance: it is used wherever the run reads the matrix.
      const auto& res = base.variants[vi].result;
      if (!range || !(is_host_latency_key(uc[k].key) ? reads_host_latency(res) : used_by(res, uc[k].key))) continue;
      const auto lo = runs[2 * k][vi].find(vs.metric), hi = runs[2 * k + 1][vi].find(vs.metric);
      if (lo == runs[2 * k][vi].end() || hi == runs[2 * k + 1][vi].end()) continue;
      Swing s;
      s.key = uc[k].key;
      s.cls = uc[k].cls;
      s.low = lo->second;
      s.high = hi->second;
      s.range_lo = range->lo;
      s.range_hi = range->hi;
      s.swing = std::isfinite(s.low) && std::isfinite(s.high) ? std::fabs(s.high - s.low) : 0.0;
      s.additive = additive_in(vs.unit, vs.point, s.low, s.high);
      if (draws && vi < draws->variants.size() && draws->variants[vi].metrics[0].has_interval && draws->design.size() >= kMinDrawsForIndices) {
        std::vector<double> x;
        for (const auto& pt : draws->design) x.push_back(pt[k]);
        s.first_order = first_order_index(x, draws->variants[vi].metrics[0].draws);
      }
      vs.swings.push_back(std::move(s));
    }
    for (const auto& s : vs.swings) swings.push_back(s.swing);
    const std::vector<double> shares = additive_shares(swings);
    for (std::size_t i = 0; i < vs.swings.size(); ++i) vs.swings[i].share = shares[i];
    std::stable_sort(vs.swings.begin(), vs.swings.end(), [](const Swing& a, const Swing& b) {
      return a.swing != b.swing ? a.swing > b.swing : a.key < b.key;
    });
    if (draws) {
      double sum = 0;
      bool any = false;
      for (const auto& s : vs.swings)
        if (s.first_order) {
          sum += *s.first_order;
          any = true;
        }
      if (any) vs.first_order_sum = sum;
    }
    out.variants.push_back(std::move(vs));
  }
  return out;
}

Sensitivity sensitivity(const scenario::PreparedScenario& p, const scenario::ScenarioResult& base,
                        const CostInventory& costs, const RunOptions& opt, const Propagation* draws) {
  const std::size_t k = costs.uncertain.size();
  std::vector<Point> points;
  points.reserve(2 * k);
  for (std::size_t i = 0; i < k; ++i)
    for (double end : {0.0, 1.0}) {
      Point pt(k, kAtMean);
      pt[i] = end;
      points.push_back(std::move(pt));
    }
  const auto runs = run_points(p, costs.uncertain, points, opt);
  return summarise_swings(p, base, costs, runs, draws);
}

}  // namespace ipilab::evidence
