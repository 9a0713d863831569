#include "measure/stats.h"

#include <algorithm>
#include <cmath>
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

SampleStats summarize(std::span<const std::uint64_t> samples, unsigned batches) {
  if (batches == 0) throw std::invalid_argument("batches must be >= 1");
  SampleStats s;
  s.count = samples.size();
  if (samples.empty()) return s;
  std::vector<double> v(samples.begin(), samples.end());
  std::vector<double> sorted = v;
  std::sort(sorted.begin(), sorted.end());
  s.median = median(sorted);
  s.p99 = percentile_sorted(sorted, 99);
  s.p10 = percentile_sorted(sorted, 10);
  s.p90 = percentile_sorted(sorted, 90);
  s.mean = std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
  double var_all = 0;
  for (double x : v) var_all += (x - s.mean) * (x - s.mean);
  s.stddev = std::sqrt(var_all / static_cast<double>(v.size()));
  s.min = sorted.front();
  s.max = sorted.back();
  const std::size_t per = v.size() / batches;
  if (per > 0) {
    for (unsigned b = 0; b < batches; ++b)
      s.batch_medians.push_back(median(std::vector<double>(v.begin() + static_cast<std::ptrdiff_t>(b * per),
                                                           v.begin() + static_cast<std::ptrdiff_t>((b + 1) * per))));
  }
  if (s.batch_medians.size() >= 2) {
    const double m = std::accumulate(s.batch_medians.begin(), s.batch_medians.end(), 0.0) /
                     static_cast<double>(s.batch_medians.size());
    double var = 0;
    for (double x : s.batch_medians) var += (x - m) * (x - m);
    var /= static_cast<double>(s.batch_medians.size());
    s.cv = m > 0 ? std::sqrt(var) / m : 0.0;
  }
  return s;
}

double relative_difference(double a, double b) {
  const double d = std::max(std::fabs(a), std::fabs(b));
  return d == 0 ? 0.0 : std::fabs(a - b) / d;
}

}  // namespace ipilab::measure
