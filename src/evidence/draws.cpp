#include "evidence/draws.h"

#include <algorithm>
#include <cmath>
#include <exception>
#include <memory>
#include <string_view>
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

std::string host_latency_key(topology::LatencyClass c) { return "host.latency." + std::string(topology::latency_class_key(c)); }

bool is_host_latency_key(std::string_view key) { return key.starts_with("host.latency."); }

const topology::LatencyRange* host_latency_range(const topology::Host* host, std::string_view key) {
  if (!host || !is_host_latency_key(key)) return nullptr;
  for (const auto& r : host->latency.ranges)
    if (host_latency_key(r.cls) == key) return &r;
  return nullptr;
}

cost::CostRange latency_cost_range(const topology::LatencyRange& r) {
  cost::CostRange c;
  c.lo = r.ns > 0 ? r.lo / r.ns : 1.0;
  c.hi = r.ns > 0 ? r.hi / r.ns : 1.0;
  return c;
}

bool reads_host_latency(const workload::RunResult& r) {
  return r.provenance.contains("host") && r.provenance["host"].contains("latency_source");
}

std::optional<cost::CostRange> variant_range(const scenario::PreparedVariant& v, const std::string& key) {
  if (const topology::LatencyRange* lr = host_latency_range(v.spec.host, key)) return latency_cost_range(*lr);
  if (!v.spec.profile.has(key) || v.spec.profile.get(key).range.fixed()) return std::nullopt;
  return v.spec.profile.get(key).range;
}

namespace {

// The class values with a range of every variant's host, as uncertain costs (class estimate: a
// host file's latency is a reading of other machines' figures until measured on this one).
void add_host_latency(const scenario::PreparedScenario& p, const scenario::ScenarioResult& base, std::map<std::string, UncertainCost>& used,
                      std::set<std::string>& uncertain) {
  for (std::size_t i = 0; i < p.variants.size() && i < base.variants.size(); ++i) {
    const auto& v = p.variants[i];
    if (!v.spec.host || !reads_host_latency(base.variants[i].result)) continue;
    for (const auto& r : v.spec.host->latency.ranges) {
      const std::string key = host_latency_key(r.cls);
      uncertain.insert(key);
      if (used.count(key)) continue;
      cost::CostRange range = latency_cost_range(r);
      range.reason = v.spec.host->latency.range_reason;
      used[key] = UncertainCost{key, cost::CostClass::Estimate, r.ns, "ns", range, v.spec.host->latency.source,
                                v.spec.host->file.empty() ? v.spec.host->name : v.spec.host->file};
    }
  }
}

}  // namespace

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
  add_host_latency(p, base, used, uncertain);
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

MetricMeans medians_ns_of(const workload::RunResult& r) {
  MetricMeans m;
  for (const auto& x : r.metrics) m[x.name] = x.summary.count > 0 ? x.summary.p50 * x.ps_per_unit / 1000.0 : std::nan("");
  return m;
}

namespace {

// The variant's spec with cost i's mean multiplied by factor(i, its range) for each of `keys`
// (factor <= 0 or exactly 1: unchanged; a cost the variant holds fixed: unchanged). A host latency
// key moves that class of a copy of the variant's host, which `host` then owns.
template <class Factor>
workload::RunSpec moved_spec(const scenario::PreparedVariant& v, const std::vector<std::string>& keys, Factor factor,
                             const RunOptions& opt, std::unique_ptr<topology::Host>& host) {
  workload::RunSpec spec = v.spec;
  spec.observer = nullptr;
  if (opt.iterations) spec.iterations = opt.iterations;
  for (std::size_t k = 0; k < keys.size(); ++k) {
    if (const topology::LatencyRange* lr = host_latency_range(spec.host, keys[k])) {
      const double f = factor(k, latency_cost_range(*lr));
      if (!(f > 0) || f == 1.0) continue;
      if (!host) {
        host = std::make_unique<topology::Host>(*spec.host);
        spec.host = host.get();
      }
      host->set_class_latency(lr->cls, lr->ns * f);
      continue;
    }
    if (!spec.profile.has(keys[k])) continue;
    const cost::CostRange& r = spec.profile.get(keys[k]).range;
    if (r.fixed()) continue;
    const double f = factor(k, r);
    if (f > 0 && f != 1.0) spec.profile.scale_mean(keys[k], f);
  }
  return spec;
}

// Runs task(point, variant) -> MetricMeans for every pair on the sweep executor; errors rethrown.
template <class Spec>
std::vector<std::vector<MetricMeans>> run_all(const scenario::PreparedScenario& p, std::size_t points, Spec spec_of,
                                              const RunOptions& opt) {
  const std::size_t nv = p.variants.size();
  std::vector<std::vector<MetricMeans>> out(points, std::vector<MetricMeans>(nv));
  std::vector<std::exception_ptr> errors(points * nv);
  std::vector<std::size_t> todo(points * nv);
  for (std::size_t i = 0; i < todo.size(); ++i) todo[i] = i;
  auto task = [&](std::size_t i) -> std::string {
    const std::size_t pt = i / nv, vi = i % nv;
    try {
      std::unique_ptr<topology::Host> host;  // a moved copy of the variant's host, if a draw moves it
      const workload::RunSpec spec = spec_of(pt, p.variants[vi], host);
      const std::unique_ptr<workload::Workload> w = p.info->make();
      const workload::RunResult r = w->run(spec);
      out[pt][vi] = opt.median_ns ? medians_ns_of(r) : means_of(r);
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

}  // namespace

std::vector<std::vector<MetricMeans>> run_points(const scenario::PreparedScenario& p,
                                                 const std::vector<UncertainCost>& costs,
                                                 const std::vector<Point>& points, const RunOptions& opt) {
  std::vector<std::string> keys;
  for (const auto& c : costs) keys.push_back(c.key);
  return run_all(
      p, points.size(),
      [&](std::size_t pt, const scenario::PreparedVariant& v, std::unique_ptr<topology::Host>& host) {
        return moved_spec(
            v, keys,
            [&](std::size_t k, const cost::CostRange& r) { return points[pt][k] < 0 ? 1.0 : r.lo + points[pt][k] * (r.hi - r.lo); },
            opt, host);
      },
      opt);
}

std::vector<std::vector<MetricMeans>> run_scaled(const scenario::PreparedScenario& p, const std::vector<std::string>& keys,
                                                 const std::vector<std::vector<double>>& factors, const RunOptions& opt) {
  return run_all(
      p, factors.size(),
      [&](std::size_t pt, const scenario::PreparedVariant& v, std::unique_ptr<topology::Host>& host) {
        return moved_spec(v, keys, [&](std::size_t k, const cost::CostRange&) { return factors[pt][k]; }, opt, host);
      },
      opt);
}

}  // namespace ipilab::evidence
