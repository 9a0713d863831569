#include "trace/event.h"

#include <algorithm>
#include <array>
#include <string>

#include "trace/tracepoints.h"

namespace ipilab::trace {

std::string_view kind_name(IpiKind kind) {
  switch (kind) {
    case IpiKind::Reschedule: return "reschedule";
    case IpiKind::CallFunction: return "call-function";
    case IpiKind::CallFunctionSingle: return "call-function-single";
    case IpiKind::IrqWork: return "irq-work";
    case IpiKind::TimerBroadcast: return "timer-broadcast";
    case IpiKind::Other: return "other";
    case IpiKind::Unknown: return "unknown";
    case IpiKind::Platform: return "platform";
  }
  return "unknown";
}

namespace {
std::string_view symbol_base(std::string_view sym) {
  const auto plus = sym.find('+');
  return plus == std::string_view::npos ? sym : sym.substr(0, plus);
}
}  // namespace

IpiKind kind_from_callback(std::string_view callback) {
  if (callback.empty() || callback == "0x0" || callback == "0" || callback == "(nil)") return IpiKind::Reschedule;
  const std::string_view base = symbol_base(callback);
  if (base == "generic_smp_call_function_single_interrupt") return IpiKind::CallFunctionSingle;
  if (base == "generic_smp_call_function_interrupt") return IpiKind::CallFunction;
  if (base.starts_with("irq_work")) return IpiKind::IrqWork;
  return IpiKind::Unknown;
}

IpiKind send_kind(std::string_view callsite, std::string_view callback, EventType type) {
  const IpiKind k = kind_from_callback(callback);
  if (k == IpiKind::CallFunctionSingle && type == EventType::IpiSendCpumask) return IpiKind::CallFunction;
  if (k != IpiKind::Unknown) return k;
  if (callsite.starts_with("irq_work_queue") || callsite.starts_with("irq_work_raise")) return IpiKind::IrqWork;
  return IpiKind::Unknown;
}

IpiKind kind_from_arm_reason(std::string_view reason) {
  if (reason.starts_with("Rescheduling")) return IpiKind::Reschedule;
  if (reason.starts_with("Single function call")) return IpiKind::CallFunctionSingle;
  if (reason.starts_with("Function call")) return IpiKind::CallFunction;
  if (reason.starts_with("IRQ work")) return IpiKind::IrqWork;
  if (reason.starts_with("Timer broadcast")) return IpiKind::TimerBroadcast;
  return IpiKind::Other;
}

std::optional<IpiKind> kind_from_vector_event(std::string_view base) {
  // The irq_vectors rows of the tracepoint table: "<base>_entry".
  const Tracepoint* t = find_tracepoint(std::string(base) + "_entry", "irq_vectors");
  if (!t || t->type != EventType::VectorEntry) return std::nullopt;
  return t->kind;
}

std::string_view normalize_symbol(std::string_view text) {
  // Kernel %pS: "sym+0x36/0x50 [mod]"; libtraceevent: "sym+0x36". Keep "sym+0x36".
  const auto space = text.find(' ');
  if (space != std::string_view::npos) text = text.substr(0, space);
  const auto slash = text.find('/');
  if (slash != std::string_view::npos) text = text.substr(0, slash);
  return text;
}

}  // namespace ipilab::trace
