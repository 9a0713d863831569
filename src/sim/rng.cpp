#include "sim/rng.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace ipilab::sim {

namespace {
inline std::uint64_t splitmix64(std::uint64_t& x) noexcept {
  std::uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}
}  // namespace

Rng::Rng(std::uint64_t seed) {
  for (auto& w : s_) w = splitmix64(seed);
}

std::uint64_t Rng::uniform_below(std::uint64_t n) noexcept {
  unsigned __int128 m = static_cast<unsigned __int128>(next_u64()) * n;
  auto low = static_cast<std::uint64_t>(m);
  if (low < n) {
    const std::uint64_t threshold = (0 - n) % n;
    while (low < threshold) {
      m = static_cast<unsigned __int128>(next_u64()) * n;
      low = static_cast<std::uint64_t>(m);
    }
  }
  return static_cast<std::uint64_t>(m >> 64);
}

double Rng::normal() noexcept {
  if (has_spare_) {
    has_spare_ = false;
    return spare_;
  }
  double u, v, q;
  do {
    u = 2.0 * uniform01() - 1.0;
    v = 2.0 * uniform01() - 1.0;
    q = u * u + v * v;
  } while (q >= 1.0 || q == 0.0);
  const double f = std::sqrt(-2.0 * std::log(q) / q);
  spare_ = v * f;
  has_spare_ = true;
  return u * f;
}

double Rng::with_spread(double mean, double cv, SpreadShape shape) noexcept {
  if (cv <= 0.0 || mean <= 0.0) return mean;
  if (shape == SpreadShape::Lognormal) {
    const double s2 = std::log1p(cv * cv);
    const double mu = std::log(mean) - s2 / 2.0;
    return std::exp(mu + std::sqrt(s2) * normal());
  }
  const double x = mean + cv * mean * normal();
  const double floor = mean * 1e-3;
  return x < floor ? floor : x;
}

Ps Rng::jitter(Ps mean, double cv, SpreadShape shape) noexcept {
  return Distribution(mean, cv, shape).sample(*this);
}

std::string_view dist_name(DistKind k) noexcept {
  switch (k) {
    case DistKind::Fixed: return "fixed";
    case DistKind::Lognormal: return "lognormal";
    case DistKind::Normal: return "normal";
    case DistKind::Exponential: return "exponential";
    case DistKind::Empirical: return "empirical";
  }
  return "?";
}

bool parse_dist(std::string_view s, DistKind& out) noexcept {
  for (DistKind k : {DistKind::Fixed, DistKind::Lognormal, DistKind::Normal, DistKind::Exponential, DistKind::Empirical})
    if (s == dist_name(k)) {
      out = k;
      return true;
    }
  return false;
}

struct Distribution::Tables {
  std::vector<double> quantiles;  // lognormal: index i = quantile at i / kSteps
  std::vector<EmpiricalBin> bins; // empirical, as given
  std::vector<double> prob;       // empirical alias table: keep column i with probability prob[i] ...
  std::vector<std::uint32_t> alias;  // ... else take bin alias[i]
};

Distribution::Distribution(Ps mean, double cv, SpreadShape shape) : mean_(mean) {
  if (!(cv > 0.0)) return;  // Fixed
  kind_ = shape == SpreadShape::NormalClipped ? DistKind::Normal : DistKind::Lognormal;
  cv_ = cv;
  if (mean_.v <= 0) return;
  const double s2 = std::log1p(cv_ * cv_);
  sigma_ = std::sqrt(s2);
  mu_ = std::log(static_cast<double>(mean_.v)) - s2 / 2.0;
  if (kind_ == DistKind::Lognormal) {
    auto t = std::make_shared<Tables>();
    t->quantiles.assign(kSteps, 0.0);
    for (int i = 1; i < kSteps; ++i)
      t->quantiles[static_cast<std::size_t>(i)] = std::exp(mu_ + sigma_ * normal_quantile(static_cast<double>(i) / kSteps));
    tables_ = std::move(t);
    quantiles_ = tables_->quantiles.data();
  }
}

Distribution Distribution::exponential(Ps mean) {
  Distribution d(mean, 0.0);
  d.kind_ = DistKind::Exponential;
  d.cv_ = 1.0;
  return d;
}

Distribution Distribution::empirical(Ps mean, std::vector<EmpiricalBin> bins) {
  if (bins.empty()) throw std::invalid_argument("sim::Distribution::empirical: no bins");
  double total = 0, m1 = 0, m2 = 0;
  for (std::size_t i = 0; i < bins.size(); ++i) {
    const EmpiricalBin& b = bins[i];
    if (!(b.lo >= 0) || !(b.hi > b.lo) || !std::isfinite(b.hi) || !(b.count >= 0) || !std::isfinite(b.count))
      throw std::invalid_argument("sim::Distribution::empirical: a bin needs 0 <= lo < hi and count >= 0");
    if (i > 0 && b.lo < bins[i - 1].hi)
      throw std::invalid_argument("sim::Distribution::empirical: bins must be ascending and must not overlap");
    total += b.count;
    m1 += b.count * (b.lo + b.hi) / 2.0;                          // E[X] of uniform [lo, hi)
    m2 += b.count * (b.lo * b.lo + b.lo * b.hi + b.hi * b.hi) / 3.0;  // E[X^2]
  }
  if (!(total > 0)) throw std::invalid_argument("sim::Distribution::empirical: the counts add up to 0");
  const std::size_t n = bins.size();
  if (n > UINT32_MAX) throw std::invalid_argument("sim::Distribution::empirical: too many bins");
  const double bins_mean = m1 / total;
  Distribution d(mean, 0.0);
  d.kind_ = DistKind::Empirical;
  d.scale_ = bins_mean > 0 ? static_cast<double>(mean.v) / bins_mean : 1.0;
  const double var = std::max(0.0, m2 / total - bins_mean * bins_mean);
  d.cv_ = bins_mean > 0 ? std::sqrt(var) / bins_mean : 0.0;
  // Vose's alias method: scaled probabilities n * p_i; columns below 1 are topped up by one above.
  auto t = std::make_shared<Tables>();
  t->prob.assign(n, 1.0);
  t->alias.resize(n);
  std::vector<double> q(n);
  std::vector<std::uint32_t> small, large;
  for (std::size_t i = 0; i < n; ++i) {
    q[i] = bins[i].count / total * static_cast<double>(n);
    t->alias[i] = static_cast<std::uint32_t>(i);
    (q[i] < 1.0 ? small : large).push_back(static_cast<std::uint32_t>(i));
  }
  while (!small.empty() && !large.empty()) {
    const std::uint32_t s = small.back(), l = large.back();
    small.pop_back();
    t->prob[s] = q[s];
    t->alias[s] = l;
    q[l] = (q[l] + q[s]) - 1.0;
    if (q[l] < 1.0) {
      large.pop_back();
      small.push_back(l);
    }
  }
  // Left-overs are 1 up to rounding: keep them whole.
  for (std::uint32_t i : small) t->prob[i] = 1.0;
  for (std::uint32_t i : large) t->prob[i] = 1.0;
  t->bins = std::move(bins);
  d.tables_ = std::move(t);
  return d;
}

std::vector<EmpiricalBin> Distribution::bins() const {
  if (kind_ != DistKind::Empirical || !tables_) return {};
  return tables_->bins;
}

double normal_quantile(double p) noexcept {
  // Peter J. Acklam, "An algorithm for computing the inverse normal cumulative distribution
  // function" (2003): rational approximations in a central region and two tails.
  static constexpr double a[] = {-3.969683028665376e+01, 2.209460984245205e+02, -2.759285104469687e+02,
                                 1.383577518672690e+02, -3.066479806614716e+01, 2.506628277459239e+00};
  static constexpr double b[] = {-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
                                 6.680131188771972e+01, -1.328068155288572e+01};
  static constexpr double c[] = {-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
                                 -2.549732539343734e+00, 4.374664141464968e+00, 2.938163982698783e+00};
  static constexpr double d[] = {7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00,
                                 3.754408661907416e+00};
  constexpr double lo = 0.02425, hi = 1 - lo;
  if (p <= 0) p = 1e-300;
  if (p >= 1) p = 1 - 1e-16;
  if (p < lo) {
    const double q = std::sqrt(-2 * std::log(p));
    return (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
           ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  }
  if (p > hi) {
    const double q = std::sqrt(-2 * std::log(1 - p));
    return -(((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
           ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  }
  const double q = p - 0.5, r = q * q;
  return (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
         (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
}

Ps Distribution::sample_draw(Rng& rng) const noexcept {
  double x;
  switch (kind_) {
    case DistKind::Lognormal: {
      // Inverse transform, one draw (see the header): interpolated inside, exact in the outer steps.
      // (sample() interpolates inline; this is the same computation.)
      const double u = rng.uniform01();
      const double pos = u * kSteps;
      const int i = static_cast<int>(pos);
      if (i < 1 || i >= kSteps - 1) return lognormal_tail(u);
      const double lo = quantiles_[i], hi = quantiles_[i + 1];
      x = lo + (pos - i) * (hi - lo);
      break;
    }
    case DistKind::Normal: {
      const double u = rng.uniform01();
      const double m = static_cast<double>(mean_.v);
      x = m + cv_ * m * normal_quantile(u > 0 ? u : 0x1p-53);
      if (x < m * 1e-3) x = m * 1e-3;
      break;
    }
    case DistKind::Exponential: {
      const double u = rng.uniform01();
      x = -static_cast<double>(mean_.v) * std::log1p(-u);
      return Ps{static_cast<std::int64_t>(x + 0.5)};
    }
    case DistKind::Empirical: {
      // One draw: its integer part over n picks the alias column, its fraction the coin and then
      // the position inside the chosen bin (uniform given the column and the coin).
      const Tables& t = *tables_;
      const double n = static_cast<double>(t.prob.size());
      const double v = rng.uniform01() * n;
      std::size_t col = static_cast<std::size_t>(v);
      if (col >= t.prob.size()) col = t.prob.size() - 1;
      const double f = v - static_cast<double>(col);
      const double keep = t.prob[col];
      std::size_t bin;
      double pos;
      if (f < keep) {
        bin = col;
        pos = f / keep;
      } else {
        bin = t.alias[col];
        pos = (f - keep) / (1.0 - keep);
      }
      const EmpiricalBin& b = t.bins[bin];
      x = (b.lo + pos * (b.hi - b.lo)) * scale_;
      return Ps{static_cast<std::int64_t>(x + 0.5)};
    }
    case DistKind::Fixed:
    default: return mean_;
  }
  return round_positive(x);
}

Ps Distribution::lognormal_tail(double u) const noexcept {
  return round_positive(std::exp(mu_ + sigma_ * normal_quantile(u > 0 ? u : 0x1p-53)));
}

}  // namespace ipilab::sim
