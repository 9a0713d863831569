// ipilab/trace/histogram.h — bounded-memory latency distribution (nanoseconds) with documented error.
//
// Why a histogram and not exact order statistics: `ipilab trace` streams traces of any length and
// must keep bounded memory, so it cannot keep every latency. Layout (log-linear, like HdrHistogram):
//   - values 0..255 ns are counted exactly (one bucket per nanosecond);
//   - a value v >= 256 with most significant bit m falls in one of 128 equal buckets of the octave
//     [2^m, 2^(m+1)), each 2^(m-7) ns wide, i.e. at most 1/128 of the value.
// A percentile is the nearest-rank order statistic (rank = ceil(p * count), p in (0, 1]) reported
// as the midpoint of the bucket holding that rank, clamped to [min, max]. So percentiles below 256 ns
// are exact and others are within 1/256 (0.4 %) of the exact order statistic. min, max, count and
// mean are exact. Memory: 256 counters + 128 per octave actually used (a few KiB per histogram).
#pragma once

#include <array>
#include <cstdint>
#include <utility>
#include <vector>

namespace ipilab::trace {

class LatencyHistogram {
 public:
  /// Adds one latency in ns.
  void add(std::uint64_t ns);
  /// Adds every sample of `other`.
  void merge(const LatencyHistogram& other);

  std::uint64_t count() const { return count_; }
  std::uint64_t min() const { return count_ ? min_ : 0; }
  std::uint64_t max() const { return max_; }
  /// Exact arithmetic mean in ns (0 when empty).
  double mean() const { return count_ ? static_cast<double>(sum_) / static_cast<double>(count_) : 0.0; }
  /// Nearest-rank percentile, `p` in (0, 1] (0.5 = median); see the header comment for the error.
  /// Returns 0 when empty. p >= 1 returns the exact max.
  std::uint64_t percentile(double p) const;

  /// Non-empty buckets as (lowest value in bucket, highest value in bucket, count), ascending.
  struct Bucket {
    std::uint64_t low, high, count;
  };
  std::vector<Bucket> buckets() const;

 private:
  static constexpr int kExact = 256;
  static constexpr int kSub = 128;
  static constexpr int kOctaves = 57;  // msb 8..63 -> octave index 1..56
  std::array<std::uint64_t, kExact> exact_{};
  std::array<std::vector<std::uint64_t>, kOctaves> octaves_{};  // each empty or kSub counters
  std::uint64_t count_ = 0;
  std::uint64_t min_ = 0;
  std::uint64_t max_ = 0;
  unsigned __int128 sum_ = 0;
};

}  // namespace ipilab::trace
