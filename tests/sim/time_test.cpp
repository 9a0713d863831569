// Tests of sim/time.h conversions.
#include "sim/time.h"

#include <gtest/gtest.h>

namespace ipilab::sim {
namespace {

TEST(Time, Conversions_RoundToNearestPs) {
  EXPECT_EQ(from_ns(750.0), Ps{750'000});
  EXPECT_EQ(from_ns(0.0004), Ps{0});
  EXPECT_EQ(from_us(2.24), Ps{2'240'000});
  // 1 cycle at 2.2 GHz (Xeon E5-2420 v2 base clock) = 454.545... ps -> 455 ps.
  EXPECT_EQ(from_cycles(1, 2.2), Ps{455});
  // 8043 cycles at 2.2 GHz = 3 655 909.09 ps; back to cycles within 0.5 ps * 2.2e-3.
  EXPECT_NEAR(from_cycles(8043, 2.2).cycles(2.2), 8043.0, 1e-3);
  EXPECT_DOUBLE_EQ(Ps{1500}.ns(), 1.5);
}

TEST(Time, Arithmetic_IsExact) {
  Ps t = Ps{10} + Ps{5} * 3;
  t -= Ps{1};
  EXPECT_EQ(t, Ps{24});
  EXPECT_LT(Ps{1}, kNever);
}

}  // namespace
}  // namespace ipilab::sim
