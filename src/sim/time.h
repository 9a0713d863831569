// ipilab/sim/time.h — simulated time: a strong integer type counting picoseconds.
//
// Why picoseconds: gem5 uses the same tick (1 ps: "Global frequency set at 1000000000000 ticks per
// second" in every gem5 run log). An int64 of ps spans
// +-106 days of simulated time, far beyond any run, and every cost of interest (a cache-line hop of
// ~20 ns, a cycle at 2.2 GHz = 454.5 ps) is a whole or near-whole number of ps, so sums of modeled
// steps stay exact and runs are bit-for-bit deterministic (no floating-point accumulation).
//
// Conversions from ns and cycles round to the nearest ps (the only rounding in the engine):
// cycles at f GHz -> ps = cycles * 1000 / f. Converting back (to_cycles) is exact up to that 0.5 ps.
#pragma once

#include <cmath>
#include <compare>
#include <cstdint>

namespace ipilab::sim {

/// A point in simulated time or a duration, in integer picoseconds. Arithmetic is plain int64
/// arithmetic (no saturation): callers keep values within +-9.2e18 ps.
struct Ps {
  std::int64_t v = 0;

  constexpr Ps() = default;
  constexpr explicit Ps(std::int64_t ps) : v(ps) {}

  friend constexpr auto operator<=>(Ps, Ps) = default;
  friend constexpr Ps operator+(Ps a, Ps b) { return Ps{a.v + b.v}; }
  friend constexpr Ps operator-(Ps a, Ps b) { return Ps{a.v - b.v}; }
  friend constexpr Ps operator*(Ps a, std::int64_t k) { return Ps{a.v * k}; }
  friend constexpr Ps operator*(std::int64_t k, Ps a) { return Ps{a.v * k}; }
  constexpr Ps& operator+=(Ps o) { v += o.v; return *this; }
  constexpr Ps& operator-=(Ps o) { v -= o.v; return *this; }

  /// Nanoseconds as a double (for reports).
  constexpr double ns() const { return static_cast<double>(v) / 1000.0; }
  /// Cycles at `ghz` GHz as a double (for reports in the unit of x86 guest loops).
  constexpr double cycles(double ghz) const { return static_cast<double>(v) * ghz / 1000.0; }
};

/// Integer picoseconds.
constexpr Ps ps(std::int64_t v) { return Ps{v}; }
/// Nanoseconds (may be fractional) -> Ps, rounded to the nearest ps.
inline Ps from_ns(double ns) { return Ps{static_cast<std::int64_t>(std::llround(ns * 1000.0))}; }
/// Microseconds -> Ps, rounded to the nearest ps.
inline Ps from_us(double us) { return Ps{static_cast<std::int64_t>(std::llround(us * 1e6))}; }
/// `cycles` of a clock running at `ghz` GHz -> Ps, rounded to the nearest ps. ghz must be > 0.
inline Ps from_cycles(double cycles, double ghz) {
  return Ps{static_cast<std::int64_t>(std::llround(cycles * 1000.0 / ghz))};
}

/// The largest representable time; used as "never".
inline constexpr Ps kNever{INT64_MAX};

}  // namespace ipilab::sim
