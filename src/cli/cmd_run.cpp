// ipilab run — simulate a scenario's variants side by side (src/scenario/command.h does the work).
#include <unistd.h>

#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "cli/timeline_options.h"
#include "evidence/published_figures.h"
#include "evidence/run_extension.h"
#include "scenario/command.h"
#include "sweep/exec.h"
#include "workload/workload.h"

namespace ipilab::cli {

namespace {

constexpr const char* kRunHelp = R"(Simulates every variant of a scenario with the discrete-event model and prints them side by
side, one screen per scenario: the main metric (cycles per iteration for x86 guest loops, ns for
Arm micro-benchmarks) with mean, p50, p99 and the change against the first variant, the key
counters that differ between variants (hypercalls, native fallbacks, ICR or GITS_SGIR writes, VM
exits, coalesced calls, lost and misdelivered IPIs), a check column with the expected (published)
values, and the published figure the scenario reproduces. A variant without samples (every IPI
lost) shows dashes, never 0.

--details (-v) adds, per variant: the settings it resolved, the other metrics (send cost, delivery
latency), every counter, the throughput, each shared resource's utilisation and queue wait
(call_single_queues, interrupt windows, the hypervisor on each physical CPU, ITS ports), where
the time goes (each step names the cost key it was priced with) and the checks. --json has all of
it, with every cost's value and source. Every figure is a sum of modeled steps priced by the
scenario's cost profile and the host's latency matrix.

SCENARIO is a built-in name (ipilab list --scenarios) or a path to a scenario TOML file
(format: scenarios/README.md in the data folder). With no SCENARIO, runs the default set: the
reproductions of the seed experiments.

The same scenario, seed and iterations give byte-identical tables and JSON. Progress lines (with
wall times) go to stderr when it is a terminal, or with --progress.

Examples:
  ipilab run                                   # the default scenarios (seed 000 and seed 003)
  ipilab run seed000-send-ipi-one --check      # exit 1 if a published figure is not reproduced
  ipilab run seed003-ipi-hw --details          # what each variant resolved, its resources and steps
  ipilab run seed000-vp-index --plot cdf.png   # CDF per variant; the one that loses every IPI is named, not drawn
  ipilab run seed000-send-ipi-one --variant mainline --iterations 100000 --json out.json
  ipilab run "$(ipilab list --data-dir)/scenarios/example-multicast.toml"   # a scenario file: copy it to make yours
  ipilab run seed003-ipi-hw --json - | jq '.variants[].metrics.ipi_round_trip.mean'
  ipilab run seed003-ipi-hw --perfetto ipi-hw.json   # timeline of the first 100 iterations: ui.perfetto.dev
  ipilab run this-host --profile myhost.toml   # written by 'ipilab measure --profile-out myhost.toml'
  ipilab run seed003-ipi-hw --uncertainty      # each mean with a 90 % interval over the costs' ranges
  ipilab run seed003-ipi-hw --uncertainty --plot intervals.png   # the intervals as error bars
  ipilab run seed000-send-ipi-one --sensitivity --plot tornado.svg   # which cost to measure first

Uncertainty (docs/uncertainty.md): every cost in a profile may carry a range (how far its mean may
be off); an estimate without one gets its class's default (+-50 %). --uncertainty N runs every
variant N more times over a Latin hypercube of the ranges (common random numbers: all variants
see the same draw, so a difference keeps its sign when the parts move together) and prints each
metric's mean with its 90 % interval, and each difference against the first variant with its
own; --sensitivity swings one cost at a time over its range (a tornado, with variance shares).
Both are deterministic for a seed; -j runs the draws on several threads.

JSON contract: docs/json.md. Exit status 2 on bad input (the message names file:line:key; a cost
above 1 s or a run past 26.7 days of simulated time is bad input too), 1 when --check finds a
missed expectation, 3 when --plot has no gnuplot.)";

}  // namespace

void add_run_command(CLI::App& root) {
  auto* cmd = root.add_subcommand("run", "Simulate a scenario's variants side by side (table, JSON, plot)");
  cmd->footer(kRunHelp);
  auto opts = std::make_shared<scenario::CommandOptions>();
  auto seed = std::make_shared<std::uint64_t>(0);
  auto iterations = std::make_shared<std::uint64_t>(0);
  auto no_breakdown = std::make_shared<bool>(false);
  auto progress = std::make_shared<bool>(false);
  cmd->add_option("scenario", opts->scenarios, "Built-in scenario name or scenario file (default: scenarios/default.list)");
  auto* seed_opt = cmd->add_option("--seed", *seed, "RNG seed for every variant (default: the scenario's, usually 1)");
  auto* it_opt = cmd->add_option("--iterations", *iterations, "Measured iterations per variant (default: the scenario's)")
                     ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1'000'000'000}));
  cmd->add_option("--variant", opts->variants, "Run only this variant (repeatable); compared against the first one run")
      ->type_name("NAME")
      ->allow_extra_args(false);  // one name per --variant, so a following SCENARIO stays a scenario
  cmd->add_option("--json", opts->json, "Write the results as JSON to FILE ('-' = stdout instead of the tables)")
      ->type_name("FILE|-");
  cmd->add_option("--plot", opts->plot, "Plot the main metric's distribution (CDF per variant) with gnuplot; "
                                        "several scenarios get their name appended")
      ->type_name("FILE.svg|.png");
  add_timeline_options(
      *cmd, opts->timeline,
      {"Write the simulated timeline of the first --timeline-limit iterations of each variant as Chrome/Perfetto "
       "trace-event JSON (as 'ipilab trace --perfetto' does for a real trace; docs/trace.md)",
       "Write one row per IPI and per queued call of that window, in 'ipilab trace --events' columns",
       "Iterations of each variant in the --perfetto / --events timeline (measured ones, after the warm-up)",
       scenario::kDefaultTimelineIterations});
  cmd->add_option("--profile", opts->profile,
                  "Run every variant on this cost profile instead of the scenario's own ([profile.override] entries "
                  "still apply), e.g. one written by 'ipilab measure --profile-out'")
      ->type_name("FILE.toml");
  auto draws = std::make_shared<std::size_t>(evidence::kDefaultDraws);
  auto analysis = std::make_shared<evidence::AnalysisOptions>();
  auto* unc_opt = cmd->add_option("--uncertainty", *draws,
                                  "Also run N draws over the costs' ranges (Latin hypercube) and print a 90 % interval for every "
                                  "metric of every variant and every difference against the first variant; with --plot, the plot is "
                                  "each variant's interval as an error bar (and each difference's)")
                      ->type_name("[N]")
                      ->expected(0, 1)
                      ->default_str(std::to_string(evidence::kDefaultDraws))
                      ->check(CLI::Range(std::size_t{2}, std::size_t{100'000}));
  cmd->add_flag("--sensitivity", analysis->sensitivity,
                "Also swing each uncertain cost over its range (others at their means): the tornado of every variant's "
                "main metric with variance shares; with --plot, the plot is the tornado (with --uncertainty, "
                "the interval a grey band behind it)");
  cmd->add_option("-j,--jobs", analysis->jobs, "With --uncertainty / --sensitivity: worker threads for the draws (default: every CPU)")
      ->check(CLI::Range(1u, 1024u));
  cmd->add_option("--draw-iterations", analysis->iterations,
                  "With --uncertainty / --sensitivity: measured iterations per draw (default: the run's)")
      ->type_name("N")
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1'000'000'000}));
  cmd->add_flag("--check", opts->check, "Exit 1 if a variant misses the scenario's expected values ([scenario.expect])");
  cmd->add_flag("--details,-v", opts->details,
                "After the table: settings, other metrics, counters, throughput, resources, where the time goes "
                "and the checks, per variant");
  cmd->add_flag("--no-breakdown", *no_breakdown, "With --details: omit where the time goes");
  cmd->add_flag("--progress", *progress, "Print one line per variant with its wall time on stderr (default: when a terminal)");
  cmd->callback([=] {
    scenario::CommandOptions o = *opts;
    if (seed_opt->count()) o.seed = *seed;
    if (it_opt->count()) o.iterations = *iterations;
    o.breakdown = !*no_breakdown;
    o.progress = *progress || ::isatty(2) == 1;
    o.extensions.push_back(std::make_shared<evidence::PublishedFiguresExtension>());
    if (unc_opt->count() || analysis->sensitivity) {
      evidence::AnalysisOptions a = *analysis;
      if (unc_opt->count()) a.draws = *draws;
      if (a.jobs == 0) a.jobs = sweep::available_cpus();
      a.progress = o.progress;
      o.extensions.push_back(std::make_shared<evidence::AnalysisExtension>(a));
    }
    scenario::run_command(o, std::cout, std::cerr, [](std::string_view name, std::string_view place) -> const workload::WorkloadInfo& {
      return workload::find_workload(name, place);
    });
  });
}

}  // namespace ipilab::cli
