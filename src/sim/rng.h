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
#include <vector>

#include "sim/time.h"

namespace ipilab::sim {

/// How a "value with relative spread" is sampled.
enum class SpreadShape {
  /// Lognormal with the given mean and relative standard deviation cv: sigma^2 = ln(1 + cv^2),
  /// mu = ln(mean) - sigma^2 / 2. Always > 0, right-skewed like real latencies. The default.
  Lognormal,
  /// Normal(mean, cv * mean), clipped below at 0.1 % of the mean (never 0 or negative; jitter()
  /// also never returns less than 1 ps). Symmetric; meant for small cv (<= 0.3).
  NormalClipped,
};

class Rng {
 public:
  /// Seeds the 256-bit state from `seed` with splitmix64 (any seed, including 0, is fine).
  explicit Rng(std::uint64_t seed);

  /// Next raw 64-bit value (one draw).
  std::uint64_t next_u64() noexcept;
  /// Uniform double in [0, 1) with 53 random bits (one draw).
  double uniform01() noexcept;
  /// Uniform integer in [0, n), n > 0, without modulo bias (Lemire's multiply-shift with
  /// rejection; usually one draw).
  std::uint64_t uniform_below(std::uint64_t n) noexcept;
  /// Standard normal N(0, 1) by Marsaglia's polar method (pairs of uniforms, rejection rate
  /// 1 - pi/4; the second value of each pair is returned by the next call).
  double normal() noexcept;

  /// A positive value around `mean` with relative standard deviation `cv` (>= 0). With cv == 0 it
  /// returns `mean` exactly and consumes NO draw, so profiles without spread give exact sums.
  double with_spread(double mean, double cv, SpreadShape shape = SpreadShape::Lognormal) noexcept;

  /// Duration version of with_spread: rounds to the nearest ps; cv == 0 returns `mean` unchanged.
  Ps jitter(Ps mean, double cv, SpreadShape shape = SpreadShape::Lognormal) noexcept;

 private:
  std::uint64_t s_[4];
  double spare_ = 0;
  bool has_spare_ = false;
};

/// A duration with relative spread, its distribution parameters computed once (use this in hot
/// loops instead of Rng::jitter, which recomputes the lognormal parameters on every call).
/// sample() returns exactly Ps values Rng::jitter(mean, cv, shape) would, for the same stream.
///
/// Lognormal sampling is by inverse transform with ONE uniform draw: the lognormal quantile function
/// is tabulated at 256 equal steps of probability when the Jitter is built (standard-normal quantiles
/// by Acklam's rational approximation, relative error < 1.2e-9) and interpolated linearly between
/// them; in the two outer steps (probability < 1/256 or > 255/256) the quantile is computed exactly,
/// so the tails that drive p99.9 are not flattened. The interpolation changes a sample by far less
/// than 0.1 % of the mean for cv <= 0.5 (the mean shifts by a fraction of that), and is ~5x faster
/// than a polar-method normal plus exp (bench/sim, bench/workload).
class Jitter {
 public:
  Jitter() = default;
  Jitter(Ps mean, double cv, SpreadShape shape = SpreadShape::Lognormal);

  Ps mean() const noexcept { return mean_; }
  double cv() const noexcept { return cv_; }
  SpreadShape shape() const noexcept { return shape_; }

  /// One sample (>= 1 ps); with cv == 0 returns mean() and consumes no draw (inline: most steps of
  /// a profile have no spread).
  Ps sample(Rng& rng) const noexcept {
    if (cv_ <= 0.0 || mean_.v <= 0) return mean_;
    return sample_spread(rng);
  }

 private:
  Ps mean_{};
  double cv_ = 0;
  SpreadShape shape_ = SpreadShape::Lognormal;
  double mu_ = 0, sigma_ = 0;  // lognormal parameters
  Ps sample_spread(Rng& rng) const noexcept;
  static constexpr int kSteps = 256;
  /// Lognormal quantiles at p = i / kSteps, i = 1..kSteps-1 (index i), shared by copies.
  std::shared_ptr<const std::vector<double>> quantiles_;
};

/// Inverse of the standard normal CDF, p in (0, 1) (Acklam's rational approximation with its
/// published coefficients; relative error < 1.2e-9). Exposed for tests.
double normal_quantile(double p) noexcept;

}  // namespace ipilab::sim
