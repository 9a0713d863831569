// Tests of what sim::Histogram offers the trace reader (sim/histogram.h): unsigned input, integer
// nearest-rank quantiles with the meaning trace::LatencyHistogram gave them, the bucket list for
// plots and CSV, merge of such histograms, and bins for an empirical profile entry.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <stdexcept>
#include <vector>

#include "sim/histogram.h"
#include "sim/rng.h"

namespace ipilab::sim {
namespace {

// The nearest-rank order statistic for a fraction p (rank ceil(p n), at least 1).
std::int64_t exact_quantile(std::vector<std::int64_t> v, double p) {
  std::sort(v.begin(), v.end());
  if (p >= 1) return v.back();
  if (p <= 0) return v.front();
  auto rank = static_cast<std::size_t>(std::ceil(p * static_cast<double>(v.size())));
  rank = std::clamp<std::size_t>(rank, 1, v.size());
  return v[rank - 1];
}

TEST(HistogramForTraces, Quantile_ExactBelow256_AndEnds) {
  Histogram h;
  for (std::uint64_t v : {5u, 7u, 7u, 9u, 200u}) h.add(v);
  EXPECT_EQ(h.quantile(0.5), 7);
  EXPECT_EQ(h.quantile(0.2), 5);   // rank 1
  EXPECT_EQ(h.quantile(0.21), 7);  // rank ceil(1.05) = 2
  EXPECT_EQ(h.quantile(0.8), 9);
  EXPECT_EQ(h.quantile(0.81), 200);
  EXPECT_EQ(h.quantile(1.0), 200);
  EXPECT_EQ(h.quantile(0.0), 5);
  EXPECT_EQ(h.quantile(-1.0), 5);
  EXPECT_EQ(Histogram{}.quantile(0.5), 0);
}

TEST(HistogramForTraces, Quantile_IsTheBucketMidpointRoundedDown_ClampedToMinMax) {
  // 1000 lies in the bucket [1000, 1003] (width 4 for values 512..1023): midpoint 1000 + 3 / 2 = 1001.
  Histogram h;
  h.add(999);
  h.add(1000);
  h.add(1002);
  h.add(5000);
  EXPECT_EQ(Histogram::bucket_low(Histogram::bucket_of(1000)), 1000u);
  EXPECT_EQ(Histogram::bucket_high(Histogram::bucket_of(1000)), 1003u);
  EXPECT_EQ(h.quantile(0.5), 1001);   // rank 2: 1000's bucket
  EXPECT_EQ(h.quantile(0.75), 1001);  // rank 3: 1002, same bucket
  // The top bucket of 5000 is [4992, 5023] (width 32): its midpoint 5007 is clamped to max 5000.
  EXPECT_EQ(h.quantile(0.99), 5000);
  Histogram one;
  one.add(4993);  // alone: min = max = 4993, so the midpoint 5007 is clamped to it
  EXPECT_EQ(one.quantile(0.5), 4993);
}

TEST(HistogramForTraces, Quantile_WithinStatedErrorOfTheOrderStatistic) {
  Rng rng(21);
  std::vector<std::int64_t> xs;
  Histogram h;
  for (int i = 0; i < 100'000; ++i) {
    const auto v = static_cast<std::int64_t>(rng.with_spread(3000.0, 0.8));  // ns-like latencies
    xs.push_back(v);
    h.add(static_cast<std::uint64_t>(v));
  }
  for (double p : {0.001, 0.01, 0.1, 0.5, 0.9, 0.99, 0.999, 1.0}) {
    const std::int64_t want = exact_quantile(xs, p);
    const std::int64_t got = h.quantile(p);
    EXPECT_LE(std::abs(static_cast<double>(got - want)), Histogram::kMaxRelativeError * static_cast<double>(want) + 0.5)
        << "p=" << p;
    if (p < 1) {  // the double form, rounded down (at p = 1 quantile() is the exact max)
      EXPECT_EQ(static_cast<double>(got), std::floor(h.percentile(p * 100))) << "p=" << p;
    }
  }
}

TEST(HistogramForTraces, Add_RejectsValuesAboveInt64Max) {
  Histogram h;
  h.add(static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()));
  EXPECT_EQ(h.max(), std::numeric_limits<std::int64_t>::max());
  EXPECT_THROW(h.add(static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()) + 1), std::invalid_argument);
}

TEST(HistogramForTraces, Buckets_ListNonEmptyBucketsAscending_CountsAddUp) {
  Histogram h;
  for (std::uint64_t v : {3u, 3u, 255u, 256u, 257u, 258u, 100'000u}) h.add(v);
  const auto bs = h.buckets();
  ASSERT_EQ(bs.size(), 5u);
  EXPECT_EQ(bs[0].low, 3u);
  EXPECT_EQ(bs[0].high, 3u);
  EXPECT_EQ(bs[0].count, 2u);
  EXPECT_EQ(bs[1].low, 255u);
  EXPECT_EQ(bs[2].low, 256u);  // values 256..511 are in buckets of width 2: [256, 257], [258, 259]
  EXPECT_EQ(bs[2].high, 257u);
  EXPECT_EQ(bs[2].count, 2u);
  EXPECT_EQ(bs[3].low, 258u);
  EXPECT_EQ(bs[3].high, 259u);
  EXPECT_EQ(bs[4].low, 99'840u);  // 100000 in [65536, 131071]: buckets of width 512
  EXPECT_EQ(bs[4].high, 100'351u);
  std::uint64_t total = 0;
  for (const auto& b : h.buckets()) {
    total += b.count;
    EXPECT_LE(b.low, b.high);
  }
  EXPECT_EQ(total, h.count());
}

TEST(HistogramForTraces, Memory_IsPerRangeUsed_SoPerPairHistogramsStaySmall) {
  // A trace keeps one histogram per CPU pair: an empty one holds no counters, a latency histogram
  // with one far outlier two blocks of 1 KiB (the ~5 us values' power of two and the outlier's).
  Histogram empty;
  EXPECT_EQ(empty.memory_bytes(), 0u);
  Histogram h;
  for (std::uint64_t v = 4100; v < 8000; v += 7) h.add(v);
  h.add(1'000'000'000);  // 1 s
  EXPECT_LE(h.memory_bytes(), 2 * 128 * sizeof(std::uint64_t) + 32 * sizeof(std::vector<std::uint64_t>));
  EXPECT_EQ(h.quantile(1.0), 1'000'000'000);
  EXPECT_EQ(h.buckets().size(), 122u + 1u);  // 4100..7999 touch 122 buckets of width 32, and the outlier
}

TEST(HistogramForTraces, Merge_OfTraceHistograms_EqualsAddingEverything) {
  Rng rng(22);
  Histogram a, b, all;
  for (int i = 0; i < 20'000; ++i) {
    const auto v = static_cast<std::uint64_t>(rng.with_spread(800.0, 1.0));
    (i % 4 ? a : b).add(v);
    all.add(v);
  }
  a.merge(b);
  EXPECT_EQ(a.count(), all.count());
  EXPECT_EQ(a.min(), all.min());
  EXPECT_EQ(a.max(), all.max());
  EXPECT_EQ(a.mean(), all.mean());
  for (double p : {0.5, 0.9, 0.99}) EXPECT_EQ(a.quantile(p), all.quantile(p));
  ASSERT_EQ(a.buckets().size(), all.buckets().size());
  for (std::size_t i = 0; i < all.buckets().size(); ++i) EXPECT_EQ(a.buckets()[i].count, all.buckets()[i].count);
}

TEST(HistogramForTraces, EmpiricalBins_AreTheBucketsAsRanges_OrMergedToBoundedWidth) {
  Histogram h;
  for (std::uint64_t v : {10u, 10u, 11u, 300u, 301u}) h.add(v);
  const auto fine = h.empirical_bins();
  ASSERT_EQ(fine.size(), 3u);
  EXPECT_DOUBLE_EQ(fine[0].lo, 10);
  EXPECT_DOUBLE_EQ(fine[0].hi, 11);  // the whole value 10 is [10, 11)
  EXPECT_DOUBLE_EQ(fine[0].count, 2);
  EXPECT_DOUBLE_EQ(fine[2].lo, 300);  // 300 and 301 share the bucket [300, 301]
  EXPECT_DOUBLE_EQ(fine[2].hi, 302);
  EXPECT_DOUBLE_EQ(fine[2].count, 2);
  // A latency distribution merged to at most 20 bins: ascending, non-overlapping, counts add up,
  // and usable as a profile's empirical distribution (its mean within 1 %).
  Rng rng(23);
  Histogram lat;
  for (int i = 0; i < 50'000; ++i) lat.add(static_cast<std::uint64_t>(rng.with_spread(20'000.0, 0.3)));
  const auto bins = lat.empirical_bins(20);
  ASSERT_LE(bins.size(), 20u);
  ASSERT_GE(bins.size(), 15u);
  double total = 0, m = 0;
  for (std::size_t i = 0; i < bins.size(); ++i) {
    EXPECT_LT(bins[i].lo, bins[i].hi);
    if (i) {
      EXPECT_LE(bins[i - 1].hi, bins[i].lo);
    }
    total += bins[i].count;
    m += bins[i].count * (bins[i].lo + bins[i].hi) / 2;
  }
  EXPECT_DOUBLE_EQ(total, 50'000.0);
  EXPECT_NEAR(m / total, lat.mean(), 0.01 * lat.mean());  // what a profile entry requires
  const Distribution d = Distribution::empirical(Ps{static_cast<std::int64_t>(lat.mean())}, bins);
  EXPECT_NEAR(d.scale(), 1.0, 0.01);
  std::printf("20 bins of a 30 %% lognormal: %zu bins, mean %+.3f %% off\n", bins.size(), 100 * (m / total / lat.mean() - 1));
  // A heavier tail (relative spread 1.0, values over ~3 decades) in 40 bins.
  Histogram heavy;
  for (int i = 0; i < 50'000; ++i) heavy.add(static_cast<std::uint64_t>(rng.with_spread(20'000.0, 1.0)));
  const auto hb = heavy.empirical_bins(40);
  ASSERT_LE(hb.size(), 40u);
  double ht = 0, hm = 0;
  for (const auto& b : hb) {
    ht += b.count;
    hm += b.count * (b.lo + b.hi) / 2;
  }
  EXPECT_NEAR(hm / ht, heavy.mean(), 0.01 * heavy.mean());
  std::printf("40 bins of a 100 %% lognormal: %zu bins, mean %+.3f %% off\n", hb.size(), 100 * (hm / ht / heavy.mean() - 1));
}

}  // namespace
}  // namespace ipilab::sim
