// ipilab/common/ipi_kind.h — what an IPI is for, one enum for the whole tool: the kinds a Linux
// trace tells apart (trace/event.h reads them from the callback, the x86 vector or the arm64 reason
// string) and the kinds the simulator sends (workload::vector_of gives each its vector or SGI).
#pragma once

#include <cstdint>

namespace ipilab {

enum class IpiKind : std::uint8_t {
  Reschedule,          ///< RESCHEDULE_VECTOR 0xfd (253) / arm64 IPI_RESCHEDULE, "Rescheduling interrupts"
  CallFunction,        ///< CALL_FUNCTION_VECTOR 0xfc (252) / arm64 IPI_CALL_FUNC, "Function call interrupts"
  CallFunctionSingle,  ///< CALL_FUNCTION_SINGLE_VECTOR 0xfb (251) / arm64 IPI_CALL_FUNC, "Single function call interrupts"
  IrqWork,             ///< IRQ_WORK_VECTOR 0xf6 (246) / arm64 IPI_IRQ_WORK, "IRQ work interrupts"
  TimerBroadcast,      ///< arm64 IPI_TIMER, "Timer broadcast interrupts"
  Other,               ///< another arm64 reason in a trace (CPU stop, backtrace, wake-up...)
  Unknown,             ///< a traced send whose callback does not tell the kind; matches any arrival
  /// X86_PLATFORM_IPI_VECTOR 0xf7 (hv_qlock_kick); sent by the simulator only: the trace readers
  /// do not report it, so it lies outside the kinds they count (trace::kIpiKindCount).
  Platform,
};

}  // namespace ipilab
