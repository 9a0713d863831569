// ipilab/scenario/replay.h — `ipilab replay TRACE --scenario S`: a recorded IPI stream (ftrace ipi:* /
// irq_vectors:*) replayed through each variant of a scenario, the measured send -> entry latency next
// to the modelled one.
//
// Mapping: every IPI send of the trace (ipi:ipi_send_cpu / ipi_send_cpumask, Linux >= 6.4) is
// re-issued at its recorded time from trace CPU c mapped onto vCPU c mod N of the scenario's VM (a
// target that maps onto the sender is dropped and counted). Kinds (trace/event.h) map to the
// mechanism architecture's vectors: reschedule, call-function, call-function-single, irq-work; a send
// of another or unknown kind goes out as call-function-single (counted in the output). The replay
// itself is workload::replay (one program per vCPU on the simulation core).
#pragma once

#include <cstdint>
#include <iosfwd>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "workload/mechanism.h"
#include "scenario/timeline.h"

namespace ipilab::scenario {

struct ReplayOptions {
  std::string trace;
  std::string scenario;
  std::vector<std::string> variants;
  std::string json;                 ///< "" none, "-" stdout instead of the table, else a file
  std::uint64_t max_ipis = 1'000'000;
  std::uint64_t seed = 1;
  TimelineOptions timeline{};       ///< --perfetto / --events / --timeline-limit (the first N sends)
  std::string ipi_csv;              ///< --ipi-csv FILE.csv: each recorded IPI joined with its simulated one (replay_join.h)
};

/// Runs the replay and writes the table (or the JSON) to `out`, warnings also to `err` ("ipilab:
/// warning: ..."). InputError for bad input (the scenario, the trace, --json's folder), nothing
/// written then.
///
/// Architecture: the trace's (trace_arch(): x86 when it holds irq_vectors:<vector>_entry/_exit
/// handler events, arm64 when it holds ipi:ipi_raise/ipi_entry/ipi_exit) is printed, and a variant
/// whose mechanism is of the other architecture (an x86 trace through a GICv4.1 scenario) is a
/// warning in the text, on `err` and in the JSON ("trace_arch", "warnings"); the replay still runs.
/// The timeline's note (--perfetto / --events: what was written) goes to `err` too.
///
/// --perfetto: one document with a "recorded" group (the trace's own timeline, as `ipilab trace
/// --perfetto` draws it: the first --timeline-limit sends, and handlers, csd functions and markers up
/// to the pairing limit after the last of them) above one "simulated (mechanism M)" group per variant,
/// both on the trace's clock (simulated time 0 = the first replayed send), each CPU a thread, flows
/// send -> arrival in both.
void run_replay_command(const ReplayOptions& options, std::ostream& out, std::ostream& err);

/// The architecture a trace was recorded on, from its event counts by name (trace::IpiAnalysis::
/// event_counts()); nullopt when it holds handler events of neither (or of both).
struct TraceArch {
  workload::Arch arch;
  std::string evidence;  ///< "irq_vectors:* handler events"
};
std::optional<TraceArch> trace_arch(const std::map<std::string, std::uint64_t>& event_counts);

}  // namespace ipilab::scenario
