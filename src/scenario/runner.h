// ipilab/scenario/runner.h — from a parsed scenario to results: prepare (build and validate every
// variant's host, VM, profile and parameters), then run (call the workload once per variant).
//
// prepare() does all the validation that does not need a simulation, for every variant, before any
// variant runs: host (preset / file / inline), VM placement on it, profile file and overrides, the
// workload name and its declared parameters (unknown keys are errors). Errors are InputError naming
// the scenario file, line, column and key; when the offending value came from a variant's override
// the line is the variant's. Errors raised while building a variant carry "[variant 'NAME']".
//
// run() calls Workload::run(spec) per variant. InputErrors the workload throws (a parameter of the
// wrong type, a cost the profile lacks: "<profile file>: cost.<key>") propagate with the variant
// named. The same scenario, seed and iterations give identical results (the workloads are
// deterministic given the seed); wall times are measured only for progress lines.
#pragma once

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cost/profile.h"
#include "scenario/scenario.h"
#include "workload/workload.h"

namespace ipilab::scenario {

/// How prepare() finds a workload by name (place = where the name was written). Tests inject a fake.
using WorkloadLookup = std::function<const workload::WorkloadInfo&(std::string_view name, std::string_view place)>;

/// Overrides from the command line.
struct RunOverrides {
  std::optional<std::uint64_t> seed;
  std::optional<std::uint64_t> iterations;
  /// Run only these variants (each must exist in the scenario), in the scenario's order.
  std::vector<std::string> variants;
  /// Run every variant on this profile instead of the one the scenario's [profile] file names
  /// (`ipilab run --profile FILE`, or a profile built in memory); the scenario's [profile.override]
  /// entries still apply on top. `profile_shown` names it in the labels and the JSON.
  std::shared_ptr<const cost::Profile> profile;
  std::string profile_shown;
};

/// What a prepared variant and its result both say about it.
struct VariantHeading {
  std::string name;
  std::string description;
  std::string host_label;     ///< "kunpeng920-2s (2 sockets, 64 CPUs, 2 ITSs)"
  std::string vm_label;       ///< "4 vCPUs on CPUs 0-3, NR_CPUS=8192"
  std::string profile_label;  ///< "hyperv-ws2019 (profiles/hyperv-ws2019.toml)"; with RunOverrides::profile
                              ///< "NAME (SHOWN, from --profile instead of FILE)"
  std::string profile_file;   ///< as shown (relative to the data folder when it lies there)
  std::string profile_path;   ///< as opened (what cost::Profile::file() and its messages say)
};

struct PreparedVariant : VariantHeading {
  std::unique_ptr<topology::Host> host;  ///< owned here; spec.host points at it
  workload::RunSpec spec;
  std::string profile_replaced;  ///< with RunOverrides::profile: the scenario's own profile file, as shown
  /// The [profile.override] costs (key, file:line): run() notes each that the variant never read.
  std::vector<std::pair<std::string, std::string>> overrides;
};

/// What a prepared scenario and its result both say about the run: the scenario's heading and the
/// counts it runs with.
struct ScenarioRunHeading : ScenarioHeading {
  std::uint64_t seed = 1, iterations = 0, warmup = 0;
  std::uint64_t scenario_iterations = 0; ///< the file's scenario.iterations (iterations differs with --iterations)
};

struct PreparedScenario : ScenarioRunHeading {
  const workload::WorkloadInfo* info = nullptr;
  std::vector<Expectation> expect;       ///< only for the selected variants
  std::vector<PreparedVariant> variants; ///< the selected variants, in file order
};

/// Builds every variant (see the file comment). Consumes `s` (its documents move into the specs so
/// parameter errors keep their source positions).
PreparedScenario prepare(Scenario&& s, const RunOverrides& overrides, const WorkloadLookup& lookup);

struct VariantResult : VariantHeading {
  workload::RunResult result;
};

/// The outcome of one expectation.
struct CheckOutcome {
  Expectation expect;
  double actual = 0;
  bool pass = false;
  bool counter = false;  ///< compared a counter (no stat), not a metric
  /// Not evaluated (pass is then true, actual the run's value): a counter's expected count is written
  /// for the scenario's own iteration count, and --iterations ran another; `skipped` says so.
  std::string skipped;
};

struct ScenarioResult : ScenarioRunHeading {
  std::vector<VariantResult> variants;
  std::vector<CheckOutcome> checks;   ///< one per expectation, in file order
  /// All checks passed (true when there are none; a skipped check does not fail).
  bool checks_pass() const;
  /// Checks evaluated (not skipped) and of those passed.
  std::size_t checks_evaluated() const;
  std::size_t checks_passed() const;
};

/// Progress sink: called after each variant with (scenario, variant, index, count, wall seconds).
using ProgressFn = std::function<void(const std::string&, const std::string&, std::size_t, std::size_t, double)>;

/// Runs every prepared variant, then evaluates the expectations. An expectation naming a metric or
/// counter the workload did not report -> InputError at the expectation's place.
ScenarioResult run(const PreparedScenario& p, const ProgressFn& progress = {});

/// The value an expectation compares: metric `key`'s `stat`, else counter `key`; 0 for an absent
/// counter `family.name` whose family is reported (counter `family` or another `family.*`: members
/// are only reported when non-zero). nullopt if none of these.
std::optional<double> observed_value(const workload::RunResult& r, const Expectation& e);

}  // namespace ipilab::scenario
