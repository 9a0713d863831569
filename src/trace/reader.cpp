#include "trace/reader.h"

#include <unistd.h>

#include <algorithm>

#include <fmt/format.h>

#include "common/error.h"
#include "trace/text_reader.h"

namespace ipilab::trace {

std::string_view format_name(TraceFormat format) {
  switch (format) {
    case TraceFormat::TraceDat: return "trace.dat";
    case TraceFormat::TraceCmdReport: return "trace-cmd report text";
    case TraceFormat::TracefsTrace: return "tracefs trace text";
    case TraceFormat::PerfScript: return "perf script text";
    case TraceFormat::LiveTracefs: return "tracefs, streamed live";
  }
  return "?";
}

namespace {

// Names a binary content by its magic bytes (for the "not a trace" message).
std::string binary_kind(std::string_view head) {
  struct Magic {
    std::string_view bytes;
    const char* what;
  };
  static const Magic kMagics[] = {
      {"PERFILE2", "a perf.data file (perf record): convert it with 'perf script > trace.txt'"},
      {"\x7f" "ELF", "an ELF executable or object file"},
      {"\x89PNG", "a PNG image"},
      {"%PDF", "a PDF document"},
      {"GIF8", "a GIF image"},
      {"\xff\xd8\xff", "a JPEG image"},
      {"PK\x03\x04", "a zip archive"},
      {"BZh", "a bzip2-compressed file (ipilab reads gzip, zstd and xz): decompress it first"},
      {"\x04\x22\x4d\x18", "an lz4-compressed file (ipilab reads gzip, zstd and xz): decompress it first"},
      {"\xd4\xc3\xb2\xa1", "a pcap capture"},
      {"\x0a\x0d\x0d\x0a", "a pcapng capture"},
      {"SQLite format 3", "an SQLite database"},
  };
  for (const auto& m : kMagics)
    if (head.starts_with(m.bytes)) return m.what;
  if (head.size() > 262 && head.substr(257, 5) == "ustar") return "a tar archive";
  return fmt::format("binary data (first bytes {:02x} {:02x} {:02x} {:02x}), not a trace.dat (no 0x17 0x08 0x44 'tracing' "
                     "magic at byte 0)",
                     static_cast<unsigned char>(head.size() > 0 ? head[0] : 0),
                     static_cast<unsigned char>(head.size() > 1 ? head[1] : 0),
                     static_cast<unsigned char>(head.size() > 2 ? head[2] : 0),
                     static_cast<unsigned char>(head.size() > 3 ? head[3] : 0));
}

std::string printable(std::string_view s, std::size_t max) {
  std::string out;
  for (char c : s.substr(0, max)) {
    const auto u = static_cast<unsigned char>(c);
    out += (u < 0x20 || u >= 0x7f) ? '?' : c;
  }
  if (s.size() > max) out += "...";
  return out;
}

// "<sec>.<frac>: <system>:<event>:" somewhere in the line (perf script).
bool has_perf_event_token(std::string_view line) {
  std::size_t pos = 0;
  while ((pos = line.find(": ", pos)) != std::string_view::npos) {
    std::size_t j = pos + 2;
    while (j < line.size() && line[j] == ' ') ++j;
    std::size_t k = j;
    while (k < line.size() && (std::isalnum(static_cast<unsigned char>(line[k])) || line[k] == '_')) ++k;
    if (k > j && k < line.size() && line[k] == ':' && k + 1 < line.size() && line[k + 1] != ' ') {
      std::size_t m = k + 1;
      while (m < line.size() && (std::isalnum(static_cast<unsigned char>(line[m])) || line[m] == '_')) ++m;
      if (m > k + 1 && m < line.size() && line[m] == ':') {
        // The token before ": " must be a timestamp.
        std::size_t t = pos;
        while (t > 0 && (std::isdigit(static_cast<unsigned char>(line[t - 1])) || line[t - 1] == '.')) --t;
        if (t < pos && line.substr(t, pos - t).find('.') != std::string_view::npos) return true;
      }
    }
    pos += 2;
  }
  return false;
}

}  // namespace

TraceFormat detect_format(std::string_view head, const std::string& place) {
  if (head.empty()) throw InputError(place, "empty file (no trace in it)");
  constexpr std::string_view kDatMagic("\x17\x08\x44tracing", 10);
  if (head.starts_with(kDatMagic)) return TraceFormat::TraceDat;
  if (head.size() < kDatMagic.size() && kDatMagic.substr(0, head.size()) == head)
    throw InputError(place, fmt::format("truncated trace.dat (only {} bytes)", head.size()));
  if (detect_compression(head) != Compression::None)
    throw InputError(place, fmt::format("{}-compressed data inside {}-compressed data: decompress it once first",
                                        compression_name(detect_compression(head)), "the"));
  const bool binary = std::any_of(head.begin(), head.end(), [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return u < 0x09 || (u > 0x0d && u < 0x20);
  });
  // A text header wins (binary bytes further down are reported with their line by the text reader).
  {
    std::string_view t = head.substr(0, head.find('\n'));
    while (!t.empty() && (t.front() == ' ' || t.front() == '\t')) t.remove_prefix(1);
    if (t.starts_with("cpus=") || t.starts_with("version = ")) return TraceFormat::TraceCmdReport;
    if (t.starts_with("# tracer:")) return TraceFormat::TracefsTrace;
  }
  if (binary) throw InputError(place, "this is " + binary_kind(head));
  // First meaningful line.
  std::size_t pos = 0;
  std::string_view first_line;
  while (pos < head.size()) {
    auto nl = head.find('\n', pos);
    std::string_view line = head.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
    pos = nl == std::string_view::npos ? head.size() : nl + 1;
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t')) line.remove_suffix(1);
    std::string_view t = line;
    while (!t.empty() && (t.front() == ' ' || t.front() == '\t')) t.remove_prefix(1);
    if (t.empty()) continue;
    if (t.starts_with("cpus=") || t.starts_with("version = ")) return TraceFormat::TraceCmdReport;
    if (t.starts_with("# tracer:")) return TraceFormat::TracefsTrace;
    if (t.front() == '#') continue;  // perf script --header, comments
    // A terminal paste of `trace-cmd report` starts with what it printed on its standard error
    // ("CPU 0 is empty"), and a paste may start inside a stack trace ("=> function (address)").
    if ((t.starts_with("CPU ") && t.find(" is empty") != std::string_view::npos) || t.starts_with("=> ")) continue;
    first_line = t;
    if (has_perf_event_token(line)) return TraceFormat::PerfScript;
    // A headerless text trace (e.g. `trace-cmd report` piped through grep): an event line.
    if (t.find("]") != std::string_view::npos && t.find(": ") != std::string_view::npos) return TraceFormat::TraceCmdReport;
    break;
  }
  throw InputError(place,
                   fmt::format("not a trace: expected a trace.dat (trace-cmd record), the text of 'trace-cmd report' "
                               "(first line 'cpus=N'), of the tracefs 'trace' file (first line '# tracer: ...') or of "
                               "'perf script'; {}",
                               first_line.empty() ? std::string("the text holds only comments")
                                                  : "the first line is '" + printable(first_line, 100) + "'"));
}

ReadInfo read_trace(const std::filesystem::path& path, EventSink& sink) {
  Input input = open_input(path);
  const TraceFormat format = detect_format(input.head, input.place);
  if (format == TraceFormat::TraceDat) {
    ReadInfo info;
    if (input.regular_file) {
      input.rest.reset();
      info = read_dat_trace(path, sink, -1, input.place);
    } else {
      const int fd = spool_to_temp_file(input);
      struct Closer {
        int fd;
        ~Closer() { ::close(fd); }
      } closer{fd};
      info = read_dat_trace(path, sink, fd, input.place);
    }
    info.compression = input.compression;
    return info;
  }
  ReadInfo info;
  info.format = format;
  info.compression = input.compression;
  read_text_input(input, sink, info);
  return info;
}

}  // namespace ipilab::trace
