// ipilab/evidence/calibrate.h — `ipilab calibrate`: fit a profile's values to published figures by
// least squares, with the range the fit allows, every figure's residual and leave-one-out errors.
//
// The unknowns are factors on the chosen costs' means (1 = the profile's value); a figure's
// residual is (model - published) / published, so figures in different units weigh alike. The
// model is the simulator itself: each evaluation runs the figures' scenario variants with the
// costs scaled (draws.h run_scaled; the scenario's seed, so the same factors give the same
// figures). The solver is Eigen's Levenberg-Marquardt (unsupported/Eigen/NonLinearOptimization,
// MINPACK's lmdif: More, "The Levenberg-Marquardt algorithm: implementation and theory", 1978)
// with a forward-difference Jacobian (NumericalDiff); factors are kept positive.
//
// Ranges: with the figures' relative standard error s (an assumption stated in the output,
// `precision`), the factors' covariance is s^2 (J^T J)^-1 at the solution (J: the Jacobian of the
// relative residuals); a value's range is its 90 % interval, +-1.645 standard deviations. It does
// not include the other costs' own ranges (they are held at their values). A value the figures do
// not determine (a singular J^T J) is reported as such and gets no range.
//
// Figures: means in the metric's unit (a validation file's), or medians in ns (a measurement's:
// measured_figures.h; the model's median is its histogram percentile, within 1/256). One fit takes
// one kind of statistic.
//
// Leave-one-out: for each figure k, the fit is repeated without it and figure k predicted from
// that fit; its error is the prediction's. With as many values as figures, every such fit has more
// unknowns than equations: the report says that no leave-one-out prediction exists, so that a fit
// reproducing its figures is never mistaken for one that predicts.
//
// The result is written as a profile layer (cost/profile.h `extends`), the format
// `ipilab measure --profile-out` writes: [profile] extends = the base, one [cost.KEY] per fitted
// value (class fitted, its range and the figures it was fitted to in `source`).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "evidence/validate.h"

namespace ipilab::evidence {

struct CalibrateOptions {
  std::string profile;                 ///< a shipped profile's name, or a profile file (.toml or a path)
  /// Run the figures' scenario variants on `profile` instead of the profiles they name (RunOverrides
  /// profile): figures of a measurement (measured_figures.h), whose this-host scenario describes the
  /// measured machine only on the measured profile.
  bool run_on_profile = false;
  std::string figures_from;            ///< where the figures come from, for the report and the layer
  bool measured = false;               ///< they are a measurement's, not published ones
  std::vector<std::string> keys;       ///< values to fit; empty: the profile's costs of class fitted
  std::vector<std::string> figure_ids; ///< figures to fit to; empty: the profile's fitted figures
  double precision = 0.02;             ///< the figures' assumed relative standard error
  double start = 1.0;                  ///< starting factor on every value (1: the profile's values)
  bool leave_one_out = true;
  unsigned jobs = 1;
  std::uint64_t iterations = 0;        ///< per model run; 0: each scenario's own
};

struct FittedValue {
  std::string key, unit;
  double start = 0, value = 0;         ///< in `unit`
  std::optional<double> lo, hi;        ///< the 90 % range (absent: not determined)
  cost::Cost base;                     ///< the profile's entry (its shape, spread, source)
};

struct FigureFit {
  Figure figure;
  double model = 0;                    ///< at the solution
  double residual = 0;                 ///< (model - published) / published
  std::optional<double> loo_model;     ///< predicted by the fit without it
  std::optional<double> loo_error;
};

struct Calibration {
  std::string profile, base_file;      ///< the base's name ([profile] name) and file as opened
  std::string base_ref;                ///< what the layer's `extends` names: the shipped name, or the file's absolute path
  std::string figures_from;
  bool measured = false;               ///< the figures are a measurement's (measured_figures.h)
  std::vector<FittedValue> values;
  std::vector<FigureFit> figures;
  bool converged = false;
  int evaluations = 0;
  double precision = 0;
  bool loo_possible = false;           ///< more figures than values
  std::string solver_info;
};

Calibration calibrate(const std::vector<Figure>& set, const CalibrateOptions& opt, const scenario::WorkloadLookup& lookup);

std::string format_calibration(const Calibration& c);
/// The profile layer (see the file comment); it `extends` c.base_ref.
std::string calibration_profile(const Calibration& c);

}  // namespace ipilab::evidence
