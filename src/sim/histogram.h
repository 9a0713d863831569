// ipilab/sim/histogram.h — streaming latency statistics in memory independent of the sample count.
//
// Layout (log-linear buckets in the manner of HdrHistogram, written here): with P = 7 precision
// bits, values 0..255 each have an exact bucket; a value v >= 256 with highest set bit e falls in a
// bucket of width 2^(e-7) starting at a multiple of that width, so each power-of-two range
// [2^e, 2^(e+1)) is cut into 128 equal buckets. A bucket is reported by its midpoint, hence:
//
//   percentile error: |reported - true sample| <= kMaxRelativeError * true  (1/256 = 0.39 %),
//   exact for values < 256. count, sum/mean, min and max are exact; stddev is Welford's (double).
//
// Memory: at most 7296 uint64 counters (57 KiB) for the whole int64 range, allocated up to the
// highest bucket touched (about 2.3 KiB per power of two of range used), never per sample.
// Percentiles use the nearest-rank definition: the q-th percentile is the smallest recorded value
// v such that at least ceil(q/100 * count) samples are <= v.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "sim/time.h"

namespace ipilab::sim {

/// Figures of one metric, in the unit of the recorded values (e.g. ps; convert for reporting).
struct Summary {
  std::uint64_t count = 0;
  double mean = 0, stddev = 0;
  double min = 0, max = 0;
  double p50 = 0, p90 = 0, p99 = 0, p999 = 0;
};

class Histogram {
 public:
  static constexpr int kPrecisionBits = 7;
  /// Bound on the relative error of percentile() against the true sample at that rank.
  static constexpr double kMaxRelativeError = 1.0 / 256.0;

  /// Records one value (>= 0; a negative value throws std::invalid_argument).
  void record(std::int64_t v) { record_n(v, 1); }
  void record(Ps v) { record_n(v.v, 1); }
  /// Records `n` copies of `v`.
  void record_n(std::int64_t v, std::uint64_t n);

  /// Adds every sample of `other` (as if recorded here).
  void merge(const Histogram& other);
  /// Forgets all samples (keeps the allocated buckets).
  void reset();

  std::uint64_t count() const noexcept { return count_; }
  /// Exact extremes and mean; 0 when empty.
  std::int64_t min() const noexcept { return count_ ? min_ : 0; }
  std::int64_t max() const noexcept { return count_ ? max_ : 0; }
  double mean() const noexcept;
  /// Population standard deviation; 0 when fewer than 2 samples.
  double stddev() const noexcept;
  /// Nearest-rank percentile, q in [0, 100] (clamped); 0 when empty. Error: see kMaxRelativeError.
  double percentile(double q) const noexcept;
  /// count, mean, stddev, min, max, p50, p90, p99, p99.9.
  Summary summary() const;

  /// Bytes held by the bucket array (to check that memory does not grow with the sample count).
  std::size_t memory_bytes() const noexcept { return counts_.capacity() * sizeof(std::uint64_t); }

  /// The bucket index of a value, and the [low, high] range of values a bucket holds (exposed for
  /// tests).
  static std::size_t bucket_of(std::uint64_t v) noexcept;
  static std::uint64_t bucket_low(std::size_t index) noexcept;
  static std::uint64_t bucket_high(std::size_t index) noexcept;

 private:
  std::vector<std::uint64_t> counts_;
  std::uint64_t count_ = 0;
  unsigned __int128 sum_ = 0;
  std::int64_t min_ = 0, max_ = 0;
  double welford_mean_ = 0, welford_m2_ = 0;
};

}  // namespace ipilab::sim
