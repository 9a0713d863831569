// Sensitivity's additivity flag (evidence/sensitivity.h): a time whose parts only add grows with each
// of them; one that falls as a cost rises, or moves the same way at both ends of its range, took
// another path at one end, and its tornado share is no share of variance.
#include "evidence/sensitivity.h"

#include <gtest/gtest.h>

namespace ipilab::evidence {
namespace {

TEST(Additive, ATimeGrowingWithItsCostIsAdditive) {
  EXPECT_TRUE(additive_in("ns", 100, 90, 110));
  EXPECT_TRUE(additive_in("cycles", 7759, 7759, 8100));  // one end at the mean: still monotonic
}

TEST(Additive, ATimeFallingAsItsCostRisesIsNot) {
  // seed 000's mainline loop: a dearer HLT exit lets the next IPI find the target on its way into HLT.
  EXPECT_FALSE(additive_in("cycles", 7759, 7759, 6957));
}

TEST(Additive, BothEndsOnOneSideOfTheMeanIsNot) {
  EXPECT_FALSE(additive_in("ns", 100, 110, 120));
  EXPECT_FALSE(additive_in("ns", 100, 90, 95));
}

TEST(Additive, ARateMayFallWithItsCosts) {
  EXPECT_TRUE(additive_in("calls/s", 100, 110, 90));
  EXPECT_FALSE(additive_in("calls/s", 100, 110, 105));  // but not sit on one side at both ends
}

TEST(Additive, WithinATenthOfAPercentIsNoMove) {
  EXPECT_TRUE(additive_in("ns", 1000, 1000.5, 999.6));
}

}  // namespace
}  // namespace ipilab::evidence
