// ipilab/trace/text_reader.h — streaming reader for the text forms of a trace.
//
// Accepted line shapes (see data/traces/ for a sample of each):
//   trace-cmd report [-t]   "<comm>-<pid> [<cpu>] <sec>.<frac>: <event>: <fields>"  (first line "cpus=N")
//                           other buffers than the top level prefixed "<buffer>: " (trace-cmd 3.x)
//   trace-cmd report -l     "<comm>-<pid> <cpu><flags> <sec>.<frac>: <event>: <fields>"
//   tracefs `trace` file    "<comm>-<pid> [(<tgid>)] [<cpu>] <flags> <sec>.<frac>: <event>: <fields>"
//                           after a "# tracer: ..." header; "#P:N" there is the number of CPUs
//                           *online* when it was read (ReadInfo::online_cpus), not the highest CPU
//   perf script             "<comm> <tid> [<cpu>] <sec>.<frac>: <system>:<event>: <fields>"
// <frac> has 1 to 9 digits (6 = microseconds, the tracefs, `report` and `perf script` default; 9 = ns
// with -t / --ns). Comm may hold spaces, dashes and colons: the line is anchored on the timestamp
// token, not on the comm.
// Lines that are not events are skipped and counted by kind (ReadInfo::skipped_lines): the
// "=> function (address)" lines that follow kernel_stack/user_stack events in a stacktrace
// recording (trace-cmd record -T), what trace-cmd prints on its standard error and lands in a
// terminal paste ("version = N", "CPU <n> is empty", "##### CPU <n> buffer started ####"), blank
// lines and "#" comments. "CPU:<n> [LOST <k> EVENTS]" reports lost events. Any other line is an
// error naming it.
// "[FAILED TO PARSE]" events (a libtraceevent that cannot parse the print format prints the raw
// fields: "cpu=1 callsite=0xffffffff8123 callback=0x0", "cpumask=ARRAY[02, 00, ...]") are decoded from
// those raw fields; their callsite and callback are addresses, not symbols.
// Which events are ipilab's comes from the tracepoint table (tracepoints.h); ftrace's print is a
// Marker ("print: tracing_mark_write: <text>" in trace-cmd report, "tracing_mark_write: <text>" in
// the tracefs file). Fields of the events ipilab uses are parsed strictly (a missing or malformed
// field is an error that names the line and the field), except a cpumask value that fits no
// rendering (cpumask.h), or that read as a CPU list names a CPU beyond every CPU the trace shows
// so far while it also reads as a hex mask of CPUs that exist: that record is left out and counted
// in a warning (count + first line, both readings of the first value). A value that reads one way
// only is kept, even beyond the CPUs seen (the analysis flags it); other events are only counted.
#pragma once

#include <cstdint>
#include <istream>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "trace/event.h"
#include "trace/reader.h"

namespace ipilab::trace {

/// What decode_text_fields made of an event.
enum class Decoded : std::uint8_t {
  Ours,     ///< an event ipilab uses; `ev` is filled
  Other,    ///< an event ipilab does not use
  Skipped,  ///< ours, but a value fits no known rendering: left out (see `skip_reason`)
};

/// Parses text traces line by line and hands the events to a sink. Memory does not grow with the
/// number of lines.
class TextTraceParser {
 public:
  /// `place` names the input in error messages (usually the file path); `info` receives the
  /// cpumask form counts and the warnings.
  TextTraceParser(std::string place, EventSink& sink, ReadInfo& info);

  /// Feeds one line without its '\n' (a trailing '\r' is ignored).
  /// Throws InputError("<place>:<line>", reason) on a malformed line.
  void feed_line(std::string_view line);

  /// Call after the last line: flushes the counts of other events and reports the CPU count to the
  /// sink if no event did it yet.
  void finish();

  std::uint64_t lines() const { return line_no_; }
  std::uint64_t events() const { return events_; }

 private:
  struct NameHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
  };
  using Counts = std::unordered_map<std::string, std::uint64_t, NameHash, std::equal_to<>>;

  void begin_if_needed();
  bool non_event_line(std::string_view trimmed);
  [[noreturn]] void fail(std::string_view reason) const;
  void handle_event(std::uint32_t cpu, std::uint64_t ts_ns, std::string_view name, std::string_view fields);
  void switch_buffer(std::string_view name);
  void warn(std::string_view what, std::string_view value, std::string_view detail = {});
  std::uint32_t cpu_bound() const;  // CPUs the trace has, as far as known at this line

  std::string place_;
  EventSink& sink_;
  ReadInfo& info_;
  std::uint64_t line_no_ = 0;
  std::uint64_t events_ = 0;
  std::uint32_t cpus_ = 0;
  std::uint32_t max_cpu_ = 0;              // highest CPU of an event line so far
  bool any_cpu_ = false;
  bool begun_ = false;
  TraceEvent ev_;
  std::string buffer_;                       // current buffer name
  bool buffer_announced_ = false;
  std::vector<std::pair<std::string, Counts>> other_;  // per buffer: other event counts
  std::size_t other_index_ = 0;
  std::string skip_reason_, skip_detail_;
};

/// Decodes the fields text of one event ("cpu=0 callsite=... callback=...") into `ev` (type, kind,
/// targets, callsite, callback, csd, vector; ts_ns and cpu are left alone). `forms` (if given)
/// counts the cpumask renderings seen. Returns Skipped with `skip_reason` set when a cpumask fits no
/// rendering, or when `cpu_count` > 0 and the mask names a CPU >= cpu_count (no such CPU: the value
/// is misread; "3" in a 2-CPU trace is a CPU list of an impossible CPU or a short hex mask of CPUs 0
/// and 1): `skip_detail` then gives the value's readings. Throws InputError("", reason) when a field of a used event is missing or bad. The
/// views in `ev` point into `fields`.
Decoded decode_text_fields(std::string_view name, std::string_view fields, TraceEvent& ev,
                           std::array<std::uint64_t, kCpumaskFormCount>* forms = nullptr,
                           std::string* skip_reason = nullptr, std::uint32_t cpu_count = 0,
                           std::string* skip_detail = nullptr);

/// Reads a whole text trace from `in` (streamed, bounded memory). Throws InputError on bad lines or
/// when the stream fails.
void read_text_trace(std::istream& in, const std::string& place, EventSink& sink, ReadInfo* info = nullptr);

/// Reads a whole text trace from an opened input (head + rest), in blocks.
void read_text_input(Input& input, EventSink& sink, ReadInfo& info);

}  // namespace ipilab::trace
