#include "workload/plan.h"

#include <fmt/format.h>

namespace ipilab::workload {

sim::Ps SendPlan::sender_mean() const {
  sim::Ps t{};
  for (const auto& s : sender) t += s.mean();
  return t;
}

sim::Ps SendPlan::arrival_mean(std::size_t i) const {
  const PlannedDelivery& d = deliveries.at(i);
  sim::Ps t{};
  for (std::size_t k = 0; k <= d.after_sender_step && k < sender.size(); ++k) t += sender[k].mean();
  for (const auto& s : d.path) t += s.mean();
  return t;
}

PlanStep Pricer::step(std::string_view who, std::string_view what, std::string_view key, std::uint32_t count,
                      Lane lane, int its) const {
  const cost::Cost& c = profile_->get(key);
  const std::string label = count == 1 ? fmt::format("{}: {} [{}]", who, what, key)
                                       : fmt::format("{}: {} [{} x{}]", who, what, key, count);
  PlanStep s;
  s.id = breakdown_->step(label);
  s.jitter = c.jitter();
  s.count = count;
  s.lane = lane;
  s.its = its;
  return s;
}

sim::Ps Pricer::mean(std::string_view key) const { return profile_->get(key).mean; }

sim::Ps run_steps(const std::vector<PlanStep>& steps, sim::Ps t, sim::Rng& rng, sim::Breakdown& breakdown,
                  std::vector<sim::Resource>* its_ports) {
  for (const auto& s : steps) {
    const sim::Ps d = sample(s, rng);
    if (s.lane == Lane::ItsPort && its_ports && s.its >= 0 && static_cast<std::size_t>(s.its) < its_ports->size()) {
      const sim::Grant g = (*its_ports)[static_cast<std::size_t>(s.its)].request(t, d);
      t = g.end;
    } else {
      t += d;
    }
    if (s.count) breakdown.add(s.id, d);
  }
  return t;
}

}  // namespace ipilab::workload
