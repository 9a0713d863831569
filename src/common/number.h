// ipilab/common/number.h — the one parser of numbers given by users: every numeric command-line
// option (cli/main.cpp attaches it to each) and every number read from a TOML file.
//
// A number is refused with the precise reason: not a number ("abc"), not finite ("nan", "inf"),
// trailing characters ("12x"), negative where a whole number 0 or more is wanted, too large for
// its type, or outside the range its option allows. Reasons read "not a finite number: nan", so a
// caller prefixes the place: "--budget: not a finite number: nan".
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace ipilab::number {

enum class Kind : std::uint8_t {
  Real,      ///< a finite decimal number ("2", "0.5", "1e-3")
  Unsigned,  ///< a whole number 0 .. 2^64-1, decimal (or 0x hex)
  Signed,    ///< a whole number -2^63 .. 2^63-1, decimal (or 0x hex)
};

/// Why `text` is not a number of `kind` ("" when it is one).
std::string problem(std::string_view text, Kind kind);

/// The value, or InputError(place, problem) ("--budget: not a finite number: nan").
double parse_real(std::string_view text, std::string_view place);
std::uint64_t parse_unsigned(std::string_view text, std::string_view place);
std::int64_t parse_signed(std::string_view text, std::string_view place);

/// InputError(place, "<value> exceeds the largest <what> <max>") when value > max.
void check_at_most(std::uint64_t value, std::uint64_t max, std::string_view what, std::string_view place);
/// A finite value from a file (TOML): InputError(place, "not a finite number: nan") otherwise.
void check_finite(double value, std::string_view place);

}  // namespace ipilab::number
