// ipilab/trace/reader.h — opens any supported trace, detects its format from its content (never
// from its name), and streams its IPI events to an EventSink.
//
// Formats: trace.dat v6/v7 from trace-cmd (its own compression or none; several buffers), the
// text of `trace-cmd report` (with or without -t, also -l; several buffers as "NAME: " prefixes),
// the tracefs `trace` file, and `perf script` text of the ipi:*, irq_vectors:*, csd:* and sched:*
// tracepoints ("comm pid [cpu] sec.usec: system:event: fields"). Each may come from standard input
// ("-") and, for the text forms and trace.dat alike, compressed with gzip, zstd or xz (input.h).
// See text_reader.h for the line shapes and cpumask.h for every rendering of a cpumask.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "trace/cpumask.h"
#include "trace/event.h"
#include "trace/input.h"

namespace ipilab::trace {

enum class TraceFormat : std::uint8_t {
  TraceDat,        ///< binary trace.dat (magic 0x17 0x08 0x44 "tracing")
  TraceCmdReport,  ///< text printed by `trace-cmd report` (first line "cpus=N", or headerless lines)
  TracefsTrace,    ///< text of /sys/kernel/tracing/trace (header "# tracer: ...")
  PerfScript,      ///< text printed by `perf script` (event names with their system: "ipi:ipi_send_cpu:")
  LiveTracefs,     ///< `ipilab trace --live`: this machine's tracefs, streamed (live.h); never detected
};

/// "trace.dat", "trace-cmd report text", "tracefs trace text", "perf script text", "tracefs, streamed live".
std::string_view format_name(TraceFormat format);

/// Detects the format from the first bytes of the (decompressed) content. Throws
/// InputError(place, reason) naming what was seen instead: an empty input, a truncated trace.dat,
/// perf.data (run `perf script` first), another binary kind (ELF, PNG, PDF, tar...) or the first
/// text line that is none of the accepted shapes.
TraceFormat detect_format(std::string_view head, const std::string& place);

/// A problem with some records that did not stop the reading: counted, with the first place.
struct ReadWarning {
  std::string what;          ///< e.g. "ipi_send_cpumask: cpumask value fits no known rendering"
  std::uint64_t count = 0;   ///< records concerned (all left out of the pairing)
  std::string first_place;   ///< "file:line" (text) or "file: CPU c record at data offset o" (trace.dat)
  std::string first_value;   ///< the offending value of the first one (may be empty)
  std::string first_detail;  ///< what was wrong with the first one, if `what` does not say it all
};

/// What a read learnt besides the events.
struct ReadInfo {
  TraceFormat format = TraceFormat::TraceCmdReport;
  Compression compression = Compression::None;  ///< of the input (gzip/zstd/xz), not trace.dat's own
  /// trace.dat only: the IPI tracepoints whose format the file does not contain, i.e. that the
  /// recording kernel did not have ("ipi:ipi_send_cpu", "csd:csd_queue_cpu", ...). Empty for text.
  std::vector<std::string> absent_in_kernel;
  bool knows_kernel_formats = false;  ///< true for trace.dat (absent_in_kernel is meaningful)
  // trace.dat only:
  int dat_version = 0;                ///< 6 or 7
  std::string dat_compression;        ///< trace.dat's own compression ("zstd", "zlib", "none")
  bool big_endian = false;            ///< byte order of the recording machine
  int long_size = 0;                  ///< user-space long size (file header)
  int kernel_long_size = 0;           ///< kernel long size (header_page commit field): cpumask words
  bool direct_decode = false;         ///< ring-buffer pages decoded by ipilab (else libtracecmd records)
  std::vector<std::string> buffers;   ///< ring buffers in file order ("" = top level)
  /// cpumask values seen per rendering (index = CpumaskForm), text and trace.dat.
  std::array<std::uint64_t, kCpumaskFormCount> cpumask_forms{};
  std::vector<ReadWarning> warnings;
  // Which CPUs exist, from the trace itself (the analysis takes the largest evidence):
  std::uint32_t header_cpus = 0;  ///< "cpus=N" of trace-cmd report / the CPU count of a trace.dat
  std::uint32_t online_cpus = 0;  ///< "#P:N" of a tracefs `trace` header: CPUs *online* when it was read
  std::uint32_t cpus_seen = 0;    ///< highest CPU with an event line or a per-CPU buffer, + 1 (0: none)
  /// Text: lines that are not events, skipped and counted by what they are ("stack" for the
  /// "=> function" lines of a stacktrace recording, "trace-cmd message", "blank", "comment", ...).
  std::map<std::string, std::uint64_t> skipped_lines;
};

/// Reads `path` ("-" = standard input) and streams its events to `sink` (memory bounded, except
/// that trace.dat content arriving through a pipe or compressed is first copied to a temporary
/// file, since trace.dat is read by offset). Throws InputError(place, reason) — place = "path" or
/// "path:line" — for a missing, empty, wrong-format, truncated or corrupt input.
ReadInfo read_trace(const std::filesystem::path& path, EventSink& sink);

/// trace.dat reader. `fd` >= 0: read that descriptor instead of opening `path` (`place` names it in
/// messages). Called by read_trace; exposed for tests.
ReadInfo read_dat_trace(const std::filesystem::path& path, EventSink& sink, int fd = -1,
                        const std::string& place = {});

/// Forces the libtracecmd record path (no direct page decoding), for tests that compare the two.
ReadInfo read_dat_trace_via_libtracecmd(const std::filesystem::path& path, EventSink& sink);

}  // namespace ipilab::trace
