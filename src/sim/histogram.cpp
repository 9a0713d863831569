#include "sim/histogram.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace ipilab::sim {

namespace {
constexpr int P = Histogram::kPrecisionBits;
constexpr std::uint64_t kSub = std::uint64_t{1} << P;  // 128 buckets per power of two
constexpr std::uint64_t kExact = kSub * 2;             // values below this are exact
}  // namespace

static_assert(Histogram::bucket_of(static_cast<std::uint64_t>(INT64_MAX)) / 128 + 1 == 57,
              "kMaxBlocks covers every int64 value");

void Histogram::negative_value() { throw std::invalid_argument("sim::Histogram::record: negative value"); }

std::uint64_t Histogram::bucket_low(std::size_t index) noexcept {
  if (index < kExact) return index;
  const std::uint64_t shift = index / kSub - 1;
  const std::uint64_t sub = index - shift * kSub;  // in [kSub, 2*kSub)
  return sub << shift;
}

std::uint64_t Histogram::bucket_high(std::size_t index) noexcept {
  if (index < kExact) return index;
  const std::uint64_t shift = index / kSub - 1;
  return bucket_low(index) + ((std::uint64_t{1} << shift) - 1);
}

void Histogram::record_n(std::int64_t v, std::uint64_t n) {
  if (v < 0) negative_value();
  if (n == 0) return;
  counter(bucket_of(static_cast<std::uint64_t>(v))) += n;
  if (count_ == 0) {
    min_ = max_ = v;
  } else {
    min_ = std::min(min_, v);
    max_ = std::max(max_, v);
  }
  if (moments_ == Moments::Kept) {
    // Welford / Chan update with n equal samples.
    const double x = static_cast<double>(v);
    const double nb = static_cast<double>(n);
    const double na = static_cast<double>(count_);
    const double delta = x - welford_mean_;
    const double total = na + nb;
    welford_mean_ += delta * nb / total;
    welford_m2_ += delta * delta * na * nb / total;
  }
  count_ += n;
  sum_ += static_cast<unsigned __int128>(v) * n;
}

void Histogram::record_batch(const std::int64_t* v, std::size_t n) {
  constexpr std::size_t kChunk = 64;
  std::size_t at[kChunk];
  while (n > 0) {
    const std::size_t m = n < kChunk ? n : kChunk;
    // Blocks first (add_block may move counts_), then every counter's line asked for, then the
    // updates in order (record()'s, so min, max, sum and Welford's moments are its values).
    for (std::size_t i = 0; i < m; ++i) {
      if (v[i] < 0) negative_value();
      at[i] = counter_index(bucket_of(static_cast<std::uint64_t>(v[i])));
    }
    std::uint64_t* c = counts_.data();
    for (std::size_t i = 0; i < m; ++i) __builtin_prefetch(c + at[i], 1);
    for (std::size_t i = 0; i < m; ++i) {
      ++c[at[i]];
      note(v[i]);
    }
    v += m;
    n -= m;
  }
}

std::size_t Histogram::add_block(std::size_t b) {
  // Room for twice the blocks held (at most all of them): amortised O(1) copying, and memory stays
  // within twice the range used.
  const std::size_t held = counts_.size() / kBlock;
  if (counts_.capacity() < (held + 1) * kBlock) counts_.reserve(std::min(std::max<std::size_t>(2 * held, 1), kMaxBlocks) * kBlock);
  counts_.resize(counts_.size() + kBlock, 0);
  slot_[b] = static_cast<std::uint8_t>(counts_.size() / kBlock);
  return slot_[b];
}

std::size_t Histogram::memory_bytes() const noexcept { return counts_.capacity() * sizeof(std::uint64_t); }

void Histogram::add(std::uint64_t v) {
  if (v > static_cast<std::uint64_t>(INT64_MAX)) throw std::invalid_argument("sim::Histogram::add: value above INT64_MAX");
  record_n(static_cast<std::int64_t>(v), 1);
}

void Histogram::merge(const Histogram& o) {
  if (o.count_ == 0) return;
  for (std::size_t b = 0; b < kMaxBlocks; ++b)
    if (const std::uint64_t* blk = o.block(b))
      for (std::size_t j = 0; j < kBlock; ++j)
        if (const std::uint64_t c = blk[j]) counter(b * kBlock + j) += c;
  if (count_ == 0) {
    min_ = o.min_;
    max_ = o.max_;
  } else {
    min_ = std::min(min_, o.min_);
    max_ = std::max(max_, o.max_);
  }
  if (o.moments_ == Moments::Skipped) moments_ = Moments::Skipped;
  if (moments_ == Moments::Kept) {
    const double na = static_cast<double>(count_), nb = static_cast<double>(o.count_);
    const double delta = o.welford_mean_ - welford_mean_;
    const double total = na + nb;
    welford_mean_ += delta * nb / total;
    welford_m2_ += o.welford_m2_ + delta * delta * na * nb / total;
  }
  count_ += o.count_;
  sum_ += o.sum_;
}

void Histogram::reset() {
  std::fill(counts_.begin(), counts_.end(), 0);
  count_ = 0;
  sum_ = 0;
  min_ = max_ = 0;
  welford_mean_ = welford_m2_ = 0;
}

double Histogram::mean() const noexcept {
  if (count_ == 0) return 0.0;
  return static_cast<double>(static_cast<long double>(sum_) / static_cast<long double>(count_));
}

double Histogram::stddev() const noexcept {
  if (moments_ == Moments::Skipped) return std::numeric_limits<double>::quiet_NaN();
  if (count_ < 2) return 0.0;
  return std::sqrt(welford_m2_ / static_cast<double>(count_));
}

double Histogram::percentile(double q) const noexcept {
  if (count_ == 0) return 0.0;
  q = std::clamp(q, 0.0, 100.0);
  auto rank = static_cast<std::uint64_t>(std::ceil(q / 100.0 * static_cast<double>(count_)));
  rank = std::clamp<std::uint64_t>(rank, 1, count_);
  std::uint64_t seen = 0;
  for (std::size_t b = 0; b < kMaxBlocks; ++b) {
    const std::uint64_t* blk = block(b);
    if (!blk) continue;  // a block never touched: all zero
    for (std::size_t j = 0; j < kBlock; ++j) {
      seen += blk[j];
      if (seen < rank) continue;
      const std::size_t i = b * kBlock + j;
      const double lo = static_cast<double>(bucket_low(i));
      const double hi = static_cast<double>(bucket_high(i));
      const double mid = lo + (hi - lo) / 2.0;
      return std::clamp(mid, static_cast<double>(min_), static_cast<double>(max_));
    }
  }
  return static_cast<double>(max_);
}

Summary Histogram::summary() const {
  Summary s;
  s.count = count_;
  s.mean = mean();
  s.stddev = stddev();
  s.min = static_cast<double>(min());
  s.max = static_cast<double>(max());
  s.p50 = percentile(50);
  s.p90 = percentile(90);
  s.p99 = percentile(99);
  s.p999 = percentile(99.9);
  return s;
}

std::int64_t Histogram::quantile(double p) const noexcept {
  if (count_ == 0) return 0;
  if (p >= 1.0) return max_;
  if (!(p > 0.0)) return min_;  // p <= 0 (and NaN)
  auto rank = static_cast<std::uint64_t>(std::ceil(p * static_cast<double>(count_)));
  rank = std::clamp<std::uint64_t>(rank, 1, count_);
  std::uint64_t seen = 0;
  for (std::size_t b = 0; b < kMaxBlocks; ++b) {
    const std::uint64_t* blk = block(b);
    if (!blk) continue;
    for (std::size_t j = 0; j < kBlock; ++j) {
      seen += blk[j];
      if (seen < rank) continue;
      const std::size_t i = b * kBlock + j;
      const std::uint64_t lo = bucket_low(i), hi = bucket_high(i);
      const auto mid = static_cast<std::int64_t>(lo + (hi - lo) / 2);
      return std::clamp(mid, min_, max_);
    }
  }
  return max_;
}

std::vector<Histogram::Bucket> Histogram::buckets() const {
  std::vector<Bucket> out;
  for (std::size_t b = 0; b < kMaxBlocks; ++b)
    if (const std::uint64_t* blk = block(b))
      for (std::size_t j = 0; j < kBlock; ++j)
        if (const std::uint64_t c = blk[j]) out.push_back({bucket_low(b * kBlock + j), bucket_high(b * kBlock + j), c});
  return out;
}

namespace {

// Buckets merged left to right: a bin grows while it stays within `r` of its low end in relative
// width (hi - lo <= r * max(lo, 1)); a bucket is never split.
std::vector<EmpiricalBin> merge_relative(const std::vector<Histogram::Bucket>& bs, double r) {
  std::vector<EmpiricalBin> out;
  for (const Histogram::Bucket& b : bs) {
    const double lo = static_cast<double>(b.low), hi = static_cast<double>(b.high) + 1.0;
    if (!out.empty() && hi - out.back().lo <= r * std::max(out.back().lo, 1.0)) {
      out.back().hi = hi;
      out.back().count += static_cast<double>(b.count);
    } else {
      out.push_back({lo, hi, static_cast<double>(b.count)});
    }
  }
  return out;
}

}  // namespace

std::vector<EmpiricalBin> Histogram::empirical_bins(std::size_t max_bins) const {
  const std::vector<Bucket> bs = buckets();
  if (max_bins == 0 || bs.size() <= max_bins) return merge_relative(bs, 0.0);
  // The smallest relative width that needs at most max_bins bins (bisection; r = max / min merges
  // everything into one bin). Bins of bounded relative width keep the bins' mean near mean():
  // unlike equal-count bins, a long tail is not one wide bin whose midpoint misstates its mass.
  double lo = 0.0, hi = static_cast<double>(bs.back().high) + 1.0;
  for (int i = 0; i < 60; ++i) {
    const double mid = (lo + hi) / 2;
    if (merge_relative(bs, mid).size() <= max_bins) hi = mid;
    else lo = mid;
  }
  return merge_relative(bs, hi);
}

}  // namespace ipilab::sim
