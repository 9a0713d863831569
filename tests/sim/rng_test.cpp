// Tests of sim/rng.h: reproducibility and the moments of the sampling helpers.
#include "sim/rng.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

namespace ipilab::sim {
namespace {

TEST(Rng, SameSeed_SameStream_DifferentSeed_DifferentStream) {
  Rng a(7), b(7), c(8);
  for (int i = 0; i < 1000; ++i) {
    const auto x = a.next_u64();
    EXPECT_EQ(x, b.next_u64());
    if (i == 0) {
      EXPECT_NE(x, c.next_u64());
    }
  }
}

TEST(Rng, UniformBelow_StaysInRangeAndHitsEveryValue) {
  Rng r(1);
  std::vector<int> hits(10, 0);
  for (int i = 0; i < 10000; ++i) {
    const auto v = r.uniform_below(10);
    ASSERT_LT(v, 10u);
    ++hits[v];
  }
  for (int h : hits) EXPECT_NEAR(h, 1000, 150);  // binomial sd ~30
}

TEST(Rng, Normal_HasMeanZeroAndUnitStddev) {
  Rng r(2);
  double s = 0, s2 = 0;
  const int n = 200000;
  for (int i = 0; i < n; ++i) {
    const double x = r.normal();
    s += x;
    s2 += x * x;
  }
  EXPECT_NEAR(s / n, 0.0, 0.01);
  EXPECT_NEAR(std::sqrt(s2 / n), 1.0, 0.01);
}

TEST(Rng, WithSpread_MatchesMeanAndRelativeStddev) {
  for (SpreadShape shape : {SpreadShape::Lognormal, SpreadShape::NormalClipped}) {
    Rng r(3);
    double s = 0, s2 = 0;
    const int n = 200000;
    for (int i = 0; i < n; ++i) {
      const double x = r.with_spread(1000.0, 0.1, shape);
      ASSERT_GT(x, 0.0);
      s += x;
      s2 += x * x;
    }
    const double mean = s / n;
    const double sd = std::sqrt(s2 / n - mean * mean);
    EXPECT_NEAR(mean, 1000.0, 2.0);
    EXPECT_NEAR(sd / mean, 0.1, 0.003);
  }
}

TEST(Rng, ZeroSpread_IsExactAndConsumesNoDraw) {
  Rng a(9), b(9);
  EXPECT_EQ(a.jitter(Ps{123456}, 0.0), Ps{123456});
  EXPECT_EQ(a.with_spread(5.5, 0.0), 5.5);
  EXPECT_EQ(a.next_u64(), b.next_u64());
}

TEST(Rng, Jitter_IsAtLeastOnePs) {
  Rng r(4);
  for (int i = 0; i < 10000; ++i) EXPECT_GE(r.jitter(Ps{2}, 3.0, SpreadShape::NormalClipped), Ps{1});
}

}  // namespace
}  // namespace ipilab::sim

namespace ipilab::sim {
namespace {

TEST(Rng, NormalQuantile_MatchesKnownValues) {
  EXPECT_NEAR(normal_quantile(0.5), 0.0, 1e-9);
  EXPECT_NEAR(normal_quantile(0.975), 1.959963985, 1e-8);
  EXPECT_NEAR(normal_quantile(0.01), -2.326347874, 1e-8);
  EXPECT_NEAR(normal_quantile(1e-6), -4.753424309, 1e-7);  // tail branch
}

TEST(Rng, Jitter_TabulatedLognormalKeepsMeanSpreadAndTail) {
  // 10 % and 50 % relative spread around 1000 ns: sample mean, cv and p99.9 against the lognormal's.
  for (double cv : {0.1, 0.5}) {
    const Jitter j(from_ns(1000), cv);
    Rng rng(42);
    const int n = 400000;
    double sum = 0, sum2 = 0;
    std::vector<double> xs;
    xs.reserve(n);
    for (int i = 0; i < n; ++i) {
      const double x = static_cast<double>(j.sample(rng).v);
      sum += x;
      sum2 += x * x;
      xs.push_back(x);
    }
    const double mean = sum / n, sd = std::sqrt(sum2 / n - mean * mean);
    EXPECT_NEAR(mean, 1e6, 1e6 * 0.004) << cv;
    EXPECT_NEAR(sd / mean, cv, cv * 0.03) << cv;
    std::nth_element(xs.begin(), xs.begin() + n * 999 / 1000, xs.end());
    const double s2 = std::log1p(cv * cv);
    const double p999 = std::exp(std::log(1e6) - s2 / 2 + std::sqrt(s2) * 3.090232306);
    EXPECT_NEAR(xs[n * 999 / 1000], p999, p999 * 0.02) << cv;
  }
}

}  // namespace
}  // namespace ipilab::sim
