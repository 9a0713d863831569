// ipilab/evidence/validate.h — `ipilab validate`: the shipped validation set (validation/figures.toml,
// its header documents the format) run against the model, per profile and overall.
//
// Each figure is a published number with its source, the scenario variant and metric that model
// it, and its kind: FITTED (a profile value was solved from it, named in fitted_into: reproduced by
// construction, so it validates nothing), PREDICTED (nothing was fitted to it; it must lie within
// its stated tolerance) or NOT-MODELLED (published, but no scenario models it yet; listed so the
// gap shows). Per profile the report counts the profile's fitted values (its costs of class
// fitted), the figures fitted and the figures predicted, and says plainly when a profile has fewer
// predicted figures than fitted values ("not validated": a fit with as many values as figures
// reproduces them whatever the model).
//
// Consistency (InputError, exit 2, naming the figure's place): an unknown kind or field, a missing
// source; a scenario or variant that does not exist; a metric the variant does not report or in
// another unit; a figure whose profile is not the one its variant runs; a fitted_into key that is
// not a fitted cost of that profile; a fitted cost of a profile that no fitted figure names, or
// whose source does not name one of those figures' ids; a predicted figure without tolerance and
// its reason. Exit 1 (CheckFailed) when a predicted figure leaves its tolerance.
//
// With draws > 0, each predicted figure also gets the 90 % interval of its model value over the
// profile's ranges (propagate.h) and whether it contains the published value (reported, not a
// failure: the ranges are mostly class defaults).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "evidence/stats.h"
#include "scenario/runner.h"

namespace ipilab::evidence {

/// Fitted: a profile value was solved from it. Predicted: no value was fitted to it, and it must stay
/// within its tolerance (validate fails otherwise). Missed: modelled like a predicted figure, with its
/// tolerance stated beforehand, but known to leave it: run and reported with its error every time,
/// never counted as validating its profile and never failing the run (`reason` says what decides
/// the miss); when it comes back within tolerance the report says so. NotModelled: no scenario
/// models it (`reason` says why).
enum class FigureKind { Fitted, Predicted, Missed, NotModelled };
std::string_view kind_name(FigureKind k);
/// Predicted and missed figures are held against a tolerance stated before the model ran.
inline bool has_tolerance(FigureKind k) { return k == FigureKind::Predicted || k == FigureKind::Missed; }

struct Figure {
  std::string id, profile, figure, unit, source, scenario, variant, metric, stat = "mean";
  double value = 0;
  FigureKind kind = FigureKind::Predicted;
  std::vector<std::string> fitted_into;
  /// A relative figure (predicted only): `value` is the change of `metric` from variant
  /// `relative_to` to `variant` of the same scenario, in % (unit "%"), and its tolerance is
  /// `tolerance_points`, in percentage points. Empty: an absolute figure.
  std::string relative_to;
  double tolerance = 0;  ///< absolute figures: relative; relative figures: percentage points
  std::string tolerance_reason, reason, note;
  std::string place;  ///< FILE:LINE:COLUMN: figure[i]
};

/// Reads a validation file (strict: unknown fields and wrong types are errors naming the place).
std::vector<Figure> load_figures(const std::string& path);
/// The same from text (`file` names it in messages); fuzzed (fuzz/evidence).
std::vector<Figure> parse_figures(std::string_view text, const std::string& file);
/// The shipped set: data_dir()/validation/figures.toml.
std::string shipped_figures_file();

/// 100 * (value - base) / base: the change in % a relative figure states (InputError-free: a zero
/// base gives +-inf or NaN, which no tolerance contains).
double relative_change_percent(double value, double base);
/// Whether `model` lies within `f`'s tolerance of its published value: relative to it for an
/// absolute figure, in percentage points for a relative one.
bool within_tolerance(const Figure& f, double model);

struct FigureResult {
  Figure figure;
  double model = 0;        ///< the model's value (fitted, predicted); a relative figure's: its change in %
  double error = 0;        ///< (model - published) / published; a relative figure: model - published, in points
  bool within = true;      ///< predicted, missed: |error| <= tolerance
  std::optional<Interval> interval;  ///< predicted, with draws
};

/// Figure `f` held against a run of its scenario (`p` prepared, `r` its results): the model's value
/// (the metric's statistic in f.variant; a relative figure's change in % from f.relative_to), its
/// error and, for a figure with a tolerance, whether it lies within (no interval). InputError naming
/// the figure's place: a variant that did not run or runs another profile, a metric it does not
/// report or in another unit, a statistic the metric lacks.
FigureResult evaluate_figure(const Figure& f, const scenario::PreparedScenario& p, const scenario::ScenarioResult& r);

struct ProfileSummary {
  std::string name, file;
  std::vector<std::string> fitted_values;  ///< its costs of class fitted
  std::size_t fitted = 0, predicted = 0, predicted_within = 0, missed = 0, missed_now_within = 0, not_modelled = 0;
  /// At least as many predicted figures as fitted values, all within tolerance; a profile with no
  /// fitted value and no figure validated nothing (false).
  bool validated() const noexcept {
    return !(fitted_values.empty() && predicted == 0) && predicted >= fitted_values.size() && predicted_within == predicted;
  }
};

struct Validation {
  std::string file;
  std::vector<FigureResult> figures;     ///< in file order
  std::vector<ProfileSummary> profiles;  ///< every profile a figure names (all_profiles: every shipped one too), by name
  std::size_t draws = 0;
  bool pass() const;                     ///< every predicted figure within its tolerance (missed ones do not count)
};

struct ValidateOptions {
  std::size_t draws = 32;
  unsigned jobs = 1;
  /// Report (and check the fits of) every shipped profile, not only those the figures name: for
  /// the shipped set, so that a profile without any figure shows up.
  bool all_profiles = false;
};

Validation validate(const std::string& file, const std::vector<Figure>& figures, const ValidateOptions& opt,
                    const scenario::WorkloadLookup& lookup);

std::string format_validation(const Validation& v);
nlohmann::ordered_json validation_json(const Validation& v);

}  // namespace ipilab::evidence
