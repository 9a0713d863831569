// The number parser of number.h: std::from_chars (exact, locale-free, no leading '+' or spaces).
#include "common/number.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "common/error.h"

namespace ipilab::number {

namespace {

std::string lower(std::string_view s) {
  std::string o(s);
  for (char& c : o) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return o;
}

bool names_non_finite(std::string_view t) {
  std::string l = lower(t);
  if (!l.empty() && (l[0] == '-' || l[0] == '+')) l.erase(0, 1);
  return l.rfind("nan", 0) == 0 || l.rfind("inf", 0) == 0;
}

template <typename T>
std::string whole_problem(std::string_view text, Kind kind) {
  std::string_view t = text;
  int base = 10;
  const bool neg = !t.empty() && t[0] == '-';
  std::string_view digits = neg ? t.substr(1) : t;
  if (digits.size() > 2 && digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X')) {
    base = 16;
    digits.remove_prefix(2);
  }
  if (kind == Kind::Unsigned && neg) return fmt::format("{} is negative: a whole number (0 or more) is expected", text);
  if (digits.empty() || !std::isxdigit(static_cast<unsigned char>(digits[0])) ||
      (base == 10 && !std::isdigit(static_cast<unsigned char>(digits[0])))) {
    if (names_non_finite(text)) return fmt::format("not a finite number: {}", text);
    return fmt::format("not a whole number: {}", text);
  }
  T v{};
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v, base);
  if (ec == std::errc::result_out_of_range || (neg && v > static_cast<T>(std::numeric_limits<std::int64_t>::max()) + 1) ||
      (!neg && kind == Kind::Signed && v > static_cast<T>(std::numeric_limits<std::int64_t>::max())))
    return kind == Kind::Unsigned
               ? fmt::format("{} exceeds the largest whole number {}", text, std::numeric_limits<std::uint64_t>::max())
               : fmt::format("{} is outside the whole numbers {} to {}", text, std::numeric_limits<std::int64_t>::min(),
                             std::numeric_limits<std::int64_t>::max());
  if (end != digits.data() + digits.size()) {
    const std::string_view rest(end, static_cast<std::size_t>(digits.data() + digits.size() - end));
    if (!rest.empty() && (rest[0] == '.' || rest[0] == 'e' || rest[0] == 'E')) {
      // "1e3" or "100.0": a whole value written as a real number; name it in digits.
      double r = 0;
      const auto [rend, rec] = std::from_chars(text.data(), text.data() + text.size(), r);
      if (rec == std::errc{} && rend == text.data() + text.size() && std::isfinite(r) && r == std::floor(r) && std::fabs(r) < 9.2e18 &&
          !(kind == Kind::Unsigned && r < 0))
        return fmt::format("not a whole number as written: {} (write it in digits: {})", text, static_cast<std::int64_t>(r));
      return fmt::format("not a whole number: {}", text);
    }
    return fmt::format("'{}' has characters after the number: '{}'", text, rest);
  }
  return {};
}

}  // namespace

std::string problem(std::string_view text, Kind kind) {
  if (text.empty()) return "a number is expected, the value is empty";
  if (kind != Kind::Real) return whole_problem<std::uint64_t>(text, kind);
  if (names_non_finite(text)) return fmt::format("not a finite number: {}", text);
  const std::string_view t = !text.empty() && text[0] == '+' ? text.substr(1) : text;
  double v = 0;
  const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  if (end == t.data()) return fmt::format("not a number: {}", text);
  if (ec == std::errc::result_out_of_range) return fmt::format("{} is outside the range of a double", text);
  if (end != t.data() + t.size())
    return fmt::format("'{}' has characters after the number: '{}'", text,
                       std::string_view(end, static_cast<std::size_t>(t.data() + t.size() - end)));
  if (!std::isfinite(v)) return fmt::format("not a finite number: {}", text);
  return {};
}

double parse_real(std::string_view text, std::string_view place) {
  if (std::string p = problem(text, Kind::Real); !p.empty()) throw InputError(std::string(place), p);
  const std::string_view t = text[0] == '+' ? text.substr(1) : text;
  double v = 0;
  std::from_chars(t.data(), t.data() + t.size(), v);
  return v;
}

std::uint64_t parse_unsigned(std::string_view text, std::string_view place) {
  if (std::string p = problem(text, Kind::Unsigned); !p.empty()) throw InputError(std::string(place), p);
  const bool hex = text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X');
  std::uint64_t v = 0;
  std::from_chars(text.data() + (hex ? 2 : 0), text.data() + text.size(), v, hex ? 16 : 10);
  return v;
}

std::int64_t parse_signed(std::string_view text, std::string_view place) {
  if (std::string p = problem(text, Kind::Signed); !p.empty()) throw InputError(std::string(place), p);
  const bool neg = text[0] == '-';
  std::string_view d = neg ? text.substr(1) : text;
  const bool hex = d.size() > 2 && d[0] == '0' && (d[1] == 'x' || d[1] == 'X');
  std::uint64_t v = 0;
  std::from_chars(d.data() + (hex ? 2 : 0), d.data() + d.size(), v, hex ? 16 : 10);
  return neg ? static_cast<std::int64_t>(0 - v) : static_cast<std::int64_t>(v);
}

void check_at_most(std::uint64_t value, std::uint64_t max, std::string_view what, std::string_view place) {
  if (value > max) throw InputError(std::string(place), fmt::format("{} exceeds the largest {} {}", value, what, max));
}

void check_finite(double value, std::string_view place) {
  if (!std::isfinite(value)) throw InputError(std::string(place), fmt::format("not a finite number: {}", value));
}

}  // namespace ipilab::number
