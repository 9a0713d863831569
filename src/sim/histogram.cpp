#include "sim/histogram.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <stdexcept>

namespace ipilab::sim {

namespace {
constexpr int P = Histogram::kPrecisionBits;
constexpr std::uint64_t kSub = std::uint64_t{1} << P;  // 128 buckets per power of two
constexpr std::uint64_t kExact = kSub * 2;             // values below this are exact
}  // namespace

std::size_t Histogram::bucket_of(std::uint64_t v) noexcept {
  if (v < kExact) return static_cast<std::size_t>(v);
  const int e = 63 - std::countl_zero(v);  // >= P + 1
  const int shift = e - P;
  return static_cast<std::size_t>(static_cast<std::uint64_t>(shift) * kSub + (v >> shift));
}

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
  if (v < 0) throw std::invalid_argument("sim::Histogram::record: negative value");
  if (n == 0) return;
  const std::size_t b = bucket_of(static_cast<std::uint64_t>(v));
  if (b >= counts_.size()) counts_.resize(b + 1 + kSub, 0);  // grow a little ahead
  counts_[b] += n;
  if (count_ == 0) {
    min_ = max_ = v;
  } else {
    min_ = std::min(min_, v);
    max_ = std::max(max_, v);
  }
  // Welford / Chan update with n equal samples.
  const double x = static_cast<double>(v);
  const double nb = static_cast<double>(n);
  const double na = static_cast<double>(count_);
  const double delta = x - welford_mean_;
  const double total = na + nb;
  welford_mean_ += delta * nb / total;
  welford_m2_ += delta * delta * na * nb / total;
  count_ += n;
  sum_ += static_cast<unsigned __int128>(v) * n;
}

void Histogram::merge(const Histogram& o) {
  if (o.count_ == 0) return;
  if (o.counts_.size() > counts_.size()) counts_.resize(o.counts_.size(), 0);
  for (std::size_t i = 0; i < o.counts_.size(); ++i) counts_[i] += o.counts_[i];
  if (count_ == 0) {
    min_ = o.min_;
    max_ = o.max_;
  } else {
    min_ = std::min(min_, o.min_);
    max_ = std::max(max_, o.max_);
  }
  const double na = static_cast<double>(count_), nb = static_cast<double>(o.count_);
  const double delta = o.welford_mean_ - welford_mean_;
  const double total = na + nb;
  welford_mean_ += delta * nb / total;
  welford_m2_ += o.welford_m2_ + delta * delta * na * nb / total;
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
  if (count_ < 2) return 0.0;
  return std::sqrt(welford_m2_ / static_cast<double>(count_));
}

double Histogram::percentile(double q) const noexcept {
  if (count_ == 0) return 0.0;
  q = std::clamp(q, 0.0, 100.0);
  auto rank = static_cast<std::uint64_t>(std::ceil(q / 100.0 * static_cast<double>(count_)));
  rank = std::clamp<std::uint64_t>(rank, 1, count_);
  std::uint64_t seen = 0;
  for (std::size_t i = 0; i < counts_.size(); ++i) {
    seen += counts_[i];
    if (seen >= rank) {
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

}  // namespace ipilab::sim
