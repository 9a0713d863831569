// ipilab/workload/builtin_parts.h — the pieces the built-in workloads (one file each, builtin.h)
// share: the sender/target pair of a two-vCPU benchmark, the metrics of a run in the workload's
// unit, the run's settings after the mechanism's, and the WorkloadInfo every one of them fills in.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "workload/run_common.h"

namespace ipilab::workload {

/// The sender and the target of a one-to-one benchmark, each clamped to the VM's vCPUs (as
/// Params::get does); InputError naming `target` when both are the same CPU.
struct CpuPair {
  unsigned sender = 0;
  unsigned target = 0;
};
CpuPair sender_and_target(const RunSpec& spec, const IntParam& sender, const IntParam& target);

/// A run's metrics, each converted from ps into `unit` (ps_per_unit).
class MetricList {
 public:
  MetricList(const RunSpec& spec, FigureUnit unit);
  void add(std::string name, std::string description, sim::Histogram h);
  const std::string& unit() const { return unit_; }
  std::vector<Metric> take() { return std::move(metrics_); }

 private:
  std::string unit_;
  double ps_per_unit_;
  std::vector<Metric> metrics_;
};

using Settings = std::vector<std::pair<std::string, std::string>>;

/// The settings a run reports: the mechanism's, then the workload's own.
Settings settings_after_mechanism(const Bound& b, Settings own);

/// The RunResult of a run whose breakdown is per scenario iteration.
RunResult finish(const RunSpec& spec, Bound& b, RunOutput&& out, MetricList&& metrics, Settings own);

/// What a built-in workload declares: its name and description, its own parameters (the mechanism
/// parameter defaulting to `default_mechanism` is added), the metrics it may report and the cost keys
/// it reads; `arch` restricts the mechanisms it accepts (nullopt: either).
struct BuiltinDecl {
  std::string_view name;
  std::string_view description;
  std::vector<ParamInfo> params;
  std::string_view default_mechanism;
  std::optional<Arch> arch;
  std::vector<std::string> metrics;
  std::vector<cost::CostKey> cost_keys = {};
};
template <class W>
WorkloadInfo builtin_workload(BuiltinDecl d) {
  WorkloadInfo w{std::string(d.name), std::string(d.description), with_mechanism(d.params, d.default_mechanism),
                 [] { return std::make_unique<W>(); }};
  w.metrics = std::move(d.metrics);
  w.cost_keys = std::move(d.cost_keys);
  w.validate = validator(w.name, std::move(d.params), std::string(d.default_mechanism), d.arch);
  w.default_mechanism = std::string(d.default_mechanism);
  return w;
}

}  // namespace ipilab::workload
