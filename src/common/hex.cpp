#include "common/hex.h"

#include <fmt/format.h>

#include "common/error.h"

namespace ipilab {

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

namespace {

std::string_view strip_prefix(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t' || text.back() == '\n')) text.remove_suffix(1);
  if (text.size() >= 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) text.remove_prefix(2);
  return text;
}

}  // namespace

std::uint64_t parse_hex_u64(std::string_view text, std::string_view what) {
  const std::string_view body = strip_prefix(text);
  if (body.empty()) throw InputError(std::string(what), fmt::format("'{}' is not a hex number", text));
  std::uint64_t value = 0;
  int digits = 0;
  for (std::size_t i = 0; i < body.size(); ++i) {
    const char c = body[i];
    if (c == '_' || c == '\'') continue;
    const int d = hex_digit(c);
    if (d < 0)
      throw InputError(std::string(what),
                       fmt::format("'{}' is not a hex number (bad character '{}' at position {})", text, c, i));
    if (digits == 0 && d == 0) continue;  // leading zeros do not count towards the 16-digit limit
    ++digits;
    value = (value << 4) | static_cast<std::uint64_t>(d);
  }
  if (digits > 16)
    throw InputError(std::string(what), fmt::format("'{}' is too long for a 64-bit register: {} significant hex "
                                                    "digits, 16 at most",
                                                    text, digits));
  return value;
}

std::vector<std::uint8_t> parse_hex_bytes(std::string_view text, std::string_view what) {
  const std::string_view body = strip_prefix(text);
  std::vector<std::uint8_t> out;
  int high = -1;
  for (std::size_t i = 0; i < body.size(); ++i) {
    const char c = body[i];
    if (c == ' ' || c == ':' || c == ',' || c == '\n' || c == '\t' || c == '_') {
      if (high >= 0)
        throw InputError(std::string(what), fmt::format("a byte is cut in half at position {}", i));
      continue;
    }
    const int d = hex_digit(c);
    if (d < 0)
      throw InputError(std::string(what), fmt::format("bad character '{}' at position {} in a hex byte string", c, i));
    if (high < 0) {
      high = d;
    } else {
      out.push_back(static_cast<std::uint8_t>((high << 4) | d));
      high = -1;
    }
  }
  if (high >= 0) throw InputError(std::string(what), "odd number of hex digits: bytes are two digits each");
  return out;
}

std::string format_hex_bytes(const std::uint8_t* data, std::size_t size) {
  std::string out;
  out.reserve(size * 3);
  for (std::size_t i = 0; i < size; ++i) {
    if (i) out.push_back(' ');
    out += fmt::format("{:02x}", data[i]);
  }
  return out;
}

}  // namespace ipilab
