#include "evidence/draws.h"

#include <algorithm>
#include <cmath>
#include <exception>
#include <optional>
#include <set>

#include "sweep/exec.h"

namespace ipilab::evidence {

std::size_t CostInventory::estimates() const {
  return static_cast<std::size_t>(
      std::count_if(used.begin(), used.end(), [](const UncertainCost& c) { return c.cls == cost::CostClass::Estimate; }));
}

std::size_t CostInventory::defaults() const {
  return static_cast<std::size_t>(
      std::count_if(uncertain.begin(), uncertain.end(), [](const UncertainCost& c) { return c.range.is_default; }));
}

CostInventory inventory(const scenario::PreparedScenario& p, const scenario::ScenarioResult& base) {
  std::map<std::string, UncertainCost> used;
  std::set<std::string> uncertain;
  for (std::size_t i = 0; i < p.variants.size() && i < base.variants.size(); ++i) {
    const cost::Profile& prof = p.variants[i].spec.profile;
    const nlohmann::json& prov = base.variants[i].result.provenance;
    if (!prov.contains("costs")) continue;
    for (const auto& e : prov["costs"]) {
      const std::string key = e.value("key", "");
      if (key.empty() || !prof.has(key)) continue;
      const cost::Cost& c = prof.get(key);
      if (!c.range.fixed()) uncertain.insert(key);
      if (used.count(key)) continue;
      used[key] = UncertainCost{key, c.cls, c.value, std::string(cost::unit_name(c.unit)), c.range, c.source, e.value("from", "")};
    }
  }
  CostInventory inv;
  for (auto& [k, c] : used) {
    inv.used.push_back(c);
    if (uncertain.count(k)) {
      UncertainCost u = c;
      if (u.range.fixed()) {  // fixed in the first variant (an override), uncertain in another
        for (const auto& v : p.variants)
          if (v.spec.profile.has(k) && !v.spec.profile.get(k).range.fixed()) {
            u.range = v.spec.profile.get(k).range;
            break;
          }
      }
      inv.uncertain.push_back(std::move(u));
    }
  }
  return inv;
}

MetricMeans means_of(const workload::RunResult& r) {
  MetricMeans m;
  for (const auto& x : r.metrics) m[x.name] = x.summary.count > 0 ? x.summary.mean : std::nan("");
  return m;
}

namespace {

// The variant's spec with the point's costs moved (see the file comment of draws.h).
workload::RunSpec moved_spec(const scenario::PreparedScenario& p, const scenario::PreparedVariant& v,
                             const std::vector<UncertainCost>& costs, const Point& u, const RunOptions& opt) {
  workload::RunSpec spec = v.spec;
  spec.observer = nullptr;
  if (opt.iterations) spec.iterations = opt.iterations;
  (void)p;
  for (std::size_t k = 0; k < costs.size(); ++k) {
    if (u[k] < 0 || !spec.profile.has(costs[k].key)) continue;
    const cost::CostRange& r = spec.profile.get(costs[k].key).range;
    if (r.fixed()) continue;
    const double f = r.lo + u[k] * (r.hi - r.lo);
    if (f > 0 && f != 1.0) spec.profile.scale_mean(costs[k].key, f);
  }
  spec.profile.clear_used();
  return spec;
}

}  // namespace

std::vector<std::vector<MetricMeans>> run_points(const scenario::PreparedScenario& p,
                                                 const std::vector<UncertainCost>& costs,
                                                 const std::vector<Point>& points, const RunOptions& opt) {
  const std::size_t nv = p.variants.size();
  std::vector<std::vector<MetricMeans>> out(points.size(), std::vector<MetricMeans>(nv));
  std::vector<std::exception_ptr> errors(points.size() * nv);
  std::vector<std::size_t> todo(points.size() * nv);
  for (std::size_t i = 0; i < todo.size(); ++i) todo[i] = i;
  auto task = [&](std::size_t i) -> std::string {
    const std::size_t pt = i / nv, vi = i % nv;
    try {
      const workload::RunSpec spec = moved_spec(p, p.variants[vi], costs, points[pt], opt);
      const std::unique_ptr<workload::Workload> w = p.info->make();
      out[pt][vi] = means_of(w->run(spec));
    } catch (...) {
      errors[i] = std::current_exception();
    }
    return {};
  };
  sweep::ExecOptions eo;
  eo.jobs = std::max(1u, opt.jobs);
  sweep::local_executor()->run(todo, task, eo);
  for (const auto& e : errors)
    if (e) std::rethrow_exception(e);
  return out;
}

}  // namespace ipilab::evidence
