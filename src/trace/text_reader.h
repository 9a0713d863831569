// ipilab/trace/text_reader.h — streaming reader for the text forms of a trace.
//
// Accepted line shapes (anchors.md section 3.3; see data/traces/ for one sample of each):
//   trace-cmd report [-t]   "<comm>-<pid> [<cpu>] <sec>.<frac>: <event>: <fields>"  (first line "cpus=N")
//   trace-cmd report -l     "<comm>-<pid> <cpu><flags> <sec>.<frac>: <event>: <fields>"
//   tracefs `trace` file    "<comm>-<pid> [(<tgid>)] [<cpu>] <flags> <sec>.<frac>: <event>: <fields>"
//                           after a "# tracer: ..." header; "#P:N" in the header gives the CPU count
// <frac> has 1 to 9 digits (6 = microseconds, the tracefs and `report` default; 9 = ns with -t).
// Comm may hold spaces and dashes: the line is anchored on the timestamp token, not on the comm.
// Also understood: "CPU:<n> [LOST <k> EVENTS]" (lost events), "CPU <n> is empty", "##### CPU <n>
// buffer started ####", "version = N", blank lines and "#" comments. Any other line is an error.
// Fields of the events ipilab uses are parsed strictly (a missing or malformed field is an error that
// names the line and the field); other events are only counted.
#pragma once

#include <cstdint>
#include <istream>
#include <string>
#include <string_view>

#include "trace/event.h"

namespace ipilab::trace {

/// Parses text traces line by line and hands the events to a sink. Memory does not grow with the
/// number of lines.
class TextTraceParser {
 public:
  /// `place` names the input in error messages (usually the file path).
  TextTraceParser(std::string place, EventSink& sink);

  /// Feeds one line without its '\n' (a trailing '\r' is ignored).
  /// Throws InputError("<place>:<line>", reason) on a malformed line.
  void feed_line(std::string_view line);

  /// Call after the last line; reports the CPU count to the sink if no event did it yet.
  void finish();

  std::uint64_t lines() const { return line_no_; }
  std::uint64_t events() const { return events_; }

 private:
  void begin_if_needed();
  [[noreturn]] void fail(std::string_view reason) const;
  void handle_event(std::uint32_t cpu, std::uint64_t ts_ns, std::string_view name, std::string_view fields);

  std::string place_;
  EventSink& sink_;
  std::uint64_t line_no_ = 0;
  std::uint64_t events_ = 0;
  std::uint32_t cpus_ = 0;
  bool begun_ = false;
  TraceEvent ev_;
};

/// Decodes the fields text of one event ("cpu=0 callsite=... callback=...") into `ev` (type, kind,
/// targets, callsite, callback, csd, vector; ts_ns and cpu are left alone). Returns false for events
/// ipilab does not use. Throws InputError("", reason) when a field of a used event is missing or bad.
/// The views in `ev` point into `fields`.
bool decode_text_fields(std::string_view name, std::string_view fields, TraceEvent& ev);

/// Reads a whole text trace from `in` (streamed, bounded memory). Throws InputError on bad lines or
/// when the stream fails.
void read_text_trace(std::istream& in, const std::string& place, EventSink& sink);

}  // namespace ipilab::trace
