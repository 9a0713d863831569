// ipilab/gic/bits.h — bit-field helpers shared by the GIC codecs (register and command layouts).
//
// Notation follows the Arm GIC specification (IHI 0069): a field [hi:lo] of a
// 64-bit word. All helpers are constexpr, total (no UB for any hi/lo with 0 <= lo <= hi <= 63).
#pragma once

#include <cstdint>
#include <string_view>

namespace ipilab::gic::bits {

/// Mask of bits [hi:lo] (inclusive), e.g. mask(47, 32) == 0x0000'FFFF'0000'0000.
constexpr std::uint64_t mask(unsigned hi, unsigned lo) {
  const unsigned width = hi - lo + 1;
  const std::uint64_t ones = width >= 64 ? ~std::uint64_t{0} : ((std::uint64_t{1} << width) - 1);
  return ones << lo;
}

/// Field [hi:lo] of `word`, shifted down to bit 0.
constexpr std::uint64_t get(std::uint64_t word, unsigned hi, unsigned lo) {
  return (word & mask(hi, lo)) >> lo;
}

/// `value` placed at [hi:lo]; bits of `value` that do not fit are dropped (check with fits()).
constexpr std::uint64_t put(std::uint64_t value, unsigned hi, unsigned lo) {
  return (value << lo) & mask(hi, lo);
}

/// True when `value` fits in a field [hi:lo].
constexpr bool fits(std::uint64_t value, unsigned hi, unsigned lo) {
  return value <= (mask(hi, lo) >> lo);
}

/// Single bit `n` of `word`.
constexpr bool bit(std::uint64_t word, unsigned n) { return ((word >> n) & 1U) != 0; }

/// `value` put in [hi:lo] of register `reg`; InputError("<reg>.<name>", "... does not fit in [hi:lo]")
/// when it does not fit (registers.cpp).
std::uint64_t checked_put(std::string_view reg, std::string_view name, std::uint64_t value, unsigned hi, unsigned lo);

}  // namespace ipilab::gic::bits
