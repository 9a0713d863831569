// A workload with a known answer for the propagation tests: its metric "total" (ns) is the sum of
// the means of the costs named in `costs` (an array of cost keys), exactly, every iteration; a
// second metric "first" is the first cost alone. With every cost uniform over its range, the
// total is a sum of independent uniforms: its quantiles and variance shares are known exactly.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "common/error.h"
#include "workload/workload.h"

namespace ipilab::evidence::testing {

class SumWorkload : public workload::Workload {
 public:
  workload::RunResult run(const workload::RunSpec& spec) const override {
    std::vector<std::string> keys;
    if (const toml::array* a = spec.params.table().get_as<toml::array>("costs"))
      for (const auto& n : *a) keys.push_back(n.value_or(std::string()));
    double total_ps = 0, first_ps = 0;
    for (std::size_t i = 0; i < keys.size(); ++i) {
      const double ps = static_cast<double>(spec.profile.get(keys[i]).mean.v);
      total_ps += ps;
      if (i == 0) first_ps = ps;
    }
    workload::RunResult r;
    for (const auto& [name, ps] : {std::pair<std::string, double>{"total", total_ps}, {"first", first_ps}}) {
      workload::Metric m;
      m.name = name;
      m.unit = "ns";
      m.description = "sum of costs";
      for (std::uint64_t i = 0; i < spec.iterations; ++i) m.histogram.record(static_cast<std::int64_t>(ps));
      m.summary = m.histogram.summary();
      m.summary.mean = ps / 1000.0;  // exact (the histogram's mean is too, but say it plainly)
      r.metrics.push_back(std::move(m));
    }
    r.counters["sends"] = spec.iterations;
    r.provenance = spec.profile.provenance_json(cost::UsedCosts(keys.begin(), keys.end()));
    return r;
  }
};

inline const workload::WorkloadInfo& sum_info() {
  static const workload::WorkloadInfo info{
      "sum", "sum of costs", {{"costs", "array", "[]", "cost keys"}}, [] { return std::make_unique<SumWorkload>(); },
      {}, {"total", "first"}};
  return info;
}

inline const workload::WorkloadInfo& sum_lookup(std::string_view name, std::string_view place) {
  if (name == "sum") return sum_info();
  throw InputError(std::string(place), "unknown workload");
}

}  // namespace ipilab::evidence::testing
