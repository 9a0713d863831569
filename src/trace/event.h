// ipilab/trace/event.h — one IPI-related trace event, normalised from any reader (trace.dat or text).
//
// Sources of the event shapes (the TRACE_EVENT print formats in the Linux headers named):
//   ipi:ipi_send_cpu      cpu=%u callsite=%pS callback=%pS               Linux >= 6.4 (include/trace/events/ipi.h)
//   ipi:ipi_send_cpumask  cpumask=%s callsite=%pS callback=%pS           Linux >= 6.4
//   ipi:ipi_raise         target_mask=%s (%s)                             Linux >= 3.17, Arm and a few others
//   ipi:ipi_entry/_exit   (%s)                                            Linux >= 3.17, not x86
//   csd:csd_queue_cpu     cpu=%u callsite=%pS func=%ps csd=%p             Linux >= 6.5 (include/trace/events/csd.h)
//   csd:csd_function_entry/_exit  func=%ps, csd=%p                        Linux >= 6.5
//   irq_vectors:<v>_entry/_exit   vector=%d                               x86 (arch/x86/include/asm/trace/irq_vectors.h)
//   sched:sched_wake_idle_without_ipi  cpu=%d                             Linux >= 3.16 (include/trace/events/sched.h):
//                         the target was polling in idle, so the wakeup or queued call needed no IPI
// Readers hand events to an EventSink one at a time; an event's string_views stay valid only for the
// duration of the EventSink::on_event call (readers reuse their buffers).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/ipi_kind.h"

namespace ipilab::trace {

/// What kind of IPI a send asks for or a handler serves (common/ipi_kind.h). On x86 the kind is the
/// vector (irq_vectors:<kind>_entry); on Arm it is the reason string of ipi_entry ("Rescheduling
/// interrupts"). The readers report the first kIpiKindCount kinds (Reschedule .. Unknown).
using IpiKind = ipilab::IpiKind;

/// The event types ipilab understands (tracepoints.h lists the tracepoint of each). Everything else
/// in a trace is counted and skipped.
enum class EventType : std::uint8_t {
  IpiSendCpu,        ///< ipi:ipi_send_cpu — targets = {cpu}
  IpiSendCpumask,    ///< ipi:ipi_send_cpumask — targets = the cpumask's CPUs
  IpiRaise,          ///< ipi:ipi_raise (Arm) — targets = target_mask, kind from the reason
  IpiEntry,          ///< ipi:ipi_entry (Arm) — kind from the reason
  IpiExit,           ///< ipi:ipi_exit (Arm)
  VectorEntry,       ///< irq_vectors:<kind>_entry (x86) — kind from the name, `vector` set
  VectorExit,        ///< irq_vectors:<kind>_exit (x86)
  CsdQueueCpu,       ///< csd:csd_queue_cpu — targets = {cpu}, callback = func
  CsdFunctionEntry,  ///< csd:csd_function_entry — callback = func
  CsdFunctionExit,   ///< csd:csd_function_exit — callback = func
  WakeIdleNoIpi,     ///< sched:sched_wake_idle_without_ipi — targets = {cpu}
  Marker,            ///< ftrace:print (a trace_marker write) — text = what was written
};
inline constexpr int kIpiKindCount = 7;

/// Stable lower-case names used in reports and JSON: "reschedule", "call-function",
/// "call-function-single", "irq-work", "timer-broadcast", "other", "unknown".
std::string_view kind_name(IpiKind kind);

/// The kind a send asks for, from its `callback` symbol (ipi_send_cpu/cpumask): NULL ("0x0" or empty)
/// is smp_send_reschedule -> Reschedule; generic_smp_call_function_single_interrupt ->
/// CallFunctionSingle; generic_smp_call_function_interrupt -> CallFunction; irq_work_* -> IrqWork;
/// anything else -> Unknown. (kernel/smp.c, kernel/sched/core.c of Linux 6.4+.)
IpiKind kind_from_callback(std::string_view callback);

/// The kind a send asks for: kind_from_callback, and when that is Unknown, IrqWork for a callsite in
/// irq_work_queue*/irq_work_raise* (Linux 6.4+ traces the irq_work self-IPI through ipi_send_cpu with
/// the irq_work function as callback, e.g. "callsite=irq_work_queue+0x29 callback=rb_wake_up_waiters+0x0",
/// seen on 6.18), else Unknown. An ipi_send_cpumask (`type`) with the call-function handler as callback
/// is CallFunction: kernel/smp.c's send_call_function_ipi_mask() traces the mask with
/// generic_smp_call_function_single_interrupt (include/linux/smp.h makes
/// generic_smp_call_function_interrupt the same function) and then raises the multi-target IPI,
/// arch_send_call_function_ipi_mask (x86 CALL_FUNCTION_VECTOR, arm64 IPI_CALL_FUNC), which arrives as
/// call_function_entry; a single target goes through ipi_send_cpu (send_call_function_single_ipi).
IpiKind send_kind(std::string_view callsite, std::string_view callback, EventType type = EventType::IpiSendCpu);

/// The kind of an Arm ipi_raise/ipi_entry/ipi_exit reason string (arch/arm64/kernel/smp.c ipi_types[]).
IpiKind kind_from_arm_reason(std::string_view reason);

/// The kind of an x86 irq_vectors event name without its _entry/_exit suffix ("call_function_single"),
/// or nullopt for vectors that are not IPIs (local_timer, error_apic...).
std::optional<IpiKind> kind_from_vector_event(std::string_view base_name);

/// One normalised event. `cpu` is the CPU the event was recorded on (the sender for sends, the
/// target for entries/exits). `ts_ns` is the trace clock in nanoseconds (text with fewer than 9
/// decimals is scaled, e.g. tracefs' default microseconds).
struct TraceEvent {
  std::uint64_t ts_ns = 0;
  std::uint32_t cpu = 0;
  EventType type = EventType::IpiSendCpu;
  IpiKind kind = IpiKind::Unknown;       ///< send: from callback/reason; entry/exit: from vector/reason
  std::string_view name;                 ///< tracepoint name without system, e.g. "ipi_send_cpu"
  std::vector<std::uint32_t> targets;    ///< target CPUs, ascending (sends, csd_queue_cpu)
  std::string_view callsite;             ///< normalised "sym+0xoff" (no "/0xsize", no " [module]")
  std::string_view callback;             ///< normalised callback / csd func ("0x0" when NULL)
  std::uint64_t csd = 0;                 ///< csd address (csd events); 0 for "(nil)"
  int vector = -1;                       ///< x86 vector number, -1 if not given
  std::string_view text;                 ///< Marker: the text written to trace_marker (no trailing newline)
};

/// Normalises a %pS/%ps symbol as printed by the kernel ("sym+0x36/0x50 [mod]") or by libtraceevent
/// ("sym+0x36") to the libtraceevent form "sym+0x36". Returns a view into `text`.
std::string_view normalize_symbol(std::string_view text);

/// Receives events in trace order within each buffer (trace.dat: CPUs merged by time, one buffer
/// after the other; text: file order, where `trace-cmd report` interleaves the buffers by time).
class EventSink {
 public:
  virtual ~EventSink() = default;
  /// Called once before any event: number of CPUs the trace header declares (0 if unknown).
  virtual void on_begin(std::uint32_t cpus) { (void)cpus; }
  /// The calls that follow belong to ring buffer `name` ("" = the top-level buffer, a tracefs
  /// instance otherwise). Not called for traces of a single top-level buffer.
  virtual void on_buffer(std::string_view name) { (void)name; }
  virtual void on_event(const TraceEvent& event) = 0;
  /// `count` further records of event `name` that ipilab does not use (local_timer_entry,
  /// sched_switch...), for the "events" totals; readers batch them (any time, several calls per
  /// name). Default: ignored.
  virtual void on_other_events(std::string_view name, std::uint64_t count) { (void)name; (void)count; }
  /// The ring buffer dropped `count` events on `cpu` before the next one (0 = unknown amount).
  virtual void on_lost_events(std::uint32_t cpu, std::uint64_t count) { (void)cpu; (void)count; }
};

}  // namespace ipilab::trace
