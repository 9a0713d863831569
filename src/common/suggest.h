// ipilab/common/suggest.h — "did you mean" for misspelt names (scenarios, presets, profiles,
// workloads, variants, mechanisms, cost keys, subcommands and options).
//
// A candidate is suggested when it is close to what was typed: an optimal-string-alignment edit
// distance (insertions, deletions, substitutions and swaps of two neighbours count one each,
// compared without case) of at most max(1, min(4, length / 4)), or, for a name of 3 characters or
// more, when one contains the other ("ipi-hw" -> "seed003-ipi-hw"). An exact match (ignoring case)
// is the only suggestion. Closest first, ties by name; at most three.
#pragma once

#include <cstddef>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace ipilab {

/// Optimal string alignment distance between `a` and `b`, ignoring ASCII case.
std::size_t edit_distance(std::string_view a, std::string_view b);

/// The candidates close to `typed` (see above), closest first; empty when none is close.
std::vector<std::string> suggestions(std::string_view typed, std::span<const std::string> candidates);

/// "; did you mean 'x'?" / "; did you mean 'x' or 'y'?" / "; did you mean 'x', 'y' or 'z'?", or ""
/// when nothing is close: meant to be appended to an error's reason.
std::string did_you_mean(std::string_view typed, std::span<const std::string> candidates);

/// The same text for suggestions already chosen ("" for none).
std::string suggestion_text(std::span<const std::string> suggestions);

/// did_you_mean() over the names `name_of(x)` of the elements of `range` (a registry, a catalog).
template <class Range, class NameOf>
std::string did_you_mean_in(std::string_view typed, const Range& range, NameOf name_of) {
  std::vector<std::string> names;
  for (const auto& x : range) names.emplace_back(name_of(x));
  return did_you_mean(typed, names);
}

/// For a relative file path that was not found (e.g. "profiles/kvm-skylake.toml"): the same
/// did_you_mean() text over the files with the same extension in `rel`'s folder under each of
/// `roots` (e.g. the scenario's folder and the data folder), written as `rel` with the file name
/// replaced ("; did you mean 'profiles/kvm-skylake-pv-ipi.toml'?"). "" when none is close.
std::string did_you_mean_file(const std::filesystem::path& rel, std::span<const std::filesystem::path> roots);

}  // namespace ipilab
