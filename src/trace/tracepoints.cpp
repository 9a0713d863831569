#include "trace/tracepoints.h"

#include <array>
#include <string>

namespace ipilab::trace {

namespace {

using A = TracepointArch;
using T = EventType;
using K = IpiKind;

constexpr std::array<Tracepoint, 19> kTable{{
    {"ipi", "ipi_send_cpu", T::IpiSendCpu, K::Unknown, A::Any, "Linux >= 6.4", true, true},
    {"ipi", "ipi_send_cpumask", T::IpiSendCpumask, K::Unknown, A::Any, "Linux >= 6.4", true, true},
    {"ipi", "ipi_raise", T::IpiRaise, K::Unknown, A::Arm, "Linux >= 3.17", true, true},
    {"ipi", "ipi_entry", T::IpiEntry, K::Unknown, A::Arm, "Linux >= 3.17", true, true},
    {"ipi", "ipi_exit", T::IpiExit, K::Unknown, A::Arm, "Linux >= 3.17", true, true},
    {"irq_vectors", "call_function_entry", T::VectorEntry, K::CallFunction, A::X86, "x86", true, true},
    {"irq_vectors", "call_function_exit", T::VectorExit, K::CallFunction, A::X86, "x86", true, true},
    {"irq_vectors", "call_function_single_entry", T::VectorEntry, K::CallFunctionSingle, A::X86, "x86", true, true},
    {"irq_vectors", "call_function_single_exit", T::VectorExit, K::CallFunctionSingle, A::X86, "x86", true, true},
    {"irq_vectors", "reschedule_entry", T::VectorEntry, K::Reschedule, A::X86, "x86", true, true},
    {"irq_vectors", "reschedule_exit", T::VectorExit, K::Reschedule, A::X86, "x86", true, true},
    {"irq_vectors", "irq_work_entry", T::VectorEntry, K::IrqWork, A::X86, "x86", true, true},
    {"irq_vectors", "irq_work_exit", T::VectorExit, K::IrqWork, A::X86, "x86", true, true},
    {"csd", "csd_queue_cpu", T::CsdQueueCpu, K::Unknown, A::Any, "Linux >= 6.5", true, true},
    {"csd", "csd_function_entry", T::CsdFunctionEntry, K::Unknown, A::Any, "Linux >= 6.5", true, true},
    {"csd", "csd_function_exit", T::CsdFunctionExit, K::Unknown, A::Any, "Linux >= 6.5", true, true},
    {"sched", "sched_wake_idle_without_ipi", T::WakeIdleNoIpi, K::Unknown, A::Any, "Linux >= 3.16", true, false},
    // trace_marker writes: always on in a buffer that traces, nothing to enable.
    {"ftrace", "print", T::Marker, K::Unknown, A::Any, "any", false, false},
    // The tracefs `trace` file prints a marker under its function name instead of "print".
    {"ftrace", "tracing_mark_write", T::Marker, K::Unknown, A::Any, "any", false, false},
}};

}  // namespace

std::span<const Tracepoint> tracepoints() { return kTable; }

const Tracepoint* find_tracepoint(std::string_view name, std::string_view system) {
  for (const Tracepoint& t : kTable)
    if (t.name.size() == name.size() && t.name == name && (system.empty() || t.system == system)) return &t;
  return nullptr;
}

std::string qualified_name(const Tracepoint& t) { return std::string(t.system) + ":" + std::string(t.name); }

}  // namespace ipilab::trace
