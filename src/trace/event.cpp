#include "trace/event.h"

#include <algorithm>
#include <array>

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
  }
  return "unknown";
}

namespace {
bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }
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
  if (starts_with(base, "irq_work")) return IpiKind::IrqWork;
  return IpiKind::Unknown;
}

IpiKind send_kind(std::string_view callsite, std::string_view callback) {
  const IpiKind k = kind_from_callback(callback);
  if (k != IpiKind::Unknown) return k;
  if (starts_with(callsite, "irq_work_queue") || starts_with(callsite, "irq_work_raise")) return IpiKind::IrqWork;
  return IpiKind::Unknown;
}

IpiKind kind_from_arm_reason(std::string_view reason) {
  if (starts_with(reason, "Rescheduling")) return IpiKind::Reschedule;
  if (starts_with(reason, "Single function call")) return IpiKind::CallFunctionSingle;
  if (starts_with(reason, "Function call")) return IpiKind::CallFunction;
  if (starts_with(reason, "IRQ work")) return IpiKind::IrqWork;
  if (starts_with(reason, "Timer broadcast")) return IpiKind::TimerBroadcast;
  return IpiKind::Other;
}

std::optional<IpiKind> kind_from_vector_event(std::string_view base) {
  if (base == "reschedule") return IpiKind::Reschedule;
  if (base == "call_function") return IpiKind::CallFunction;
  if (base == "call_function_single") return IpiKind::CallFunctionSingle;
  if (base == "irq_work") return IpiKind::IrqWork;
  return std::nullopt;
}

std::string_view normalize_symbol(std::string_view text) {
  // Kernel %pS: "sym+0x36/0x50 [mod]"; libtraceevent: "sym+0x36". Keep "sym+0x36".
  const auto space = text.find(' ');
  if (space != std::string_view::npos) text = text.substr(0, space);
  const auto slash = text.find('/');
  if (slash != std::string_view::npos) text = text.substr(0, slash);
  return text;
}

namespace {
int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}
}  // namespace

bool parse_cpumask_words(std::string_view text, std::vector<std::uint32_t>& out) {
  out.clear();
  if (text.empty()) return false;
  // Count words first: the last word (least significant) holds CPUs 0..31.
  std::size_t words = 1;
  for (char c : text) {
    if (c == ',') ++words;
    else if (hex_digit(c) < 0) return false;
  }
  if (words > 1024) return false;  // > 32768 CPUs: not a kernel cpumask
  std::size_t word_index = words;  // counts down: first word printed is the most significant
  std::size_t pos = 0;
  while (pos <= text.size()) {
    const auto comma = text.find(',', pos);
    const std::string_view word = text.substr(pos, comma == std::string_view::npos ? std::string_view::npos : comma - pos);
    if (word.empty() || word.size() > 8) return false;
    std::uint32_t value = 0;
    for (char c : word) value = (value << 4) | static_cast<std::uint32_t>(hex_digit(c));
    --word_index;
    for (int bit = 31; bit >= 0; --bit)
      if (value & (1u << bit)) out.push_back(static_cast<std::uint32_t>(word_index * 32 + static_cast<std::size_t>(bit)));
    if (comma == std::string_view::npos) break;
    pos = comma + 1;
  }
  std::sort(out.begin(), out.end());
  return true;
}

}  // namespace ipilab::trace
