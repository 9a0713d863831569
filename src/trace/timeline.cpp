#include "trace/timeline.h"

#include <fmt/format.h>

namespace ipilab::timeline {

namespace {

// Length of the UTF-8 sequence starting at s[i] if valid, else 0.
std::size_t utf8_len(std::string_view s, std::size_t i) {
  const auto c = static_cast<unsigned char>(s[i]);
  std::size_t n = 0;
  if (c < 0x80) return 1;
  if ((c & 0xe0) == 0xc0) n = 2;
  else if ((c & 0xf0) == 0xe0) n = 3;
  else if ((c & 0xf8) == 0xf0) n = 4;
  else return 0;
  if (i + n > s.size()) return 0;
  for (std::size_t k = 1; k < n; ++k)
    if ((static_cast<unsigned char>(s[i + k]) & 0xc0) != 0x80) return 0;
  if (n == 2 && c < 0xc2) return 0;  // overlong
  return n;
}

}  // namespace

void write_json_string(std::ostream& out, std::string_view s) {
  out.put('"');
  for (std::size_t i = 0; i < s.size();) {
    const char c = s[i];
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out.put('\\');
      out.put(c);
      ++i;
    } else if (u < 0x20) {
      out << fmt::format("\\u{:04x}", u);
      ++i;
    } else if (u < 0x80) {
      out.put(c);
      ++i;
    } else {
      const std::size_t n = utf8_len(s, i);
      if (n == 0) {
        out << "\\ufffd";
        ++i;
      } else {
        out.write(s.data() + i, static_cast<std::streamsize>(n));
        i += n;
      }
    }
  }
  out.put('"');
}

namespace {
constexpr std::string_view kDocumentBegin = "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n";
constexpr std::string_view kDocumentEnd = "\n]}\n";
}  // namespace

TraceEventWriter::TraceEventWriter(std::ostream& out) : out_(out) { out_ << kDocumentBegin; }

TraceEventWriter::TraceEventWriter(std::ostream& out, Fragment) : out_(out), fragment_(true) {}

TraceEventWriter::~TraceEventWriter() {
  if (!finished_) finish();
}

std::uint64_t TraceEventWriter::finish() {
  if (!finished_) {
    if (!fragment_) out_ << kDocumentEnd;
    finished_ = true;
  }
  return events_;
}

void TraceEventWriter::open_event() {
  if (!first_) out_ << ",\n";
  first_ = false;
  ++events_;
}

void TraceEventWriter::common(char ph, Track t, std::uint64_t ts_ns, bool half_ns) {
  ts_ns += origin_ns_;
  out_ << "{\"ph\":\"" << ph << "\",\"pid\":" << t.group << ",\"tid\":" << t.cpu << ",\"ts\":" << ts_ns / 1000 << '.'
       << fmt::format("{:03}", ts_ns % 1000) << (half_ns ? "5" : "");
}

void TraceEventWriter::write_args(const Args& args) {
  if (args.empty()) return;
  out_ << ",\"args\":{";
  bool first = true;
  for (const auto& [k, v] : args.strings) {
    if (!first) out_ << ',';
    first = false;
    write_json_string(out_, k);
    out_ << ':';
    write_json_string(out_, v);
  }
  for (const auto& [k, v] : args.numbers) {
    if (!first) out_ << ',';
    first = false;
    write_json_string(out_, k);
    out_ << ':' << fmt::format("{}", v);
  }
  out_ << '}';
}

void TraceEventWriter::group(int group, std::string_view name, int sort_index) {
  open_event();
  out_ << "{\"ph\":\"M\",\"pid\":" << group << ",\"tid\":0,\"name\":\"process_name\",\"args\":{\"name\":";
  write_json_string(out_, name);
  out_ << "}}";
  open_event();
  out_ << "{\"ph\":\"M\",\"pid\":" << group << ",\"tid\":0,\"name\":\"process_sort_index\",\"args\":{\"sort_index\":"
       << sort_index << "}}";
}

void TraceEventWriter::track(Track t, std::string_view name, int sort_index) {
  open_event();
  out_ << "{\"ph\":\"M\",\"pid\":" << t.group << ",\"tid\":" << t.cpu << ",\"name\":\"thread_name\",\"args\":{\"name\":";
  write_json_string(out_, name);
  out_ << "}}";
  open_event();
  out_ << "{\"ph\":\"M\",\"pid\":" << t.group << ",\"tid\":" << t.cpu
       << ",\"name\":\"thread_sort_index\",\"args\":{\"sort_index\":" << sort_index << "}}";
}

void TraceEventWriter::name_and_category(std::string_view name, std::string_view category) {
  out_ << ",\"name\":";
  write_json_string(out_, name);
  out_ << ",\"cat\":";
  write_json_string(out_, category);
}

void TraceEventWriter::finish_named(std::string_view name, std::string_view category, const Args& args) {
  name_and_category(name, category);
  write_args(args);
  out_ << '}';
}

void TraceEventWriter::begin(Track t, std::uint64_t ts_ns, std::string_view name, std::string_view category,
                             const Args& args) {
  open_event();
  common('B', t, ts_ns, false);
  finish_named(name, category, args);
}

void TraceEventWriter::end(Track t, std::uint64_t ts_ns) {
  open_event();
  common('E', t, ts_ns, false);
  out_ << '}';
}

void TraceEventWriter::slice(Track t, std::uint64_t ts_ns, std::uint64_t dur_ns, std::string_view name,
                             std::string_view category, const Args& args) {
  open_event();
  common('X', t, ts_ns, false);
  out_ << ",\"dur\":" << dur_ns / 1000 << '.' << fmt::format("{:03}", dur_ns % 1000);
  finish_named(name, category, args);
}

void TraceEventWriter::instant(Track t, std::uint64_t ts_ns, std::string_view name, std::string_view category,
                               const Args& args) {
  open_event();
  common('i', t, ts_ns, false);
  out_ << ",\"s\":\"t\"";
  finish_named(name, category, args);
}

void TraceEventWriter::flow(std::uint64_t id, Track from, std::uint64_t from_ns, Track to, std::uint64_t to_ns,
                            std::string_view name, std::string_view category) {
  ++flows_;
  for (int k = 0; k < 2; ++k) {
    open_event();
    common(k == 0 ? 's' : 'f', k == 0 ? from : to, k == 0 ? from_ns : to_ns, true);
    out_ << ",\"id\":" << id;
    name_and_category(name, category);
    if (k == 1) out_ << ",\"bp\":\"e\"";
    out_ << '}';
  }
}

std::string join_fragments(std::span<const std::string> fragments) {
  std::size_t n = kDocumentBegin.size() + kDocumentEnd.size();
  for (const auto& f : fragments) n += f.size() + 2;
  std::string doc;
  doc.reserve(n);
  doc += kDocumentBegin;
  bool first = true;
  for (const auto& f : fragments) {
    if (f.empty()) continue;
    if (!first) doc += ",\n";
    first = false;
    doc += f;
  }
  doc += kDocumentEnd;
  return doc;
}

void write_chrome_json(const Timeline& t, std::ostream& out) {
  TraceEventWriter w(out);
  int order = 0;
  for (const auto& [g, name] : t.groups) w.group(g, name, order++);
  for (const auto& [tr, name] : t.tracks) w.track(tr, name, tr.cpu);
  for (const auto& s : t.slices) w.slice(s.track, s.start_ns, s.dur_ns, s.name, s.category, s.args);
  for (const auto& m : t.markers) w.instant(m.track, m.ts_ns, m.name, m.category, m.args);
  // A flow binds to slices: give each end a 1 ns slice of its own so that it always has one.
  std::uint64_t id = 1;
  for (const auto& f : t.flows) {
    w.slice(f.from, f.from_ns, 1, f.name, f.category);
    w.slice(f.to, f.to_ns, 1, f.name, f.category);
    w.flow(id++, f.from, f.from_ns, f.to, f.to_ns, f.name, f.category);
  }
  w.finish();
}

}  // namespace ipilab::timeline
