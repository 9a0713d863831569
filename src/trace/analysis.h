// ipilab/trace/analysis.h — pairs every IPI send with its arrival and keeps the statistics.
//
// Pairing rules (issue 4, "Analysis"):
//   - A send is one per target CPU: ipi_send_cpu gives one, ipi_send_cpumask one per CPU in the mask,
//     Arm ipi_raise one per CPU in target_mask (an ipi_raise that repeats the previous ipi_send_* of
//     the same CPU with the same targets is the same IPI and is not counted twice).
//   - The send's kind comes from its callback and callsite (send_kind) or Arm reason; the arrival's kind
//     from the handler entry event (irq_vectors:<kind>_entry, ipi:ipi_entry reason).
//   - A send waits on its target CPU until the first handler entry of the same kind on that CPU; a
//     call-function entry also serves a waiting call-function-single send (both flush the same
//     per-CPU call_single_queue in kernel/smp.c, and arm64 uses IPI_CALL_FUNC for both); a send of
//     unknown kind is served by the first IPI entry of any kind.
//   - Several sends waiting when that entry comes are all *matched* to it; the first one raised the
//     interrupt and gives the latency (entry ts - first send ts); the others are *coalesced*
//     (counted per kind, callsite and pair; they contribute no latency sample).
//   - Sends still waiting at the end are unmatched_sends; entries that find no waiting send are
//     unmatched_arrivals (e.g. self IPIs such as irq_work raised with apic->send_IPI_self, which has
//     no send tracepoint, or sends from before the trace began). Nothing is dropped silently.
//   - Handler time = exit ts - entry ts of the same kind on the same CPU.
//   - csd: csd_queue_cpu -> csd_function_entry with the same csd address gives the queue-to-run
//     latency per function; csd_function_entry -> _exit on the CPU gives its run time.
// Memory: per target CPU and kind one waiting group (at most 64 remembered sends, the rest counted),
// per CPU the open handler, one entry per in-flight csd; histograms per kind, callsite, (src,dst).
// Latency statistics use LatencyHistogram (histogram.h: exact < 256 ns, else within 0.4 %).
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "trace/event.h"
#include "trace/histogram.h"
#include "trace/reader.h"

namespace ipilab::trace {

/// One IPI send as the trace shows it — the unit a replay feeds to the simulator.
struct IpiSend {
  std::uint64_t time_ns = 0;               ///< trace clock, ns
  std::uint32_t src_cpu = 0;               ///< CPU that sent it
  std::vector<std::uint32_t> targets;      ///< target CPUs, ascending (one send per target)
  IpiKind kind = IpiKind::Unknown;         ///< from the callback (x86) or the reason (Arm ipi_raise)
  std::string callsite;                    ///< "sym+0xoff" (libtraceevent form); "ipi_raise" on Arm raise
};

/// One measured delivery: the send that raised the interrupt and the handler entry that served it
/// (what a replay shows next to the modeled latency).
struct IpiDelivery {
  std::uint64_t send_ns = 0;     ///< first waiting send, trace clock ns
  std::uint64_t entry_ns = 0;    ///< handler entry, trace clock ns (latency = entry_ns - send_ns)
  std::uint32_t src_cpu = 0;
  std::uint32_t dst_cpu = 0;
  IpiKind kind = IpiKind::Unknown;   ///< from the entry event (vector / Arm reason)
  std::string callsite;              ///< of the first send
  std::uint64_t coalesced = 0;       ///< further sends served by the same entry
};

struct KindStats {
  std::uint64_t sends = 0;               ///< sends whose own kind is this one
  std::uint64_t arrivals = 0;            ///< handler entries of this kind
  std::uint64_t matched = 0;             ///< sends served by an entry of this kind (incl. coalesced)
  std::uint64_t coalesced = 0;           ///< of matched: shared an entry with an earlier send
  std::uint64_t unmatched_sends = 0;     ///< sends of this kind never served
  std::uint64_t unmatched_arrivals = 0;  ///< entries of this kind with no waiting send
  LatencyHistogram latency;              ///< send -> entry, ns (one sample per entry that had a send)
  LatencyHistogram handler;              ///< entry -> exit, ns
};

struct CallsiteStats {
  std::string callsite;
  std::string callback;                  ///< callback of its first send
  std::uint64_t sends = 0;
  std::uint64_t matched = 0;
  std::uint64_t coalesced = 0;
  std::uint64_t unmatched = 0;
  LatencyHistogram latency;
};

struct PairStats {
  std::uint64_t sends = 0;
  std::uint64_t matched = 0;
  std::uint64_t coalesced = 0;
  LatencyHistogram latency;
};

/// Per target CPU: who interrupts it and how often.
struct TargetStats {
  std::uint64_t sends_received = 0;
  std::map<std::uint32_t, std::uint64_t> by_source;       ///< source CPU -> sends
  std::map<std::string, std::uint64_t> by_callsite;       ///< callsite -> sends
  std::array<std::uint64_t, kIpiKindCount> arrivals{};    ///< handler entries per kind
  std::uint64_t unmatched_arrivals = 0;
};

struct CsdFuncStats {
  std::uint64_t queued = 0;
  std::uint64_t runs = 0;
  LatencyHistogram queue_to_run;  ///< csd_queue_cpu -> csd_function_entry (same csd), ns
  LatencyHistogram run_time;      ///< csd_function_entry -> exit, ns
};

/// The analysis of one trace. Feed it as an EventSink, then call finish().
class IpiAnalysis : public EventSink {
 public:
  using SendCallback = std::function<void(const IpiSend&)>;
  using DeliveryCallback = std::function<void(const IpiDelivery&)>;
  /// `on_send`, if given, is called for every send in trace order (see IpiSend); `on_delivery` for
  /// every handler entry that served waiting sends, in trace order of the entries.
  explicit IpiAnalysis(SendCallback on_send = {}, DeliveryCallback on_delivery = {});

  void on_begin(std::uint32_t cpus) override;
  void on_event(const TraceEvent& ev) override;
  void on_other_event(std::string_view name) override;
  void on_lost_events(std::uint32_t cpu, std::uint64_t count) override;

  /// Ends the trace: waiting sends become unmatched. Throws InputError(place, reason) if the trace
  /// has no IPI event at all, naming the events to enable and the kernel versions they need (using
  /// `info.absent_in_kernel` for a trace.dat). Fills warnings() for partial event sets.
  void finish(const ReadInfo& info, const std::string& place);

  // ---- results (valid after finish) ----
  std::uint32_t cpus() const;                         ///< header CPU count, or highest CPU seen + 1
  std::uint64_t first_ts() const { return first_ts_; }
  std::uint64_t last_ts() const { return last_ts_; }
  std::uint64_t span_ns() const { return events_with_ts_ ? last_ts_ - first_ts_ : 0; }
  std::uint64_t events_total() const { return events_total_; }
  std::uint64_t lost_events() const { return lost_events_; }
  std::uint64_t lost_event_marks() const { return lost_marks_; }
  const std::map<std::string, std::uint64_t>& event_counts() const { return event_counts_; }
  std::uint64_t ipis_sent() const { return ipis_sent_; }
  std::uint64_t matched() const { return matched_; }
  std::uint64_t coalesced() const { return coalesced_; }
  std::uint64_t unmatched_sends() const { return unmatched_sends_; }
  std::uint64_t unmatched_arrivals() const { return unmatched_arrivals_; }
  std::uint64_t arrivals() const { return arrivals_; }
  std::uint64_t raises_merged() const { return raises_merged_; }
  const std::array<KindStats, kIpiKindCount>& by_kind() const { return kinds_; }
  /// Callsites, most sends first (ties by name).
  std::vector<const CallsiteStats*> callsites_by_count() const;
  const std::map<std::pair<std::uint32_t, std::uint32_t>, PairStats>& pairs() const { return pairs_; }
  const std::map<std::uint32_t, TargetStats>& targets() const { return targets_; }
  const std::map<std::string, CsdFuncStats>& csd_functions() const { return csd_funcs_; }
  const std::vector<std::string>& warnings() const { return warnings_; }

 private:
  struct PendingSend {
    std::uint64_t ts;
    std::uint32_t src;
    std::uint32_t callsite;  // index into callsites_
  };
  struct PendingGroup {
    std::vector<PendingSend> sends;  // [0] = first; at most kMaxRemembered
    std::uint64_t forgotten = 0;     // further sends beyond kMaxRemembered (counted, not remembered)
    IpiKind kind = IpiKind::Unknown;
  };
  struct CpuState {
    std::array<PendingGroup, kIpiKindCount> pending;
    std::array<std::optional<std::uint64_t>, kIpiKindCount> open_entry;
    std::optional<std::uint64_t> csd_open_ts;
    std::string csd_open_func;
    std::vector<std::uint32_t> last_send_targets;  // for ipi_raise de-duplication
    bool last_send_unraised = false;
  };
  static constexpr std::size_t kMaxRemembered = 64;

  CpuState& cpu_state(std::uint32_t cpu);
  std::uint32_t intern_callsite(std::string_view callsite, std::string_view callback);
  void add_send(const TraceEvent& ev, std::string_view callsite);
  void add_arrival(const TraceEvent& ev);
  void add_exit(const TraceEvent& ev);
  void serve(PendingGroup& group, std::uint32_t target, IpiKind arrival_kind, std::uint64_t ts);
  void unmatched_group(PendingGroup& group);

  SendCallback on_send_;
  DeliveryCallback on_delivery_;
  std::uint32_t header_cpus_ = 0;
  std::uint32_t max_cpu_seen_ = 0;
  bool any_cpu_ = false;
  std::vector<CpuState> cpu_states_;
  std::uint64_t first_ts_ = 0, last_ts_ = 0, events_with_ts_ = 0;
  std::uint64_t events_total_ = 0, lost_events_ = 0, lost_marks_ = 0;
  std::map<std::string, std::uint64_t> event_counts_;
  std::unordered_map<std::string, std::uint32_t> callsite_index_;
  std::vector<CallsiteStats> callsites_;
  std::uint64_t ipis_sent_ = 0, matched_ = 0, coalesced_ = 0, unmatched_sends_ = 0;
  std::uint64_t unmatched_arrivals_ = 0, arrivals_ = 0, raises_merged_ = 0;
  std::array<KindStats, kIpiKindCount> kinds_{};
  std::map<std::pair<std::uint32_t, std::uint32_t>, PairStats> pairs_;
  std::map<std::uint32_t, TargetStats> targets_;
  std::map<std::string, CsdFuncStats> csd_funcs_;
  std::unordered_map<std::uint64_t, std::pair<std::uint64_t, std::string>> csd_inflight_;  // csd -> (ts, func)
  std::uint64_t csd_events_ = 0, exits_ = 0;
  std::vector<std::string> warnings_;
  IpiSend send_scratch_;
};

/// Reads and analyses a trace file (any supported format). Throws InputError for bad input.
ReadInfo analyse_trace(const std::filesystem::path& path, IpiAnalysis& analysis);

/// Replay API: calls `fn` for every IPI send of the trace, in trace order (streamed, bounded memory).
/// Throws InputError like analyse_trace (including when the trace has no IPI events).
void for_each_ipi_send(const std::filesystem::path& path, const std::function<void(const IpiSend&)>& fn);

/// Replay API: all IPI sends of the trace, in trace order (memory grows with the number of sends).
std::vector<IpiSend> read_ipi_sends(const std::filesystem::path& path);

/// Replay API: calls `fn` for every measured delivery (send -> handler entry), streamed.
void for_each_ipi_delivery(const std::filesystem::path& path, const std::function<void(const IpiDelivery&)>& fn);

}  // namespace ipilab::trace
