#include "measure/stats.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <stdexcept>

namespace ipilab::measure {

double percentile_sorted(std::span<const double> sorted, double p) {
  if (sorted.empty()) throw std::invalid_argument("percentile of no samples");
  if (!(p > 0 && p <= 100)) throw std::invalid_argument("percentile must be in (0, 100]");
  const auto n = static_cast<double>(sorted.size());
  auto rank = static_cast<std::size_t>(std::ceil(p / 100.0 * n));
  if (rank < 1) rank = 1;
  return sorted[std::min(rank, sorted.size()) - 1];
}

double median(std::vector<double> v) {
  if (v.empty()) throw std::invalid_argument("median of no samples");
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
}

std::optional<SampleStats> summarize(std::span<const double> samples) {
  if (samples.empty()) return std::nullopt;
  SampleStats s;
  s.count = samples.size();
  std::vector<double> sorted(samples.begin(), samples.end());
  std::sort(sorted.begin(), sorted.end());
  s.median = median(sorted);
  s.p99 = percentile_sorted(sorted, 99);
  s.p10 = percentile_sorted(sorted, 10);
  s.p90 = percentile_sorted(sorted, 90);
  s.mean = std::accumulate(sorted.begin(), sorted.end(), 0.0) / static_cast<double>(sorted.size());
  double var = 0;
  for (double x : sorted) var += (x - s.mean) * (x - s.mean);
  s.stddev = std::sqrt(var / static_cast<double>(sorted.size()));
  s.min = sorted.front();
  s.max = sorted.back();
  return s;
}

std::vector<Bin> log_bins(std::span<const double> values, unsigned per_decade) {
  std::vector<Bin> out;
  if (values.empty() || per_decade == 0) return out;
  const double pd = static_cast<double>(per_decade);
  auto edge = [&](long k) { return std::pow(10.0, static_cast<double>(k) / pd); };
  std::map<long, std::uint64_t> counts;  // grid index k: [edge(k), edge(k + 1))
  std::uint64_t nonpositive = 0;
  long kmin = std::numeric_limits<long>::max();
  for (double v : values) {
    if (!(v > 0)) {
      ++nonpositive;
      continue;
    }
    long k = static_cast<long>(std::floor(std::log10(v) * pd));
    // Guard the floating-point edge: v must satisfy edge(k) <= v < edge(k + 1).
    if (edge(k) > v) --k;
    if (edge(k + 1) <= v) ++k;
    ++counts[k];
    kmin = std::min(kmin, k);
  }
  if (nonpositive > 0) {
    const double top = counts.empty() ? 1e-3 : edge(kmin);
    out.push_back({0.0, top, nonpositive});
  }
  for (const auto& [k, c] : counts) out.push_back({edge(k), edge(k + 1), c});
  return out;
}

double bins_mean(std::span<const Bin> bins) {
  double sum = 0, n = 0;
  for (const Bin& b : bins) {
    sum += (b.lo + b.hi) / 2.0 * static_cast<double>(b.count);
    n += static_cast<double>(b.count);
  }
  return n > 0 ? sum / n : 0.0;
}

double relative_difference(double a, double b) {
  const double d = std::max(std::fabs(a), std::fabs(b));
  return d == 0 ? 0.0 : std::fabs(a - b) / d;
}

}  // namespace ipilab::measure
