// ipilab/measure/bootstrap.h — confidence intervals over interleaved rounds (pure functions).
//
// A measurement run visits its cases in rounds (A B C A B C ...), so slow drift of the host (frequency,
// neighbours, the L0 hypervisor) hits every case of a round alike. Samples inside one round are not
// independent draws (they share that round's state of the host), rounds are closer to it; so the
// interval is a cluster (block) bootstrap over ROUNDS (Efron & Tibshirani, "An Introduction to the
// Bootstrap", 1993, ch. 8 and 13, percentile interval): draw as many rounds as were measured, with
// replacement, pool their samples, take the statistic; repeat `resamples` times; the 2.5 % and 97.5 %
// quantiles of the statistic are the 95 % interval.
//
// Ratios pair rounds: each resample draws round indices once and uses the SAME rounds for the case and
// its reference, so drift common to both cancels in the ratio (that is why the cases are interleaved).
// Only rounds in which both have samples take part.
//
// Deterministic: the resampling RNG is std::mt19937_64 seeded with `seed` (fully specified by the C++
// standard) with a fixed index reduction, so the same samples and seed give the same interval everywhere.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace ipilab::measure {

/// Samples of one case, one vector per round (a round may be empty: the case took no sample then).
using Rounds = std::vector<std::vector<double>>;

struct Interval {
  double lo = 0;
  double hi = 0;
};

struct BootstrapOptions {
  unsigned resamples = 1000;
  std::uint64_t seed = 1;
  double level = 0.95;  ///< central interval: quantiles (1 - level) / 2 and (1 + level) / 2
};

/// Median of all samples of all rounds pooled; nullopt without samples.
std::optional<double> pooled_median(const Rounds& rounds);

/// Percentile interval of the pooled median, resampling rounds. nullopt without samples. With one
/// non-empty round the interval is that round's median on both sides (nothing to resample: say so).
std::optional<Interval> bootstrap_median(const Rounds& rounds, const BootstrapOptions& o = {});

/// Point estimate median(a) / median(b) over the rounds where both have samples, and its paired
/// percentile interval. nullopt when no round has samples of both or median(b) is 0.
struct RatioEstimate {
  double value = 0;
  Interval ci;
  unsigned rounds = 0;  ///< rounds with samples of both
};
std::optional<RatioEstimate> bootstrap_ratio(const Rounds& a, const Rounds& b, const BootstrapOptions& o = {});

}  // namespace ipilab::measure
