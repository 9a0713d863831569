// ipilab/measure/stats.h — summary statistics of benchmark samples (pure functions).
//
// Definitions (so results are reproducible by hand):
//   median      — of all samples; the mean of the two middle values when the count is even.
//   p99         — nearest-rank percentile: the sorted sample at rank ceil(0.99 * n) (1-based).
//   mean        — arithmetic mean of all samples; stddev their population standard deviation.
//   batches     — the samples split in order into `batches` chunks of floor(n / batches) samples
//                 (the remainder, at most batches - 1 samples, is left out of the batch figures only).
//   cv          — coefficient of variation of the batch medians: population standard deviation of
//                 the batch medians divided by their mean (0 with fewer than 2 batches). It says how
//                 stable the median is from batch to batch, like the run-to-run spread kvm-unit-tests
//                 users quote.
// Units: whatever the samples are in (the KVM benchmarks use TSC cycles; see to_ns()).
#pragma once

#include <cstdint>
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
  std::vector<double> batch_medians;
  double cv = 0;  ///< of the batch medians (fraction, not percent)
};

/// Nearest-rank percentile `p` (0 < p <= 100) of `sorted` (ascending, non-empty).
/// Throws std::invalid_argument for an empty input or p outside (0, 100].
double percentile_sorted(std::span<const double> sorted, double p);

/// Median of `values` (any order, non-empty; throws std::invalid_argument when empty).
double median(std::vector<double> values);

/// Summary of `samples` split into `batches` batches (batches >= 1). Empty samples -> all zeros.
SampleStats summarize(std::span<const std::uint64_t> samples, unsigned batches);

/// TSC cycles -> ns at `tsc_khz` (KVM_GET_TSC_KHZ): cycles * 1e6 / tsc_khz.
constexpr double cycles_to_ns(double cycles, std::uint64_t tsc_khz) {
  return tsc_khz == 0 ? 0.0 : cycles * 1e6 / static_cast<double>(tsc_khz);
}

/// Relative difference |a - b| / max(|a|, |b|) (0 when both are 0).
double relative_difference(double a, double b);

}  // namespace ipilab::measure
