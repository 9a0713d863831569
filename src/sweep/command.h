// ipilab/sweep/command.h — `ipilab sweep SPEC` as a function: the CLI (src/cli/cmd_sweep.cpp) parses
// the command line and calls sweep_command(); tests call it with an executor of their choice.
//
// Order (bad input never leaves output behind, and no point runs before every point checked out):
//   1. read the spec (built-in sweep name or file), the base scenario; expand the points; check the
//      output targets (folders exist; --plot: .svg/.png and gnuplot installed);
//   2. check every point that is not skipped: build it (host, VM, profile, parameters) and run one
//      iteration, spread over the workers; a point that fails -> InputError naming the spec's file,
//      line and key (exit 2), or, with skip_invalid, a skipped point with that reason;
//   3. run the points (progress bar on `err` when opts.progress); a point that fails is reported and
//      the others go on; a stop request (Ctrl-C) starts no new point and keeps those that finished;
//   4. on the root only: the table (or CSV/JSON on stdout with "-"), then the files — plots rendered
//      first, then CSV and JSON written atomically, then the plots renamed into place.
// Returns the exit status: 0, 1 when a point failed, 130 when stopped. Throws InputError (exit 2),
// UnavailableError (exit 3: no gnuplot for --plot).
#pragma once

#include <atomic>
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>

#include "scenario/runner.h"
#include "sweep/exec.h"

namespace ipilab::sweep {

struct SweepOptions {
  std::string spec{};                      ///< built-in sweep name or spec file
  unsigned jobs = 0;                       ///< worker threads (per rank); 0 = every CPU (1 per rank under MPI)
  std::string csv{}, json{}, plot{};       ///< "" = none; csv/json "-" = stdout instead of the table
  std::optional<std::uint64_t> iterations{}, seed{};
  bool progress = false;                   ///< progress bar on `err`
  bool list_points = false;                ///< print the points (label, seed, skip) and stop
  std::size_t max_rows = 40;               ///< table rows before the table becomes a summary
  const std::atomic<bool>* stop = nullptr; ///< Ctrl-C
};

/// The spec file for a SPEC argument: an existing path as is, else a built-in sweep name ->
/// <data_dir>/scenarios/sweeps/<name>.toml. InputError listing the built-in names otherwise.
std::string resolve_spec(const std::string& arg);

struct BuiltinSweep {
  std::string name, title, description, scenario, file, error;
  std::size_t points = 0;
};
/// Every <data_dir>/scenarios/sweeps/*.toml, sorted by name (an invalid one carries its error).
std::vector<BuiltinSweep> list_builtin_sweeps();

int sweep_command(const SweepOptions& opts, std::ostream& out, std::ostream& err, const scenario::WorkloadLookup& lookup,
                  Executor& exec);

}  // namespace ipilab::sweep
