// ipilab/scenario/replay_join.h — `ipilab replay TRACE --ipi-csv FILE.csv`: every recorded IPI (one
// send to one target, as `ipilab trace --events` counts them) joined with its simulated counterpart
// in each variant: the same send, re-issued from trace CPU c as vCPU c mod N to target vCPU d mod N.
//
// Columns (one row per recorded IPI and variant, in trace order; times in ns, the simulated ones
// on the trace's clock with ps as decimals; a blank cell has its reason in `note`):
//   variant, send_ns, src, dst, kind              the recorded send (trace CPUs, the send's kind)
//   recorded_served                               raised | coalesced | unmatched | expired
//   recorded_latency_ns                           send -> the handler entry that served it
//   vcpu_src, vcpu_dst                            the mapping (blank when it was not replayed)
//   simulated_send_ns                             when the modelled send started (a vCPU still busy
//                                                 with its previous send starts later than recorded)
//   simulated_served                              raised | coalesced (merged into a pending interrupt)
//                                                 | lost | in-flight | not-replayed
//   modelled_latency_ns                           modelled send start -> first handler instruction
//   note                                          why a cell is blank (not replayed: the target maps
//                                                 onto the sender, beyond --max-ipis, no vector of
//                                                 its kind on the mechanism's architecture; the
//                                                 mechanism's reason for a lost IPI; ...)
// Two trace targets that map onto one vCPU share that vCPU's simulated IPI (the replay sends it
// once); the note says so.
//
// Memory: one entry per recorded IPI and, per variant, one per replayed IPI (only when asked for).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "trace/analysis.h"
#include "workload/replay.h"
#include "workload/vm_run.h"

namespace ipilab::scenario {

class ReplayJoin {
 public:
  /// `vcpus`: the scenario VM's; `max_ipis`: the replay's --max-ipis.
  ReplayJoin(unsigned vcpus, std::uint64_t max_ipis);
  ~ReplayJoin();
  ReplayJoin(const ReplayJoin&) = delete;
  ReplayJoin& operator=(const ReplayJoin&) = delete;

  /// The trace side, as the trace is read: every send (in trace order, before its records), with the
  /// index of the replayed send it became (-1: none) and whether it was beyond --max-ipis.
  void on_trace_send(const trace::IpiSend& s, std::int64_t replay_index, bool beyond_limit);
  /// Receives the recorded IPIs (trace::IpiAnalysis's observer).
  trace::AnalysisObserver* recorded();

  /// The simulated side of one variant: an observer to attach to its run (RunSpec::observer).
  /// `sends`: the replayed sends (they must outlive this object); `arch`: its mechanism's.
  workload::Observer* observe(const std::string& variant, const std::vector<workload::ReplaySend>& sends,
                              workload::Arch arch);

  /// After the runs: the CSV document. `origin_ns`: the trace time of simulated time 0 (the first
  /// replayed send). Counts of rows per simulated_served in `counts`.
  std::string csv(std::uint64_t origin_ns, std::map<std::string, std::uint64_t>* counts = nullptr) const;
  std::uint64_t recorded_ipis() const;

 private:
  class Recorded;
  class Simulated;
  unsigned vcpus_;
  std::uint64_t max_ipis_;
  struct Mapped {
    std::int64_t index = -1;  // replayed send
    unsigned vsrc = 0, vdst = 0;
    std::string why_not;      // when index < 0, or the shared-vCPU note
  };
  std::map<std::tuple<std::uint64_t, std::uint32_t, std::uint32_t>, Mapped> mapped_;  // (ts, src, dst)
  std::unique_ptr<Recorded> recorded_;
  std::vector<std::unique_ptr<Simulated>> variants_;
};

}  // namespace ipilab::scenario
