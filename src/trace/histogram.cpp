#include "trace/histogram.h"

#include <algorithm>
#include <bit>
#include <cmath>

namespace ipilab::trace {

void LatencyHistogram::add(std::uint64_t ns) {
  if (count_ == 0 || ns < min_) min_ = ns;
  if (ns > max_) max_ = ns;
  ++count_;
  sum_ += ns;
  if (ns < kExact) {
    ++exact_[ns];
    return;
  }
  const int msb = 63 - std::countl_zero(ns);
  const int shift = msb - 7;
  auto& oct = octaves_[static_cast<std::size_t>(shift)];
  if (oct.empty()) oct.assign(kSub, 0);
  ++oct[static_cast<std::size_t>((ns >> shift) - kSub)];
}

void LatencyHistogram::merge(const LatencyHistogram& other) {
  if (other.count_ == 0) return;
  if (count_ == 0 || other.min_ < min_) min_ = other.min_;
  max_ = std::max(max_, other.max_);
  count_ += other.count_;
  sum_ += other.sum_;
  for (int i = 0; i < kExact; ++i) exact_[static_cast<std::size_t>(i)] += other.exact_[static_cast<std::size_t>(i)];
  for (std::size_t o = 0; o < octaves_.size(); ++o) {
    if (other.octaves_[o].empty()) continue;
    if (octaves_[o].empty()) octaves_[o].assign(kSub, 0);
    for (int i = 0; i < kSub; ++i) octaves_[o][static_cast<std::size_t>(i)] += other.octaves_[o][static_cast<std::size_t>(i)];
  }
}

std::vector<LatencyHistogram::Bucket> LatencyHistogram::buckets() const {
  std::vector<Bucket> out;
  for (int i = 0; i < kExact; ++i)
    if (exact_[static_cast<std::size_t>(i)])
      out.push_back({static_cast<std::uint64_t>(i), static_cast<std::uint64_t>(i), exact_[static_cast<std::size_t>(i)]});
  for (std::size_t shift = 1; shift < octaves_.size(); ++shift) {
    const auto& oct = octaves_[shift];
    if (oct.empty()) continue;
    for (int i = 0; i < kSub; ++i) {
      const std::uint64_t c = oct[static_cast<std::size_t>(i)];
      if (!c) continue;
      const std::uint64_t low = static_cast<std::uint64_t>(kSub + i) << shift;
      out.push_back({low, low + ((std::uint64_t{1} << shift) - 1), c});
    }
  }
  return out;
}

std::uint64_t LatencyHistogram::percentile(double p) const {
  if (count_ == 0) return 0;
  if (p >= 1.0) return max_;
  if (p <= 0.0) return min_;
  auto rank = static_cast<std::uint64_t>(std::ceil(p * static_cast<double>(count_)));
  rank = std::clamp<std::uint64_t>(rank, 1, count_);
  std::uint64_t seen = 0;
  for (int i = 0; i < kExact; ++i) {
    seen += exact_[static_cast<std::size_t>(i)];
    if (seen >= rank) return static_cast<std::uint64_t>(i);
  }
  for (std::size_t shift = 1; shift < octaves_.size(); ++shift) {
    const auto& oct = octaves_[shift];
    if (oct.empty()) continue;
    for (int i = 0; i < kSub; ++i) {
      seen += oct[static_cast<std::size_t>(i)];
      if (seen >= rank) {
        const std::uint64_t low = static_cast<std::uint64_t>(kSub + i) << shift;
        const std::uint64_t mid = low + (((std::uint64_t{1} << shift) - 1) / 2);
        return std::clamp(mid, min_, max_);
      }
    }
  }
  return max_;
}

}  // namespace ipilab::trace
