// ipilab sweep — run a scenario over a design space (src/sweep/command.h does the work).
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "common/error.h"
#include "sweep/command.h"
#include "sweep/exec.h"
#include "workload/workload.h"

namespace ipilab::cli {

namespace {

constexpr const char* kSweepHelp = R"(Runs a scenario over a design space: every combination of the spec's axes (host preset, vCPUs,
placement, mechanism, guest policy, a cost, ...) is one point, simulated as a variant of the base
scenario with a seed derived from the point's settings, so the results do not depend on the order,
the number of workers or the MPI rank a point ran on. One row per point: the axes' values, the main
metric's mean / p50 / p99, the change against the baseline point, the counters.

SPEC is a built-in sweep name (ipilab list --sweeps) or a sweep spec file (format: docs/sweep.md).
Every point is checked (host, VM, profile, parameters, one iteration) before any runs: a bad spec
exits 2 naming the file, line and key, and writes nothing. A point that fails while running is
reported and the sweep goes on (exit 1 at the end). Ctrl-C starts no new point, lets the running
ones finish and writes the outputs with the points that finished (exit 130); a second Ctrl-C quits.

On a cluster: an ipilab built with -DIPILAB_MPI=ON spreads the points over MPI ranks
  mpirun -np 64 ipilab sweep SPEC --csv out.csv            (or srun; see docs/sweep.md)
rank 0 hands out points as ranks ask for them, gathers the results and alone writes the outputs.

Examples:
  ipilab sweep its-local-gain                          # a built-in sweep, table on stdout
  ipilab sweep hyperv-send-path -j 2 --csv hv.csv --json hv.json --plot hv.svg
  ipilab sweep its-local-gain --iterations 200 --list-points
  ipilab sweep its-local-gain --csv - | column -s, -t

Output contract (CSV columns, JSON keys): docs/sweep.md. Exit status 2 on bad input, 1 when a point
failed, 3 when --plot has no gnuplot, 130 when interrupted.)";

std::atomic<bool> g_stop{false};

struct sigaction g_previous_sigint {};  // ipilab's cleanup handler (common/output.h)

// Ctrl-C once stops starting points; the handler before it comes back, so a second Ctrl-C ends the
// process at once (still removing temporary files).
extern "C" void on_sigint(int) {
  g_stop.store(true);
  ::sigaction(SIGINT, &g_previous_sigint, nullptr);
}

int status_of(const std::exception_ptr& ep) {
  try {
    std::rethrow_exception(ep);
  } catch (const InputError&) {
    return static_cast<int>(ExitStatus::BadInput);
  } catch (const UnavailableError&) {
    return static_cast<int>(ExitStatus::Unavailable);
  } catch (...) {
    return static_cast<int>(ExitStatus::Failure);
  }
}

}  // namespace

void add_sweep_command(CLI::App& root) {
  auto* cmd = root.add_subcommand("sweep", "Run a scenario over a design space: threads here, MPI ranks on a cluster");
  cmd->footer(kSweepHelp);
  auto opts = std::make_shared<sweep::SweepOptions>();
  auto iterations = std::make_shared<std::uint64_t>(0);
  auto seed = std::make_shared<std::uint64_t>(0);
  auto progress = std::make_shared<bool>(false);
  auto no_progress = std::make_shared<bool>(false);
  cmd->add_option("spec", opts->spec, "Built-in sweep name or sweep spec file (docs/sweep.md)")->required();
  cmd->add_option("-j,--jobs", opts->jobs, "Worker threads (per MPI rank); default: every CPU (1 per rank under MPI)")
      ->check(CLI::Range(1u, 4096u));
  cmd->add_option("--csv", opts->csv, "Write one row per point as CSV to FILE ('-' = stdout instead of the table)")
      ->type_name("FILE|-");
  cmd->add_option("--json", opts->json, "Write the sweep as JSON to FILE ('-' = stdout instead of the table)")
      ->type_name("FILE|-");
  cmd->add_option("--plot", opts->plot, "Draw the spec's plots (line plots, heat maps) with gnuplot; several plots "
                                        "get their name appended: FILE-<plot>.svg")
      ->type_name("FILE.svg|.png");
  auto* it_opt = cmd->add_option("--iterations", *iterations, "Measured iterations per point (default: the spec's, else the scenario's)")
                     ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1'000'000'000}));
  auto* seed_opt = cmd->add_option("--seed", *seed, "Base of the per-point seeds (default: the spec's, else the scenario's)");
  cmd->add_option("--max-rows", opts->max_rows, "Table rows shown before the table becomes a summary (default 40)");
  cmd->add_flag("--list-points", opts->list_points, "Print every point (index, seed, settings, skip reason) and stop");
  cmd->add_flag("--progress", *progress, "Progress bar on stderr even when it is not a terminal");
  cmd->add_flag("--no-progress", *no_progress, "No progress bar");
  cmd->callback([=] {
    sweep::SweepOptions o = *opts;
    if (it_opt->count()) o.iterations = *iterations;
    if (seed_opt->count()) o.seed = *seed;
    o.progress = !*no_progress && (*progress || ::isatty(2) == 1);
    o.stop = &g_stop;
    // Ctrl-C once: stop starting points (on_sigint).
    struct sigaction sa {};
    sa.sa_handler = on_sigint;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &g_previous_sigint);

    std::unique_ptr<sweep::Executor> exec =
        sweep::launched_ranks() > 1 ? sweep::mpi_executor() : sweep::local_executor();
    int rc = 0;
    std::exception_ptr ep;
    try {
      rc = sweep::sweep_command(o, std::cout, std::cerr, [](std::string_view name, std::string_view place) -> const workload::WorkloadInfo& {
        return workload::find_workload(name, place);
      }, *exec);
    } catch (...) {
      ep = std::current_exception();
    }
    const bool is_root = exec->is_root();
    exec.reset();  // MPI_Finalize on every rank, whatever happened
    sigaction(SIGINT, &g_previous_sigint, nullptr);
    if (ep) {
      if (is_root) std::rethrow_exception(ep);  // main() prints it and maps it to the exit status
      std::exit(status_of(ep));                 // the root reports; other ranks only exit alike
    }
    if (rc != 0) {
      std::cout.flush();
      std::cerr.flush();
      std::exit(rc);
    }
  });
}

}  // namespace ipilab::cli
