// evidence/stats.h: the hypercube's strata, quantiles, intervals, first-order indices.
#include "evidence/stats.h"

#include <gtest/gtest.h>

#include <set>

namespace ipilab::evidence {
namespace {

TEST(LatinHypercube, EveryStratumOnceAndDeterministic) {
  const auto d = latin_hypercube(50, 3, 7);
  ASSERT_EQ(d.size(), 50u);
  for (std::size_t j = 0; j < 3; ++j) {
    std::set<int> strata;
    for (const auto& row : d) {
      ASSERT_GE(row[j], 0.0);
      ASSERT_LT(row[j], 1.0);
      strata.insert(static_cast<int>(row[j] * 50));
    }
    EXPECT_EQ(strata.size(), 50u) << "input " << j;
  }
  EXPECT_EQ(d, latin_hypercube(50, 3, 7));
  EXPECT_NE(d, latin_hypercube(50, 3, 8));
}

TEST(Quantile, Type7) {
  const std::vector<double> v{4, 1, 3, 2, 5};
  EXPECT_DOUBLE_EQ(quantile(v, 0), 1);
  EXPECT_DOUBLE_EQ(quantile(v, 0.5), 3);
  EXPECT_DOUBLE_EQ(quantile(v, 0.05), 1.2);  // h = 4 * 0.05 = 0.2
  EXPECT_DOUBLE_EQ(quantile(v, 1), 5);
  const Interval i = central_interval(v, 0.9);
  EXPECT_DOUBLE_EQ(i.lo, 1.2);
  EXPECT_DOUBLE_EQ(i.hi, 4.8);
  EXPECT_TRUE((Interval{-1, 2}.spans_zero()));
  EXPECT_FALSE((Interval{0.5, 2}.spans_zero()));
}

TEST(FirstOrder, LinearSumAndAnInputWithoutEffect) {
  // y = 3 a + b + 0 c over a hypercube: shares 9/10, 1/10, 0.
  const auto d = latin_hypercube(4000, 3, 1);
  std::vector<double> a, b, c, y;
  for (const auto& r : d) {
    a.push_back(r[0]);
    b.push_back(r[1]);
    c.push_back(r[2]);
    y.push_back(3 * r[0] + r[1]);
  }
  EXPECT_NEAR(first_order_index(a, y), 0.9, 0.03);
  EXPECT_NEAR(first_order_index(b, y), 0.1, 0.03);
  EXPECT_NEAR(first_order_index(c, y), 0.0, 0.03);
  const std::vector<double> sw{3, 1, 0};
  const auto sh = additive_shares(sw);
  EXPECT_DOUBLE_EQ(sh[0], 0.9);
  EXPECT_DOUBLE_EQ(sh[1], 0.1);
  EXPECT_DOUBLE_EQ(sh[2], 0.0);
}

}  // namespace
}  // namespace ipilab::evidence
