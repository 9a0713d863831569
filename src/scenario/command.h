// ipilab/scenario/command.h — `ipilab run` as a function: the CLI (src/cli/cmd_run.cpp) only parses
// the command line and calls run_command(); tests call the same function with a fake workload.
//
// Order (so that bad input never leaves output behind):
//   1. resolve every SCENARIO (built-in name or path; none -> scenarios/default.list), check the
//      --json / --plot / --perfetto / --events targets (folder exists, extension) and that gnuplot
//      is installed;
//   2. parse and prepare every scenario (all variants' hosts, VMs, profiles, parameters);
//   3. run every variant of every scenario (progress lines on `err` when opts.progress);
//   3b. with CommandOptions::extension (--uncertainty, --sensitivity: evidence/run_extension.h), its
//      analyse() per scenario, after the scenario's own runs;
//   4. only then print the tables (or JSON with --json -) on `out`, write the JSON file and the plots;
//   5. with --check, throw CheckFailed if an expectation missed (after the output is written).
// Errors: InputError (exit 2) for any bad input, UnavailableError (exit 3) without gnuplot,
// CheckFailed (exit 1). The mapping to exit statuses is main()'s (common/error.h).
#pragma once

#include <cstdint>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "scenario/plot.h"
#include "scenario/runner.h"
#include "scenario/timeline.h"

namespace ipilab::scenario {

/// Analyses that run after a scenario's own runs and add to its outputs without changing them
/// (the tables and JSON of a run without an extension stay as they are).
class RunExtension {
 public:
  virtual ~RunExtension() = default;
  /// After scenario `index` ran (its prepared form and results); progress lines go to `err`.
  virtual void analyse(const PreparedScenario& p, const ScenarioResult& r, std::size_t index, std::ostream& err) = 0;
  /// Text printed after scenario `index`'s report ("" for none).
  virtual std::string text(std::size_t index, bool details) const = 0;
  /// Adds to scenario `index`'s JSON object.
  virtual void json(nlohmann::ordered_json& scenario, std::size_t index) const = 0;
  /// With --plot: renders the extension's images into outputs added to `outs` (committed with the
  /// run's other outputs) and appends their final paths to `finals` instead of the CDFs (true), or
  /// leaves the CDFs (false).
  virtual bool plots(const std::vector<ScenarioResult>& rs, const std::string& requested, output::OutputSet& outs,
                     std::vector<std::filesystem::path>& finals) const = 0;
};

struct CommandOptions {
  std::vector<std::string> scenarios{};    ///< names or paths; empty = the default list
  std::optional<std::uint64_t> seed{};
  std::optional<std::uint64_t> iterations{};
  std::vector<std::string> variants{};     ///< --variant NAME (repeatable)
  std::string profile{};                   ///< --profile FILE: every variant on this cost profile ("" = the scenario's)
  std::string json{};                      ///< "" = none, "-" = stdout instead of the tables
  std::string plot{};                      ///< "" = none, else FILE.svg|.png
  bool check = false;
  bool breakdown = true;                   ///< within --details: where the time goes
  bool details = false;                    ///< --details / -v: the per-variant sections too
  bool progress = false;                   ///< one line per variant on `err`, with wall time
  TimelineOptions timeline{};              ///< --perfetto / --events / --timeline-limit (scenario/timeline.h)
  /// Run in order after each scenario: their texts follow its report in this order, each adds to its
  /// JSON, and the first whose plots() returns true draws --plot (none: the CDFs).
  std::vector<std::shared_ptr<RunExtension>> extensions{};
};

/// Runs `ipilab run` (see the file comment). `lookup` finds workloads by name.
void run_command(const CommandOptions& opts, std::ostream& out, std::ostream& err, const WorkloadLookup& lookup);

}  // namespace ipilab::scenario
