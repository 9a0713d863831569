#include "trace/text_reader.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstring>

#include <fmt/format.h>

#include "common/error.h"

namespace ipilab::trace {

namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_ident(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || is_digit(c) || c == '_';
}
std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}
bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

template <typename T>
bool parse_dec(std::string_view s, T& out) {
  if (s.empty()) return false;
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out, 10);
  return ec == std::errc() && p == s.data() + s.size();
}

// The timestamp token "<sec>.<frac>:" ends at a ':' at `colon`; returns its first index, or npos.
std::size_t timestamp_start(std::string_view s, std::size_t colon) {
  std::size_t j = colon;
  std::size_t frac = 0;
  while (j > 0 && is_digit(s[j - 1])) --j, ++frac;
  if (frac == 0 || frac > 9 || j == 0 || s[j - 1] != '.') return std::string_view::npos;
  --j;
  std::size_t sec = 0;
  while (j > 0 && is_digit(s[j - 1])) --j, ++sec;
  if (sec == 0 || sec > 10 || j == 0 || s[j - 1] != ' ') return std::string_view::npos;
  return j;
}

// "<sec>.<frac>:" at [i, colon) followed by ' ' then "[<system>:]<event>:" — fills ts/event/rest.
bool parse_ts_event(std::string_view s, std::size_t i, std::size_t colon, std::uint64_t& ts_ns,
                    std::string_view& event, std::string_view& system, std::string_view& rest) {
  const std::size_t dot = s.find('.', i);
  std::uint64_t sec = 0, frac = 0;
  if (!parse_dec(s.substr(i, dot - i), sec) || !parse_dec(s.substr(dot + 1, colon - dot - 1), frac)) return false;
  for (std::size_t k = colon - dot - 1; k < 9; ++k) frac *= 10;
  std::size_t j = colon + 1;
  if (j >= s.size() || s[j] != ' ') return false;
  while (j < s.size() && s[j] == ' ') ++j;
  std::size_t name_start = j;
  while (j < s.size() && is_ident(s[j])) ++j;
  if (j == name_start || j >= s.size() || s[j] != ':') return false;
  system = {};
  // perf script: "ipi:ipi_send_cpu:" — the system, then the event.
  if (j + 1 < s.size() && is_ident(s[j + 1])) {
    std::size_t k = j + 1;
    while (k < s.size() && is_ident(s[k])) ++k;
    if (k < s.size() && s[k] == ':') {
      system = s.substr(name_start, j - name_start);
      name_start = j + 1;
      j = k;
    }
  }
  ts_ns = sec * 1'000'000'000ull + frac;
  event = s.substr(name_start, j - name_start);
  rest = trim(s.substr(j + 1));
  return true;
}

// The part before the timestamp: "<comm>-<pid> [(<tgid>)] [<cpu>] [<flags>]", "<comm>-<pid>
// <cpu><flags>" (report -l) or "<comm> <tid> [<cpu>]" (perf script).
bool parse_cpu(std::string_view head, std::uint32_t& cpu) {
  head = trim(head);
  auto last_token = [](std::string_view s) {
    const auto sp = s.find_last_of(' ');
    return sp == std::string_view::npos ? s : s.substr(sp + 1);
  };
  auto bracket_cpu = [&](std::string_view tok) {
    return tok.size() >= 3 && tok.front() == '[' && tok.back() == ']' && parse_dec(tok.substr(1, tok.size() - 2), cpu);
  };
  std::string_view tok = last_token(head);
  if (tok.size() == head.size()) return false;  // no comm-pid before it
  if (bracket_cpu(tok)) return true;
  // tracefs: "[001] d.h1." — flags after the CPU.
  std::string_view before = trim(head.substr(0, head.size() - tok.size()));
  std::string_view tok2 = last_token(before);
  if (tok2.size() != before.size() && bracket_cpu(tok2)) return true;
  // trace-cmd report -l: "<cpu><flags>", e.g. "1d.h1." or "0...2.".
  std::size_t d = 0;
  while (d < tok.size() && is_digit(tok[d])) ++d;
  if (d == 0 || d == tok.size() || tok.size() - d < 4 || tok.size() - d > 6) return false;
  return parse_dec(tok.substr(0, d), cpu);
}

// key=value fields: "cpu=0 callsite=a+0x1/0x2 [mod] callback=b+0x0", "func=f, csd=0x1".
struct Fields {
  std::array<std::string_view, 8> keys{};
  std::array<std::string_view, 8> values{};
  int n = 0;
  const std::string_view* find(std::string_view key) const {
    for (int i = 0; i < n; ++i)
      if (keys[static_cast<std::size_t>(i)] == key) return &values[static_cast<std::size_t>(i)];
    return nullptr;
  }
};

Fields split_fields(std::string_view s) {
  Fields f;
  std::size_t value_start = std::string_view::npos;
  auto close_value = [&](std::size_t end) {
    if (value_start == std::string_view::npos || f.n == 0) return;
    std::string_view v = trim(s.substr(value_start, end - value_start));
    while (!v.empty() && v.back() == ',') v.remove_suffix(1);
    f.values[static_cast<std::size_t>(f.n - 1)] = v;
  };
  std::size_t i = 0;
  while (i < s.size()) {
    if (i == 0 || s[i - 1] == ' ') {
      std::size_t j = i;
      while (j < s.size() && is_ident(s[j])) ++j;
      if (j > i && j < s.size() && s[j] == '=' && f.n < 8) {
        close_value(i);
        f.keys[static_cast<std::size_t>(f.n)] = s.substr(i, j - i);
        ++f.n;
        value_start = j + 1;
        i = j + 1;
        continue;
      }
      // Skip to the next space: nothing inside a token starts a key.
      const auto sp = s.find(' ', i);
      if (sp == std::string_view::npos) break;
      i = sp + 1;
      continue;
    }
    ++i;
  }
  close_value(s.size());
  return f;
}

}  // namespace

TextTraceParser::TextTraceParser(std::string place, EventSink& sink, ReadInfo& info)
    : place_(std::move(place)), sink_(sink), info_(info) {
  ev_.targets.reserve(8);
  other_.emplace_back(std::string(), Counts{});
}

void TextTraceParser::fail(std::string_view reason) const {
  throw InputError(fmt::format("{}:{}", place_, line_no_), std::string(reason));
}

void TextTraceParser::begin_if_needed() {
  if (begun_) return;
  begun_ = true;
  sink_.on_begin(cpus_);
}

void TextTraceParser::switch_buffer(std::string_view name) {
  if (name == buffer_ && (buffer_announced_ || name.empty())) return;
  buffer_.assign(name);
  buffer_announced_ = true;
  sink_.on_buffer(buffer_);
  other_index_ = other_.size();
  for (std::size_t i = 0; i < other_.size(); ++i)
    if (other_[i].first == buffer_) other_index_ = i;
  if (other_index_ == other_.size()) other_.emplace_back(buffer_, Counts{});
  if (std::find(info_.buffers.begin(), info_.buffers.end(), buffer_) == info_.buffers.end())
    info_.buffers.push_back(buffer_);
}

void TextTraceParser::finish() {
  begin_if_needed();
  const std::string current = buffer_;
  for (auto& [buffer, counts] : other_) {
    if (counts.empty()) continue;
    if (buffer_announced_) sink_.on_buffer(buffer);
    for (const auto& [name, n] : counts) sink_.on_other_events(name, n);
    counts.clear();
  }
  if (buffer_announced_) sink_.on_buffer(current);
  if (info_.buffers.empty()) info_.buffers.push_back(std::string());
}

void TextTraceParser::warn(std::string_view what, std::string_view value, std::string_view detail) {
  for (auto& w : info_.warnings)
    if (w.what == what) {
      ++w.count;
      return;
    }
  info_.warnings.push_back(
      {std::string(what), 1, fmt::format("{}:{}", place_, line_no_), std::string(value), std::string(detail)});
}

std::uint32_t TextTraceParser::cpu_bound() const {
  // Without a header the CPU count is unknown: a target beyond every CPU seen so far may simply not
  // have logged an event yet, so nothing is checked then (0).
  if (cpus_ == 0) return 0;
  return std::max(cpus_, any_cpu_ ? max_cpu_ + 1 : 0u);
}

void TextTraceParser::feed_line(std::string_view line) {
  ++line_no_;
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  std::size_t first = 0;
  while (first < line.size() && (line[first] == ' ' || line[first] == '\t')) ++first;
  if (first == line.size()) return;
  const char c0 = line[first];
  if (c0 == '#') {
    // tracefs header: "# entries-in-buffer/entries-written: 45/45   #P:2"
    const std::string_view t = trim(line);
    const auto p = t.find("#P:");
    if (p != std::string_view::npos && !begun_) {
      std::uint32_t n = 0;
      std::size_t e = p + 3;
      while (e < t.size() && is_digit(t[e])) ++e;
      if (parse_dec(t.substr(p + 3, e - p - 3), n) && n > 0 && n <= kMaxCpus && !cpus_from_header_) cpus_ = n;
    }
    return;
  }
  if (c0 == 'c' || c0 == 'v' || c0 == 'C') {
    const std::string_view t = trim(line);
    if (starts_with(t, "cpus=")) {
      std::uint32_t n = 0;
      if (!parse_dec(t.substr(5), n) || n == 0 || n > kMaxCpus) fail("bad CPU count in 'cpus=N' header");
      if (!begun_) cpus_ = n, cpus_from_header_ = true;
      return;
    }
    if (starts_with(t, "version = ")) return;
    if (starts_with(t, "CPU:")) {  // "CPU:1 [LOST 123 EVENTS]"
      std::size_t e = 4;
      while (e < t.size() && is_digit(t[e])) ++e;
      std::uint32_t cpu = 0;
      const auto lost = t.find("[LOST ");
      if (parse_dec(t.substr(4, e - 4), cpu) && lost != std::string_view::npos) {
        std::size_t k = lost + 6, k0 = k;
        while (k < t.size() && is_digit(t[k])) ++k;
        std::uint64_t n = 0;
        if (!parse_dec(t.substr(k0, k - k0), n)) n = 0;
        begin_if_needed();
        sink_.on_lost_events(cpu, n);
        return;
      }
    }
    if (starts_with(t, "CPU ") && t.find(" is empty") != std::string_view::npos) return;
  }

  // Event line: anchor on the first "<digits>.<digits>: " preceded by a space.
  std::size_t pos = first;
  for (;;) {
    const void* hit = std::memchr(line.data() + pos, ':', line.size() - pos);
    if (!hit) break;
    const std::size_t colon = static_cast<std::size_t>(static_cast<const char*>(hit) - line.data());
    pos = colon + 1;
    const std::size_t ts = timestamp_start(line, colon);
    if (ts == std::string_view::npos) continue;
    std::uint64_t ts_ns = 0;
    std::string_view name, system, rest;
    if (!parse_ts_event(line, ts, colon, ts_ns, name, system, rest)) continue;
    // A buffer prefix "<name>: " at column 0 (trace-cmd report of a file with instances).
    std::string_view head = line.substr(0, ts);
    std::string_view buffer;
    if (first == 0) {
      std::size_t k = 0;
      while (k < head.size() && (is_ident(head[k]) || head[k] == '-' || head[k] == '.')) ++k;
      if (k > 0 && k + 1 < head.size() && head[k] == ':' && head[k + 1] == ' ') {
        buffer = head.substr(0, k);
        head = head.substr(k + 1);
      }
    }
    std::uint32_t cpu = 0;
    if (!parse_cpu(head, cpu))
      fail("no CPU field before the timestamp (expected '<comm>-<pid> [<cpu>] <sec>.<frac>: <event>: ...')");
    if (cpu >= kMaxCpus) fail(fmt::format("CPU {} out of range", cpu));
    if (!any_cpu_ || cpu > max_cpu_) max_cpu_ = cpu;
    any_cpu_ = true;
    begin_if_needed();
    if (!buffer.empty() || buffer_announced_) switch_buffer(buffer);
    ++events_;
    (void)system;
    handle_event(cpu, ts_ns, name, rest);
    return;
  }
  if (starts_with(trim(line), "#####")) return;
  fail("not a trace event line (expected '<comm>-<pid> [<cpu>] <sec>.<frac>: <event>: <fields>' as "
       "printed by trace-cmd report, the tracefs 'trace' file or perf script)");
}

Decoded decode_text_fields(std::string_view name, std::string_view fields, TraceEvent& ev,
                           std::array<std::uint64_t, kCpumaskFormCount>* forms, std::string* skip_reason,
                           std::uint32_t cpu_count, std::string* skip_detail) {
  auto fail = [](std::string reason) { throw InputError("", std::move(reason)); };
  ev.name = name;
  ev.targets.clear();
  ev.callsite = {};
  ev.callback = {};
  ev.csd = 0;
  ev.vector = -1;
  ev.kind = IpiKind::Unknown;

  // Which event is it? (cheap checks on the name first: most lines of a busy trace are ours.)
  enum class E : std::uint8_t { SendCpu, SendMask, Raise, Entry, Exit, CsdQueue, CsdEntry, CsdExit, WakeIdle, VecEntry, VecExit };
  E e{};
  std::optional<IpiKind> vector_kind;
  bool found = true;
  switch (name.size()) {  // by length first: one comparison per event
    case 12: found = name == "ipi_send_cpu", e = E::SendCpu; break;
    case 16: found = name == "ipi_send_cpumask", e = E::SendMask; break;
    case 9:
      if (name == "ipi_raise") e = E::Raise;
      else if (name == "ipi_entry") e = E::Entry;
      else found = false;
      break;
    case 8: found = name == "ipi_exit", e = E::Exit; break;
    case 13: found = name == "csd_queue_cpu", e = E::CsdQueue; break;
    case 18: found = name == "csd_function_entry", e = E::CsdEntry; break;
    case 17: found = name == "csd_function_exit", e = E::CsdExit; break;
    case 27: found = name == "sched_wake_idle_without_ipi", e = E::WakeIdle; break;
    default: found = false;
  }
  if (!found) {
    const char c = name.empty() ? '\0' : name.front();
    if (c != 'r' && c != 'c' && c != 'i') return Decoded::Other;  // reschedule, call_function*, irq_work
    if (name.ends_with("_entry") && (vector_kind = kind_from_vector_event(name.substr(0, name.size() - 6)))) e = E::VecEntry;
    else if (name.ends_with("_exit") && (vector_kind = kind_from_vector_event(name.substr(0, name.size() - 5)))) e = E::VecExit;
    else return Decoded::Other;
  }

  // "[FAILED TO PARSE] cpu=1 callsite=0xffffffff81234567 callback=0x0": the raw fields.
  constexpr std::string_view kFailed = "[FAILED TO PARSE]";
  bool raw = false;
  if (starts_with(fields, kFailed)) {
    fields = trim(fields.substr(kFailed.size()));
    raw = true;
  }

  const Fields f = split_fields(fields);
  auto need = [&](std::string_view key) {
    const std::string_view* v = f.find(key);
    if (!v) fail(fmt::format("{}: missing field '{}='", name, key));
    if (v->empty()) fail(fmt::format("{}: empty field '{}='", name, key));
    return *v;
  };
  auto need_cpu = [&]() {
    std::uint32_t c = 0;
    if (!parse_dec(need("cpu"), c) || c >= kMaxCpus) fail(fmt::format("{}: bad 'cpu=' value", name));
    return c;
  };
  auto parse_ptr = [&](std::string_view v, std::string_view key) -> std::uint64_t {
    if (v == "(nil)" || v == "0") return 0;
    if (starts_with(v, "0x")) v.remove_prefix(2);
    std::uint64_t x = 0;
    const auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), x, 16);
    if (ec != std::errc() || p != v.data() + v.size() || v.empty())
      fail(fmt::format("{}: bad pointer in '{}='", name, key));
    return x;
  };
  // A raw (unparsed) symbol field is an address as libtraceevent prints pointers ("0x%llx"): kept
  // as printed, so NULL is "0x0" as in the parsed form.
  auto symbol = [&](std::string_view key) { return raw ? need(key) : normalize_symbol(need(key)); };
  auto mask = [&](std::string_view key, std::string_view v) {
    const CpumaskForm form = parse_cpumask_text(v, ev.targets);
    if (forms) ++(*forms)[static_cast<std::size_t>(form)];
    if (form == CpumaskForm::Invalid) {
      if (skip_detail) skip_detail->clear();
      if (skip_reason) *skip_reason = fmt::format("{}: '{}=' value fits no cpumask rendering (hex words, CPU list, "
                                                  "ARRAY[bytes]); record left out of the pairing", name, key);
      return false;
    }
    if (cpu_count > 0 && !ev.targets.empty() && ev.targets.back() >= cpu_count) {
      // No such CPU: this value is not what it looked like. A CPU list of an impossible CPU may be
      // a hex mask printed without leading zeros ("3" = CPUs 0 and 1); ipilab does not pick one.
      std::vector<std::uint32_t> hex;
      const bool as_hex = form == CpumaskForm::CpuList && parse_cpumask_hex_any_width(v, hex);
      const bool hex_fits = as_hex && (hex.empty() || hex.back() < cpu_count);
      if (skip_reason)
        *skip_reason = form == CpumaskForm::CpuList
                           ? fmt::format("{}: '{}=' value read as a CPU list names a CPU the trace does not have; it "
                                         "may be a hex mask instead: ambiguous, record left out of the pairing",
                                         name, key)
                           : fmt::format("{}: '{}=' value names a CPU the trace does not have; record left out of "
                                         "the pairing",
                                         name, key);
      if (skip_detail) {
        const std::string have = fmt::format("the trace has {} CPU{} (0-{})", cpu_count, cpu_count == 1 ? "" : "s",
                                             cpu_count - 1);
        if (form == CpumaskForm::CpuList)
          *skip_detail = fmt::format("'{}' as a CPU list: {}; {}; {}", v, describe_cpus(ev.targets),
                                     as_hex ? "as a hex mask: " + describe_cpus(hex) +
                                                  (hex_fits ? "" : " (not all in the trace either)")
                                            : std::string("not a hex mask"),
                                     have);
        else
          *skip_detail = fmt::format("'{}' as {}: {}; {}", v, cpumask_form_name(form), describe_cpus(ev.targets), have);
      }
      ev.targets.clear();
      return false;
    }
    return true;
  };
  auto reason_in_parens = [&](std::string_view s) {
    const auto open = s.find('(');
    const auto close = s.rfind(')');
    if (open == std::string_view::npos || close == std::string_view::npos || close < open)
      fail(fmt::format("{}: missing '(reason)'", name));
    return s.substr(open + 1, close - open - 1);
  };

  switch (e) {
    case E::SendCpu:
      ev.type = EventType::IpiSendCpu;
      ev.targets.push_back(need_cpu());
      ev.callsite = symbol("callsite");
      ev.callback = symbol("callback");
      ev.kind = send_kind(ev.callsite, ev.callback);
      break;
    case E::SendMask: {
      ev.type = EventType::IpiSendCpumask;
      const std::string_view* v = f.find("cpumask");
      if (!v) fail(fmt::format("{}: missing field 'cpumask='", name));
      if (!mask("cpumask", *v)) return Decoded::Skipped;
      ev.callsite = symbol("callsite");
      ev.callback = symbol("callback");
      ev.kind = send_kind(ev.callsite, ev.callback);
      break;
    }
    case E::Raise: {
      ev.type = EventType::IpiRaise;
      if (raw) fail(fmt::format("{}: the reason string of a [FAILED TO PARSE] ipi_raise is not in the text", name));
      const std::string_view v = need("target_mask");
      // "<mask> (<reason>)"; an empty mask prints as " (<reason>)".
      const auto sp = v.find(" (");
      const std::string_view m = v.front() == '(' ? std::string_view() : v.substr(0, sp);
      if (!mask("target_mask", m)) return Decoded::Skipped;
      ev.kind = kind_from_arm_reason(reason_in_parens(v.substr(m.size())));
      break;
    }
    case E::Entry:
    case E::Exit:
      if (raw) fail(fmt::format("{}: the reason string of a [FAILED TO PARSE] {} is not in the text", name, name));
      ev.type = e == E::Entry ? EventType::IpiEntry : EventType::IpiExit;
      ev.kind = kind_from_arm_reason(reason_in_parens(fields));
      break;
    case E::CsdQueue:
      ev.type = EventType::CsdQueueCpu;
      ev.targets.push_back(need_cpu());
      ev.callsite = symbol("callsite");
      ev.callback = symbol("func");
      ev.csd = parse_ptr(need("csd"), "csd");
      break;
    case E::CsdEntry:
    case E::CsdExit:
      ev.type = e == E::CsdEntry ? EventType::CsdFunctionEntry : EventType::CsdFunctionExit;
      ev.callback = symbol("func");
      ev.csd = parse_ptr(need("csd"), "csd");
      break;
    case E::WakeIdle:
      ev.type = EventType::WakeIdleNoIpi;
      ev.targets.push_back(need_cpu());
      break;
    case E::VecEntry:
    case E::VecExit: {
      int vec = 0;
      if (!parse_dec(need("vector"), vec) || vec < 0 || vec > 255) fail(fmt::format("{}: bad 'vector=' value", name));
      ev.type = e == E::VecEntry ? EventType::VectorEntry : EventType::VectorExit;
      ev.kind = *vector_kind;
      ev.vector = vec;
      break;
    }
  }
  return Decoded::Ours;
}

void TextTraceParser::handle_event(std::uint32_t cpu, std::uint64_t ts_ns, std::string_view name,
                                   std::string_view fields) {
  ev_.ts_ns = ts_ns;
  ev_.cpu = cpu;
  Decoded d = Decoded::Other;
  try {
    d = decode_text_fields(name, fields, ev_, &info_.cpumask_forms, &skip_reason_, cpu_bound(), &skip_detail_);
  } catch (const InputError& e) {
    fail(e.reason());
  }
  if (d == Decoded::Ours) {
    sink_.on_event(ev_);
    return;
  }
  if (d == Decoded::Skipped) warn(skip_reason_, fields, skip_detail_);
  Counts& counts = other_[other_index_].second;
  auto it = counts.find(name);
  if (it == counts.end()) counts.emplace(std::string(name), 1);
  else ++it->second;
}

void read_text_input(Input& input, EventSink& sink, ReadInfo& info) {
  // Blocks read() into one buffer (not a mapping: peak memory stays flat in the file's length).
  TextTraceParser parser(input.place, sink, info);
  std::vector<char> buf(1 << 20);
  std::size_t have = 0;
  for (;;) {
    if (have == buf.size()) {
      if (buf.size() >= (64u << 20)) throw InputError(fmt::format("{}:{}", input.place, parser.lines() + 1), "line longer than 64 MiB");
      buf.resize(buf.size() * 2);
    }
    const std::size_t n = input.read(buf.data() + have, buf.size() - have);
    const bool eof = n == 0;
    have += n;
    std::size_t start = 0;
    for (;;) {
      const void* nl = std::memchr(buf.data() + start, '\n', have - start);
      std::size_t end;
      if (nl) end = static_cast<std::size_t>(static_cast<const char*>(nl) - buf.data());
      else if (eof && start < have) end = have;
      else break;
      const std::string_view line(buf.data() + start, end - start);
      if (std::memchr(line.data(), '\0', line.size()))
        throw InputError(fmt::format("{}:{}", input.place, parser.lines() + 1), "binary data (NUL byte) in a text trace");
      parser.feed_line(line);
      start = end + 1;
      if (start > have) start = have;
    }
    if (start > 0) {
      std::memmove(buf.data(), buf.data() + start, have - start);
      have -= start;
    }
    if (eof) break;
  }
  parser.finish();
}

void read_text_trace(std::istream& in, const std::string& place, EventSink& sink, ReadInfo* info) {
  ReadInfo local;
  ReadInfo& i = info ? *info : local;
  std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw InputError(place, "read error");
  Input input;
  input.place = place;
  input.rest = memory_source(std::move(data));
  read_text_input(input, sink, i);
}

}  // namespace ipilab::trace
