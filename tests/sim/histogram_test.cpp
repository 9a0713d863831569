// Tests of sim/histogram.h and sim/breakdown.h: percentiles within the stated error on known
// distributions, exact count/mean/min/max, bounded memory.
#include "sim/histogram.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

#include "sim/breakdown.h"
#include "sim/rng.h"

namespace ipilab::sim {
namespace {

double exact_percentile(std::vector<std::int64_t> v, double q) {
  std::sort(v.begin(), v.end());
  auto rank = static_cast<std::size_t>(std::ceil(q / 100.0 * static_cast<double>(v.size())));
  rank = std::clamp<std::size_t>(rank, 1, v.size());
  return static_cast<double>(v[rank - 1]);
}

void expect_percentiles_within_error(const std::vector<std::int64_t>& samples) {
  Histogram h;
  for (auto x : samples) h.record(x);
  for (double q : {0.0, 1.0, 10.0, 50.0, 90.0, 99.0, 99.9, 100.0}) {
    const double want = exact_percentile(samples, q);
    EXPECT_LE(std::abs(h.percentile(q) - want), Histogram::kMaxRelativeError * want + 1e-9)
        << "q=" << q << " want=" << want << " got=" << h.percentile(q);
  }
}

TEST(Histogram, SmallValues_AreExact) {
  Histogram h;
  for (int v = 0; v < 256; ++v) h.record(v);
  EXPECT_EQ(h.percentile(50), 127.0);  // rank ceil(128) -> value 127
  EXPECT_EQ(h.percentile(100), 255.0);
  EXPECT_EQ(h.percentile(0), 0.0);
}

TEST(Histogram, BucketBounds_TileTheRange) {
  for (std::size_t i = 0; i + 1 < 7296; ++i) {
    ASSERT_EQ(Histogram::bucket_high(i) + 1, Histogram::bucket_low(i + 1)) << i;
    ASSERT_EQ(Histogram::bucket_of(Histogram::bucket_low(i)), i);
    ASSERT_EQ(Histogram::bucket_of(Histogram::bucket_high(i)), i);
  }
  EXPECT_EQ(Histogram::bucket_of(static_cast<std::uint64_t>(INT64_MAX)), 7295u);
}

TEST(Histogram, UniformDistribution_PercentilesWithinStatedError) {
  Rng r(11);
  std::vector<std::int64_t> v;
  for (int i = 0; i < 100000; ++i) v.push_back(static_cast<std::int64_t>(r.uniform_below(10'000'000)));
  expect_percentiles_within_error(v);
}

TEST(Histogram, LognormalLatencies_PercentilesWithinStatedError) {
  Rng r(12);
  std::vector<std::int64_t> v;
  for (int i = 0; i < 100000; ++i) v.push_back(static_cast<std::int64_t>(r.with_spread(750'000.0, 0.3)));
  expect_percentiles_within_error(v);
}

// Moments::Skipped keeps everything but the standard deviation: the same buckets, percentiles,
// count, mean and extremes as a histogram that keeps it, and stddev() NaN, also after a merge.
TEST(Histogram, SkippedMoments_SameFiguresButStddevIsNaN) {
  Rng rng(7);
  Histogram kept, skipped(Moments::Skipped);
  for (int i = 0; i < 5000; ++i) {
    const auto v = static_cast<std::int64_t>(rng.uniform_below(1'000'000));
    kept.record(v);
    skipped.record(v);
  }
  kept.record_n(123456, 3);
  skipped.record_n(123456, 3);
  EXPECT_EQ(skipped.count(), kept.count());
  EXPECT_EQ(skipped.mean(), kept.mean());
  EXPECT_EQ(skipped.min(), kept.min());
  EXPECT_EQ(skipped.max(), kept.max());
  for (double q : {1.0, 50.0, 90.0, 99.0, 99.9}) EXPECT_EQ(skipped.percentile(q), kept.percentile(q)) << q;
  EXPECT_GT(kept.stddev(), 0.0);
  EXPECT_TRUE(std::isnan(skipped.stddev()));
  Histogram merged;
  merged.record(5);
  merged.merge(skipped);  // a histogram without moments makes the merge one without them
  EXPECT_TRUE(std::isnan(merged.stddev()));
  EXPECT_EQ(merged.count(), kept.count() + 1);
}

TEST(Histogram, CountMeanMinMax_AreExact) {
  Histogram h;
  const std::vector<std::int64_t> v = {3'000'017, 1'000'003, 2'000'009, 5};
  for (auto x : v) h.record(x);
  EXPECT_EQ(h.count(), 4u);
  EXPECT_EQ(h.min(), 5);
  EXPECT_EQ(h.max(), 3'000'017);
  EXPECT_DOUBLE_EQ(h.mean(), (3'000'017.0 + 1'000'003.0 + 2'000'009.0 + 5.0) / 4.0);
  const Summary s = h.summary();
  EXPECT_EQ(s.count, 4u);
  EXPECT_EQ(s.max, 3'000'017.0);
}

TEST(Histogram, Stddev_OfKnownSet) {
  Histogram h;
  for (int x : {2, 4, 4, 4, 5, 5, 7, 9}) h.record(x);
  EXPECT_DOUBLE_EQ(h.stddev(), 2.0);
}

TEST(Histogram, Merge_EqualsRecordingEverything) {
  Rng r(13);
  Histogram a, b, all;
  for (int i = 0; i < 10000; ++i) {
    const auto x = static_cast<std::int64_t>(r.uniform_below(1'000'000));
    (i % 3 ? a : b).record(x);
    all.record(x);
  }
  a.merge(b);
  EXPECT_EQ(a.count(), all.count());
  EXPECT_EQ(a.min(), all.min());
  EXPECT_EQ(a.max(), all.max());
  EXPECT_DOUBLE_EQ(a.mean(), all.mean());
  EXPECT_NEAR(a.stddev(), all.stddev(), 1e-6 * all.stddev());
  for (double q : {50.0, 99.0}) EXPECT_EQ(a.percentile(q), all.percentile(q));
}

TEST(Histogram, RecordBatch_IsRecordOneByOne_BitForBit) {
  // Values over 40 powers of two (new blocks appear mid-batch), in batches of odd sizes that cross
  // the 64-value chunks; both moment kinds.
  for (Moments m : {Moments::Kept, Moments::Skipped}) {
    Rng r(29);
    Histogram one(m), batched(m);
    std::vector<std::int64_t> v;
    for (int i = 0; i < 5000; ++i) {
      const auto x = static_cast<std::int64_t>(r.uniform_below(std::uint64_t{1} << (i % 40 + 1)));
      one.record(x);
      v.push_back(x);
      if (v.size() == static_cast<std::size_t>(1 + i % 150)) {
        batched.record_batch(v.data(), v.size());
        v.clear();
      }
    }
    batched.record_batch(v.data(), v.size());
    EXPECT_EQ(batched.count(), one.count());
    EXPECT_EQ(batched.min(), one.min());
    EXPECT_EQ(batched.max(), one.max());
    EXPECT_EQ(batched.mean(), one.mean());
    if (m == Moments::Kept) {
      EXPECT_EQ(batched.stddev(), one.stddev());  // the same operations in the same order
    }
    const auto a = batched.buckets(), b = one.buckets();
    ASSERT_EQ(a.size(), b.size());
    for (std::size_t i = 0; i < a.size(); ++i) {
      EXPECT_EQ(a[i].low, b[i].low);
      EXPECT_EQ(a[i].count, b[i].count);
    }
  }
}

TEST(Histogram, Memory_IndependentOfSampleCount) {
  Rng r(14);
  Histogram h;
  for (int i = 0; i < 1000; ++i) h.record(static_cast<std::int64_t>(r.with_spread(1e6, 0.2)));
  for (std::int64_t v = 1; v < 20'000'000; v *= 2) h.record(v);  // one value per power of two: every block up front
  const std::size_t after_thousand = h.memory_bytes();
  for (int i = 0; i < 1'000'000; ++i) h.record(static_cast<std::int64_t>(r.with_spread(1e6, 0.2)));
  EXPECT_EQ(h.memory_bytes(), after_thousand);
  EXPECT_LE(h.memory_bytes(), 7296u * 8u + 128u * 8u);
}

TEST(Histogram, NegativeValue_IsRejected) {
  Histogram h;
  EXPECT_THROW(h.record(-1), std::invalid_argument);
}

TEST(Breakdown, StepsKeepOrderAndSharesSumToOne) {
  Breakdown b;
  const auto hc = b.step("hypercall entry/exit");
  const auto inj = b.step("interrupt injection");
  EXPECT_EQ(b.step("hypercall entry/exit"), hc);
  b.add(hc, Ps{300});
  b.add(inj, Ps{200});
  b.add(hc, Ps{300});
  b.add("guest handler entry", Ps{200});
  const auto rows = b.rows();
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].name, "hypercall entry/exit");
  EXPECT_EQ(rows[0].total, Ps{600});
  EXPECT_EQ(rows[0].count, 2u);
  EXPECT_DOUBLE_EQ(rows[0].share, 0.6);
  EXPECT_DOUBLE_EQ(rows[1].share, 0.2);
  EXPECT_DOUBLE_EQ(rows[2].share, 0.2);
  EXPECT_EQ(b.total(), Ps{1000});
  Breakdown other;
  other.add("interrupt injection", Ps{100});
  b.merge(other);
  EXPECT_EQ(b.total_of("interrupt injection"), Ps{300});
  EXPECT_THROW(b.add(hc, Ps{-1}), std::invalid_argument);
}

}  // namespace
}  // namespace ipilab::sim
