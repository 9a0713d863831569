#include "evidence/stats.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

#include "sim/rng.h"

namespace ipilab::evidence {

std::vector<std::vector<double>> latin_hypercube(std::size_t n, std::size_t k, std::uint64_t seed) {
  if (n == 0) throw std::invalid_argument("latin_hypercube: n must be >= 1");
  // A stream of its own: the simulation's seeds are not reused for the design.
  sim::Rng rng(seed ^ 0x9e3779b97f4a7c15ULL);
  std::vector<std::vector<double>> out(n, std::vector<double>(k));
  std::vector<std::size_t> perm(n);
  for (std::size_t j = 0; j < k; ++j) {
    std::iota(perm.begin(), perm.end(), std::size_t{0});
    for (std::size_t i = n; i > 1; --i) std::swap(perm[i - 1], perm[rng.uniform_below(i)]);  // Fisher-Yates
    for (std::size_t d = 0; d < n; ++d) out[d][j] = (static_cast<double>(perm[d]) + rng.uniform01()) / static_cast<double>(n);
  }
  return out;
}

double quantile(std::span<const double> values, double q) {
  if (values.empty()) throw std::invalid_argument("quantile of no values");
  std::vector<double> v(values.begin(), values.end());
  std::sort(v.begin(), v.end());
  const double h = (static_cast<double>(v.size()) - 1.0) * std::clamp(q, 0.0, 1.0);
  const std::size_t lo = static_cast<std::size_t>(std::floor(h));
  const std::size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (h - static_cast<double>(lo)) * (v[hi] - v[lo]);
}

Interval central_interval(std::span<const double> values, double level) {
  const double tail = (1.0 - level) / 2.0;
  return Interval{quantile(values, tail), quantile(values, 1.0 - tail)};
}

double mean(std::span<const double> values) {
  if (values.empty()) return 0;
  return std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
}

double variance(std::span<const double> values) {
  if (values.empty()) return 0;
  const double m = mean(values);
  double s = 0;
  for (double v : values) s += (v - m) * (v - m);
  return s / static_cast<double>(values.size());
}

double first_order_index(std::span<const double> x, std::span<const double> y) {
  if (x.size() != y.size() || x.size() < 2) throw std::invalid_argument("first_order_index: x and y need the same size >= 2");
  const double vy = variance(y);
  if (!(vy > 0)) return 0;
  const std::size_t n = x.size();
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return x[a] < x[b]; });
  const std::size_t groups = std::max<std::size_t>(1, static_cast<std::size_t>(std::llround(std::sqrt(static_cast<double>(n)))));
  const double my = mean(y);
  double between = 0;
  for (std::size_t g = 0; g < groups; ++g) {
    const std::size_t b = g * n / groups, e = (g + 1) * n / groups;
    if (e <= b) continue;
    double s = 0;
    for (std::size_t i = b; i < e; ++i) s += y[order[i]];
    const double gm = s / static_cast<double>(e - b);
    between += static_cast<double>(e - b) * (gm - my) * (gm - my);
  }
  // Without any effect of x the group means still scatter: E[eta^2] = (G - 1) / (n - 1) for
  // independent y. Remove that floor (and rescale) so an input without effect estimates about 0.
  const double eta2 = between / static_cast<double>(n) / vy;
  const double floor = static_cast<double>(groups - 1) / static_cast<double>(n - 1);
  return floor < 1 ? std::clamp((eta2 - floor) / (1 - floor), 0.0, 1.0) : 0.0;
}

std::vector<double> additive_shares(std::span<const double> swings) {
  double total = 0;
  for (double s : swings) total += s * s;
  std::vector<double> out;
  out.reserve(swings.size());
  for (double s : swings) out.push_back(total > 0 ? s * s / total : 0.0);
  return out;
}

}  // namespace ipilab::evidence
