// ipilab replay TRACE --scenario S: a recorded IPI trace replayed through each variant of a scenario
// (src/scenario/replay.h does the work; this file only parses the command line).
#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "cli/timeline_options.h"
#include "scenario/replay.h"

namespace ipilab::cli {

void add_replay_command(CLI::App& root) {
  auto args = std::make_shared<scenario::ReplayOptions>();
  auto* cmd = root.add_subcommand(
      "replay",
      "Replay a recorded IPI trace through a scenario's delivery mechanisms: measured send->entry latency "
      "next to what each modelled mechanism would give");
  cmd->footer(R"(Every IPI send of the trace (ipi:ipi_send_cpu / ipi_send_cpumask, Linux >= 6.4) is re-issued at its
recorded time from the same CPU, mapped onto the scenario VM's vCPUs (trace CPU c -> vCPU c mod N; the
mapping is printed), through each variant of the scenario (its host, VM, cost profile and mechanism).
The modelled latency is send start -> first handler instruction, the span the trace measures
(ipi_send_* -> irq_vectors:*_entry). Kinds map to x86 vectors: reschedule 0xFD, call-function 0xFC,
call-function-single 0xFB, irq-work 0xF6 (arm64 SGIs for an Arm mechanism).

The trace's architecture is read from its handler events (irq_vectors:* is x86, ipi:ipi_entry is
arm64) and printed; a variant whose mechanism is of the other architecture (an x86 trace through a
GICv4.1 scenario) gets a warning on stderr, in the table and in the JSON: the replay still runs, but
its measured and modelled columns then come from different machines.

Examples:
  ipilab replay "$(ipilab list --data-dir)/data/traces/mixed.dat" --scenario seed000-send-ipi-one
  ipilab replay "$(ipilab list --data-dir)/data/traces/pipe.dat" --scenario seed000-send-ipi-one --variant mainline --json out.json
  ipilab replay "$(ipilab list --data-dir)/data/traces/mixed.dat" --scenario seed003-ipi-hw   # warns: x86 trace, arm64 mechanism
  ipilab replay "$(ipilab list --data-dir)/data/traces/mixed.dat" --scenario seed000-send-ipi-one --perfetto replay.json
      # one file for ui.perfetto.dev: the recorded first 1000 sends above each variant's simulated ones
  ipilab replay "$(ipilab list --data-dir)/data/traces/mixed.dat" --scenario seed000-send-ipi-one --ipi-csv ipis.csv
      # one row per recorded IPI and variant: recorded latency next to the modelled one

--perfetto writes one document: a group "recorded" (the trace's own timeline, as 'ipilab trace
--perfetto' draws it) above one group "simulated (mechanism M) ..." per variant (its scenario and name), each
CPU a thread, flows send -> arrival in both, trace_marker writes as instants; the simulated groups are
put on the trace's clock (their time 0 is the first replayed send). --ipi-csv columns: variant,
send_ns, src, dst, kind, recorded_served, recorded_latency_ns, vcpu_src, vcpu_dst, simulated_send_ns,
simulated_served, modelled_latency_ns, note (why a cell is blank: not replayed, lost, in flight).)");
  cmd->add_option("TRACE", args->trace, "trace file: trace.dat (v6/v7), trace-cmd report text, or tracefs trace text")
      ->required();
  cmd->add_option("--scenario,-s", args->scenario, "built-in scenario name or scenario file")->required();
  cmd->add_option("--variant", args->variants, "replay only these variants (repeatable)");
  cmd->add_option("--json", args->json, "write the results as JSON to FILE ('-' = stdout instead of the table)");
  cmd->add_option("--max-ipis", args->max_ipis, "replay at most N sends (default 1000000)");
  cmd->add_option("--seed", args->seed, "RNG seed of the model (default 1)");
  add_timeline_options(
      *cmd, args->timeline,
      {"Write the recorded and each variant's simulated timeline of the first --timeline-limit sends "
       "as one Chrome/Perfetto trace-event JSON (docs/trace.md)",
       "Write one row per IPI of that window, in 'ipilab trace --events' columns",
       "Sends of each variant in the --perfetto / --events timeline", scenario::kDefaultTimelineSends});
  cmd->add_option("--ipi-csv", args->ipi_csv,
                  "Write one row per recorded IPI and variant, joined with its simulated counterpart (recorded vs "
                  "modelled latency; blank cells with their reason)")
      ->type_name("FILE.csv");
  cmd->callback([args] { scenario::run_replay_command(*args, std::cout, std::cerr); });
}

}  // namespace ipilab::cli
