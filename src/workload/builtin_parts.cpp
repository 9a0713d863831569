// ipilab/workload/builtin_parts.cpp — see builtin_parts.h.
#include "workload/builtin_parts.h"

#include <fmt/format.h>

#include "common/error.h"

namespace ipilab::workload {

CpuPair sender_and_target(const RunSpec& spec, const IntParam& sender, const IntParam& target) {
  const int n = spec.vm.size();
  CpuPair p;
  p.sender = static_cast<unsigned>(spec.params.get(sender, sender.def, n - 1));
  p.target = static_cast<unsigned>(spec.params.get(target, target.def, n - 1));
  if (p.target == p.sender)
    throw InputError(spec.params.place(target.name), fmt::format("target CPU {} is the sender", p.target));
  return p;
}

MetricList::MetricList(const RunSpec& spec, FigureUnit unit)
    : unit_(unit_name(unit)), ps_per_unit_(ps_per_unit(spec, unit)) {}

void MetricList::add(std::string name, std::string description, sim::Histogram h) {
  metrics_.push_back(make_metric(std::move(name), unit_, std::move(description), std::move(h), ps_per_unit_));
}

Settings settings_after_mechanism(const Bound& b, Settings own) {
  Settings s = b.mechanism->settings();
  for (auto& kv : own) s.push_back(std::move(kv));
  return s;
}

RunResult finish(const RunSpec& spec, Bound& b, RunOutput&& out, MetricList&& metrics, Settings own) {
  return assemble(spec, b, std::move(out), metrics.take(), settings_after_mechanism(b, std::move(own)),
                  spec.iterations);
}

}  // namespace ipilab::workload
