// The text and JSON of `ipilab validate` (validate.h).
#include <cmath>

#include <fmt/format.h>

#include "evidence/report.h"
#include "evidence/validate.h"
#include "scenario/report_format.h"

namespace ipilab::evidence {

namespace rf = ipilab::scenario::report;
using ojson = nlohmann::ordered_json;

namespace {

std::string profile_line(const ProfileSummary& p) {
  return fmt::format("{} fitted value{}, {} figure{} fitted, {} predicted ({} within tolerance), {} missed, {} published but "
                     "not modelled",
                     p.fitted_values.size(), p.fitted_values.size() == 1 ? "" : "s", p.fitted, p.fitted == 1 ? "" : "s", p.predicted,
                     p.predicted_within, p.missed, p.not_modelled);
}

std::string verdict(const ProfileSummary& p) {
  if (p.fitted_values.empty() && p.predicted == 0) return "  no fitted values and no figures: nothing to validate\n";
  if (p.predicted_within < p.predicted) return "  FAILED: a predicted figure is outside its tolerance\n";
  if (p.predicted < p.fitted_values.size())
    return rf::wrap("  NOT VALIDATED:",
                    fmt::format("{} predicted figure{} for {} fitted value{}. A fit with as many values as figures reproduces "
                                "them whatever the model's structure; {} more published figure{} that no value is fitted to "
                                "{} needed, and this set has none yet.",
                                p.predicted, p.predicted == 1 ? "" : "s", p.fitted_values.size(), p.fitted_values.size() == 1 ? "" : "s",
                                p.fitted_values.size() - p.predicted, p.fitted_values.size() - p.predicted == 1 ? "" : "s",
                                p.fitted_values.size() - p.predicted == 1 ? "is" : "are"),
                    "    ");
  if (p.missed)
    return rf::wrap("  validated:", fmt::format("at least as many predicted figures as fitted values, all within tolerance; but {} "
                                                "other published figure{} it computes miss{} (above)",
                                                p.missed, p.missed == 1 ? "" : "s", p.missed == 1 ? "es" : ""),
                    "    ");
  return "  validated: at least as many predicted figures as fitted values, all within tolerance\n";
}

// The verdict's name in the JSON: the text's verdict() in one word or two.
const char* verdict_name(const ProfileSummary& p) {
  if (p.fitted_values.empty() && p.predicted == 0) return "nothing to validate";
  if (p.predicted_within < p.predicted) return "failed";
  if (p.predicted < p.fitted_values.size()) return "not validated";
  return p.missed ? "validated, with misses" : "validated";
}

}  // namespace

std::string format_validation(const Validation& v) {
  std::string s = fmt::format("Validation set: {} ({} published figures)\n", v.file, v.figures.size());
  if (v.draws) s += fmt::format("intervals: 90 % over the profiles' cost ranges, {} draws (ipilab run --uncertainty)\n", v.draws);
  std::size_t fv = 0, ff = 0, fp = 0, fw = 0, fm = 0, nm = 0;
  for (const auto& p : v.profiles) {
    fv += p.fitted_values.size();
    ff += p.fitted;
    fp += p.predicted;
    fw += p.predicted_within;
    nm += p.not_modelled;
    fm += p.missed;
    s += fmt::format("\nprofile {} ({}): {}\n", p.name, p.file, profile_line(p));
    if (!p.fitted_values.empty()) s += rf::wrap("  fitted values:", fmt::format("{}", fmt::join(p.fitted_values, ", ")), "    ");
    rf::Table t({"figure", "kind", "scenario / variant / metric", "published", "model", "error", "tolerance", "90 % interval", ""}, {0, 1, 2, 8});
    bool any = false;
    for (const auto& r : v.figures) {
      const Figure& f = r.figure;
      if (f.profile != p.name) continue;
      any = true;
      if (f.kind == FigureKind::NotModelled) {
        t.add({f.id, "not-modelled", "—", fmt::format("{} {}", format_figure_value(f.value), f.unit), "—", "", "", "", ""});
        continue;
      }
      std::string interval, mark;
      if (r.interval) {
        interval = format_with_interval(r.model, *r.interval);
        mark = r.interval->contains(f.value) ? "published value inside the interval" : "published value OUTSIDE the interval";
      }
      if (f.kind == FigureKind::Predicted)
        mark = (r.within ? "✓ within tolerance" : "✗ outside tolerance") + std::string(mark.empty() ? "" : "; ") + mark;
      if (f.kind == FigureKind::Missed)
        mark = (r.within ? "now WITHIN tolerance: make it predicted" : "✗ MISSED (known)") + std::string(mark.empty() ? "" : "; ") + mark;
      const bool toleranced = has_tolerance(f.kind);
      if (!f.relative_to.empty()) {  // a change between two variants, in %; error and tolerance in points
        if (mark.find("interval") == std::string::npos) mark += "; no interval for a change between variants";
        t.add({f.id, std::string(kind_name(f.kind)), fmt::format("{} / {} vs {} / {}", f.scenario, f.variant, f.relative_to, f.metric),
               fmt::format("{:+.2f} %", f.value), fmt::format("{:+.2f} %", r.model), fmt::format("{:+.2f} pt", r.error),
               fmt::format("±{:g} pt", f.tolerance), interval, mark});
        continue;
      }
      t.add({f.id, std::string(kind_name(f.kind)), fmt::format("{} / {} / {}", f.scenario, f.variant, f.metric),
             fmt::format("{} {}", format_figure_value(f.value), f.unit), format_figure_value(r.model), fmt::format("{:+.1f}%", r.error * 100),
             toleranced ? rf::format_tolerance(f.tolerance) : "", interval, mark});
    }
    if (any) s += t.render("  ");
    for (const auto& r : v.figures)
      if (r.figure.profile == p.name && r.figure.kind == FigureKind::Missed)
        s += rf::wrap(fmt::format("  {} missed:", r.figure.id), r.figure.reason, "    ");
    for (const auto& r : v.figures)
      if (r.figure.profile == p.name && r.figure.kind == FigureKind::NotModelled)
        s += rf::wrap(fmt::format("  {} not modelled:", r.figure.id), r.figure.reason, "    ");
    s += verdict(p);
  }
  s += fmt::format("\noverall: {} fitted values, {} figures fitted, {} predicted ({} within tolerance), {} missed, {} not modelled; {}\n", fv,
                   ff, fp, fw, fm, nm,
                   !v.pass() ? "PREDICTIONS OUTSIDE THEIR TOLERANCE"
                   : fm      ? fmt::format("every figure of kind predicted within its tolerance; {} known miss{} (kind missed, above)", fm, fm == 1 ? "" : "es")
                             : std::string("every prediction within its tolerance"));
  if (fm)
    s += rf::wrap("", fmt::format("{} published figure{} the model computes without fitting miss{} {} tolerance{} (kind \"missed\", each "
                                  "with what decides it above): they do not fail this run and do not count as validating their "
                                  "profiles.",
                                  fm, fm == 1 ? "" : "s", fm == 1 ? "es" : "", fm == 1 ? "its" : "their", fm == 1 ? "" : "s"),
                  "");
  std::size_t short_of = 0;
  for (const auto& p : v.profiles)
    if (p.predicted < p.fitted_values.size()) ++short_of;
  if (short_of)
    s += fmt::format("{} of {} profiles have fewer predicted figures than fitted values: not validated (see above)\n", short_of, v.profiles.size());
  return s;
}

ojson validation_json(const Validation& v) {
  ojson profiles = ojson::array();
  for (const auto& p : v.profiles)
    profiles.push_back({{"profile", p.name},
                        {"file", p.file},
                        {"fitted_values", p.fitted_values},
                        {"figures_fitted", p.fitted},
                        {"figures_predicted", p.predicted},
                        {"predicted_within", p.predicted_within},
                        {"missed", p.missed},
                        {"missed_now_within", p.missed_now_within},
                        {"not_modelled", p.not_modelled},
                        {"validated", p.validated()},
                        {"verdict", verdict_name(p)}});
  ojson figs = ojson::array();
  for (const auto& r : v.figures) {
    const Figure& f = r.figure;
    ojson j = {{"id", f.id}, {"profile", f.profile}, {"kind", kind_name(f.kind)}, {"figure", f.figure},
               {"published", f.value}, {"unit", f.unit}, {"source", f.source}};
    if (f.kind == FigureKind::NotModelled) {
      j["reason"] = f.reason;
    } else {
      j["scenario"] = f.scenario;
      j["variant"] = f.variant;
      if (!f.relative_to.empty()) j["relative_to"] = f.relative_to;
      j["metric"] = f.metric;
      j["stat"] = f.stat;
      j["model"] = r.model;
      j["error"] = r.error;
      if (f.kind == FigureKind::Fitted) j["fitted_into"] = f.fitted_into;
      if (f.kind == FigureKind::Missed) j["reason"] = f.reason;
      if (has_tolerance(f.kind)) {
        j[f.relative_to.empty() ? "tolerance" : "tolerance_points"] = f.tolerance;
        j["tolerance_reason"] = f.tolerance_reason;
        j["within"] = r.within;
        if (r.interval) {
          j["interval"] = ojson::array({r.interval->lo, r.interval->hi});
          j["interval_contains_published"] = r.interval->contains(f.value);
        }
      }
    }
    figs.push_back(std::move(j));
  }
  return {{"file", v.file}, {"draws", v.draws}, {"pass", v.pass()}, {"profiles", std::move(profiles)}, {"figures", std::move(figs)}};
}

}  // namespace ipilab::evidence
