// Round bootstrap (measure/bootstrap.h): exact intervals where the answer is known, and the reason the
// cases are interleaved: a drift shared by a case and its reference widens each case's own interval but
// cancels in their paired ratio.
#include <gtest/gtest.h>

#include "measure/bootstrap.h"

namespace ipilab::measure {
namespace {

TEST(MeasureBootstrap, IdenticalRoundsGiveAPointInterval) {
  const Rounds r(10, std::vector<double>{5, 7, 9});
  EXPECT_DOUBLE_EQ(*pooled_median(r), 7.0);
  const auto ci = bootstrap_median(r);
  ASSERT_TRUE(ci);
  EXPECT_DOUBLE_EQ(ci->lo, 7.0);
  EXPECT_DOUBLE_EQ(ci->hi, 7.0);
}

TEST(MeasureBootstrap, NoSamplesIsNoEstimateNotZero) {
  EXPECT_FALSE(pooled_median(Rounds{}));
  EXPECT_FALSE(pooled_median(Rounds{{}, {}}));
  EXPECT_FALSE(bootstrap_median(Rounds{{}, {}}));
  EXPECT_FALSE(bootstrap_ratio(Rounds{{1.0}, {}}, Rounds{{}, {2.0}}));  // no round with both
  EXPECT_FALSE(bootstrap_ratio(Rounds{{1.0}}, Rounds{{0.0}}));          // reference median 0
}

TEST(MeasureBootstrap, SharedDriftWidensEachIntervalButCancelsInThePairedRatio) {
  // 20 rounds; the host slows down by 2 % per round; the case costs exactly 2.5x its reference.
  Rounds ref, cas;
  for (int i = 0; i < 20; ++i) {
    const double k = 1.0 + 0.02 * i;
    ref.push_back({1000 * k, 1010 * k, 990 * k});
    cas.push_back({2500 * k, 2525 * k, 2475 * k});
  }
  const auto ci = bootstrap_median(cas);
  ASSERT_TRUE(ci);
  EXPECT_GT(ci->hi - ci->lo, 2500 * 0.05);  // the drift (1.00 .. 1.38) shows in the case's own interval
  const auto ratio = bootstrap_ratio(cas, ref);
  ASSERT_TRUE(ratio);
  EXPECT_EQ(ratio->rounds, 20u);
  EXPECT_NEAR(ratio->value, 2.5, 1e-12);
  EXPECT_NEAR(ratio->ci.lo, 2.5, 1e-12);
  EXPECT_NEAR(ratio->ci.hi, 2.5, 1e-12);
}

TEST(MeasureBootstrap, RatioUsesOnlyRoundsWithBothAndIsDeterministic) {
  Rounds a{{10}, {20}, {30}, {}}, b{{5}, {}, {10}, {10}};
  const auto r = bootstrap_ratio(a, b);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->rounds, 2u);                  // rounds 0 and 2
  EXPECT_DOUBLE_EQ(r->value, 20.0 / 7.5);    // median{10, 30} / median{5, 10}
  EXPECT_GE(r->ci.lo, 2.0 - 1e-12);          // resamples: {0,0} -> 2, {2,2} -> 3, mixed -> 20/7.5
  EXPECT_LE(r->ci.hi, 3.0 + 1e-12);
  const auto again = bootstrap_ratio(a, b);
  EXPECT_EQ(again->ci.lo, r->ci.lo);
  EXPECT_EQ(again->ci.hi, r->ci.hi);
  BootstrapOptions o;
  o.resamples = 0;
  EXPECT_THROW(bootstrap_median(a, o), std::invalid_argument);
}

TEST(MeasureBootstrap, IntervalCoversTheSpreadOfRoundMedians) {
  // Rounds whose medians are 100 .. 109: the 95 % interval of the pooled median lies inside that range
  // and is not a point.
  Rounds r;
  for (int i = 0; i < 10; ++i) r.push_back({100.0 + i, 100.0 + i, 100.0 + i});
  const auto ci = bootstrap_median(r);
  ASSERT_TRUE(ci);
  EXPECT_GE(ci->lo, 100.0);
  EXPECT_LE(ci->hi, 109.0);
  EXPECT_LT(ci->lo, ci->hi);
  EXPECT_LE(ci->lo, *pooled_median(r));
  EXPECT_GE(ci->hi, *pooled_median(r));
}

}  // namespace
}  // namespace ipilab::measure
