// Core-to-core matrix (measure/c2c.h): shape, symmetry, NaN diagonal, CSV/JSON layout, bad CPU input.
#include <cmath>
#include <thread>

#include <gtest/gtest.h>

#include "common/error.h"
#include "measure/c2c.h"

namespace ipilab::measure {
namespace {

TEST(MeasureC2c, MatrixIsSquareSymmetricWithNanDiagonal) {
  if (std::thread::hardware_concurrency() < 2) GTEST_SKIP() << "needs at least 2 CPUs";
  C2cConfig c;
  c.pus = {0, 1};
  c.round_trips = 50;
  c.samples = 3;
  const C2cMatrix m = measure_c2c(c);
  ASSERT_EQ(m.pus.size(), 2u);
  ASSERT_EQ(m.mean_ns.size(), 2u);
  ASSERT_EQ(m.mean_ns[0].size(), 2u);
  EXPECT_TRUE(std::isnan(m.mean_ns[0][0]));
  EXPECT_TRUE(std::isnan(m.mean_ns[1][1]));
  EXPECT_GT(m.mean_ns[1][0], 0.0);
  EXPECT_EQ(m.mean_ns[1][0], m.mean_ns[0][1]);
  EXPECT_LE(m.min_ns[1][0], m.mean_ns[1][0]);
  EXPECT_EQ(m.median_pair_ns(), m.mean_ns[1][0]);
  // CSV: header + one row per CPU, empty diagonal cell.
  const std::string csv = c2c_csv(m);
  EXPECT_EQ(csv.rfind("cpu,0,1\n0,,", 0), 0u) << csv;
  const auto j = c2c_json(m);
  EXPECT_TRUE(j["mean_ns"][0][0].is_null());
  EXPECT_EQ(j["cpus"].size(), 2u);
  EXPECT_EQ(j["unit"], "ns");
}

TEST(MeasureC2c, UnknownCpuIsAnInputErrorNamingTheOption) {
  C2cConfig c;
  c.pus = {0, 100000};
  try {
    measure_c2c(c);
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.place(), "--cpus");
  }
}

TEST(MeasureC2c, SingleCpuIsUnavailable) {
  C2cConfig c;
  c.pus = {0};
  EXPECT_THROW(measure_c2c(c), UnavailableError);
}

}  // namespace
}  // namespace ipilab::measure
