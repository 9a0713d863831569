// common/number.h: the one parser of user-given numbers, and its reasons.
#include "common/number.h"

#include <gtest/gtest.h>

#include "common/error.h"

namespace ipilab::number {
namespace {

TEST(NumberProblem, RealsRefuseNonFiniteJunkAndNonNumbers) {
  EXPECT_EQ(problem("2.5", Kind::Real), "");
  EXPECT_EQ(problem("1e-3", Kind::Real), "");
  EXPECT_EQ(problem("-4", Kind::Real), "");
  EXPECT_EQ(problem("nan", Kind::Real), "not a finite number: nan");
  EXPECT_EQ(problem("NaN", Kind::Real), "not a finite number: NaN");
  EXPECT_EQ(problem("-inf", Kind::Real), "not a finite number: -inf");
  EXPECT_EQ(problem("infinity", Kind::Real), "not a finite number: infinity");
  EXPECT_EQ(problem("1e999", Kind::Real), "1e999 is outside the range of a double");
  EXPECT_EQ(problem("2s", Kind::Real), "'2s' has characters after the number: 's'");
  EXPECT_EQ(problem("abc", Kind::Real), "not a number: abc");
  EXPECT_EQ(problem("", Kind::Real), "a number is expected, the value is empty");
}

TEST(NumberProblem, WholeNumbersSayWhatIsWrong) {
  EXPECT_EQ(problem("18446744073709551615", Kind::Unsigned), "");
  EXPECT_EQ(problem("0x10", Kind::Unsigned), "");
  EXPECT_EQ(problem("18446744073709551616", Kind::Unsigned),
            "18446744073709551616 exceeds the largest whole number 18446744073709551615");
  EXPECT_EQ(problem("-1", Kind::Unsigned), "-1 is negative: a whole number (0 or more) is expected");
  EXPECT_EQ(problem("abc", Kind::Unsigned), "not a whole number: abc");
  EXPECT_EQ(problem("1.5", Kind::Unsigned), "not a whole number: 1.5");
  EXPECT_EQ(problem("1e3", Kind::Unsigned), "not a whole number as written: 1e3 (write it in digits: 1000)");
  EXPECT_EQ(problem("100.0", Kind::Signed), "not a whole number as written: 100.0 (write it in digits: 100)");
  EXPECT_EQ(problem("1e400", Kind::Unsigned), "not a whole number: 1e400");
  EXPECT_EQ(problem("nan", Kind::Unsigned), "not a finite number: nan");
  EXPECT_EQ(problem("12x", Kind::Unsigned), "'12x' has characters after the number: 'x'");
  EXPECT_EQ(problem("-9223372036854775808", Kind::Signed), "");
  EXPECT_EQ(problem("9223372036854775808", Kind::Signed),
            "9223372036854775808 is outside the whole numbers -9223372036854775808 to 9223372036854775807");
}

TEST(NumberParse, ValuesAndPlacedErrors) {
  EXPECT_DOUBLE_EQ(parse_real("0.25", "--budget"), 0.25);
  EXPECT_EQ(parse_unsigned("0xff", "--x"), 255u);
  EXPECT_EQ(parse_signed("-42", "--x"), -42);
  try {
    parse_real("nan", "--budget");
    FAIL() << "no throw";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), "--budget: not a finite number: nan");
  }
  try {
    check_at_most(5000, 4095, "VP index", "--vps");
    FAIL() << "no throw";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), "--vps: 5000 exceeds the largest VP index 4095");
  }
}

}  // namespace
}  // namespace ipilab::number
