#include "evidence/published_figures.h"

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/file.h"
#include "evidence/report.h"
#include "scenario/report.h"
#include "scenario/report_format.h"

namespace ipilab::evidence {

namespace fs = std::filesystem;
namespace rf = ipilab::scenario::report;
using ojson = nlohmann::ordered_json;

namespace {

// Whether `file` is the shipped scenario of that name (the same file, however it was named).
bool is_shipped(const std::string& file, const std::string& name) {
  std::error_code ec;
  const fs::path shipped = data_dir() / "scenarios" / (name + ".toml");
  return fs::equivalent(file, shipped, ec) && !ec;
}

const scenario::PreparedVariant* variant_of(const scenario::PreparedScenario& p, const std::string& name) {
  for (const auto& v : p.variants)
    if (v.name == name) return &v;
  return nullptr;
}

std::string metric_of(const Figure& f) { return f.stat == "mean" ? f.metric : fmt::format("{} {}", f.metric, f.stat); }

// What the figure's kind says of this run's number.
std::string verdict(const FigureResult& r) {
  const Figure& f = r.figure;
  switch (f.kind) {
    case FigureKind::Fitted:
      return fmt::format("fitted ({}): reproduced by construction", fmt::join(f.fitted_into, ", "));
    case FigureKind::Predicted: return r.within ? "predicted: ✓ within tolerance" : "predicted: ✗ OUTSIDE tolerance";
    case FigureKind::Missed: return r.within ? "missed (known), now within tolerance" : "missed (known): ✗ outside tolerance";
    case FigureKind::NotModelled: break;
  }
  return "";
}

}  // namespace

ScenarioFigures scenario_figures(const std::vector<Figure>& figures, const scenario::PreparedScenario& p, const scenario::ScenarioResult& r) {
  ScenarioFigures s;
  std::vector<const Figure*> mine;
  for (const auto& f : figures)
    if (f.kind != FigureKind::NotModelled && f.scenario == p.name) mine.push_back(&f);
  if (mine.empty()) return s;
  if (!is_shipped(p.file, p.name)) {
    s.copy = true;
    s.copy_figures = mine.size();
    return s;
  }
  for (const Figure* f : mine) {
    const auto* v = variant_of(p, f->variant);
    const auto* base = f->relative_to.empty() ? v : variant_of(p, f->relative_to);
    if (!v || !base) {
      ++s.not_run;
      continue;
    }
    if (!v->profile_replaced.empty() || !base->profile_replaced.empty()) {
      ++s.other_profile;
      continue;
    }
    s.held.push_back(evaluate_figure(*f, p, r));
  }
  return s;
}

std::string format_scenario_figures(const ScenarioFigures& s, const std::string& file_shown) {
  if (s.copy)
    return "\n" + rf::wrap("  published figures:",
                    fmt::format("none held against this file: it is not the shipped scenario of its name, which models {} figure{} "
                                "of {} (run that one, or `ipilab validate`)",
                                s.copy_figures, s.copy_figures == 1 ? "" : "s", file_shown),
                    "    ");
  if (s.none()) return {};
  std::string out = fmt::format("\n  published figures of this scenario ({}; `ipilab validate` runs them all):\n", file_shown);
  std::size_t predicted = 0;
  if (!s.held.empty()) {
    rf::Table t({"figure", "variant", "metric", "published", "model", "error", "tolerance", "kind"}, {0, 1, 2, 7});
    for (const auto& r : s.held) {
      const Figure& f = r.figure;
      if (f.kind == FigureKind::Predicted) ++predicted;
      const bool tol = has_tolerance(f.kind);
      if (!f.relative_to.empty())
        t.add({f.id, fmt::format("{} vs {}", f.variant, f.relative_to), metric_of(f), fmt::format("{:+.2f} %", f.value), fmt::format("{:+.2f} %", r.model),
               fmt::format("{:+.2f} pt", r.error), tol ? fmt::format("±{:g} pt", f.tolerance) : "", verdict(r)});
      else
        t.add({f.id, f.variant, metric_of(f), fmt::format("{} {}", format_figure_value(f.value), f.unit), format_figure_value(r.model), fmt::format("{:+.1f}%", r.error * 100),
               tol ? rf::format_tolerance(f.tolerance) : "", verdict(r)});
    }
    out += t.render("  ");
    for (const auto& r : s.held)
      if (r.figure.kind == FigureKind::Missed) out += rf::wrap(fmt::format("  {} missed:", r.figure.id), r.figure.reason, "    ");
    out += rf::wrap(" ", fmt::format("A ✓ in the check column says the run meets the scenario's own expectation; only a predicted "
                                    "figure tests the model (here {} of {}).",
                                    predicted, s.held.size()),
                    "  ");
  }
  if (s.other_profile)
    out += rf::wrap(" ", fmt::format("{} figure{} not held against this run: --profile replaces the profile {} test{}.", s.other_profile,
                                    s.other_profile == 1 ? "" : "s", s.other_profile == 1 ? "it" : "they", s.other_profile == 1 ? "s" : ""),
                    "  ");
  if (s.not_run)
    out += rf::wrap(" ", fmt::format("{} figure{} not held against this run: {} variant was not selected.", s.not_run, s.not_run == 1 ? "" : "s",
                                    s.not_run == 1 ? "its" : "their"),
                    "  ");
  return out;
}

void add_scenario_figures_json(ojson& scenario, const ScenarioFigures& s, const std::string& file_shown) {
  if (s.none()) return;
  ojson figs = ojson::array();
  for (const auto& r : s.held) {
    const Figure& f = r.figure;
    ojson j = {{"id", f.id}, {"kind", kind_name(f.kind)}, {"variant", f.variant}};
    if (!f.relative_to.empty()) j["relative_to"] = f.relative_to;
    j["metric"] = f.metric;
    j["stat"] = f.stat;
    j["published"] = f.value;
    j["unit"] = f.unit;
    j["model"] = r.model;
    j["error"] = r.error;
    if (f.kind == FigureKind::Fitted) j["fitted_into"] = f.fitted_into;
    if (has_tolerance(f.kind)) {
      j[f.relative_to.empty() ? "tolerance" : "tolerance_points"] = f.tolerance;
      j["within"] = r.within;
    }
    j["source"] = f.source;
    figs.push_back(std::move(j));
  }
  scenario["published_figures"] = {{"file", file_shown},
                                   {"held", std::move(figs)},
                                   {"not_held_other_profile", s.other_profile},
                                   {"not_held_variant_not_run", s.not_run},
                                   {"not_held_not_shipped_file", s.copy ? s.copy_figures : 0}};
}

void PublishedFiguresExtension::analyse(const scenario::PreparedScenario& p, const scenario::ScenarioResult& r, std::size_t index,
                                        std::ostream&) {
  if (!loaded_) {
    loaded_ = true;
    std::error_code ec;
    if (fs::is_regular_file(shipped_figures_file(), ec)) figures_ = load_figures(shipped_figures_file());
  }
  if (done_.size() <= index) done_.resize(index + 1);
  done_[index] = scenario_figures(figures_, p, r);
}

std::string PublishedFiguresExtension::text(std::size_t index, bool) const {
  return index < done_.size() ? format_scenario_figures(done_[index], "validation/figures.toml") : std::string();
}

void PublishedFiguresExtension::json(ojson& scenario, std::size_t index) const {
  if (index < done_.size()) add_scenario_figures_json(scenario, done_[index], "validation/figures.toml");
}

}  // namespace ipilab::evidence
