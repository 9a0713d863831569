// Word counts of the Linux cpumask helpers (src/hv/guest_cpumask.h), following lib/find_bit.c and
// lib/bitmap.c loops: these counts are what the simulator prices for the pre-seed send path.
#include "hv/guest_cpumask.h"

#include <gtest/gtest.h>

#include <stdexcept>

namespace ipilab::hv {
namespace {

TEST(Cpumask, SizeIsNrCpusBitsWhateverTheScanLength) {
  EXPECT_EQ(Cpumask(8192).size_bytes(), 1024u);  // struct cpumask { DECLARE_BITMAP(bits, NR_CPUS); }
  EXPECT_EQ(Cpumask(64).size_bytes(), 8u);
  EXPECT_EQ(Cpumask(65).size_bytes(), 16u);
  EXPECT_THROW(Cpumask(0), std::invalid_argument);
  EXPECT_THROW(Cpumask(8193), std::invalid_argument);
  EXPECT_THROW(Cpumask::of(64, {64}), std::invalid_argument);
}

TEST(Cpumask, PlainAccessorsReadBackWhatWasSet) {
  Cpumask m = Cpumask::of(8192, {0, 63, 64, 8191});
  EXPECT_EQ(m.cpus(), (std::vector<unsigned>{0, 63, 64, 8191}));
  EXPECT_EQ(m.count(), 4u);
  EXPECT_EQ(m.end(), 8192u);
  m.clear(8191);
  EXPECT_EQ(m.end(), 65u);
  EXPECT_EQ(m.word(1), 1ull);
  EXPECT_FALSE(Cpumask(128).any());
}

TEST(LinuxFindBit, EmptyStopsAtFirstNonZeroWord) {
  CpumaskWork w;
  CpumaskOps ops(8192, 8192, w);
  EXPECT_FALSE(ops.empty(Cpumask::of(8192, {1})));
  EXPECT_EQ(w.empty, 1u);
  EXPECT_FALSE(ops.empty(Cpumask::of(8192, {200})));  // word 3
  EXPECT_EQ(w.empty, 1u + 4u);
  EXPECT_TRUE(ops.empty(Cpumask(8192)));  // all 128 words
  EXPECT_EQ(w.empty, 5u + 128u);
}

TEST(LinuxFindBit, LastScansDownFromTheTop) {
  CpumaskWork w;
  CpumaskOps ops(8192, 8192, w);
  EXPECT_EQ(ops.last(Cpumask::of(8192, {1})), 1u);
  EXPECT_EQ(w.last, 128u);  // words 127 .. 0
  CpumaskWork w2;
  CpumaskOps ops2(2, 2, w2);  // nr_cpumask_bits = nr_cpu_ids = 2
  EXPECT_EQ(ops2.last(Cpumask::of(8192, {1})), 1u);
  EXPECT_EQ(w2.last, 1u);
}

TEST(LinuxFindBit, ForEachCountsEveryFindNextBitCall) {
  // for_each_cpu over {1} with 8192 bits: next(-1) loads word 0; next(1) loads words 0..127.
  CpumaskWork w;
  CpumaskOps ops(8192, 8192, w);
  const Cpumask m = Cpumask::of(8192, {1});
  std::vector<unsigned> seen;
  for (unsigned c = ops.next(-1, m); c < 8192; c = ops.next(static_cast<int>(c), m)) seen.push_back(c);
  EXPECT_EQ(seen, (std::vector<unsigned>{1}));
  EXPECT_EQ(w.for_each, 1u + 128u);

  // With nr_cpumask_bits = 2: next(1) starts at 2 >= nbits and loads nothing.
  CpumaskWork w2;
  CpumaskOps ops2(2, 2, w2);
  for (unsigned c = ops2.next(-1, m); c < 2; c = ops2.next(static_cast<int>(c), m)) {
  }
  EXPECT_EQ(w2.for_each, 1u);

  // With 64 bits: next(1) loads word 0 again, then stops at the end.
  CpumaskWork w3;
  CpumaskOps ops3(64, 64, w3);
  const Cpumask m64 = Cpumask::of(64, {1});
  for (unsigned c = ops3.next(-1, m64); c < 64; c = ops3.next(static_cast<int>(c), m64)) {
  }
  EXPECT_EQ(w3.for_each, 2u);
}

TEST(LinuxFindBit, NextFindsBitsAcrossWords) {
  CpumaskWork w;
  CpumaskOps ops(8192, 8192, w);
  const Cpumask m = Cpumask::of(8192, {3, 130, 8000});
  std::vector<unsigned> seen;
  for (unsigned c = ops.next(-1, m); c < 8192; c = ops.next(static_cast<int>(c), m)) seen.push_back(c);
  EXPECT_EQ(seen, (std::vector<unsigned>{3, 130, 8000}));
  // next(-1): word 0. next(3): words 0,1,2. next(130): words 2..125 (8000 / 64 = 125). next(8000): 125..127.
  EXPECT_EQ(w.for_each, 1u + 3u + 124u + 3u);
}

TEST(LinuxBitmap, WeightLoadsEveryWordEqualStopsAtFirstDifference) {
  CpumaskWork w;
  CpumaskOps ops(8192, 8192, w);
  EXPECT_EQ(ops.weight(Cpumask::of(8192, {0, 1, 4000})), 3u);
  EXPECT_EQ(w.weight, 128u);
  EXPECT_FALSE(ops.equal(Cpumask::of(8192, {1}), Cpumask::of(8192, {0, 1})));
  EXPECT_EQ(w.equal, 1u);
  EXPECT_TRUE(ops.equal(Cpumask::of(8192, {0, 1}), Cpumask::of(8192, {0, 1})));
  EXPECT_EQ(w.equal, 1u + 128u);
  CpumaskWork w2;
  CpumaskOps ops2(70, 70, w2);  // a tail word: 1 full word + masked tail
  EXPECT_TRUE(ops2.equal(Cpumask::of(128, {1, 100}), Cpumask::of(128, {1})));  // bit 100 is beyond 70 bits
  EXPECT_EQ(w2.equal, 2u);
}

TEST(LinuxBitmap, CopyAndSetClearCountWords) {
  CpumaskWork w;
  CpumaskOps ops(2, 2, w);  // OFFSTACK: cpumask_copy copies BITS_TO_LONGS(nr_cpu_ids) words
  Cpumask dst(8192);
  ops.copy(dst, Cpumask::of(8192, {0, 1}));
  EXPECT_EQ(w.copy, 1u);
  ops.clear_cpu(0, dst);
  ops.set_cpu(5, dst);
  EXPECT_EQ(w.set_clear, 2u);
  EXPECT_TRUE(ops.test_cpu(1, dst));
  EXPECT_EQ(w.test, 1u);
  EXPECT_EQ(dst.cpus(), (std::vector<unsigned>{1, 5}));
  EXPECT_EQ(w.total(), 4u);
}

}  // namespace
}  // namespace ipilab::hv
