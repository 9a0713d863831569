// ipilab/workload/replay.h — a recorded IPI stream as a program source for the simulation core.
//
// Each recorded send (time, source CPU, target CPUs, kind) becomes an operation of the source vCPU's
// program: rest until the recorded time (relative to the first send), then send that kind's vector to
// the targets through the variant's mechanism (the same mechanisms as every workload: Hyper-V
// policies, x2APIC, KVM PV, GICv4.1 vSGI, GICv3 emulated SGI). A sender still busy with an earlier
// send starts the next one when it is free; a target takes the interrupt as vm_run.h says (wake-up
// from HLT when its VM state is halted, injection when it runs). The recorded IPIs are the ones the
// traced kernel decided to send, so they go out as they are (no call_single_queue coalescing on top).
// The modelled latency of a send is send start -> first handler instruction on each target, the
// span the trace measures (ipi_send_* -> irq_vectors:*_entry).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "sim/histogram.h"
#include "workload/mechanism.h"
#include "workload/workload.h"

namespace ipilab::workload {

struct ReplaySend {
  std::uint64_t time_ns = 0;        ///< recorded time (any origin; only differences matter)
  unsigned src = 0;                 ///< guest CPU of the VM (already mapped from the trace CPU)
  std::vector<unsigned> targets;    ///< guest CPUs, ascending, without src
  IpiKind kind = IpiKind::CallFunctionSingle;
  std::string kind_name;            ///< the trace's kind name, for grouping ("reschedule", ...)
};

struct ReplayResult {
  /// Modelled send -> handler entry latency per kind name, in ps.
  std::map<std::string, sim::Histogram> latency_by_kind;
  std::map<std::string, std::uint64_t> counters;
  std::vector<std::pair<std::string, std::string>> settings;
  nlohmann::json provenance;
  std::vector<std::string> notes;
  std::uint64_t events = 0;
};

/// Replays `sends` (in time order) on the VM, host, profile and mechanism of `spec` (its params are
/// the scenario's [workload] table; `mechanism` defaults to `default_mechanism`, the scenario
/// workload's). Throws InputError for a missing cost or a bad parameter.
ReplayResult replay(const RunSpec& spec, const std::vector<ReplaySend>& sends, std::string_view default_mechanism);

}  // namespace ipilab::workload
