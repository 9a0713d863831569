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
#include <string>
#include <vector>

namespace ipilab::scenario {

struct ReplayOptions {
  std::string trace;
  std::string scenario;
  std::vector<std::string> variants;
  std::string json;                 ///< "" none, "-" stdout instead of the table, else a file
  std::uint64_t max_ipis = 1'000'000;
  std::uint64_t seed = 1;
};

/// Runs the replay and writes the table (or the JSON) to `out`. InputError for bad input (the
/// scenario, the trace, --json's folder), nothing written then.
void run_replay_command(const ReplayOptions& options, std::ostream& out);

}  // namespace ipilab::scenario
