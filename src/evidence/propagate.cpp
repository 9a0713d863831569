#include "evidence/propagate.h"

#include <cmath>

#include "scenario/report.h"

namespace ipilab::evidence {

namespace {

bool all_finite(const std::vector<double>& v) {
  for (double x : v)
    if (!std::isfinite(x)) return false;
  return !v.empty();
}

}  // namespace

void summarise(Propagation& out, const scenario::ScenarioResult& base, const std::vector<std::vector<MetricMeans>>& runs) {
  out.variants.clear();
  out.differences.clear();
  for (std::size_t vi = 0; vi < base.variants.size(); ++vi) {
    VariantIntervals vr{base.variants[vi].name, {}};
    for (const auto& m : base.variants[vi].result.metrics) {
      MetricInterval mi;
      mi.name = m.name;
      mi.unit = m.unit;
      mi.point = m.summary.count > 0 ? m.summary.mean : std::nan("");
      for (const auto& point : runs) {
        const auto it = point[vi].find(m.name);
        mi.draws.push_back(it == point[vi].end() ? std::nan("") : it->second);
      }
      mi.has_interval = all_finite(mi.draws);
      if (mi.has_interval) {
        mi.interval = central_interval(mi.draws, kLevel);
        mi.draws_mean = mean(mi.draws);
      }
      vr.metrics.push_back(std::move(mi));
    }
    out.variants.push_back(std::move(vr));
  }
  if (out.variants.empty()) return;
  const VariantIntervals& first = out.variants[0];
  for (std::size_t vi = 1; vi < out.variants.size(); ++vi)
    for (const MetricInterval& m : out.variants[vi].metrics) {
      const MetricInterval* f = nullptr;
      for (const auto& fm : first.metrics)
        if (fm.name == m.name) f = &fm;
      if (!f) continue;
      DifferenceInterval d;
      d.variant = out.variants[vi].variant;
      d.metric = m.name;
      d.unit = m.unit;
      d.point = m.point - f->point;
      d.point_pct = scenario::change_pct(m.point, f->point);
      if (m.has_interval && f->has_interval) {
        std::vector<double> diff, pct;
        for (std::size_t k = 0; k < m.draws.size(); ++k) {
          diff.push_back(m.draws[k] - f->draws[k]);
          pct.push_back(scenario::change_pct(m.draws[k], f->draws[k]));
        }
        d.has_interval = true;
        d.interval = central_interval(diff, kLevel);
        d.interval_pct = central_interval(pct, kLevel);
      }
      out.differences.push_back(std::move(d));
    }
}

Propagation propagate(const scenario::PreparedScenario& p, const scenario::ScenarioResult& base, const PropagateOptions& opt) {
  Propagation out;
  out.draws = opt.draws;
  out.seed = p.seed;
  out.iterations = opt.iterations ? opt.iterations : p.iterations;
  out.costs = inventory(p, base);
  out.design = latin_hypercube(opt.draws, out.costs.uncertain.size(), p.seed);
  const auto runs = run_points(p, out.costs.uncertain, out.design, RunOptions{opt.jobs, opt.iterations, false});
  summarise(out, base, runs);
  return out;
}

}  // namespace ipilab::evidence
