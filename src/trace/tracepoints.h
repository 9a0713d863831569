// ipilab/trace/tracepoints.h — the one table of the tracepoints ipilab understands: which event
// type and IPI kind each is, the architecture that has it, the kernel that added it, and whether
// `ipilab trace record` enables it. The trace.dat reader, the text reader, `trace record` and its
// architecture check all read this table; adding a tracepoint is one row here plus its decoding.
//
// Sources (the TRACE_EVENT definitions in the Linux tree):
//   ipi:ipi_send_cpu, ipi:ipi_send_cpumask          include/trace/events/ipi.h (Linux 6.4)
//   ipi:ipi_raise, ipi:ipi_entry, ipi:ipi_exit      include/trace/events/ipi.h (Linux 3.17; Arm and a few others)
//   csd:csd_queue_cpu, csd:csd_function_entry/_exit include/trace/events/csd.h (Linux 6.5)
//   irq_vectors:<vector>_entry/_exit                arch/x86/include/asm/trace/irq_vectors.h (x86)
//   sched:sched_wake_idle_without_ipi               include/trace/events/sched.h (Linux 3.16)
//   ftrace:print                                    kernel/trace/trace_entries.h (trace_marker writes)
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "trace/event.h"

namespace ipilab::trace {

/// The architectures whose kernels define a tracepoint.
enum class TracepointArch : std::uint8_t { Any, X86, Arm };

struct Tracepoint {
  std::string_view system;   ///< "ipi", "csd", "irq_vectors", "sched", "ftrace"
  std::string_view name;     ///< event name without the system
  EventType type;
  IpiKind kind;              ///< irq_vectors events: the vector's kind; others Unknown (decided per record)
  TracepointArch arch;
  std::string_view since;    ///< the kernel that added it, for messages ("Linux >= 6.4")
  bool recorded;             ///< `ipilab trace record` enables it
  bool report_absent;        ///< a trace.dat whose kernel lacks it says so (the main IPI events)
};

/// Every tracepoint ipilab reads, in a stable order (sends, arrivals, csd, sched, ftrace).
std::span<const Tracepoint> tracepoints();

/// The row of event `name` (without its system), or nullptr. `system` empty: any system.
const Tracepoint* find_tracepoint(std::string_view name, std::string_view system = {});

/// "system:name".
std::string qualified_name(const Tracepoint& t);

}  // namespace ipilab::trace
