// ipilab/trace/reader.h — opens any supported trace file, detects its format from its content (never
// from its name), and streams its IPI events to an EventSink.
//
// Formats: trace.dat v6/v7 from trace-cmd (compressed or not; read through libtracecmd and
// libtraceevent), the text of `trace-cmd report` (with or without -t, also -l), and the tracefs
// `trace` file. See text_reader.h for the text line shapes.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "trace/event.h"

namespace ipilab::trace {

enum class TraceFormat : std::uint8_t {
  TraceDat,        ///< binary trace.dat (magic 0x17 0x08 0x44 "tracing")
  TraceCmdReport,  ///< text printed by `trace-cmd report` (first line "cpus=N")
  TracefsTrace,    ///< text of /sys/kernel/tracing/trace (header "# tracer: ...")
};

/// "trace.dat", "trace-cmd report text", "tracefs trace text".
std::string_view format_name(TraceFormat format);

/// Detects the format from the first bytes of a file (`head`, up to a few KiB). Throws
/// InputError(place, reason) for an empty file, a compressed file (gzip/xz/zstd magic), binary data
/// that is not a trace.dat, or text whose first meaningful line is none of the accepted shapes.
TraceFormat detect_format(std::string_view head, const std::string& place);

/// What a read learnt besides the events.
struct ReadInfo {
  TraceFormat format = TraceFormat::TraceCmdReport;
  /// trace.dat only: the IPI tracepoints whose format the file does not contain, i.e. that the
  /// recording kernel did not have ("ipi:ipi_send_cpu", "csd:csd_queue_cpu", ...). Empty for text.
  std::vector<std::string> absent_in_kernel;
  bool knows_kernel_formats = false;  ///< true for trace.dat (absent_in_kernel is meaningful)
};

/// Reads `path` and streams its events to `sink` (bounded memory). Throws InputError(place, reason)
/// — place = "path" or "path:line" — for a missing, empty, wrong-format, truncated or corrupt file.
ReadInfo read_trace(const std::filesystem::path& path, EventSink& sink);

/// trace.dat reader (libtracecmd). Called by read_trace; exposed for tests.
ReadInfo read_dat_trace(const std::filesystem::path& path, EventSink& sink);

}  // namespace ipilab::trace
