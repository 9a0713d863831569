// ipilab/common/hex.h — parsing the hex people paste: register values and byte strings.
//
// Accepted forms: "0x1f", "1F", "0x0000_0000_0000_00fe" (underscores and spaces between digits are
// ignored in integers); byte strings are pairs of hex digits, optionally separated by spaces, ':' or
// ',', with an optional leading "0x" (then read as a byte string in memory order, first byte first).
// Errors: InputError naming `what` (e.g. "--rdx") and the offending character position.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ipilab {

/// The value of one hex digit (0-9, a-f, A-F), or -1 for any other character.
int hex_digit(char c);

/// Parses an unsigned integer written in hex (with or without 0x) or, with a "0d"/no-hex-letters
/// decimal prefix never: hex only, so "10" is 16. Throws InputError(what, reason) on bad digits or
/// a value that does not fit in 64 bits.
std::uint64_t parse_hex_u64(std::string_view text, std::string_view what);

/// Parses a byte string "fe 00 00 00 ..." / "fe000000..." into bytes, first byte first. Throws
/// InputError on an odd number of digits or a bad character (position given).
std::vector<std::uint8_t> parse_hex_bytes(std::string_view text, std::string_view what);

/// Formats bytes as lowercase hex pairs separated by single spaces ("fe 00 00 00").
std::string format_hex_bytes(const std::uint8_t* data, std::size_t size);

}  // namespace ipilab
