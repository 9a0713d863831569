// ipilab/workload/replay.h — a recorded IPI stream as a simulator workload (ipilab replay).
//
// Each recorded send (time, source CPU, target CPUs, vector) is re-issued at its recorded time
// (relative to the first) from the mapped vCPU through the variant's delivery mechanism (the same
// send paths as the loops: Hyper-V policies, x2APIC, KVM PV, GICv4.1 vSGI). A sender still busy with
// an earlier send starts the next one when it is free; a target takes the interrupt when it is free,
// paying vcpu.halt_wakeup when the VM says it idles in HLT (and it has gone back to HLT) or
// apic.interrupt_injection when it runs. The modelled latency of a send is send start -> first
// handler instruction on the target, the same span the trace measures (ipi_send_* -> *_entry).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "sim/histogram.h"
#include "workload/workload.h"

namespace ipilab::workload {

struct ReplaySend {
  std::uint64_t time_ns = 0;        ///< recorded time (any origin; only differences matter)
  unsigned src = 0;                 ///< guest CPU of the VM (already mapped from the trace CPU)
  std::vector<unsigned> targets;    ///< guest CPUs, without src
  std::uint32_t vector = 0xFB;      ///< x86 vector of the kind (0xFD reschedule, 0xFC call-function, ...)
  std::string kind;                 ///< the trace's kind name, for grouping
};

struct ReplayResult {
  /// Modelled send -> handler entry latency per kind, in ps.
  std::map<std::string, sim::Histogram> latency_by_kind;
  std::map<std::string, std::uint64_t> counters;
  std::vector<std::pair<std::string, std::string>> settings;
  nlohmann::json provenance;
  std::vector<std::string> notes;
};

/// Replays `sends` (in time order) on the VM, host, profile and mechanism of `spec` (its params are
/// the scenario's [workload] table: `mechanism` etc. for x86 scenarios, `find_4_1_its` for ipi_hw).
/// `gic` selects the GICv4.1 vSGI path. Throws InputError for a missing cost or a bad parameter.
ReplayResult replay(const RunSpec& spec, const std::vector<ReplaySend>& sends, bool gic);

}  // namespace ipilab::workload
