// ipilab/trace/timeline.h — a neutral timeline of what CPUs did (tracks per CPU, slices, flows
// between them, instant markers) and its writer in the Chrome trace-event JSON format, which
// ui.perfetto.dev and chrome://tracing open. Used by `ipilab trace --perfetto`; it depends on
// nothing trace-specific so that a simulated run can be written the same way and the two looked at
// side by side.
//
// Format (Trace Event Format, the JSON Object form {"traceEvents": [...]}): a track is a thread
// (pid = a group such as one ring buffer or one simulated VM, tid = the CPU), named by "M"
// (metadata) events; a slice is "B"/"E" (begin/end on the same track, nesting by time) or "X" with a
// duration; a marker is an "i" instant; a flow is an "s" (start) event bound to the slice open on
// its track at that time and an "f" (finish) event with "bp":"e", bound to the slice enclosing it on
// the target track. Timestamps are microseconds; ipilab writes them from integer nanoseconds with
// three decimals (ns resolution, no rounding). A flow's start and finish are placed half a
// nanosecond after the slices they bind to begin (four decimals), so that a reader that orders
// events of equal time arbitrarily still finds the slice open.
//
// The writer streams: events go to the output as they are added (memory does not grow with the
// timeline), and finish() closes the JSON document. A fragment writer writes the events alone, for
// parts made apart (one per simulated variant, possibly in parallel threads) that join_fragments()
// puts into one document.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ipilab::timeline {

/// A track: one CPU of one group.
struct Track {
  int group = 0;  ///< "pid": a ring buffer, a VM, a variant...
  int cpu = 0;    ///< "tid"
};

/// Key/value annotations shown when a slice or marker is selected. Values are written as JSON
/// strings, except `numbers`, written as JSON numbers.
struct Args {
  std::vector<std::pair<std::string, std::string>> strings;
  std::vector<std::pair<std::string, double>> numbers;
  bool empty() const { return strings.empty() && numbers.empty(); }
};

/// Streaming Chrome trace-event JSON writer.
class TraceEventWriter {
 public:
  explicit TraceEventWriter(std::ostream& out);
  /// A fragment writer: events only, comma-separated, no document around them (see join_fragments).
  struct Fragment {};
  TraceEventWriter(std::ostream& out, Fragment);
  ~TraceEventWriter();
  TraceEventWriter(const TraceEventWriter&) = delete;
  TraceEventWriter& operator=(const TraceEventWriter&) = delete;

  /// Names a group ("process_name") and orders it among groups.
  void group(int group, std::string_view name, int sort_index = 0);
  /// Names a track ("thread_name"), e.g. "CPU 3", ordered by `sort_index` within its group.
  void track(Track t, std::string_view name, int sort_index);

  /// A slice begins / ends on `t` (slices on one track must nest by time).
  void begin(Track t, std::uint64_t ts_ns, std::string_view name, std::string_view category, const Args& args = {});
  void end(Track t, std::uint64_t ts_ns);
  /// A complete slice [ts, ts + dur].
  void slice(Track t, std::uint64_t ts_ns, std::uint64_t dur_ns, std::string_view name, std::string_view category,
             const Args& args = {});
  /// A marker at one instant on `t`.
  void instant(Track t, std::uint64_t ts_ns, std::string_view name, std::string_view category, const Args& args = {});
  /// An arrow from the slice open on `from` at `from_ns` to the slice that encloses `to_ns` on `to`
  /// (both must begin at or before those times). `id` is unique per flow.
  void flow(std::uint64_t id, Track from, std::uint64_t from_ns, Track to, std::uint64_t to_ns, std::string_view name,
            std::string_view category);

  /// Closes the document (also done by the destructor). Returns the number of events written.
  std::uint64_t finish();
  std::uint64_t events() const { return events_; }
  std::uint64_t flows() const { return flows_; }
  /// Adds `ns` to every timestamp written from now on: puts a timeline whose clock starts at 0 (a
  /// simulated run) on another's clock (the trace it replays), so that Perfetto shows them aligned.
  void set_origin_ns(std::uint64_t ns) { origin_ns_ = ns; }

 private:
  void open_event();
  void common(char ph, Track t, std::uint64_t ts_ns, bool half_ns);
  void write_args(const Args& args);
  /// ,"name":…,"cat":… of the event being written.
  void name_and_category(std::string_view name, std::string_view category);
  /// name_and_category, the args, and the event's closing brace.
  void finish_named(std::string_view name, std::string_view category, const Args& args);
  std::ostream& out_;
  bool first_ = true, finished_ = false, fragment_ = false;
  std::uint64_t events_ = 0, flows_ = 0, origin_ns_ = 0;
};

/// Writes `s` as a JSON string (with quotes), escaping as RFC 8259 requires; bytes that are not
/// valid UTF-8 become U+FFFD.
void write_json_string(std::ostream& out, std::string_view s);

/// A whole timeline held in memory (for producers that build it first, e.g. a simulator), and its
/// writer. Slices are complete (start, duration); markers are instants; flows join two instants.
struct Timeline {
  struct Slice {
    Track track;
    std::uint64_t start_ns = 0, dur_ns = 0;
    std::string name, category;
    Args args;
  };
  struct Marker {
    Track track;
    std::uint64_t ts_ns = 0;
    std::string name, category;
    Args args;
  };
  struct Flow {
    Track from, to;
    std::uint64_t from_ns = 0, to_ns = 0;
    std::string name, category;
  };
  std::vector<std::pair<int, std::string>> groups;            ///< group id, name
  std::vector<std::pair<Track, std::string>> tracks;          ///< track, name
  std::vector<Slice> slices;
  std::vector<Marker> markers;
  std::vector<Flow> flows;
};
void write_chrome_json(const Timeline& t, std::ostream& out);

/// One trace-event JSON document of the events of fragment writers (each fragment: what one
/// TraceEventWriter(out, Fragment{}) wrote; empty ones are skipped), in the order given. Group and
/// flow ids must be unique across the fragments.
std::string join_fragments(std::span<const std::string> fragments);

}  // namespace ipilab::timeline
