// Statistics helpers (measure/stats.h): exact values for hand-checkable inputs.
#include <cmath>
#include <vector>

#include <gtest/gtest.h>

#include "measure/stats.h"

namespace ipilab::measure {
namespace {

TEST(MeasureStats, MedianOfOddCountIsMiddleValue) { EXPECT_DOUBLE_EQ(median({5, 1, 3}), 3.0); }
TEST(MeasureStats, MedianOfEvenCountIsMeanOfTwoMiddleValues) { EXPECT_DOUBLE_EQ(median({4, 1, 3, 2}), 2.5); }
TEST(MeasureStats, MedianOfNothingThrows) { EXPECT_THROW(median({}), std::invalid_argument); }

TEST(MeasureStats, P99IsNearestRank) {
  std::vector<double> v;
  for (int i = 1; i <= 200; ++i) v.push_back(i);
  EXPECT_DOUBLE_EQ(percentile_sorted(v, 99), 198.0);  // rank ceil(0.99 * 200) = 198
  EXPECT_DOUBLE_EQ(percentile_sorted(v, 100), 200.0);
  const std::vector<double> ten{1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  EXPECT_DOUBLE_EQ(percentile_sorted(ten, 99), 10.0);  // rank ceil(9.9) = 10
  EXPECT_DOUBLE_EQ(percentile_sorted(ten, 50), 5.0);
  EXPECT_THROW(percentile_sorted(ten, 0), std::invalid_argument);
}

TEST(MeasureStats, SummarizeGivesMedianP99MeanAndSpread) {
  const std::vector<double> s{30, 10, 20, 50, 40, 30};
  const auto st = summarize(s);
  ASSERT_TRUE(st);
  EXPECT_EQ(st->count, 6u);
  EXPECT_DOUBLE_EQ(st->median, 30.0);
  EXPECT_DOUBLE_EQ(st->p99, 50.0);
  EXPECT_DOUBLE_EQ(st->p10, 10.0);  // rank ceil(0.6) = 1
  EXPECT_DOUBLE_EQ(st->p90, 50.0);  // rank ceil(5.4) = 6
  EXPECT_DOUBLE_EQ(st->mean, 30.0);
  EXPECT_DOUBLE_EQ(st->min, 10.0);
  EXPECT_DOUBLE_EQ(st->max, 50.0);
  // Population stddev of all six: sqrt((400+100+0+0+100+400)/6).
  EXPECT_DOUBLE_EQ(st->stddev, std::sqrt(1000.0 / 6.0));
}

TEST(MeasureStats, NoSamplesIsNoSummaryNotZeros) {
  EXPECT_FALSE(summarize(std::vector<double>{}));
}

TEST(MeasureStats, LogBinsHoldEveryValueOnAFixedGrid) {
  const std::vector<double> v{100, 101, 150, 1000, 0};
  const auto bins = log_bins(v, 10);  // edges 10^(k/10): 100, 125.9, 158.5, ... 1000, 1258.9
  ASSERT_EQ(bins.size(), 4u);
  EXPECT_DOUBLE_EQ(bins[0].lo, 0.0);  // the zero
  EXPECT_DOUBLE_EQ(bins[0].hi, bins[1].lo);
  EXPECT_EQ(bins[0].count, 1u);
  EXPECT_DOUBLE_EQ(bins[1].lo, 100.0);
  EXPECT_NEAR(bins[1].hi, 125.8925, 1e-3);
  EXPECT_EQ(bins[1].count, 2u);  // 100 and 101
  EXPECT_EQ(bins[2].count, 1u);  // 150
  EXPECT_DOUBLE_EQ(bins[3].lo, 1000.0);
  EXPECT_EQ(bins[3].count, 1u);
  std::uint64_t total = 0;
  for (std::size_t i = 0; i < bins.size(); ++i) {
    total += bins[i].count;
    EXPECT_LT(bins[i].lo, bins[i].hi);
    if (i > 0) {
      EXPECT_LE(bins[i - 1].hi, bins[i].lo);  // ascending, non-overlapping
    }
  }
  EXPECT_EQ(total, v.size());
  EXPECT_TRUE(log_bins(std::vector<double>{}, 10).empty());
}

TEST(MeasureStats, BinsMeanIsTheCountWeightedMidpoint) {
  const std::vector<Bin> b{{700, 710, 12}, {710, 720, 40}};
  EXPECT_DOUBLE_EQ(bins_mean(b), (705.0 * 12 + 715.0 * 40) / 52);
  // 40 bins per decade: the bins' mean stays within 3 % of the sample mean whatever the values.
  std::vector<double> v;
  for (int i = 0; i < 1000; ++i) v.push_back(6000 + (i * 7919) % 5000 + (i % 97 == 0 ? 500000 : 0));
  double mean = 0;
  for (double x : v) mean += x / static_cast<double>(v.size());
  EXPECT_NEAR(bins_mean(log_bins(v)) / mean, 1.0, 0.03);
}

TEST(MeasureStats, CyclesToNsUsesTscKhz) {
  EXPECT_DOUBLE_EQ(cycles_to_ns(2100, 2100000), 1000.0);  // 2.1 GHz: 2100 cycles = 1 µs
  EXPECT_DOUBLE_EQ(cycles_to_ns(5, 0), 0.0);
}

TEST(MeasureStats, RelativeDifferenceIsAgainstTheLarger) {
  EXPECT_DOUBLE_EQ(relative_difference(90, 100), 0.1);
  EXPECT_DOUBLE_EQ(relative_difference(100, 90), 0.1);
  EXPECT_DOUBLE_EQ(relative_difference(0, 0), 0.0);
}

}  // namespace
}  // namespace ipilab::measure
