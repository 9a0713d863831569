// ipilab/measure/stats.h — summary statistics of benchmark samples (pure functions).
//
// Definitions (so results are reproducible by hand):
//   median      — of all samples; the mean of the two middle values when the count is even.
//   p99         — nearest-rank percentile: the sorted sample at rank ceil(0.99 * n) (1-based).
//   mean        — arithmetic mean of all samples; stddev their population standard deviation.
// Units: whatever the samples are in (the KVM benchmarks use TSC cycles; see to_ns()).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace ipilab::measure {

struct SampleStats {
  std::uint64_t count = 0;
  double median = 0;
  double p99 = 0;
  double p10 = 0, p90 = 0;  ///< nearest-rank, like p99
  double mean = 0;
  double min = 0;
  double max = 0;
  double stddev = 0;  ///< population standard deviation of all samples
};

/// Nearest-rank percentile `p` (0 < p <= 100) of `sorted` (ascending, non-empty).
/// Throws std::invalid_argument for an empty input or p outside (0, 100].
double percentile_sorted(std::span<const double> sorted, double p);

/// Median of `values` (any order, non-empty; throws std::invalid_argument when empty).
double median(std::vector<double> values);

/// Summary of `samples`; nullopt when there are none (a case without samples has no statistics, and
/// must never be shown as 0).
std::optional<SampleStats> summarize(std::span<const double> samples);

/// One histogram bin: [lo, hi) holding `count` values.
struct Bin {
  double lo = 0;
  double hi = 0;
  std::uint64_t count = 0;
};

/// Histogram of `values` on a fixed logarithmic grid, edges 10^(k / per_decade) (40 per decade: bins
/// 5.9 % wide, so a value sits within 2.9 % of its bin's middle); empty bins are left out; values <= 0
/// fall in [0, first edge). Ascending and non-overlapping (neighbours may share an edge). Empty input,
/// or per_decade 0, gives no bins.
std::vector<Bin> log_bins(std::span<const double> values, unsigned per_decade = 40);
/// The mean of the distribution the bins describe when each bin is sampled uniformly: the count-weighted
/// mean of the bins' midpoints. 0 for no bins.
double bins_mean(std::span<const Bin> bins);

/// TSC cycles -> ns at `tsc_khz` (KVM_GET_TSC_KHZ): cycles * 1e6 / tsc_khz.
constexpr double cycles_to_ns(double cycles, std::uint64_t tsc_khz) {
  return tsc_khz == 0 ? 0.0 : cycles * 1e6 / static_cast<double>(tsc_khz);
}

/// Relative difference |a - b| / max(|a|, |b|) (0 when both are 0).
double relative_difference(double a, double b);

}  // namespace ipilab::measure
