// The batch estimator against a fake clock (common/estimator.h): an operation of 16 ns timed with a
// counter whose read costs 10 ns. One pair per iteration reports 26; one pair per batch reports 16.0.
#include <gtest/gtest.h>

#include "common/estimator.h"

namespace ipilab::timing {
namespace {

// A counter that returns the current time and then costs `read_cost` (the time passes during the read).
struct FakeClock {
  double now = 0;
  double read_cost = 10;
  double read() {
    const double t = now;
    now += read_cost;
    return t;
  }
};

TEST(MeasureEstimator, PerIterationTimingCarriesOneCounterReadInEverySample) {
  FakeClock c;
  const auto samples = time_each([&] { return c.read(); }, [&] { c.now += 16; }, 100);
  ASSERT_EQ(samples.size(), 100u);
  for (double s : samples) EXPECT_DOUBLE_EQ(s, 26.0);
}

TEST(MeasureEstimator, BatchTimingSpreadsOneReadOverTheBatch) {
  FakeClock c;
  const TimedBatch b = time_batch([&] { return c.read(); }, [&] { c.now += 16; }, 1000);
  EXPECT_EQ(b.iterations, 1000u);
  EXPECT_DOUBLE_EQ(b.elapsed, 16010.0);
  EXPECT_DOUBLE_EQ(b.per_iteration(), 16.01);
  EXPECT_NEAR(b.per_iteration(), 16.0, 0.05);  // printed with one decimal: 16.0
}

TEST(MeasureEstimator, CounterOverheadIsTheEmptyRegion) {
  FakeClock c;
  EXPECT_DOUBLE_EQ(counter_overhead([&] { return c.read(); }), 10.0);
}

TEST(MeasureEstimator, BatchSizeKeepsTheReadBelowTheBiasBound) {
  // 10 / (0.001 * 16) = 625 iterations: the read is 10 / (625 * 16) = 0.1 % of a sample.
  const std::uint64_t n = iterations_for_bias(10, 16, 0.001, 1u << 20);
  EXPECT_EQ(n, 625u);
  FakeClock c;
  const TimedBatch b = time_batch([&] { return c.read(); }, [&] { c.now += 16; }, n);
  EXPECT_DOUBLE_EQ(b.per_iteration(), 16.016);
  EXPECT_LE((b.per_iteration() - 16.0) / 16.0, 0.001 + 1e-12);
  // A long operation is timed one by one; one too short to see gets the cap; bad bounds throw.
  EXPECT_EQ(iterations_for_bias(10, 1e6, 0.001, 1u << 20), 1u);
  EXPECT_EQ(iterations_for_bias(10, 0, 0.001, 4096), 4096u);
  EXPECT_EQ(iterations_for_bias(10, 0.0001, 0.001, 4096), 4096u);
  EXPECT_EQ(iterations_for_bias(0, 16, 0.001, 4096), 1u);
  EXPECT_THROW(iterations_for_bias(10, 16, 0, 10), std::invalid_argument);
  EXPECT_THROW(time_batch([&] { return c.read(); }, [] {}, 0), std::invalid_argument);
}

}  // namespace
}  // namespace ipilab::timing
