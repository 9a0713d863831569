// ipilab/sweep/base.h — the base scenario of a sweep, and one point as a scenario variant.
//
// A point is built exactly like a [[variant]] of the base scenario (scenario/scenario.h): the base
// variant's merged document (the scenario's first variant, or [sweep] variant) with the point's
// overrides deep-merged over it (a host that sets preset or file replaces the base host), then
// scenario::prepare() with the point's seed and the sweep's iterations, then scenario::run(). The
// base text is parsed again for each point so every node is fresh and keeps its source position
// (an error in a base value names the scenario's line; an error in a value the sweep set names the
// spec's line, see BuildError below).
//
// Thread safety: a Base is immutable after load(); build() and run_point() may be called from many
// threads at once (each builds its own documents, host, profile copy and workload object).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/error.h"
#include "scenario/runner.h"
#include "sweep/points.h"
#include "sweep/result.h"
#include "sweep/spec.h"

namespace ipilab::sweep {

class Base {
 public:
  /// Finds spec.scenario (a path beside the spec, a path as given, or a built-in name), reads and
  /// parses it and selects the base variant. InputError at spec.scenario / spec.variant otherwise.
  static Base load(const Spec& spec);

  const std::string& file() const noexcept { return file_; }         ///< as opened
  const std::string& shown_file() const noexcept { return shown_; }  ///< relative to the data folder when there
  const std::string& name() const noexcept { return name_; }
  const std::string& title() const noexcept { return title_; }
  const std::string& workload() const noexcept { return workload_; }
  const std::string& variant() const noexcept { return variant_; }
  std::uint64_t seed() const noexcept { return seed_; }              ///< the scenario's
  std::uint64_t iterations() const noexcept { return iterations_; }  ///< the scenario's
  std::uint64_t warmup() const noexcept { return warmup_; }

  /// The point as a prepared one-variant scenario (variant name = the point's label), running
  /// `iterations` (0 = the scenario's) with the point's seed. Throws InputError as prepare() does,
  /// re-placed by place_error().
  scenario::PreparedScenario build(const Spec& spec, const Point& p, std::uint64_t iterations,
                                   std::uint64_t warmup, const scenario::WorkloadLookup& lookup) const;

  /// Validates a point before the sweep runs: build() and one iteration without warm-up, so the
  /// workload reads and checks every parameter. Returns "" or the InputError's message (already
  /// placed in the spec where the value came from the spec). Other exceptions pass (the real run
  /// reports them as a failed point).
  std::string check(const Spec& spec, const Point& p, const scenario::WorkloadLookup& lookup) const;

  /// Runs a point; never throws: failures become PointResult{status = Failed, error}.
  PointResult run_point(const Spec& spec, const Point& p, std::uint64_t iterations,
                        const scenario::WorkloadLookup& lookup) const;

  /// An InputError raised while building or running point `p`, placed at the spec value that set the
  /// key it names when one did (the key is the last ": "-separated part of its place), else at
  /// [sweep] scenario with the scenario's own message. The point's label is not added.
  InputError place_error(const Spec& spec, const Point& p, const InputError& e) const;

 private:
  scenario::Scenario parse() const;
  std::string file_, shown_, text_;
  std::string name_, title_, workload_, variant_;
  std::size_t variant_index_ = 0;
  std::uint64_t seed_ = 1, iterations_ = 0, warmup_ = 0;
};

}  // namespace ipilab::sweep
