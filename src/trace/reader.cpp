#include "trace/reader.h"

#include <algorithm>
#include <fstream>

#include <fmt/format.h>

#include "common/error.h"
#include "trace/text_reader.h"

namespace ipilab::trace {

std::string_view format_name(TraceFormat format) {
  switch (format) {
    case TraceFormat::TraceDat: return "trace.dat";
    case TraceFormat::TraceCmdReport: return "trace-cmd report text";
    case TraceFormat::TracefsTrace: return "tracefs trace text";
  }
  return "?";
}

namespace {
bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }
}  // namespace

TraceFormat detect_format(std::string_view head, const std::string& place) {
  if (head.empty()) throw InputError(place, "empty file (no trace in it)");
  constexpr std::string_view kDatMagic("\x17\x08\x44tracing", 10);
  if (starts_with(head, kDatMagic)) return TraceFormat::TraceDat;
  if (head.size() < kDatMagic.size() && kDatMagic.substr(0, head.size()) == head)
    throw InputError(place, fmt::format("truncated trace.dat (only {} bytes)", head.size()));
  if (starts_with(head, "\x1f\x8b")) throw InputError(place, "gzip-compressed file: decompress it first");
  if (starts_with(head, "\xfd" "7zXZ")) throw InputError(place, "xz-compressed file: decompress it first");
  if (starts_with(head, "\x28\xb5\x2f\xfd")) throw InputError(place, "zstd-compressed file: decompress it first");
  // First meaningful line.
  std::size_t pos = 0;
  while (pos < head.size()) {
    auto nl = head.find('\n', pos);
    std::string_view line = head.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
    pos = nl == std::string_view::npos ? head.size() : nl + 1;
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t')) line.remove_suffix(1);
    while (!line.empty() && (line.front() == ' ' || line.front() == '\t')) line.remove_prefix(1);
    if (line.empty()) continue;
    if (starts_with(line, "cpus=") || starts_with(line, "version = ")) return TraceFormat::TraceCmdReport;
    if (starts_with(line, "# tracer:")) return TraceFormat::TracefsTrace;
    if (line.front() == '#') continue;
    if (std::any_of(head.begin(), head.end(), [](char c) {
          const auto u = static_cast<unsigned char>(c);
          return u < 0x09 || (u > 0x0d && u < 0x20);
        }))
      throw InputError(place, "binary file that is not a trace.dat (no 0x17 0x08 0x44 'tracing' magic at byte 0)");
    // A headerless text trace (e.g. `trace-cmd report` piped through grep): an event line.
    if (line.find("]") != std::string_view::npos && line.find(": ") != std::string_view::npos)
      return TraceFormat::TraceCmdReport;
    break;
  }
  throw InputError(place,
                   "not a trace: expected a trace.dat (trace-cmd record), the text of 'trace-cmd report' "
                   "(first line 'cpus=N') or of the tracefs 'trace' file (first line '# tracer: ...')");
}

ReadInfo read_trace(const std::filesystem::path& path, EventSink& sink) {
  const std::string place = path.string();
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) throw InputError(place, "no such file");
  if (std::filesystem::is_directory(path, ec)) throw InputError(place, "is a directory, not a trace file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(place, "cannot open");
  std::string head(4096, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<std::size_t>(in.gcount()));
  ReadInfo info;
  info.format = detect_format(head, place);
  if (info.format == TraceFormat::TraceDat) {
    in.close();
    return read_dat_trace(path, sink);
  }
  in.clear();
  in.seekg(0);
  read_text_trace(in, place, sink);
  return info;
}

}  // namespace ipilab::trace
