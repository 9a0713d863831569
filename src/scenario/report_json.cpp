// The JSON contract of `ipilab run` (docs/json.md): one object per scenario, keys in documented order.
#include <string>

#include "scenario/report.h"
#include "scenario/sample_hypercall.h"

namespace ipilab::scenario {

namespace {

using ojson = nlohmann::ordered_json;

ojson metric_json(const workload::Metric& m) {
  const sim::Summary& s = m.summary;
  ojson j;
  j["mean"] = s.mean;
  j["p50"] = s.p50;
  j["p90"] = s.p90;
  j["p99"] = s.p99;
  j["p999"] = s.p999;
  j["min"] = s.min;
  j["max"] = s.max;
  j["stddev"] = s.stddev;
  j["count"] = s.count;
  j["unit"] = m.unit;
  j["description"] = m.description;
  return j;
}

}  // namespace

ojson to_json(const ScenarioResult& r) {
  ojson j;
  j["scenario"] = r.name;
  j["title"] = r.title;
  j["description"] = r.description;
  j["workload"] = r.workload;
  j["reproduces"] = r.reproduces;
  j["seed"] = r.seed;
  j["iterations"] = r.iterations;
  j["warmup"] = r.warmup;
  // Added: the main metric by name, so readers need not rely on the order of "metrics".
  j["main_metric"] = r.variants.empty() || r.variants.front().result.metrics.empty()
                         ? ojson(nullptr)
                         : ojson(r.variants.front().result.metrics.front().name);
  ojson vars = ojson::array();
  const double first_mean = r.variants.empty() ? 0 : r.variants.front().result.metrics.front().summary.mean;
  const std::uint64_t first_count = r.variants.empty() ? 0 : r.variants.front().result.metrics.front().summary.count;
  for (const auto& v : r.variants) {
    ojson jv;
    jv["name"] = v.name;
    jv["description"] = v.description;
    jv["host"] = v.host_label;
    jv["vm"] = v.vm_label;
    jv["profile"] = v.profile_file;
    ojson metrics = ojson::object();
    for (const auto& m : v.result.metrics) metrics[m.name] = metric_json(m);
    jv["metrics"] = std::move(metrics);
    ojson counters = ojson::object();
    for (const auto& [k, n] : v.result.counters) counters[k] = n;
    jv["counters"] = std::move(counters);
    if (v.result.metrics.front().summary.count == 0 || first_count == 0) jv["change_vs_first_pct"] = nullptr;
    else jv["change_vs_first_pct"] = change_pct(v.result.metrics.front().summary.mean, first_mean);
    ojson bd = ojson::array();
    for (const auto& b : v.result.breakdown)
      bd.push_back(ojson{{"step", b.step}, {"mean_per_iteration", b.mean_per_iteration}, {"share", b.share}});
    jv["breakdown"] = std::move(bd);
    jv["throughput"] = ojson{{"window_ns", v.result.throughput.window_ns},
                             {"ipis_per_second", v.result.throughput.ipis_per_second},
                             {"calls_per_second", v.result.throughput.calls_per_second}};
    ojson res = ojson::array();
    for (const auto& x : v.result.resources)
      res.push_back(ojson{{"name", x.name}, {"kind", x.kind}, {"utilisation", x.utilisation}, {"wait_mean", x.wait_mean},
                          {"wait_p99", x.wait_p99}, {"unit", x.unit}, {"arrivals", x.arrivals},
                          {"little", ojson{{"l", x.little_l}, {"lambda_w", x.little_lambda_w}, {"carried", x.little_carried}, {"exact", x.little_exact}}}});
    jv["resources"] = std::move(res);
    ojson settings = ojson::object();
    for (const auto& [k, val] : v.result.settings) settings[k] = val;
    jv["settings"] = std::move(settings);
    jv["notes"] = v.result.notes;
    jv["provenance"] = ojson::parse(v.result.provenance.dump());
    // The profile file as shown (relative to the data folder), not where this checkout lies.
    if (auto& pf = jv["provenance"]; pf.is_object() && pf.contains("file") && pf["file"] == v.profile_path)
      pf["file"] = v.profile_file;
    jv["events"] = v.result.events;
    jv["sample_hypercall"] = sample_hypercall_json(v.result);
    ojson checks = ojson::array();
    for (const auto& c : r.checks) {
      if (c.expect.variant != v.name) continue;
      checks.push_back(ojson{{"key", c.expect.key}, {"stat", c.counter ? std::string("counter") : c.expect.stat}, {"expected", c.expect.value},
                             {"tolerance", c.expect.tolerance}, {"actual", c.actual},
                             {"pass", c.skipped.empty() ? ojson(c.pass) : ojson(nullptr)}});
      if (!c.skipped.empty()) checks.back()["skipped"] = c.skipped;
      if (c.expect.kind != "reproduced") checks.back()["kind"] = c.expect.kind;
      if (!c.expect.reason.empty()) checks.back()["reason"] = c.expect.reason;
    }
    if (!checks.empty()) jv["check"] = std::move(checks);
    vars.push_back(std::move(jv));
  }
  j["variants"] = std::move(vars);
  if (!r.checks.empty()) {
    const std::size_t evaluated = r.checks_evaluated(), passed = r.checks_passed();
    j["check"] = ojson{{"expectations", r.checks.size()}, {"passed", passed}, {"skipped", r.checks.size() - evaluated},
                       {"pass", passed == evaluated}};
  }
  return j;
}

ojson to_json(const std::vector<ScenarioResult>& rs) {
  if (rs.size() == 1) return to_json(rs.front());
  ojson arr = ojson::array();
  for (const auto& r : rs) arr.push_back(to_json(r));
  return ojson{{"scenarios", std::move(arr)}};
}

}  // namespace ipilab::scenario
