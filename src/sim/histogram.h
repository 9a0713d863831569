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
// Memory: counters in blocks of 128 (1 KiB), one block per power of two of range that holds a value
// (two for the exact values 0..255), allocated when first touched: an empty histogram holds none,
// a latency histogram a few KiB, the whole int64 range at most 57 blocks; never per sample. The
// blocks lie end to end in one array (in the order first touched; its capacity at most doubles the
// blocks held, never beyond 57) and a 57-byte table inside the
// object says where each is, so recording a value touches the object and one counter (a simulator
// keeps hundreds of resource histograms: one dependent load fewer per sample than a table of
// separately allocated blocks).
// Percentiles use the nearest-rank definition: the q-th percentile is the smallest recorded value
// v such that at least ceil(q/100 * count) samples are <= v.
//
// One histogram for the simulator and the trace reader. What a reader of real traces needs is here
// too, with the meaning trace::LatencyHistogram gave it (same bucket layout, so the same
// resolution): add() takes unsigned values (ns), quantile(p) is the nearest-rank quantile for a
// fraction p as an integer (the bucket's midpoint rounded down, clamped to [min, max]; p >= 1 the
// exact max, p <= 0 the exact min), buckets() lists the non-empty buckets for plots and CSV, and
// empirical_bins() turns them into a profile's `bins` (profiles/README.md).
#pragma once

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "sim/rng.h"
#include "sim/time.h"

namespace ipilab::sim {

/// Figures of one metric, in the unit of the recorded values (e.g. ps; convert for reporting).
struct Summary {
  std::uint64_t count = 0;
  double mean = 0, stddev = 0;
  double min = 0, max = 0;
  double p50 = 0, p90 = 0, p99 = 0, p999 = 0;
};

/// What a histogram keeps beside its buckets, count, sum and extremes: Kept (the default) also keeps
/// the running standard deviation (Welford's update: a division per sample); Skipped does not, and
/// stddev() is then NaN. Skipped is for histograms that are only asked for percentiles (a resource's
/// queueing delays, WaitLog), where that division would be the one long-latency step of recording.
enum class Moments : std::uint8_t { Kept, Skipped };

class Histogram {
 public:
  static constexpr int kPrecisionBits = 7;

  Histogram() = default;
  explicit Histogram(Moments moments) : moments_(moments) {}
  /// Bound on the relative error of percentile() against the true sample at that rank.
  static constexpr double kMaxRelativeError = 1.0 / 256.0;

  /// Records one value (>= 0; a negative value throws std::invalid_argument). Same result as
  /// record_n(v, 1), bit for bit (the n == 1 case of its update, inline: the simulator's hot path).
  void record(std::int64_t v) {
    if (v < 0) negative_value();
    ++counter(bucket_of(static_cast<std::uint64_t>(v)));
    note(v);
  }
  void record(Ps v) { record(v.v); }
  /// record(v[0]), ..., record(v[n-1]), bit for bit, with the counters' cache lines fetched for the
  /// whole batch before any is updated: a simulator's hundreds of resource histograms do not fit in
  /// the cache, and one miss at a time per sample was a fifth of a 256-vCPU storm's time.
  void record_batch(const std::int64_t* v, std::size_t n);
  /// Records `n` copies of `v`.
  void record_n(std::int64_t v, std::uint64_t n);
  /// Records one unsigned value (the trace reader's latencies in ns); above INT64_MAX throws
  /// std::invalid_argument.
  void add(std::uint64_t v);

  /// Adds every sample of `other` (as if recorded here). If either skips its moments, so does the result.
  void merge(const Histogram& other);
  /// Forgets all samples (keeps the allocated buckets).
  void reset();

  std::uint64_t count() const noexcept { return count_; }
  /// Exact extremes and mean; 0 when empty.
  std::int64_t min() const noexcept { return count_ ? min_ : 0; }
  std::int64_t max() const noexcept { return count_ ? max_ : 0; }
  double mean() const noexcept;
  /// Population standard deviation; 0 when fewer than 2 samples; NaN if moments are Skipped.
  double stddev() const noexcept;
  /// Nearest-rank percentile, q in [0, 100] (clamped); 0 when empty. Error: see kMaxRelativeError.
  double percentile(double q) const noexcept;
  /// count, mean, stddev, min, max, p50, p90, p99, p99.9.
  Summary summary() const;

  /// Nearest-rank quantile for a fraction p (0.5 = median) as an integer: p <= 0 -> min(), p >= 1
  /// -> max() (both exact); else the bucket holding rank ceil(p * count), reported as its midpoint
  /// rounded down, low + (high - low) / 2, clamped to [min(), max()] (exact below 256, else within
  /// kMaxRelativeError). 0 when empty.
  std::int64_t quantile(double p) const noexcept;

  /// A non-empty bucket: the values [low, high] (inclusive; low == high below 256) and how many.
  struct Bucket {
    std::uint64_t low, high, count;
  };
  /// The non-empty buckets, ascending (for CDF plots and CSV): sum of counts == count().
  std::vector<Bucket> buckets() const;
  /// The buckets as an empirical distribution's bins [lo, hi, count] with hi = high + 1 (a bucket
  /// holds whole values low..high, i.e. the continuous range [low, high + 1)), in the recorded unit.
  /// max_bins > 0 merges neighbouring buckets (never splitting one) into at most that many bins of
  /// equal relative width, the smallest that fits: fine where the values are, never one wide tail
  /// bin. The bins' mean (midpoints weighted by counts) then stays close to mean(); a profile
  /// requires its `value` within 1 % of it (tests/sim/histogram_trace_test.cpp: 20 bins put it
  /// 0.3 % off for a lognormal of 30 % spread, 40 bins 0.5 % off for one of 100 %).
  std::vector<EmpiricalBin> empirical_bins(std::size_t max_bins = 0) const;

  /// Bytes held by the counters and their block table (to check that memory does not grow with the
  /// sample count).
  std::size_t memory_bytes() const noexcept;

  /// The bucket index of a value, and the [low, high] range of values a bucket holds (exposed for
  /// tests).
  static constexpr std::size_t bucket_of(std::uint64_t v) noexcept {
    constexpr std::uint64_t kExact = std::uint64_t{2} << kPrecisionBits;  // values below are exact
    if (v < kExact) return static_cast<std::size_t>(v);
    const int shift = 63 - std::countl_zero(v) - kPrecisionBits;  // >= 1
    return static_cast<std::size_t>((static_cast<std::uint64_t>(shift) << kPrecisionBits) + (v >> shift));
  }
  static std::uint64_t bucket_low(std::size_t index) noexcept;
  static std::uint64_t bucket_high(std::size_t index) noexcept;

 private:
  static constexpr std::size_t kBlock = 128;     // counters per block: bucket index / kBlock
  static constexpr std::size_t kMaxBlocks = 57;  // bucket_of(INT64_MAX) / kBlock + 1
  [[noreturn]] static void negative_value();
  /// Everything record(v) updates but the bucket's counter: extremes, Welford's moments, count, sum.
  void note(std::int64_t v) {
    if (count_ == 0) {
      min_ = max_ = v;
    } else {
      if (v < min_) min_ = v;
      if (v > max_) max_ = v;
    }
    if (moments_ == Moments::Kept) {
      // record_n's Welford / Chan update with nb = 1: x * 1.0 == x exactly, so these are its values.
      const double x = static_cast<double>(v);
      const double na = static_cast<double>(count_);
      const double delta = x - welford_mean_;
      const double total = na + 1.0;
      welford_mean_ += delta / total;
      welford_m2_ += delta * delta * na / total;
    }
    ++count_;
    sum_ += static_cast<unsigned __int128>(static_cast<std::uint64_t>(v));
  }
  std::size_t counter_index(std::size_t bucket) {  // into counts_; allocates its block when first touched
    const std::size_t b = bucket / kBlock;
    const std::size_t s = slot_[b] ? slot_[b] : add_block(b);
    return (s - 1) * kBlock + bucket % kBlock;
  }
  std::uint64_t& counter(std::size_t bucket) { return counts_[counter_index(bucket)]; }
  std::size_t add_block(std::size_t b);          // returns the new slot_[b]
  /// Block b's counters, or nullptr when it was never touched.
  const std::uint64_t* block(std::size_t b) const noexcept {
    return b < kMaxBlocks && slot_[b] ? counts_.data() + (slot_[b] - 1u) * kBlock : nullptr;
  }
  std::vector<std::uint64_t> counts_;            // the touched blocks end to end, in the order first touched
  std::array<std::uint8_t, kMaxBlocks> slot_{};  // block -> 1 + its position in counts_; 0: never touched
  std::uint64_t count_ = 0;
  unsigned __int128 sum_ = 0;
  std::int64_t min_ = 0, max_ = 0;
  double welford_mean_ = 0, welford_m2_ = 0;
  Moments moments_ = Moments::Kept;
};

}  // namespace ipilab::sim
