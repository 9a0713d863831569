// evidence/validate.h: relative figures (relative_to): parsing, the change in %, the tolerance in
// percentage points, and the refusals that keep them from passing for absolute ones.
#include "evidence/validate.h"

#include <gtest/gtest.h>

#include <string>

#include "common/error.h"
#include "figure_errors.h"

namespace ipilab::evidence {
namespace {

const std::string kHead = R"(
[[figure]]
id = "R1"
profile = "p"
figure = "a change"
source = "somewhere"
kind = "predicted"
scenario = "s"
variant = "after"
metric = "round_trip"
)";

using testing::parse_refusal;

TEST(RelativeFigure, ParsedWithItsBaseAndPointTolerance) {
  const auto f = parse_figures(kHead + "value = -3\nunit = \"%\"\nrelative_to = \"before\"\ntolerance_points = 0.5\n"
                                       "tolerance_reason = \"rounded to whole percents\"\n",
                               "f.toml");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].relative_to, "before");
  EXPECT_DOUBLE_EQ(f[0].value, -3);
  EXPECT_DOUBLE_EQ(f[0].tolerance, 0.5);
}

TEST(RelativeFigure, ChangeInPercentAndPointTolerance) {
  EXPECT_DOUBLE_EQ(relative_change_percent(97, 100), -3.0);
  EXPECT_DOUBLE_EQ(relative_change_percent(2600, 2500), 4.0);
  Figure f;
  f.value = -3;
  f.relative_to = "before";
  f.tolerance = 0.5;  // points: -3.5 .. -2.5 %
  EXPECT_TRUE(within_tolerance(f, -2.5));
  EXPECT_TRUE(within_tolerance(f, -3.5));
  EXPECT_FALSE(within_tolerance(f, -2.4));
  EXPECT_FALSE(within_tolerance(f, -3.6));
  // The same numbers as an absolute figure: 0.5 is relative (-4.5 .. -1.5).
  f.relative_to.clear();
  EXPECT_TRUE(within_tolerance(f, -2.4));
  EXPECT_FALSE(within_tolerance(f, -1.4));
}

TEST(RelativeFigure, Refusals) {
  const std::string ok_tail = "tolerance_reason = \"r\"\n";
  EXPECT_NE(parse_refusal(kHead + "value = -3\nunit = \"ns\"\nrelative_to = \"before\"\ntolerance_points = 0.5\n" + ok_tail)
                .find("unit = \"%\""),
            std::string::npos);
  EXPECT_NE(parse_refusal(kHead + "value = -3\nunit = \"%\"\nrelative_to = \"before\"\ntolerance = 0.1\n" + ok_tail).find("tolerance_points"),
            std::string::npos);
  EXPECT_NE(parse_refusal(kHead + "value = -3\nunit = \"%\"\nrelative_to = \"after\"\ntolerance_points = 0.5\n" + ok_tail).find("relative_to"),
            std::string::npos);
  EXPECT_NE(parse_refusal(kHead + "value = 100\nunit = \"ns\"\ntolerance = 0.1\ntolerance_points = 0.5\n" + ok_tail).find("only for a relative figure"),
            std::string::npos);
  EXPECT_NE(parse_refusal(kHead + "value = -3\nunit = \"%\"\nrelative_to = \"before\"\n" + ok_tail).find("tolerance_points: missing"),
            std::string::npos);
}

}  // namespace
}  // namespace ipilab::evidence
