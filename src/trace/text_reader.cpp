#include "trace/text_reader.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstring>

#include <fmt/format.h>

#include "common/error.h"
#include "trace/tracepoints.h"

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
  // The CPUs the trace shows so far: its "cpus=N" header (trace-cmd's count of the recording's
  // CPUs), the CPUs of the event lines and the online count "#P:N" (at least that many exist; it is
  // not the highest CPU number: an offline CPU still has its number). Without any of them nothing is
  // checked (0): a target beyond every CPU seen so far may simply not have logged an event yet.
  if (cpus_ == 0 && info_.online_cpus == 0) return 0;
  return std::max({cpus_, info_.online_cpus, any_cpu_ ? max_cpu_ + 1 : 0u});
}

// The lines a text trace holds besides events. trace-cmd report prints "cpus=N" and, on its standard
// error (so they land in a terminal paste), "version = N", "CPU N is empty", "CPU:N [LOST K EVENTS]"
// and "##### CPU N buffer started ####"; a stacktrace recording (trace-cmd record -T, the tracefs
// stacktrace option) follows kernel_stack/user_stack events with "=> function (address)" lines.
// Returns true when the line was one of these (handled or counted).
bool TextTraceParser::non_event_line(std::string_view t) {
  auto skip = [&](const char* what) {
    ++info_.skipped_lines[what];
    return true;
  };
  if (t.empty()) return skip("blank");
  if (t.front() == '#') {
    // tracefs header: "# entries-in-buffer/entries-written: 45/45   #P:2" — the online CPU count.
    const auto p = t.find("#P:");
    if (p != std::string_view::npos) {
      std::uint32_t n = 0;
      std::size_t e = p + 3;
      while (e < t.size() && is_digit(t[e])) ++e;
      if (parse_dec(t.substr(p + 3, e - p - 3), n) && n > 0 && n <= kMaxCpus) info_.online_cpus = n;
    }
    return skip(t.starts_with("#####") ? "trace-cmd message" : "comment");
  }
  if (t.starts_with("=> ") || t == "=>") return skip("stack");
  if (t.starts_with("cpus=")) {
    std::uint32_t n = 0;
    if (!parse_dec(t.substr(5), n) || n == 0 || n > kMaxCpus) fail("bad CPU count in 'cpus=N' header");
    if (!begun_) cpus_ = n;
    info_.header_cpus = std::max(info_.header_cpus, n);
    return true;
  }
  if (t.starts_with("version = ")) return skip("trace-cmd message");
  if (t.starts_with("CPU:")) {  // "CPU:1 [LOST 123 EVENTS]"
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
      return true;
    }
  }
  if (t.starts_with("CPU ") && t.find(" is empty") != std::string_view::npos) return skip("trace-cmd message");
  return false;
}

void TextTraceParser::feed_line(std::string_view line) {
  ++line_no_;
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  std::size_t first = 0;
  while (first < line.size() && (line[first] == ' ' || line[first] == '\t')) ++first;
  const char c0 = first < line.size() ? line[first] : '\0';
  if ((c0 == '\0' || c0 == '#' || c0 == '=' || c0 == 'c' || c0 == 'v' || c0 == 'C') && non_event_line(trim(line))) return;

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
    info_.cpus_seen = std::max(info_.cpus_seen, cpu + 1);
    begin_if_needed();
    if (!buffer.empty() || buffer_announced_) switch_buffer(buffer);
    ++events_;
    (void)system;
    handle_event(cpu, ts_ns, name, rest);
    return;
  }
  fail("not a trace event line (expected '<comm>-<pid> [<cpu>] <sec>.<frac>: <event>: <fields>' as "
       "printed by trace-cmd report, the tracefs 'trace' file or perf script)");
}

namespace {

[[noreturn]] void field_error(std::string reason) { throw InputError("", std::move(reason)); }

// The fields of one event line, read strictly: a missing or malformed field is an error naming it.
struct FieldReader {
  std::string_view name;
  Fields f;
  bool raw = false;  // "[FAILED TO PARSE]": symbols are raw addresses

  std::string_view need(std::string_view key) const {
    const std::string_view* v = f.find(key);
    if (!v) field_error(fmt::format("{}: missing field '{}='", name, key));
    if (v->empty()) field_error(fmt::format("{}: empty field '{}='", name, key));
    return *v;
  }
  std::uint32_t cpu() const {
    std::uint32_t c = 0;
    if (!parse_dec(need("cpu"), c) || c >= kMaxCpus) field_error(fmt::format("{}: bad 'cpu=' value", name));
    return c;
  }
  std::uint64_t pointer(std::string_view key) const {
    std::string_view v = need(key);
    if (v == "(nil)" || v == "0") return 0;
    if (v.starts_with("0x")) v.remove_prefix(2);
    std::uint64_t x = 0;
    const auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), x, 16);
    if (ec != std::errc() || p != v.data() + v.size() || v.empty())
      field_error(fmt::format("{}: bad pointer in '{}='", name, key));
    return x;
  }
  // A raw (unparsed) symbol field is an address as libtraceevent prints pointers ("0x%llx"): kept
  // as printed, so NULL is "0x0" as in the parsed form.
  std::string_view symbol(std::string_view key) const { return raw ? need(key) : normalize_symbol(need(key)); }
  // "(reason)" of an Arm ipi_* event.
  std::string_view reason_in_parens(std::string_view s) const {
    if (raw) field_error(fmt::format("{}: the reason string of a [FAILED TO PARSE] {} is not in the text", name, name));
    const auto open = s.find('(');
    const auto close = s.rfind(')');
    if (open == std::string_view::npos || close == std::string_view::npos || close < open)
      field_error(fmt::format("{}: missing '(reason)'", name));
    return s.substr(open + 1, close - open - 1);
  }
};

// What the caller wants to know of a cpumask value that cannot be used.
struct MaskCheck {
  std::array<std::uint64_t, kCpumaskFormCount>* forms;
  std::string* skip_reason;
  std::uint32_t cpu_count;
  std::string* skip_detail;
};

// Reads cpumask value `v` of field `key` into ev.targets. False (record left out) when it fits no
// rendering, or when, read as a CPU list, it names a CPU beyond every CPU the trace shows while it
// also reads as a hex mask of CPUs that exist ("3": CPU 3, or CPUs 0 and 1): ambiguous, and ipilab
// does not pick one. A value that reads one way only is kept even beyond the CPUs seen (a CPU that
// logged nothing, e.g. offline when the trace was read); the analysis flags it.
bool read_mask(std::string_view name, std::string_view key, std::string_view v, TraceEvent& ev, const MaskCheck& m) {
  const CpumaskForm form = parse_cpumask_text(v, ev.targets);
  if (m.forms) ++(*m.forms)[static_cast<std::size_t>(form)];
  if (form == CpumaskForm::Invalid) {
    if (m.skip_detail) m.skip_detail->clear();
    if (m.skip_reason) *m.skip_reason = fmt::format("{}: '{}=' value fits no cpumask rendering (hex words, CPU list, "
                                                    "ARRAY[bytes]); record left out of the pairing", name, key);
    return false;
  }
  if (m.cpu_count == 0 || ev.targets.empty() || ev.targets.back() < m.cpu_count || form != CpumaskForm::CpuList)
    return true;
  std::vector<std::uint32_t> hex;
  const bool as_hex = parse_cpumask_hex_any_width(v, hex);
  const bool hex_fits = as_hex && (hex.empty() || hex.back() < m.cpu_count);
  if (!hex_fits) return true;  // one reading only: kept (flagged by the analysis)
  if (m.skip_reason)
    *m.skip_reason = fmt::format("{}: '{}=' value read as a CPU list names a CPU the trace does not show; it may be a "
                                 "hex mask instead: ambiguous, record left out of the pairing", name, key);
  if (m.skip_detail)
    *m.skip_detail = fmt::format("'{}' as a CPU list: {}; as a hex mask: {}; the trace shows {} CPU{} (0-{}) so far", v,
                                 describe_cpus(ev.targets), describe_cpus(hex), m.cpu_count, m.cpu_count == 1 ? "" : "s",
                                 m.cpu_count - 1);
  ev.targets.clear();
  return false;
}

// The tracepoint an event line names, or nullptr (most lines of a busy trace are ours or start
// with another letter: one character test first).
const Tracepoint* text_tracepoint(std::string_view name) {
  const char c = name.empty() ? '\0' : name.front();
  if (c != 'i' && c != 'c' && c != 'r' && c != 's' && c != 'p' && c != 't') return nullptr;
  return find_tracepoint(name);
}

// ftrace:print as trace-cmd report prints it ("tracing_mark_write: <text>", the %ps of its ip), or
// the tracefs `trace` file's "tracing_mark_write: <text>" line (fields = the text).
std::string_view marker_text(std::string_view name, std::string_view fields) {
  if (name == "print") {
    const auto colon = fields.find(": ");
    if (colon != std::string_view::npos && fields.substr(0, colon).find(' ') == std::string_view::npos)
      fields = fields.substr(colon + 2);
  }
  return trim(fields);
}

Decoded decode_send(const Tracepoint& tp, const FieldReader& r, std::string_view fields, TraceEvent& ev,
                    const MaskCheck& m) {
  switch (tp.type) {
    case EventType::IpiSendCpu:
      ev.targets.push_back(r.cpu());
      break;
    case EventType::IpiSendCpumask: {
      const std::string_view* v = r.f.find("cpumask");
      if (!v) field_error(fmt::format("{}: missing field 'cpumask='", r.name));
      if (!read_mask(r.name, "cpumask", *v, ev, m)) return Decoded::Skipped;
      break;
    }
    default: {  // IpiRaise: "<mask> (<reason>)"; an empty mask prints as " (<reason>)"
      if (r.raw) field_error(fmt::format("{}: the reason string of a [FAILED TO PARSE] ipi_raise is not in the text", r.name));
      const std::string_view v = r.need("target_mask");
      const auto sp = v.find(" (");
      const std::string_view mask = v.front() == '(' ? std::string_view() : v.substr(0, sp);
      if (!read_mask(r.name, "target_mask", mask, ev, m)) return Decoded::Skipped;
      ev.kind = kind_from_arm_reason(r.reason_in_parens(v.substr(mask.size())));
      (void)fields;
      return Decoded::Ours;
    }
  }
  ev.callsite = r.symbol("callsite");
  ev.callback = r.symbol("callback");
  ev.kind = send_kind(ev.callsite, ev.callback, tp.type);
  return Decoded::Ours;
}

}  // namespace

Decoded decode_text_fields(std::string_view name, std::string_view fields, TraceEvent& ev,
                           std::array<std::uint64_t, kCpumaskFormCount>* forms, std::string* skip_reason,
                           std::uint32_t cpu_count, std::string* skip_detail) {
  ev.name = name;
  ev.targets.clear();
  ev.callsite = {};
  ev.callback = {};
  ev.text = {};
  ev.csd = 0;
  ev.vector = -1;
  ev.kind = IpiKind::Unknown;
  const Tracepoint* tp = text_tracepoint(name);
  if (!tp) return Decoded::Other;
  ev.type = tp->type;
  ev.kind = tp->kind;
  if (tp->type == EventType::Marker) {
    ev.text = marker_text(name, fields);
    return Decoded::Ours;
  }
  // "[FAILED TO PARSE] cpu=1 callsite=0xffffffff81234567 callback=0x0": the raw fields.
  constexpr std::string_view kFailed = "[FAILED TO PARSE]";
  FieldReader r{name, {}, false};
  if (fields.starts_with(kFailed)) {
    fields = trim(fields.substr(kFailed.size()));
    r.raw = true;
  }
  r.f = split_fields(fields);
  const MaskCheck m{forms, skip_reason, cpu_count, skip_detail};
  switch (tp->type) {
    case EventType::IpiSendCpu:
    case EventType::IpiSendCpumask:
    case EventType::IpiRaise:
      return decode_send(*tp, r, fields, ev, m);
    case EventType::IpiEntry:
    case EventType::IpiExit:
      ev.kind = kind_from_arm_reason(r.reason_in_parens(fields));
      break;
    case EventType::CsdQueueCpu:
      ev.targets.push_back(r.cpu());
      ev.callsite = r.symbol("callsite");
      ev.callback = r.symbol("func");
      ev.csd = r.pointer("csd");
      break;
    case EventType::CsdFunctionEntry:
    case EventType::CsdFunctionExit:
      ev.callback = r.symbol("func");
      ev.csd = r.pointer("csd");
      break;
    case EventType::WakeIdleNoIpi:
      ev.targets.push_back(r.cpu());
      break;
    case EventType::VectorEntry:
    case EventType::VectorExit: {
      int vec = 0;
      if (!parse_dec(r.need("vector"), vec) || vec < 0 || vec > 255) field_error(fmt::format("{}: bad 'vector=' value", name));
      ev.vector = vec;
      break;
    }
    case EventType::Marker:
      break;
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
