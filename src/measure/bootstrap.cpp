#include "measure/bootstrap.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>

namespace ipilab::measure {

namespace {

double median_in_place(std::vector<double>& v) {
  const std::size_t n = v.size();
  const auto mid = v.begin() + static_cast<std::ptrdiff_t>(n / 2);
  std::nth_element(v.begin(), mid, v.end());
  const double hi = *mid;
  if (n % 2) return hi;
  return (*std::max_element(v.begin(), mid) + hi) / 2.0;
}

// Quantile q in [0, 1] of sorted values, linear between order statistics (type 7 of Hyndman & Fan).
double quantile_sorted(const std::vector<double>& s, double q) {
  const double pos = q * static_cast<double>(s.size() - 1);
  const auto i = static_cast<std::size_t>(std::floor(pos));
  const std::size_t j = std::min(i + 1, s.size() - 1);
  return s[i] + (pos - static_cast<double>(i)) * (s[j] - s[i]);
}

Interval percentile_interval(std::vector<double> stats, double level) {
  std::sort(stats.begin(), stats.end());
  return {quantile_sorted(stats, (1 - level) / 2), quantile_sorted(stats, (1 + level) / 2)};
}

// Uniform index in [0, n): the high 64 bits of a 128-bit product (no modulo bias worth the name, and the
// same on every standard library, unlike std::uniform_int_distribution).
std::size_t draw(std::mt19937_64& g, std::size_t n) {
  return static_cast<std::size_t>((static_cast<unsigned __int128>(g()) * n) >> 64);
}

void check(const BootstrapOptions& o) {
  if (o.resamples == 0) throw std::invalid_argument("bootstrap needs at least one resample");
  if (!(o.level > 0 && o.level < 1)) throw std::invalid_argument("bootstrap level must be in (0, 1)");
}

}  // namespace

std::optional<double> pooled_median(const Rounds& rounds) {
  std::vector<double> all;
  for (const auto& r : rounds) all.insert(all.end(), r.begin(), r.end());
  if (all.empty()) return std::nullopt;
  return median_in_place(all);
}

std::optional<Interval> bootstrap_median(const Rounds& rounds, const BootstrapOptions& o) {
  check(o);
  std::vector<const std::vector<double>*> nonempty;
  for (const auto& r : rounds)
    if (!r.empty()) nonempty.push_back(&r);
  if (nonempty.empty()) return std::nullopt;
  std::mt19937_64 g(o.seed);
  std::vector<double> stats, pool;
  stats.reserve(o.resamples);
  for (unsigned b = 0; b < o.resamples; ++b) {
    pool.clear();
    for (std::size_t k = 0; k < nonempty.size(); ++k) {
      const auto* r = nonempty[draw(g, nonempty.size())];
      pool.insert(pool.end(), r->begin(), r->end());
    }
    stats.push_back(median_in_place(pool));
  }
  return percentile_interval(std::move(stats), o.level);
}

std::optional<RatioEstimate> bootstrap_ratio(const Rounds& a, const Rounds& b, const BootstrapOptions& o) {
  check(o);
  std::vector<std::size_t> both;
  for (std::size_t i = 0; i < std::min(a.size(), b.size()); ++i)
    if (!a[i].empty() && !b[i].empty()) both.push_back(i);
  if (both.empty()) return std::nullopt;
  auto ratio_of = [&](const std::vector<std::size_t>& idx, std::vector<double>& pa, std::vector<double>& pb)
      -> std::optional<double> {
    pa.clear();
    pb.clear();
    for (std::size_t i : idx) {
      pa.insert(pa.end(), a[i].begin(), a[i].end());
      pb.insert(pb.end(), b[i].begin(), b[i].end());
    }
    const double mb = median_in_place(pb);
    if (mb == 0) return std::nullopt;
    return median_in_place(pa) / mb;
  };
  std::vector<double> pa, pb;
  const std::optional<double> point = ratio_of(both, pa, pb);
  if (!point) return std::nullopt;
  std::mt19937_64 g(o.seed);
  std::vector<double> stats;
  stats.reserve(o.resamples);
  std::vector<std::size_t> pick(both.size());
  for (unsigned r = 0; r < o.resamples; ++r) {
    for (auto& p : pick) p = both[draw(g, both.size())];
    if (const auto v = ratio_of(pick, pa, pb)) stats.push_back(*v);
  }
  if (stats.empty()) return std::nullopt;
  RatioEstimate e;
  e.value = *point;
  e.ci = percentile_interval(std::move(stats), o.level);
  e.rounds = static_cast<unsigned>(both.size());
  return e;
}

}  // namespace ipilab::measure
