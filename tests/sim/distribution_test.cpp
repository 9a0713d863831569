// Tests of sim::Distribution (sim/rng.h): each kind's moments and shape against its definition,
// one uniform draw per sample, the empirical bins' weights and in-bin uniformity, exact means.
//
// Sample sizes: n = 200,000 draws. The standard error of a sample mean is cv * m / sqrt(n), i.e.
// 0.22 % of m for cv = 1 (exponential): tolerances of 1 % are > 4 standard errors. A bin frequency p
// has standard error sqrt(p (1 - p) / n) <= 0.0011: tolerances of 0.006 are > 5 of them.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

#include "sim/rng.h"

namespace ipilab::sim {
namespace {

constexpr int kN = 200'000;

struct SampleMoments {
  double mean = 0, cv = 0;
  std::vector<double> xs;
};

SampleMoments draw(const Distribution& d, std::uint64_t seed, int n = kN) {
  Rng rng(seed);
  SampleMoments m;
  m.xs.reserve(static_cast<std::size_t>(n));
  double s = 0, s2 = 0;
  for (int i = 0; i < n; ++i) {
    const double x = static_cast<double>(d.sample(rng).v);
    s += x;
    s2 += x * x;
    m.xs.push_back(x);
  }
  m.mean = s / n;
  m.cv = std::sqrt(std::max(0.0, s2 / n - m.mean * m.mean)) / m.mean;
  std::sort(m.xs.begin(), m.xs.end());
  return m;
}

// Each sample of a drawing kind consumes exactly one 64-bit value of the stream.
void expect_one_draw_per_sample(const Distribution& d) {
  Rng a(5), b(5);
  for (int i = 0; i < 1000; ++i) (void)d.sample(a);
  for (int i = 0; i < 1000; ++i) (void)b.next_u64();
  EXPECT_EQ(a.next_u64(), b.next_u64()) << dist_name(d.kind());
}

TEST(Distribution, Names_RoundTrip) {
  for (DistKind k : {DistKind::Fixed, DistKind::Lognormal, DistKind::Normal, DistKind::Exponential, DistKind::Empirical}) {
    DistKind back{};
    ASSERT_TRUE(parse_dist(dist_name(k), back));
    EXPECT_EQ(back, k);
  }
  DistKind x{};
  EXPECT_FALSE(parse_dist("gamma", x));
}

TEST(Distribution, Fixed_IsExactAndDrawsNothing) {
  const Distribution d = Distribution::fixed(Ps{750'000});
  Rng a(1), b(1);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(d.sample(a), Ps{750'000});
  EXPECT_EQ(a.next_u64(), b.next_u64());
  EXPECT_EQ(d.kind(), DistKind::Fixed);
  EXPECT_EQ(Distribution(Ps{5}, 0.0).kind(), DistKind::Fixed);  // Jitter-era: no spread = fixed
}

TEST(Distribution, Exponential_MeanCvMedianAndTail) {
  const Distribution d = Distribution::exponential(from_ns(1000));
  EXPECT_EQ(d.kind(), DistKind::Exponential);
  EXPECT_DOUBLE_EQ(d.cv(), 1.0);
  const SampleMoments m = draw(d, 11);
  EXPECT_NEAR(m.mean, 1e6, 1e4);  // 1 %
  EXPECT_NEAR(m.cv, 1.0, 0.015);
  // Quantiles of Exp(1e6 ps): median ln 2 = 693,147 ps; p99 = ln 100 = 4,605,170 ps.
  EXPECT_NEAR(m.xs[kN / 2], 693'147, 693'147 * 0.01);
  EXPECT_NEAR(m.xs[kN * 99 / 100], 4'605'170, 4'605'170 * 0.03);
  expect_one_draw_per_sample(d);
}

TEST(Distribution, Normal_MeanCvSymmetryAndOneDraw) {
  const Distribution d = Distribution::normal(from_ns(1000), 0.1);
  EXPECT_EQ(d.kind(), DistKind::Normal);
  const SampleMoments m = draw(d, 12);
  EXPECT_NEAR(m.mean, 1e6, 1e6 * 0.001);  // standard error 0.022 %
  EXPECT_NEAR(m.cv, 0.1, 0.002);
  // p16 and p84 of N(m, 0.1 m) at m -+ 0.1 m (z = -+0.9945 for 16 / 84 %).
  EXPECT_NEAR(m.xs[kN * 16 / 100], 1e6 - 0.9945 * 1e5, 2e3);
  EXPECT_NEAR(m.xs[kN * 84 / 100], 1e6 + 0.9945 * 1e5, 2e3);
  expect_one_draw_per_sample(d);
  Rng r(1);
  for (int i = 0; i < 1000; ++i) EXPECT_GE(Distribution::normal(Ps{2}, 3.0).sample(r), Ps{1});  // never below 1 ps
}

TEST(Distribution, Lognormal_GivesExactlyTheValuesOfTheFormerJitter) {
  // The lognormal sampler did not change (scenario outputs stay byte-identical): the first values
  // the former sim::Jitter gave for these seeds, recorded from it.
  const Distribution a = Distribution::lognormal(from_ns(500), 0.05);
  Rng ra(3);
  for (std::int64_t v : {511950, 508441, 480333, 501508, 494654, 493063}) EXPECT_EQ(a.sample(ra), Ps{v});
  const Distribution b(from_ns(1000), 0.5);  // the Jitter-era constructor
  Rng rb(4);
  for (std::int64_t v : {663322, 1692681, 836227, 2308261, 626801, 1022947}) EXPECT_EQ(b.sample(rb), Ps{v});
  expect_one_draw_per_sample(a);
}

TEST(Distribution, Empirical_BinWeightsUniformInsideAndExactMean) {
  // Bins (ps): [1000, 2000) x1, [2000, 3000) x3, [5000, 6000) x0, [8000, 9000) x4.
  const std::vector<EmpiricalBin> bins = {{1000, 2000, 1}, {2000, 3000, 3}, {5000, 6000, 0}, {8000, 9000, 4}};
  // Their mean: (1500 x 1 + 2500 x 3 + 8500 x 4) / 8 = 5375 ps. Asked mean 5375: scale 1.
  const Distribution d = Distribution::empirical(Ps{5375}, bins);
  EXPECT_EQ(d.kind(), DistKind::Empirical);
  EXPECT_DOUBLE_EQ(d.scale(), 1.0);
  const SampleMoments m = draw(d, 13);
  int in[4] = {0, 0, 0, 0}, first_half_of_bin1 = 0;
  for (double x : m.xs) {
    if (x >= 1000 && x < 2000) ++in[0];
    else if (x >= 2000 && x <= 3000) ++in[1];  // 3000: rounding of values just below it
    else if (x >= 5000 && x < 6000) ++in[2];
    else if (x >= 8000 && x <= 9000) ++in[3];
    else ADD_FAILURE() << "value outside every bin: " << x;
    if (x >= 2000 && x < 2500) ++first_half_of_bin1;
  }
  EXPECT_NEAR(in[0] / double(kN), 1.0 / 8, 0.006);
  EXPECT_NEAR(in[1] / double(kN), 3.0 / 8, 0.006);
  EXPECT_EQ(in[2], 0);  // a zero-count bin is never drawn
  EXPECT_NEAR(in[3] / double(kN), 4.0 / 8, 0.006);
  EXPECT_NEAR(first_half_of_bin1 / double(in[1]), 0.5, 0.01);  // uniform inside a bin
  EXPECT_NEAR(m.mean, 5375, 5375 * 0.005);
  // cv of the mixture: E[X^2] = sum w (lo^2 + lo hi + hi^2) / 3 -> sd / mean.
  const double ex2 = (1.0 * (1e6 + 2e6 + 4e6) + 3.0 * (4e6 + 6e6 + 9e6) + 4.0 * (64e6 + 72e6 + 81e6)) / 3.0 / 8.0;
  EXPECT_NEAR(d.cv(), std::sqrt(ex2 - 5375.0 * 5375.0) / 5375.0, 1e-12);
  expect_one_draw_per_sample(d);
}

TEST(Distribution, Empirical_ScalesToTheStatedMean) {
  // Bins with mean 1500 ps, stated mean 1515 ps (+1 %): every sample is scaled by 1.01.
  const Distribution d = Distribution::empirical(Ps{1515}, {{1000, 2000, 1}});
  EXPECT_NEAR(d.scale(), 1.01, 1e-12);
  const SampleMoments m = draw(d, 14);
  EXPECT_NEAR(m.mean, 1515, 1515 * 0.002);
  EXPECT_GE(m.xs.front(), 1010 - 1);
  EXPECT_LE(m.xs.back(), 2020 + 1);
}

TEST(Distribution, Empirical_ManyUnevenBins_FrequenciesFollowTheWeights) {
  // 50 bins [1000 i, 1000 i + 1000) ps with weights i + 1 (sum 1275): the alias table tops up
  // most columns from others. Their mean is (1000 x 41650 + 500 x 1275) / 1275 = 33166.7 ps.
  std::vector<EmpiricalBin> bins;
  for (int i = 0; i < 50; ++i) bins.push_back({1000.0 * i, 1000.0 * i + 1000, static_cast<double>(i + 1)});
  const Distribution d = Distribution::empirical(Ps{33167}, bins);
  EXPECT_NEAR(d.scale(), 1.0, 1e-4);
  Rng rng(15);
  std::vector<int> hits(50, 0);
  for (int i = 0; i < kN; ++i) {
    const double x = static_cast<double>(d.sample(rng).v) / d.scale();
    ++hits[static_cast<std::size_t>(std::clamp(static_cast<int>(x / 1000), 0, 49))];
  }
  // Standard error of each frequency <= sqrt(0.04 / 200000) = 0.00045: 0.0025 is > 5 of them.
  for (int i = 0; i < 50; ++i) EXPECT_NEAR(hits[static_cast<std::size_t>(i)] / double(kN), (i + 1) / 1275.0, 0.0025) << "bin " << i;
}

TEST(Distribution, Empirical_BadBinsAreRejected) {
  EXPECT_THROW(Distribution::empirical(Ps{1}, {}), std::invalid_argument);
  EXPECT_THROW(Distribution::empirical(Ps{1}, {{5, 5, 1}}), std::invalid_argument);
  EXPECT_THROW(Distribution::empirical(Ps{1}, {{0, 10, 1}, {5, 20, 1}}), std::invalid_argument);
  EXPECT_THROW(Distribution::empirical(Ps{1}, {{0, 10, 0}}), std::invalid_argument);
  EXPECT_THROW(Distribution::empirical(Ps{1}, {{-1, 10, 1}}), std::invalid_argument);
}

}  // namespace
}  // namespace ipilab::sim
