// ipilab/sweep/points.h — the points of a sweep: the cartesian product of its axes, each with the
// overrides it applies, a seed derived from those overrides, its [[skip]] reason and its baseline.
//
// Order: the first axis varies slowest (nested loops in axis order); `index` is the position in that
// order and is used only to lay out the output. Nothing else depends on it: a point's seed is a hash
// of its overrides, so the same point gets the same seed whatever the order, the axis order, the
// other axes' values, the worker count or the MPI rank that runs it.
//
// Seed: FNV-1a (64-bit) over the point's `key` (its overrides flattened to "dotted.key = value" lines
// in canonical form, sorted), then mixed with the base seed by splitmix64's finaliser:
//   seed = splitmix64(base_seed ^ splitmix64(fnv1a64(key)))
// With Spec::per_point_seeds false every point runs with the base seed (common random numbers).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <toml++/toml.h>

#include "sweep/spec.h"

namespace ipilab::sweep {

struct Point {
  std::size_t index = 0;             ///< position in the cartesian order
  std::vector<std::size_t> value;    ///< per axis: the index of its value
  std::string label;                 ///< "sockets=4, vcpus=16" (axis names and value labels)
  std::string key;                   ///< the flattened overrides, one "k = v" line each, sorted
  std::uint64_t seed = 0;
  std::optional<std::string> skip;   ///< the [[skip]] reason (or, later, a build error) when skipped
  std::size_t baseline = 0;          ///< index of the point this one is compared against
};

/// All points of `spec` in cartesian order (skips and baselines resolved). `base_seed` is the seed
/// the points derive theirs from (the spec's, the command line's or the scenario's).
std::vector<Point> expand(const Spec& spec, std::uint64_t base_seed);

/// The overrides of a point: every axis' value table deep-merged (axes set disjoint keys).
toml::table point_overrides(const Spec& spec, const Point& p);

/// seed = splitmix64(base ^ splitmix64(fnv1a64(key))) (see the file comment).
std::uint64_t point_seed(std::uint64_t base, std::string_view key) noexcept;
std::uint64_t fnv1a64(std::string_view s) noexcept;
std::uint64_t splitmix64(std::uint64_t x) noexcept;

/// Whether skip `s` matches the point with value indexes `v`.
bool matches(const Spec& spec, const Skip& s, const std::vector<std::size_t>& v);

}  // namespace ipilab::sweep
