// ipilab/evidence/stats.h — the arithmetic of uncertainty propagation and sensitivity: Latin
// hypercube draws, empirical quantiles and intervals, first-order variance shares. Pure functions.
//
// Latin hypercube (McKay, Beckman & Conover, "A comparison of three methods for selecting values of
// input variables in the analysis of output from a computer code", Technometrics 21(2), 1979): for
// n draws over k inputs, each input's [0, 1) is cut into n equal strata and every stratum is used
// exactly once (a random permutation per input), the point uniform inside its stratum. Each
// input's marginal is then uniform on [0, 1) and covered evenly even for small n.
//
// Quantiles are the "type 7" estimator (Hyndman & Fan, "Sample quantiles in statistical packages",
// The American Statistician 50(4), 1996): linear interpolation between order statistics, the
// default of R and NumPy.
//
// First-order indices (Sobol's S_i = Var(E[Y | X_i]) / Var(Y)) are estimated from the same draws
// by the correlation ratio: the draws sorted by X_i are cut into about sqrt(n) equal groups and the
// variance of the group means is compared with the total variance (a "given data" estimator, cf.
// Plischke, Borgonovo & Smith, "Global sensitivity measures from given data", EJOR 226(3), 2013).
// For an additive model Y = sum f_i(X_i) they add up to 1. The raw ratio has a positive bias (the
// group means of an input without effect scatter by (G - 1) / (n - 1) of Var(Y) for G groups),
// which first_order_index removes; what is left is noise of about 1 / sqrt(n) per input, so the
// reports show these indices only from kMinDrawsForIndices draws on.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace ipilab::evidence {

/// n draws x k inputs in [0, 1) (row d = draw d), deterministic for a given seed; n >= 1.
std::vector<std::vector<double>> latin_hypercube(std::size_t n, std::size_t k, std::uint64_t seed);

/// The q-quantile (0 <= q <= 1) of `values` (not empty), type 7.
double quantile(std::span<const double> values, double q);

struct Interval {
  double lo = 0;
  double hi = 0;
  bool contains(double v) const noexcept { return lo <= v && v <= hi; }
  bool spans_zero() const noexcept { return lo <= 0 && hi >= 0; }
};
/// The central `level` interval (0.9: the 5th and 95th percentiles) of `values` (not empty).
Interval central_interval(std::span<const double> values, double level = 0.9);

double mean(std::span<const double> values);
/// Population variance (divided by n).
double variance(std::span<const double> values);

inline constexpr std::size_t kMinDrawsForIndices = 128;

/// First-order share of input x in the variance of y (the correlation ratio, see the file comment);
/// 0 when y does not vary. x and y have the same size >= 2.
double first_order_index(std::span<const double> x, std::span<const double> y);

/// Shares of variance under additivity from one-at-a-time swings (high minus low over each input's
/// range, the input uniform over it): swing_i^2 / sum_j swing_j^2 (all 0 when no swing).
std::vector<double> additive_shares(std::span<const double> swings);

}  // namespace ipilab::evidence
