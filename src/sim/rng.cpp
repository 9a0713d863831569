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
  }
}

Ps Jitter::sample(Rng& rng) const noexcept {
  if (cv_ <= 0.0 || mean_.v <= 0) return mean_;
  double x;
  if (shape_ == SpreadShape::Lognormal) {
    x = std::exp(mu_ + sigma_ * rng.normal());
  } else {
    const double m = static_cast<double>(mean_.v);
    x = m + cv_ * m * rng.normal();
    if (x < m * 1e-3) x = m * 1e-3;
  }
  const auto r = static_cast<std::int64_t>(x + 0.5);  // x > 0: round half up, as llround, without the libm call
  return Ps{r < 1 ? 1 : r};
}

}  // namespace ipilab::sim
