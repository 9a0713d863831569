#include "trace/text_reader.h"

#include <array>
#include <charconv>

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

// "<sec>.<frac>:" followed by ' ' then "<event>:" — returns true and fills ts/event/rest.
bool parse_ts_event(std::string_view s, std::size_t i, std::uint64_t& ts_ns, std::string_view& event,
                    std::string_view& rest) {
  std::size_t j = i;
  while (j < s.size() && is_digit(s[j])) ++j;
  const std::size_t sec_len = j - i;
  if (sec_len == 0 || sec_len > 10 || j >= s.size() || s[j] != '.') return false;
  const std::size_t frac_start = ++j;
  while (j < s.size() && is_digit(s[j])) ++j;
  const std::size_t frac_len = j - frac_start;
  if (frac_len == 0 || frac_len > 9 || j >= s.size() || s[j] != ':') return false;
  ++j;
  if (j >= s.size() || s[j] != ' ') return false;
  while (j < s.size() && s[j] == ' ') ++j;
  const std::size_t name_start = j;
  while (j < s.size() && is_ident(s[j])) ++j;
  if (j == name_start || j >= s.size() || s[j] != ':') return false;
  std::uint64_t sec = 0, frac = 0;
  if (!parse_dec(s.substr(i, sec_len), sec) || !parse_dec(s.substr(frac_start, frac_len), frac)) return false;
  for (std::size_t k = frac_len; k < 9; ++k) frac *= 10;
  ts_ns = sec * 1'000'000'000ull + frac;
  event = s.substr(name_start, j - name_start);
  rest = trim(s.substr(j + 1));
  return true;
}

// The part before the timestamp: "<comm>-<pid> [(<tgid>)] [<cpu>] [<flags>]" or "<comm>-<pid> <cpu><flags>".
bool parse_cpu(std::string_view head, std::uint32_t& cpu) {
  head = trim(head);
  // Last token(s).
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
  std::string_view get(std::string_view key) const {
    for (int i = 0; i < n; ++i)
      if (keys[static_cast<std::size_t>(i)] == key) return values[static_cast<std::size_t>(i)];
    return {};
  }
  bool has(std::string_view key) const {
    for (int i = 0; i < n; ++i)
      if (keys[static_cast<std::size_t>(i)] == key) return true;
    return false;
  }
};

Fields split_fields(std::string_view s) {
  Fields f;
  std::size_t value_start = std::string_view::npos;
  std::size_t i = 0;
  auto close_value = [&](std::size_t end) {
    if (value_start == std::string_view::npos || f.n == 0) return;
    std::string_view v = s.substr(value_start, end - value_start);
    v = trim(v);
    while (!v.empty() && v.back() == ',') v.remove_suffix(1);
    f.values[static_cast<std::size_t>(f.n - 1)] = v;
  };
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
    }
    ++i;
  }
  close_value(s.size());
  return f;
}

}  // namespace

TextTraceParser::TextTraceParser(std::string place, EventSink& sink) : place_(std::move(place)), sink_(sink) {
  ev_.targets.reserve(8);
}

void TextTraceParser::fail(std::string_view reason) const {
  throw InputError(fmt::format("{}:{}", place_, line_no_), std::string(reason));
}

void TextTraceParser::begin_if_needed() {
  if (begun_) return;
  begun_ = true;
  sink_.on_begin(cpus_);
}

void TextTraceParser::finish() { begin_if_needed(); }

void TextTraceParser::feed_line(std::string_view line) {
  ++line_no_;
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  const std::string_view t = trim(line);
  if (t.empty()) return;
  if (t.front() == '#') {
    // tracefs header: "# entries-in-buffer/entries-written: 45/45   #P:2"
    const auto p = t.find("#P:");
    if (p != std::string_view::npos && !begun_) {
      std::uint32_t n = 0;
      std::size_t e = p + 3;
      while (e < t.size() && is_digit(t[e])) ++e;
      if (parse_dec(t.substr(p + 3, e - p - 3), n) && n > 0 && n <= 65536) cpus_ = n;
    }
    return;
  }
  if (starts_with(t, "cpus=")) {
    std::uint32_t n = 0;
    if (!parse_dec(t.substr(5), n) || n == 0 || n > 65536) fail("bad CPU count in 'cpus=N' header");
    if (!begun_) cpus_ = n;
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
  if (starts_with(t, "#####")) return;

  // Event line: anchor on the first "<digits>.<digits>: <name>:" preceded by a space.
  for (std::size_t i = 1; i < line.size(); ++i) {
    if (line[i - 1] != ' ' || !is_digit(line[i])) continue;
    std::uint64_t ts = 0;
    std::string_view name, rest;
    if (!parse_ts_event(line, i, ts, name, rest)) continue;
    std::uint32_t cpu = 0;
    if (!parse_cpu(line.substr(0, i), cpu))
      fail("no CPU field before the timestamp (expected '<comm>-<pid> [<cpu>] <sec>.<frac>: <event>: ...')");
    if (cpu >= 65536) fail(fmt::format("CPU {} out of range", cpu));
    begin_if_needed();
    ++events_;
    handle_event(cpu, ts, name, rest);
    return;
  }
  fail("not a trace event line (expected '<comm>-<pid> [<cpu>] <sec>.<frac>: <event>: <fields>' as "
       "printed by trace-cmd report or the tracefs 'trace' file)");
}

bool decode_text_fields(std::string_view name, std::string_view fields, TraceEvent& ev) {
  auto fail = [](std::string reason) { throw InputError("", std::move(reason)); };
  ev.name = name;
  ev.targets.clear();
  ev.callsite = {};
  ev.callback = {};
  ev.csd = 0;
  ev.vector = -1;
  ev.kind = IpiKind::Unknown;
  if (starts_with(fields, "[FAILED TO PARSE]")) {
    const bool ours = name.starts_with("ipi_") || name.starts_with("csd_") ||
                      (name.ends_with("_entry") && kind_from_vector_event(name.substr(0, name.size() - 6))) ||
                      (name.ends_with("_exit") && kind_from_vector_event(name.substr(0, name.size() - 5)));
    if (!ours) return false;
    fail(fmt::format("event '{}' was not decoded by the tool that printed this text ([FAILED TO PARSE])", name));
  }

  auto need = [&](const Fields& f, std::string_view key) {
    if (!f.has(key)) fail(fmt::format("{}: missing field '{}='", name, key));
    const std::string_view v = f.get(key);
    if (v.empty()) fail(fmt::format("{}: empty field '{}='", name, key));
    return v;
  };
  auto need_cpu = [&](const Fields& f) {
    std::uint32_t c = 0;
    if (!parse_dec(need(f, "cpu"), c) || c >= 65536) fail(fmt::format("{}: bad 'cpu=' value", name));
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
  auto mask = [&](std::string_view v, std::string_view key) {
    if (!parse_cpumask_words(v, ev.targets))
      fail(fmt::format("{}: '{}={}' is not a cpumask in comma-separated 32-bit hex words", name, key, v));
    for (auto c : ev.targets)
      if (c >= 65536) fail(fmt::format("{}: CPU {} in '{}=' out of range", name, c, key));
  };
  auto reason_in_parens = [&](std::string_view s) {
    const auto open = s.find('(');
    const auto close = s.rfind(')');
    if (open == std::string_view::npos || close == std::string_view::npos || close < open)
      fail(fmt::format("{}: missing '(reason)'", name));
    return s.substr(open + 1, close - open - 1);
  };

  if (name == "ipi_send_cpu") {
    const Fields f = split_fields(fields);
    ev.type = EventType::IpiSendCpu;
    ev.targets.push_back(need_cpu(f));
    ev.callsite = normalize_symbol(need(f, "callsite"));
    ev.callback = normalize_symbol(need(f, "callback"));
    ev.kind = send_kind(ev.callsite, ev.callback);
  } else if (name == "ipi_send_cpumask") {
    const Fields f = split_fields(fields);
    ev.type = EventType::IpiSendCpumask;
    mask(need(f, "cpumask"), "cpumask");
    ev.callsite = normalize_symbol(need(f, "callsite"));
    ev.callback = normalize_symbol(need(f, "callback"));
    ev.kind = send_kind(ev.callsite, ev.callback);
  } else if (name == "ipi_raise") {
    const Fields f = split_fields(fields);
    ev.type = EventType::IpiRaise;
    std::string_view v = need(f, "target_mask");
    const auto sp = v.find(' ');
    mask(v.substr(0, sp), "target_mask");
    ev.kind = kind_from_arm_reason(reason_in_parens(v.substr(sp == std::string_view::npos ? v.size() : sp)));
  } else if (name == "ipi_entry" || name == "ipi_exit") {
    ev.type = name == "ipi_entry" ? EventType::IpiEntry : EventType::IpiExit;
    ev.kind = kind_from_arm_reason(reason_in_parens(fields));
  } else if (name == "csd_queue_cpu") {
    const Fields f = split_fields(fields);
    ev.type = EventType::CsdQueueCpu;
    ev.targets.push_back(need_cpu(f));
    ev.callsite = normalize_symbol(need(f, "callsite"));
    ev.callback = normalize_symbol(need(f, "func"));
    ev.csd = parse_ptr(need(f, "csd"), "csd");
  } else if (name == "csd_function_entry" || name == "csd_function_exit") {
    const Fields f = split_fields(fields);
    ev.type = name == "csd_function_entry" ? EventType::CsdFunctionEntry : EventType::CsdFunctionExit;
    ev.callback = normalize_symbol(need(f, "func"));
    ev.csd = parse_ptr(need(f, "csd"), "csd");
  } else {
    const bool entry = name.ends_with("_entry");
    const bool exit = name.ends_with("_exit");
    std::optional<IpiKind> k;
    if (entry) k = kind_from_vector_event(name.substr(0, name.size() - 6));
    else if (exit) k = kind_from_vector_event(name.substr(0, name.size() - 5));
    if (!k) return false;
    const Fields f = split_fields(fields);
    int vec = 0;
    if (!parse_dec(need(f, "vector"), vec) || vec < 0 || vec > 255) fail(fmt::format("{}: bad 'vector=' value", name));
    ev.type = entry ? EventType::VectorEntry : EventType::VectorExit;
    ev.kind = *k;
    ev.vector = vec;
  }
  return true;
}

void TextTraceParser::handle_event(std::uint32_t cpu, std::uint64_t ts_ns, std::string_view name,
                                   std::string_view fields) {
  ev_.ts_ns = ts_ns;
  ev_.cpu = cpu;
  bool ours = false;
  try {
    ours = decode_text_fields(name, fields, ev_);
  } catch (const InputError& e) {
    fail(e.reason());
  }
  if (ours) sink_.on_event(ev_);
  else sink_.on_other_event(name);
}

void read_text_trace(std::istream& in, const std::string& place, EventSink& sink) {
  TextTraceParser parser(place, sink);
  std::string line;
  while (std::getline(in, line)) {
    if (line.find('\0') != std::string::npos)
      throw InputError(fmt::format("{}:{}", place, parser.lines() + 1), "binary data (NUL byte) in a text trace");
    parser.feed_line(line);
  }
  if (in.bad()) throw InputError(place, "read error");
  parser.finish();
}

}  // namespace ipilab::trace
