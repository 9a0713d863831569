#include "common/hex.h"

#include <gtest/gtest.h>

#include "common/error.h"

namespace ipilab {
namespace {

TEST(Hex, ParsesRegisterValuesWithAndWithoutPrefix) {
  EXPECT_EQ(parse_hex_u64("0xfe", "--rdx"), 0xfeu);
  EXPECT_EQ(parse_hex_u64("FE", "--rdx"), 0xfeu);
  EXPECT_EQ(parse_hex_u64("0x0000_0001_0000_0000", "--rdx"), 0x100000000u);
  EXPECT_EQ(parse_hex_u64("0x00000000000000000000ffffffffffffffff", "--r8"), ~0ull);
}

TEST(Hex, RejectsOverflowAndBadDigitsNamingTheArgument) {
  try {
    parse_hex_u64("0x1_0000_0000_0000_0000", "--r8");
    FAIL() << "no throw";
  } catch (const InputError& e) {
    EXPECT_EQ(e.place(), "--r8");
    EXPECT_EQ(e.reason(), "'0x1_0000_0000_0000_0000' is too long for a 64-bit register: 17 significant hex digits, 16 at most");
  }
  EXPECT_EQ(parse_hex_u64("0x0_ffff_ffff_ffff_ffff", "--r8"), 0xffffffffffffffffULL);  // a leading zero is no digit
  EXPECT_THROW(parse_hex_u64("0xfg", "--rdx"), InputError);
  EXPECT_THROW(parse_hex_u64("", "--rdx"), InputError);
}

TEST(Hex, ByteStringsKeepMemoryOrder) {
  const auto b = parse_hex_bytes("fe 00 00 00 04:00,00 00", "--input");
  ASSERT_EQ(b.size(), 8u);
  EXPECT_EQ(b[0], 0xfe);
  EXPECT_EQ(b[4], 0x04);
  EXPECT_EQ(format_hex_bytes(b.data(), 2), "fe 00");
  EXPECT_THROW(parse_hex_bytes("fe0", "--input"), InputError);
  EXPECT_THROW(parse_hex_bytes("f e", "--input"), InputError);
}

}  // namespace
}  // namespace ipilab
