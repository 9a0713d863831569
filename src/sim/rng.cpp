#include "sim/rng.h"

#include <cmath>

namespace ipilab::sim {

namespace {
inline std::uint64_t rotl(std::uint64_t x, int k) noexcept { return (x << k) | (x >> (64 - k)); }

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

std::uint64_t Rng::next_u64() noexcept {
  const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
  const std::uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = rotl(s_[3], 45);
  return result;
}

double Rng::uniform01() noexcept { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }

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
  return Jitter(mean, cv, shape).sample(*this);
}

Jitter::Jitter(Ps mean, double cv, SpreadShape shape) : mean_(mean), cv_(cv), shape_(shape) {
  if (cv_ > 0.0 && mean_.v > 0) {
    const double s2 = std::log1p(cv_ * cv_);
    sigma_ = std::sqrt(s2);
    mu_ = std::log(static_cast<double>(mean_.v)) - s2 / 2.0;
    if (shape_ == SpreadShape::Lognormal) {
      auto q = std::make_shared<std::vector<double>>(kSteps, 0.0);
      for (int i = 1; i < kSteps; ++i)
        (*q)[static_cast<std::size_t>(i)] = std::exp(mu_ + sigma_ * normal_quantile(static_cast<double>(i) / kSteps));
      quantiles_ = std::move(q);
    }
  }
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

Ps Jitter::sample_spread(Rng& rng) const noexcept {
  double x;
  if (shape_ == SpreadShape::Lognormal) {
    // Inverse transform, one draw (see the header): interpolated inside, exact in the outer steps.
    const double u = rng.uniform01();
    const double pos = u * kSteps;
    const int i = static_cast<int>(pos);
    if (i >= 1 && i < kSteps - 1) {
      const std::vector<double>& q = *quantiles_;
      const double lo = q[static_cast<std::size_t>(i)], hi = q[static_cast<std::size_t>(i) + 1];
      x = lo + (pos - i) * (hi - lo);
    } else {
      x = std::exp(mu_ + sigma_ * normal_quantile(u > 0 ? u : 0x1p-53));
    }
  } else {
    const double m = static_cast<double>(mean_.v);
    x = m + cv_ * m * rng.normal();
    if (x < m * 1e-3) x = m * 1e-3;
  }
  const auto r = static_cast<std::int64_t>(x + 0.5);  // x > 0: round half up, as llround, without the libm call
  return Ps{r < 1 ? 1 : r};
}

}  // namespace ipilab::sim
