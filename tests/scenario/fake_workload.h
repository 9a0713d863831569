// A deterministic stand-in for a registered workload, so the scenario layer is tested without the
// real workloads (src/workload). Parameters:
//   base_ns (int, default 100)       per-iteration latency before the cost
//   cost (string, "vm.exit_entry")   a cost key it reads with profile.get() (missing -> InputError)
//   jitter (bool, false)             add a seeded 0..999 ps pattern per iteration
//   mode (string, "fast")            "fast" or "slow" (slow: +1 hypercall per send)
//   lost (int, 0)                    value of the "lost" counter
//   drop (bool, false)               record no latency sample (as when every IPI is lost)
//   horizon (bool, false)            throw sim::HorizonError (a run past the engine's time horizon)
// Metric "latency" (ns) = base_ns + cost, counters sends = iterations, hypercalls, lost, and a long
// per-kind counter. Parameter type errors name file:line via the node's source region.
#pragma once

#include <fmt/format.h>

#include "common/error.h"
#include "sim/engine.h"
#include "topology/toml_read.h"
#include "workload/workload.h"

namespace ipilab::scenario::testing {

inline std::int64_t param_int(const workload::RunSpec& spec, const char* key, std::int64_t fallback) {
  const toml::node* n = spec.params.table().get(key);
  if (!n) return fallback;
  if (!n->is_integer())
    throw InputError(toml_read::place(spec.params.file(), n->source(), fmt::format("workload.{}", key)),
                     fmt::format("expected an integer, got {}", toml_read::type_name(*n)));
  return n->as_integer()->get();
}

inline std::string param_string(const workload::RunSpec& spec, const char* key, const char* fallback) {
  const toml::node* n = spec.params.table().get(key);
  if (!n) return fallback;
  if (!n->is_string())
    throw InputError(toml_read::place(spec.params.file(), n->source(), fmt::format("workload.{}", key)),
                     fmt::format("expected a string, got {}", toml_read::type_name(*n)));
  return n->as_string()->get();
}

class FakeWorkload : public workload::Workload {
 public:
  workload::RunResult run(const workload::RunSpec& spec) const override {
    const std::int64_t base_ns = param_int(spec, "base_ns", 100);
    const std::string cost_key = param_string(spec, "cost", "vm.exit_entry");
    const std::string mode = param_string(spec, "mode", "fast");
    const std::int64_t lost = param_int(spec, "lost", 0);
    const toml::node* jn = spec.params.table().get("jitter");
    const bool jitter = jn && jn->value_or(false);
    const toml::node* dn = spec.params.table().get("drop");
    const bool drop = dn && dn->value_or(false);
    const cost::Cost& c = spec.profile.get(cost_key);
    if (const toml::node* hn = spec.params.table().get("horizon"); hn && hn->value_or(false)) throw sim::HorizonError();
    workload::Metric m;
    m.name = "latency";
    m.unit = "ns";
    m.description = "fake: base_ns + one cost";
    m.ps_per_unit = 1000;
    for (std::uint64_t i = 0; i < (drop ? 0 : spec.iterations); ++i) {
      std::int64_t v = base_ns * 1000 + c.mean.v;
      if (jitter) v += static_cast<std::int64_t>((spec.seed * 7919 + i * 104729) % 1000);
      m.histogram.record(v);
    }
    sim::Summary s = m.histogram.summary();
    for (double* f : {&s.mean, &s.stddev, &s.min, &s.max, &s.p50, &s.p90, &s.p99, &s.p999}) *f /= 1000.0;
    m.summary = s;
    workload::RunResult r;
    r.metrics.push_back(std::move(m));
    workload::Metric send;
    send.name = "send_cost";
    send.unit = "ns";
    send.description = "fake: sender side";
    send.histogram.record(c.mean.v);
    send.summary = send.histogram.summary();
    send.summary.mean /= 1000.0;
    send.summary.p50 /= 1000.0;
    send.summary.p99 /= 1000.0;
    r.metrics.push_back(std::move(send));
    r.counters["sends"] = spec.iterations;
    r.counters["hypercalls"] = mode == "slow" ? spec.iterations : 0;
    r.counters["hypercalls.HvCallSendSyntheticClusterIpiEx"] = mode == "slow" ? spec.iterations : 0;
    r.counters["lost"] = static_cast<std::uint64_t>(lost);
    r.counters["misdelivered"] = 0;
    const double total = static_cast<double>(base_ns) + c.mean.ns();
    r.breakdown.push_back({"guest: base work", static_cast<double>(base_ns), static_cast<double>(base_ns) / total});
    r.breakdown.push_back({fmt::format("cost ({})", cost_key), c.mean.ns(), c.mean.ns() / total});
    r.provenance = spec.profile.provenance_json(cost::UsedCosts{cost_key});
    r.settings.push_back({"mode", mode});
    r.settings.push_back({"vcpus", std::to_string(spec.vm.size())});
    if (lost) r.notes.push_back(fmt::format("{} IPIs lost", lost));
    r.events = spec.iterations * 2;
    return r;
  }
};

inline const workload::WorkloadInfo& fake_info() {
  static const workload::WorkloadInfo info = [] {
    workload::WorkloadInfo w{
      "fake",
      "deterministic test workload",
      {{"base_ns", "int", "100", "ns"},
       {"cost", "string", "vm.exit_entry", "cost key"},
       {"jitter", "bool", "false", ""},
       {"mode", "string", "fast", "fast|slow"},
       {"lost", "int", "0", ""},
       {"drop", "bool", "false", ""},
       {"horizon", "bool", "false", ""}},
      [] { return std::make_unique<FakeWorkload>(); }};
    w.metrics = {"latency", "send_cost"};
    return w;
  }();
  return info;
}

inline const workload::WorkloadInfo& fake_lookup(std::string_view name, std::string_view place) {
  if (name == "fake") return fake_info();
  throw InputError(std::string(place), fmt::format("unknown workload '{}' (workloads: fake)", name));
}

}  // namespace ipilab::scenario::testing
