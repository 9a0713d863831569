// ipilab/sim/rng.h — the simulator's seeded random stream and its sampling helpers.
//
// Generator: xoshiro256** (Blackman & Vigna, "Scrambled linear pseudorandom number generators",
// ACM TOMS 2021; the reference algorithm is public domain), 256-bit state, seeded by expanding the
// 64-bit seed with splitmix64 (Steele, Lea & Flood, OOPSLA 2014). It is written here, not taken from
// <random>, because the distributions of the standard library are implementation-defined: ours give
// the same stream on every platform for the same seed (up to libm's log/cos/exp, which glibc rounds
// correctly in practice).
//
// The stream is a pure function of the seed and of the sequence of calls: adding a sample in one
// place shifts every later sample but never makes a run nondeterministic. normal() produces values
// in pairs (Marsaglia's polar method) and keeps the second for the next call.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "sim/time.h"

namespace ipilab::sim {

/// How a "value with relative spread" is sampled.
enum class SpreadShape {
  /// Lognormal with the given mean and relative standard deviation cv: sigma^2 = ln(1 + cv^2),
  /// mu = ln(mean) - sigma^2 / 2. Always > 0, right-skewed like real latencies. The default.
  Lognormal,
  /// Normal(mean, cv * mean), clipped below at 0.1 % of the mean (never 0 or negative; jitter()
  /// also never returns less than 1 ps). Symmetric; meant for small cv (<= 0.3). (Rng::with_spread
  /// draws it by the polar method; Distribution by inverse transform, one draw.)
  NormalClipped,
};

class Rng {
 public:
  /// Seeds the 256-bit state from `seed` with splitmix64 (any seed, including 0, is fine).
  explicit Rng(std::uint64_t seed);

  /// Next raw 64-bit value (one draw).
  std::uint64_t next_u64() noexcept {
    const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const std::uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }
  /// Uniform double in [0, 1) with 53 random bits (one draw).
  double uniform01() noexcept { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }
  /// Uniform integer in [0, n), n > 0, without modulo bias (Lemire's multiply-shift with
  /// rejection; usually one draw).
  std::uint64_t uniform_below(std::uint64_t n) noexcept;
  /// Standard normal N(0, 1) by Marsaglia's polar method (pairs of uniforms, rejection rate
  /// 1 - pi/4; the second value of each pair is returned by the next call).
  double normal() noexcept;

  /// A positive value around `mean` with relative standard deviation `cv` (>= 0). With cv == 0 it
  /// returns `mean` exactly and consumes NO draw, so profiles without spread give exact sums.
  double with_spread(double mean, double cv, SpreadShape shape = SpreadShape::Lognormal) noexcept;

  /// Duration version of with_spread, sampled as Distribution(mean, cv, shape) (so the same values
  /// as a Distribution built once): rounds to the nearest ps; cv == 0 returns `mean` unchanged.
  Ps jitter(Ps mean, double cv, SpreadShape shape = SpreadShape::Lognormal) noexcept;

 private:
  static std::uint64_t rotl(std::uint64_t x, int k) noexcept { return (x << k) | (x >> (64 - k)); }
  std::uint64_t s_[4];
  double spare_ = 0;
  bool has_spare_ = false;
};

/// The distributions a cost may have (the `dist` of a profile entry, profiles/README.md).
enum class DistKind : std::uint8_t { Fixed, Lognormal, Normal, Exponential, Empirical };
/// "fixed", "lognormal", "normal", "exponential", "empirical".
std::string_view dist_name(DistKind k) noexcept;
/// Inverse of dist_name; false if `s` names none.
bool parse_dist(std::string_view s, DistKind& out) noexcept;

/// One bin of an empirical distribution: values in [lo, hi) (ps, 0 <= lo < hi) with weight `count`.
struct EmpiricalBin {
  double lo = 0, hi = 0, count = 0;
};

/// A duration's distribution, its parameters and tables computed once (build it outside hot loops;
/// copies share the tables). mean() is the distribution's mean; sample() one value, rounded to the
/// nearest ps. How each kind is sampled (every sampler but Fixed uses ONE uniform draw, u in [0,1)):
///
///   Fixed        mean(), no draw (so profiles without spread give exact sums).
///   Lognormal    mean m, relative standard deviation cv: sigma^2 = ln(1 + cv^2), mu = ln m -
///                sigma^2/2. Inverse transform: the quantile function is tabulated at 256 equal
///                steps of probability when the distribution is built (standard-normal quantiles by
///                Acklam's rational approximation, relative error < 1.2e-9) and interpolated
///                linearly; in the two outer steps (p < 1/256 or > 255/256) the quantile is computed
///                exactly, so the tails that drive p99.9 are not flattened. The interpolation changes
///                a sample by far less than 0.1 % of the mean for cv <= 0.5 (the mean shifts by a
///                fraction of that), and is ~5x faster than a polar-method normal plus exp.
///   Normal       m + cv m z, z = normal_quantile(u) (exact to 1.2e-9), clipped below at 0.1 % of m
///                (never 0 or negative). Meant for small cv: profiles allow cv <= 0.3, where the
///                clipping moves the mean by less than 0.01 %.
///   Exponential  -m ln(1 - u) (exact inverse transform; log1p for precision near 0). cv = 1.
///   Empirical    bins [lo, hi) with weights: a bin is chosen with probability weight / total by
///                Walker's alias method (Vose's construction: one table, O(1) per sample), u's
///                integer part over the bins picks the column and its fraction both the alias coin
///                and the position inside the chosen bin, where the value is uniform. Every value is
///                then multiplied by mean / (mean of the bins) so that mean() is exactly the stated
///                mean (profiles require the factor within 1 %: the bins give the shape, `value`
///                the mean).
///
/// Lognormal and Normal never return less than 1 ps; all kinds return mean() exactly when it is 0.
class Distribution {
 public:
  /// Fixed at 0.
  Distribution() = default;
  /// Spread around `mean` with relative standard deviation `cv` (the former sim::Jitter): Fixed if
  /// cv <= 0, else Lognormal (shape Lognormal) or Normal (shape NormalClipped).
  Distribution(Ps mean, double cv, SpreadShape shape = SpreadShape::Lognormal);

  static Distribution fixed(Ps mean) { return Distribution(mean, 0.0); }
  static Distribution lognormal(Ps mean, double cv) { return Distribution(mean, cv, SpreadShape::Lognormal); }
  static Distribution normal(Ps mean, double cv) { return Distribution(mean, cv, SpreadShape::NormalClipped); }
  static Distribution exponential(Ps mean);
  /// Bins in ps, ascending and non-overlapping, each lo >= 0, hi > lo, count >= 0, total > 0 (else
  /// std::invalid_argument: profiles validate first and name the key). Scaled to `mean` (above).
  static Distribution empirical(Ps mean, std::vector<EmpiricalBin> bins);

  Ps mean() const noexcept { return mean_; }
  DistKind kind() const noexcept { return kind_; }
  /// Relative standard deviation: as given (Lognormal, Normal), 1 (Exponential), of the scaled bins
  /// (Empirical), 0 (Fixed).
  double cv() const noexcept { return cv_; }
  /// For the Jitter-era callers: NormalClipped for Normal, else Lognormal.
  SpreadShape shape() const noexcept { return kind_ == DistKind::Normal ? SpreadShape::NormalClipped : SpreadShape::Lognormal; }
  /// Empirical: the bins as given (ps, before scaling); empty otherwise.
  std::vector<EmpiricalBin> bins() const;
  /// Empirical: mean / (mean of the bins), the factor every sample is scaled by; else 1.
  double scale() const noexcept { return scale_; }

  /// One sample (see above). Fixed: mean(), no draw; Lognormal inside its table: interpolated here
  /// (inline: the simulator's hot path); everything else out of line.
  Ps sample(Rng& rng) const noexcept {
    if (kind_ == DistKind::Fixed || mean_.v <= 0) return mean_;
    if (kind_ != DistKind::Lognormal) return sample_draw(rng);
    const double u = rng.uniform01();
    const double pos = u * kSteps;
    const int i = static_cast<int>(pos);
    if (i < 1 || i >= kSteps - 1) return lognormal_tail(u);
    const double lo = quantiles_[i], hi = quantiles_[i + 1];
    return round_positive(lo + (pos - i) * (hi - lo));
  }

 private:
  struct Tables;
  Ps mean_{};
  DistKind kind_ = DistKind::Fixed;
  double cv_ = 0;
  double mu_ = 0, sigma_ = 0;  // lognormal parameters
  double scale_ = 1;           // empirical
  Ps sample_draw(Rng& rng) const noexcept;
  /// Lognormal, u in an outer step: the exact quantile.
  Ps lognormal_tail(double u) const noexcept;
  /// x > 0 to the nearest ps, at least 1 (round half up, as llround, without the libm call).
  static Ps round_positive(double x) noexcept {
    const auto r = static_cast<std::int64_t>(x + 0.5);
    return Ps{r < 1 ? 1 : r};
  }
  static constexpr int kSteps = 256;
  /// Lognormal: quantiles at p = i / kSteps (index i = 1..kSteps-1). Empirical: the alias table.
  std::shared_ptr<const Tables> tables_;
  const double* quantiles_ = nullptr;  ///< Lognormal: tables_->quantiles.data() (kept alive by tables_)
};

/// The name the engine's callers know: Cost::jitter() returns one, PlanStep holds one.
using Jitter = Distribution;

/// Inverse of the standard normal CDF, p in (0, 1) (Acklam's rational approximation with its
/// published coefficients; relative error < 1.2e-9). Exposed for tests.
double normal_quantile(double p) noexcept;

}  // namespace ipilab::sim
