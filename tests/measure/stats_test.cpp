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

TEST(MeasureStats, SummarizeGivesMedianP99MeanAndBatchCv) {
  // Two batches: {10, 20, 30} (median 20) and {30, 40, 50} (median 40).
  const std::vector<std::uint64_t> s{10, 20, 30, 30, 40, 50};
  const SampleStats st = summarize(s, 2);
  EXPECT_EQ(st.count, 6u);
  EXPECT_DOUBLE_EQ(st.median, 30.0);
  EXPECT_DOUBLE_EQ(st.p99, 50.0);
  EXPECT_DOUBLE_EQ(st.p10, 10.0);  // rank ceil(0.6) = 1
  EXPECT_DOUBLE_EQ(st.p90, 50.0);  // rank ceil(5.4) = 6
  EXPECT_DOUBLE_EQ(st.mean, 30.0);
  EXPECT_DOUBLE_EQ(st.min, 10.0);
  EXPECT_DOUBLE_EQ(st.max, 50.0);
  ASSERT_EQ(st.batch_medians.size(), 2u);
  EXPECT_DOUBLE_EQ(st.batch_medians[0], 20.0);
  EXPECT_DOUBLE_EQ(st.batch_medians[1], 40.0);
  // Batch medians 20 and 40: mean 30, population stddev 10 -> CV 1/3.
  EXPECT_DOUBLE_EQ(st.cv, 10.0 / 30.0);
  // Population stddev of all six: sqrt((400+100+0+0+100+400)/6).
  EXPECT_DOUBLE_EQ(st.stddev, std::sqrt(1000.0 / 6.0));
}

TEST(MeasureStats, SummarizeLeavesRemainderOutOfBatchesOnly) {
  const std::vector<std::uint64_t> s{1, 1, 3, 3, 100};  // 2 batches of 2, remainder 1
  const SampleStats st = summarize(s, 2);
  ASSERT_EQ(st.batch_medians.size(), 2u);
  EXPECT_DOUBLE_EQ(st.batch_medians[0], 1.0);
  EXPECT_DOUBLE_EQ(st.batch_medians[1], 3.0);
  EXPECT_DOUBLE_EQ(st.max, 100.0);
  EXPECT_DOUBLE_EQ(st.mean, 108.0 / 5.0);
}

TEST(MeasureStats, OneBatchHasZeroCvAndEmptyInputIsAllZero) {
  EXPECT_DOUBLE_EQ(summarize(std::vector<std::uint64_t>{7, 9}, 1).cv, 0.0);
  const SampleStats e = summarize(std::vector<std::uint64_t>{}, 3);
  EXPECT_EQ(e.count, 0u);
  EXPECT_DOUBLE_EQ(e.median, 0.0);
  EXPECT_THROW(summarize(std::vector<std::uint64_t>{1}, 0), std::invalid_argument);
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
