// ipilab/trace/analysis.h — pairs every IPI send with its arrival, tells how each queued cross-call
// was served, and keeps the statistics of one ring buffer (TraceAnalysis routes several buffers).
//
// Pairing rules:
//   - A send is one per target CPU: ipi_send_cpu gives one, ipi_send_cpumask one per CPU in the mask,
//     Arm ipi_raise one per CPU in target_mask (an ipi_raise that repeats the previous ipi_send_* of
//     the same CPU with the same targets is the same IPI and is not counted twice). Multi-target
//     sends are therefore paired per target: each target CPU's share waits for that CPU's next
//     handler entry, and its latency is measured from the one send. On arm64 a single and a multi
//     call-function IPI arrive with the same reason ("Function call interrupts", IPI_CALL_FUNC in
//     arch/arm64/kernel/smp.c), so both kinds of send are served by that entry.
//   - The send's kind comes from its callback and callsite (send_kind) or Arm reason; the arrival's kind
//     from the handler entry event (irq_vectors:<kind>_entry, ipi:ipi_entry reason).
//   - A send waits on its target CPU until the first handler entry of the same kind on that CPU; a
//     call-function entry also serves a waiting call-function-single send (both flush the same
//     per-CPU call_single_queue in kernel/smp.c); a send of unknown kind is served by the first IPI
//     entry of any kind.
//   - Bound: a send still waiting `pair_limit_ns` after it was sent (default 10 ms: IPIs are
//     delivered in microseconds, and a vCPU preempted for longer than that is a different story) is
//     unmatched ("expired"): it is never paired with a later, unrelated arrival.
//   - One entry serves one send, in send order per target and kind: the oldest send made since the
//     group's previous entry, else the oldest send an earlier entry left provisionally coalesced.
//     When an entry takes a send, the sends still waiting are *provisionally coalesced* onto it (x86:
//     a send of a vector still pending in the target's APIC IRR merges into that interrupt), but two
//     entries prove two interrupts, so a later entry that finds no newer send takes them. They are
//     *coalesced* for good (matched, no latency sample, riding on the interrupt of the latest send
//     before them that raised one) only when no entry is left for them: a newer send was taken,
//     the pairing limit passed or the trace ended. The send an entry takes raised its interrupt and
//     gives the latency (entry ts - send ts).
//   - Sends still waiting at the end are unmatched_sends; entries that find no waiting send are
//     unmatched_arrivals (self IPIs such as irq_work raised with apic->send_IPI_self, which has no
//     send tracepoint, or sends from before the trace began). Nothing is dropped silently.
//   - Handler time = exit ts - entry ts of the same kind on the same CPU.
//
// Kernel conventions (kernel/smp.c):
//   - v6.5 and later: every queued cross-call is csd:csd_queue_cpu; ipi_send_cpu/_cpumask are the
//     IPIs (callback = the generic handler, NULL for reschedule, the irq_work function for the
//     irq_work self-IPI).
//   - v6.4 only: ipi_send_cpu/_cpumask were also emitted for every queued call, with the queued
//     function as callback (__smp_call_single_queue, smp_call_function_many_cond); only those whose
//     callback is a generic handler (or NULL) were IPIs. An ipi_send_* with another callback that is
//     not an irq_work raise is therefore a *queued call*, not an IPI; convention() says which of the
//     two the trace showed.
//
// How each queued call was served (the batch of calls a CPU queues is closed by what it does next):
//   - ipi: the call's own IPI followed (an ipi_send_* with a call-function callback to its target);
//   - coalesced: no IPI of its own — the target's queue was not empty, the call rides on the IPI
//     that an earlier call raised (llist_add() returned false);
//   - polling-idle: sched:sched_wake_idle_without_ipi for its target followed (the target was
//     polling in idle, call_function_single_prep_ipi() set TIF_NEED_RESCHED instead of an IPI, and
//     the call runs from the idle loop); when the trace has no sched_wake_idle_without_ipi at all and
//     the target's queue was empty, the call is counted polling-idle *inferred* (the only other
//     reason for no IPI) and a note says so;
//   - local: csd_function_entry with csd=(nil) on the calling CPU: run locally, never queued;
//   - pending: the trace ended within 1 ms of the call, before its batch was closed, and before its
//     function ran (a call whose function already ran got no IPI of its own: coalesced, or
//     polling-idle inferred when the target's queue was empty, whenever the trace ends).
//   A batch is closed by the CPU's next call-function ipi_send_* or sched_wake_idle_without_ipi, by a
//   call queued from another callsite, or after 1 ms without either.
//   None of these is an unmatched send. queue-to-run latency = csd_queue_cpu -> csd_function_entry
//   of the same csd (v6.5+; v6.4 has no csd events).
//
// Memory: per target CPU and kind at most kMaxWaiting waiting sends (more: the oldest is counted
// unmatched with a note), per CPU the open handler and the open batch, one entry per in-flight csd;
// histograms (sim::Histogram) per kind, callsite, (src,dst) and category. Flat in trace length.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "sim/histogram.h"
#include "trace/event.h"
#include "trace/reader.h"

namespace ipilab::trace {

using sim::Histogram;

/// One IPI send as the trace shows it — the unit a replay feeds to the simulator.
struct IpiSend {
  std::uint64_t time_ns = 0;               ///< trace clock, ns
  std::uint32_t src_cpu = 0;               ///< CPU that sent it
  std::vector<std::uint32_t> targets;      ///< target CPUs, ascending (one send per target)
  IpiKind kind = IpiKind::Unknown;         ///< from the callback (x86) or the reason (Arm ipi_raise)
  std::string callsite;                    ///< "sym+0xoff" (libtraceevent form); "ipi_raise" on Arm raise
};

/// One measured delivery: the send that raised the interrupt and the handler entry that served it.
struct IpiDelivery {
  std::uint64_t send_ns = 0;     ///< first waiting send, trace clock ns
  std::uint64_t entry_ns = 0;    ///< handler entry, trace clock ns (latency = entry_ns - send_ns)
  std::uint32_t src_cpu = 0;
  std::uint32_t dst_cpu = 0;
  IpiKind kind = IpiKind::Unknown;   ///< from the entry event (vector / Arm reason)
  std::string callsite;              ///< of the first send
  std::uint64_t coalesced = 0;       ///< further sends that rode on the same interrupt
};

/// How one IPI send (to one target) ended.
enum class SendOutcome : std::uint8_t {
  Raised,     ///< the first waiting send when the handler entered: it raised the interrupt
  Coalesced,  ///< served by an interrupt an earlier send raised
  Unmatched,  ///< no handler entry came (trace ended, or the ring buffer lost it)
  Expired,    ///< still waiting after the pairing limit: unmatched
};
std::string_view outcome_name(SendOutcome o);  ///< "raised", "coalesced", "unmatched", "expired"

/// How a queued cross-call was served (see the header comment).
enum class CallService : std::uint8_t { Ipi, Coalesced, PollingIdle, Local, Pending };
inline constexpr int kCallServiceCount = 5;
std::string_view service_name(CallService s);  ///< "ipi", "coalesced", "polling-idle", "local", "pending"

/// Which kernel convention the trace showed (see the header comment).
enum class Convention : std::uint8_t {
  Indistinct,  ///< no event that tells them apart: both read this trace alike
  V6_5,        ///< csd:csd_queue_cpu present: ipi_send_* are IPIs
  V6_4,        ///< ipi_send_* with queued functions as callback, no csd events
  Mixed,       ///< both shapes (should not happen): each event read by its own shape
};
std::string_view convention_name(Convention c);   ///< "indistinct", "v6.5+", "v6.4", "mixed"
std::string convention_statement(Convention c);   ///< one sentence for reports

/// One IPI send to one target, complete (for --events and --perfetto).
struct IpiRecord {
  std::uint64_t id = 0;              ///< sequence number of the send event in the buffer (0, 1, ...)
  std::uint64_t send_ns = 0;
  std::uint32_t src = 0, dst = 0;
  IpiKind kind = IpiKind::Unknown;   ///< of the send
  std::string_view callsite, callback;
  SendOutcome outcome = SendOutcome::Unmatched;
  std::optional<std::uint64_t> arrival_ns;  ///< handler entry that served it
  IpiKind arrival_kind = IpiKind::Unknown;
  std::optional<std::uint64_t> handler_ns;  ///< entry -> exit of that handler
};

/// One queued cross-call (csd_queue_cpu, or a v6.4 queued-call ipi_send_*) or local run.
struct CallRecord {
  std::uint64_t queue_ns = 0;        ///< queue time (local: run time)
  std::uint32_t src = 0, dst = 0;
  std::string_view func, callsite;
  CallService service = CallService::Pending;
  bool inferred = false;             ///< polling-idle inferred (no sched_wake_idle_without_ipi in the trace)
  std::optional<std::uint64_t> run_ns;      ///< csd_function_entry
  std::optional<std::uint64_t> run_time_ns; ///< entry -> exit
};

/// Receives the per-IPI detail the statistics are made of (exports). Calls come in trace order of
/// completion (an IPI record when its handler exits or it is known unmatched).
class AnalysisObserver {
 public:
  virtual ~AnalysisObserver() = default;
  virtual void on_ipi(const IpiRecord& r) { (void)r; }
  virtual void on_call(const CallRecord& r) { (void)r; }
  /// A handler entry -> exit on `cpu` (exit_ns absent: no exit before the end or the next entry).
  virtual void on_handler(std::uint32_t cpu, IpiKind kind, std::uint64_t entry_ns, std::optional<std::uint64_t> exit_ns) {
    (void)cpu, (void)kind, (void)entry_ns, (void)exit_ns;
  }
  /// A csd function run on `cpu` (csd_function_entry -> exit).
  virtual void on_function(std::uint32_t cpu, std::string_view func, std::uint64_t entry_ns,
                           std::optional<std::uint64_t> exit_ns) {
    (void)cpu, (void)func, (void)entry_ns, (void)exit_ns;
  }
  /// sched_wake_idle_without_ipi: `src` woke polling-idle `dst` without an IPI.
  virtual void on_wake_idle(std::uint64_t ts, std::uint32_t src, std::uint32_t dst) { (void)ts, (void)src, (void)dst; }
  /// A trace_marker write (ftrace print) on `cpu`.
  virtual void on_marker(std::uint64_t ts, std::uint32_t cpu, std::string_view text) { (void)ts, (void)cpu, (void)text; }
};

/// Hands every call on to each of `to` (e.g. an export and a live view of the same buffer).
class TeeAnalysisObserver final : public AnalysisObserver {
 public:
  std::vector<AnalysisObserver*> to;
  void on_ipi(const IpiRecord& r) override {
    for (auto* o : to) o->on_ipi(r);
  }
  void on_call(const CallRecord& r) override {
    for (auto* o : to) o->on_call(r);
  }
  void on_handler(std::uint32_t cpu, IpiKind kind, std::uint64_t entry, std::optional<std::uint64_t> exit) override {
    for (auto* o : to) o->on_handler(cpu, kind, entry, exit);
  }
  void on_function(std::uint32_t cpu, std::string_view f, std::uint64_t entry, std::optional<std::uint64_t> exit) override {
    for (auto* o : to) o->on_function(cpu, f, entry, exit);
  }
  void on_wake_idle(std::uint64_t ts, std::uint32_t src, std::uint32_t dst) override {
    for (auto* o : to) o->on_wake_idle(ts, src, dst);
  }
  void on_marker(std::uint64_t ts, std::uint32_t cpu, std::string_view text) override {
    for (auto* o : to) o->on_marker(ts, cpu, text);
  }
};

/// One row per kind. An IPI has one kind from send to arrival: a send served by a handler entry is
/// counted under the entry's kind (a send of unknown kind, or an arm64 single call-function send
/// arriving as "Function call interrupts"), an unserved one under its own; so every row balances:
/// sends = raised + coalesced + unmatched_sends and arrivals = raised + unmatched_arrivals.
struct KindStats {
  std::uint64_t sends = 0;               ///< sends whose IPI is of this kind (see above)
  std::uint64_t arrivals = 0;            ///< handler entries of this kind
  std::uint64_t raised = 0;              ///< sends that raised an interrupt of this kind (one per entry served)
  std::uint64_t matched = 0;             ///< sends served by an entry of this kind (raised + coalesced)
  std::uint64_t coalesced = 0;           ///< of matched: shared an entry with an earlier send
  std::uint64_t unmatched_sends = 0;     ///< sends of this kind never served (incl. expired)
  std::uint64_t unmatched_arrivals = 0;  ///< entries of this kind with no waiting send
  Histogram latency;                     ///< send -> entry, ns (one sample per entry that had a send)
  Histogram handler;                     ///< entry -> exit, ns
};

struct CallsiteStats {
  std::string callsite;
  std::string callback;                  ///< callback of its first send
  std::uint64_t sends = 0;
  std::uint64_t matched = 0;
  std::uint64_t coalesced = 0;
  std::uint64_t unmatched = 0;
  Histogram latency;
};

struct PairStats {
  std::uint64_t sends = 0;
  std::uint64_t matched = 0;
  std::uint64_t coalesced = 0;
  Histogram latency;
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
  Histogram queue_to_run;  ///< csd_queue_cpu -> csd_function_entry (same csd), ns
  Histogram run_time;      ///< csd_function_entry -> exit, ns
};

struct ServiceStats {
  std::uint64_t count = 0;
  std::uint64_t inferred = 0;   ///< polling-idle only: inferred, not seen
  Histogram queue_to_run;       ///< ns (csd address matched)
};

struct AnalysisOptions {
  std::uint64_t pair_limit_ns = 10'000'000;  ///< a send unanswered for longer is unmatched
  AnalysisObserver* observer = nullptr;      ///< per-IPI detail (exports); nullptr = none
};

/// The analysis of one ring buffer. Feed it as an EventSink, then call finish().
class IpiAnalysis : public EventSink {
 public:
  using SendCallback = std::function<void(const IpiSend&)>;
  using DeliveryCallback = std::function<void(const IpiDelivery&)>;
  /// `on_send`, if given, is called for every send in trace order (see IpiSend); `on_delivery` for
  /// every handler entry that served a send, once its count of coalesced sends is final: at the
  /// entry, or, while sends are provisionally coalesced onto it, when they are settled (then after
  /// later entries of other CPUs or kinds).
  explicit IpiAnalysis(SendCallback on_send = {}, DeliveryCallback on_delivery = {}, AnalysisOptions options = {});
  ~IpiAnalysis() override;
  IpiAnalysis(IpiAnalysis&&) noexcept;
  IpiAnalysis& operator=(IpiAnalysis&&) noexcept;

  void on_begin(std::uint32_t cpus) override;
  void on_event(const TraceEvent& ev) override;
  void on_other_events(std::string_view name, std::uint64_t count) override;
  void on_lost_events(std::uint32_t cpu, std::uint64_t count) override;

  /// Ends the trace: waiting sends become unmatched, open batches pending. Throws InputError(place,
  /// reason) if `require_events` and the buffer has no IPI event at all, naming the events to enable
  /// and the kernel versions they need (using `info.absent_in_kernel` for a trace.dat). Fills
  /// warnings() for partial event sets and for what the reader reported.
  void finish(const ReadInfo& info, const std::string& place, bool require_events = true);

  /// True when the buffer holds any IPI-related event (send, arrival, csd, wake), also one that sent
  /// nothing (an empty cpumask) or that the reader left out.
  bool has_ipi_events() const;
  /// True when some IPI-related event of the buffer can be used (a send with a target, an arrival,
  /// a csd or wake event). A buffer with IPI events but none usable ends in an InputError at finish
  /// when it is the one analysed, saying so in one line.
  bool has_usable_events() const;

  // ---- results (valid after finish) ----
  const AnalysisOptions& options() const;
  /// CPUs: the largest of the trace's evidence (cpus_evidence) and the highest CPU a send names + 1.
  std::uint32_t cpus() const;
  /// The CPUs the trace itself shows exist: the largest of its CPU count (trace.dat, "cpus=N"), the
  /// highest CPU with an event line or a per-CPU buffer + 1, and no less than "#P:N" (the CPUs online
  /// when a tracefs `trace` file was read, not the highest CPU number). Sends naming a CPU beyond it
  /// are kept and flagged in warnings().
  std::uint32_t cpus_evidence() const;
  std::uint64_t empty_sends() const;                  ///< send events with an empty cpumask (no IPI)
  std::uint64_t markers() const;                      ///< ftrace print events (trace_marker writes)
  std::uint64_t first_ts() const;
  std::uint64_t last_ts() const;
  std::uint64_t span_ns() const;
  std::uint64_t events_total() const;
  std::uint64_t lost_events() const;
  std::uint64_t lost_event_marks() const;
  const std::map<std::string, std::uint64_t>& event_counts() const;
  /// The events ipilab does not use (other tracepoints, ftrace's own function/bprint/kernel_stack...,
  /// ids without a format) and the records of its own events that a reader left out, by name.
  const std::map<std::string, std::uint64_t>& skipped_event_counts() const;
  std::uint64_t ipis_sent() const;
  std::uint64_t matched() const;
  std::uint64_t coalesced() const;
  std::uint64_t unmatched_sends() const;      ///< includes expired()
  std::uint64_t expired() const;              ///< unmatched because older than the pairing limit
  std::uint64_t unmatched_arrivals() const;
  std::uint64_t arrivals() const;
  std::uint64_t raises_merged() const;
  Convention convention() const;
  std::uint64_t queued_call_sends() const;    ///< v6.4 ipi_send_* events that were queued calls
  std::uint64_t wake_idle_without_ipi() const;   ///< sched_wake_idle_without_ipi events
  const std::array<ServiceStats, kCallServiceCount>& services() const;
  const std::array<KindStats, kIpiKindCount>& by_kind() const;
  /// Callsites, most sends first (ties by name).
  std::vector<const CallsiteStats*> callsites_by_count() const;
  const std::map<std::pair<std::uint32_t, std::uint32_t>, PairStats>& pairs() const;
  const std::map<std::uint32_t, TargetStats>& targets() const;
  const std::map<std::string, CsdFuncStats>& csd_functions() const;
  const std::vector<std::string>& warnings() const;

 private:
  struct State;
  std::unique_ptr<State> s_;
};

/// Several ring buffers: one IpiAnalysis per buffer (sends pair only within their buffer). To
/// analyse one buffer alone, put a BufferFilter (buffer_filter.h) in front: analyse_trace does.
class TraceAnalysis : public EventSink {
 public:
  using ObserverFactory = std::function<AnalysisObserver*(std::string_view buffer)>;
  /// `observer_for`, if given, supplies each buffer's observer (options.observer is then ignored).
  explicit TraceAnalysis(AnalysisOptions options = {}, IpiAnalysis::SendCallback on_send = {},
                         IpiAnalysis::DeliveryCallback on_delivery = {}, ObserverFactory observer_for = {});
  /// The same, for callers that spelt out "no buffer chosen" as a second argument.
  TraceAnalysis(AnalysisOptions options, std::nullopt_t, IpiAnalysis::SendCallback on_send = {},
                IpiAnalysis::DeliveryCallback on_delivery = {}, ObserverFactory observer_for = {})
      : TraceAnalysis(options, std::move(on_send), std::move(on_delivery), std::move(observer_for)) {}

  void on_begin(std::uint32_t cpus) override;
  void on_buffer(std::string_view name) override;
  void on_event(const TraceEvent& ev) override;
  void on_other_events(std::string_view name, std::uint64_t count) override;
  void on_lost_events(std::uint32_t cpu, std::uint64_t count) override;

  /// Ends every buffer. Throws InputError when no buffer holds IPI events, naming the buffers the
  /// file has.
  void finish(const ReadInfo& info, const std::string& place);

  /// Buffers with IPI events, in file order (after finish; all buffers before).
  std::vector<std::pair<std::string, const IpiAnalysis*>> buffers() const;
  /// Every buffer seen, with or without IPI events, in file order.
  const std::vector<std::string>& buffer_names() const { return names_; }

 private:
  IpiAnalysis& current();
  AnalysisOptions options_;
  IpiAnalysis::SendCallback on_send_;
  IpiAnalysis::DeliveryCallback on_delivery_;
  ObserverFactory observer_for_;
  std::uint32_t cpus_ = 0;
  std::vector<std::string> names_;
  std::vector<std::unique_ptr<IpiAnalysis>> analyses_;
  IpiAnalysis* current_ = nullptr;
};

/// Reads and analyses a trace file (any supported format; "-" = stdin). `buffer`: analyse that
/// ring buffer alone ("" = the top level; InputError if the trace has no such buffer). Throws
/// InputError for bad input.
ReadInfo analyse_trace(const std::filesystem::path& path, TraceAnalysis& analysis,
                       const std::optional<std::string>& buffer = std::nullopt);
/// One-buffer form: the trace must have a single buffer with IPI events, or `buffer` names one.
ReadInfo analyse_trace(const std::filesystem::path& path, IpiAnalysis& analysis);

/// Replay API: calls `fn` for every IPI send of the trace, in trace order (streamed, bounded memory).
/// A trace with several buffers holding IPI events needs `buffer` (else InputError naming them).
void for_each_ipi_send(const std::filesystem::path& path, const std::function<void(const IpiSend&)>& fn,
                       const std::optional<std::string>& buffer = std::nullopt);

/// Replay API: all IPI sends of the trace, in trace order (memory grows with the number of sends).
std::vector<IpiSend> read_ipi_sends(const std::filesystem::path& path);

/// Replay API: calls `fn` for every measured delivery (send -> handler entry), streamed.
void for_each_ipi_delivery(const std::filesystem::path& path, const std::function<void(const IpiDelivery&)>& fn,
                           const std::optional<std::string>& buffer = std::nullopt);

}  // namespace ipilab::trace
