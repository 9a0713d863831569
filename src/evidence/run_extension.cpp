#include "evidence/run_extension.h"

#include <chrono>
#include <ostream>

#include <fmt/format.h>

#include "evidence/interval_plot.h"
#include "evidence/report.h"
#include "evidence/tornado_plot.h"

namespace ipilab::evidence {

void AnalysisExtension::analyse(const scenario::PreparedScenario& p, const scenario::ScenarioResult& r, std::size_t index,
                                std::ostream& err) {
  if (done_.size() <= index) done_.resize(index + 1);
  Done& d = done_[index];
  const auto t0 = std::chrono::steady_clock::now();
  if (opt_.draws) d.propagation = propagate(p, r, PropagateOptions{*opt_.draws, opt_.jobs, opt_.iterations});
  const auto t1 = std::chrono::steady_clock::now();
  if (opt_.sensitivity) {
    const CostInventory inv = d.propagation ? d.propagation->costs : inventory(p, r);
    d.sensitivity = sensitivity(p, r, inv, RunOptions{opt_.jobs, opt_.iterations, false}, d.propagation ? &*d.propagation : nullptr);
  }
  const auto t2 = std::chrono::steady_clock::now();
  if (!opt_.progress) return;
  const auto secs = [](auto a, auto b) { return std::chrono::duration<double>(b - a).count(); };
  if (d.propagation)
    err << fmt::format("[{}] uncertainty: {} draws x {} variants in {:.2f} s\n", p.name, d.propagation->draws, p.variants.size(), secs(t0, t1));
  if (d.sensitivity)
    err << fmt::format("[{}] sensitivity: 2 x {} costs x {} variants in {:.2f} s\n", p.name,
                       (d.propagation ? d.propagation->costs : inventory(p, r)).uncertain.size(), p.variants.size(), secs(t1, t2));
  err.flush();
}

std::string AnalysisExtension::text(std::size_t index, bool details) const {
  if (index >= done_.size()) return {};
  std::string s;
  if (done_[index].propagation) s += format_uncertainty(*done_[index].propagation, details);
  if (done_[index].sensitivity) s += format_sensitivity(*done_[index].sensitivity);
  return s;
}

void AnalysisExtension::json(nlohmann::ordered_json& scenario, std::size_t index) const {
  if (index >= done_.size()) return;
  if (done_[index].propagation) add_uncertainty_json(scenario, *done_[index].propagation);
  if (done_[index].sensitivity) add_sensitivity_json(scenario, *done_[index].sensitivity);
}

bool AnalysisExtension::plots(const std::vector<scenario::ScenarioResult>& rs, const std::string& requested,
                              output::OutputSet& outs, std::vector<std::filesystem::path>& finals) const {
  std::vector<const Propagation*> p;
  for (std::size_t i = 0; i < rs.size(); ++i) p.push_back(i < done_.size() && done_[i].propagation ? &*done_[i].propagation : nullptr);
  if (!opt_.sensitivity) {
    if (!opt_.draws) return false;
    finals = render_interval_plots(rs, p, requested, outs);
    return true;
  }
  std::vector<const Sensitivity*> s;
  for (std::size_t i = 0; i < rs.size(); ++i) s.push_back(i < done_.size() && done_[i].sensitivity ? &*done_[i].sensitivity : nullptr);
  finals = render_tornados(rs, s, requested, outs, p);
  return true;
}

}  // namespace ipilab::evidence
