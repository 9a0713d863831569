// ipilab/trace/export.h — per-IPI exports of `ipilab trace`, fed by the analysis as it pairs:
//   --events FILE.csv | FILE.jsonl   one row per IPI send (to one target) and per queued call;
//   --perfetto FILE.json             the timeline (timeline.h): a track per CPU, a slice per handler
//                                    (entry -> exit) and per csd function run, a slice per send with a
//                                    flow arrow to the handler entry that served it, markers for
//                                    coalesced and polling-idle calls and for wakeups without IPI.
// Both are written into a temporary file next to the output and renamed over it only when the whole
// trace was read (nothing half written on bad input).
//
// Row columns (CSV header, JSONL keys; times in ns of the trace clock, empty/null when absent):
//   buffer, record ("ipi" | "call"), send_ns (call: queue time; local call: run start), src, dst,
//   kind (of the send; "call" for calls), callsite, callback (call: the function),
//   served (ipi: raised | coalesced | unmatched | expired; call: ipi | coalesced | polling-idle |
//   local | pending), inferred (polling-idle inferred, 0/1), arrival_ns (ipi: handler entry; call:
//   function start), arrival_kind, latency_ns (arrival - send), handler_ns (ipi: entry -> exit of
//   the handler; call: function run time).
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/output.h"
#include "trace/analysis.h"
#include "trace/timeline.h"

namespace ipilab::trace {

/// An output file written under a temporary name and renamed over its path by commit().
using AtomicOutput = output::AtomicFile;

enum class RowFormat : std::uint8_t { Csv, Jsonl };

/// A time in an --events row (ns): the JSON number and the CSV text of the same value.
struct RowTime {
  nlohmann::json json;
  std::string text;
};

/// One row of an --events file, written by 'ipilab trace' for a real trace and by the simulated
/// timeline of 'ipilab run' / 'replay' (docs/trace.md lists the columns).
struct EventsRow {
  std::string_view buffer, record;
  RowTime send;
  std::uint32_t src = 0, dst = 0;
  std::string_view kind, callsite, callback, served;
  bool inferred = false;
  std::optional<RowTime> arrival;
  std::string_view arrival_kind;
  std::optional<RowTime> latency, handler;
};

/// The row's line, '\n' included: CSV in the header's column order, or one JSON object.
std::string events_row_line(const EventsRow& r, RowFormat format);

/// Collects the exports of one trace (several buffers) and hands each buffer's analysis its observer.
class TraceExports {
 public:
  /// `events` / `perfetto`: output paths (empty = not wanted). `rows`: the format of `events` (from
  /// its extension, see row_format()). Throws InputError naming the option for a bad path.
  TraceExports(const std::filesystem::path& events, RowFormat rows, const std::filesystem::path& perfetto,
               std::string title);
  /// The recorded timeline alone, as a fragment (timeline::join_fragments) written to `fragment`:
  /// one group `group` named `title` (sorted at `sort_index`), so that another timeline (a replay's
  /// simulated one) can be put beside it in one document.
  TraceExports(std::ostream& fragment, std::string title, int group, int sort_index);
  ~TraceExports();
  TraceExports(const TraceExports&) = delete;
  TraceExports& operator=(const TraceExports&) = delete;

  bool any() const { return rows_out_ || perfetto_out_; }
  /// The observer for buffer `name` (created on first use).
  AnalysisObserver* observer_for(std::string_view buffer);
  /// Writes out and closes the outputs (every write error surfaces here), without renaming.
  void prepare();
  /// prepare(), then renames the outputs into place.
  void commit();

  /// Draws only the window that ends at `end_ns`: sends up to then, and handlers, function runs and
  /// markers up to `tail_ns` after it (the arrivals of the window's sends). Default: everything.
  void set_window(std::uint64_t end_ns, std::uint64_t tail_ns) {
    window_end_ = end_ns;
    window_tail_ = tail_ns;
  }

  std::uint64_t rows() const { return rows_; }
  std::uint64_t flows() const;
  std::uint64_t markers() const { return markers_; }  ///< trace_marker instants written

 private:
  class BufferObserver;
  friend class BufferObserver;
  std::unique_ptr<AtomicOutput> rows_out_, perfetto_out_;
  RowFormat format_ = RowFormat::Csv;
  std::unique_ptr<timeline::TraceEventWriter> timeline_;
  std::vector<std::unique_ptr<BufferObserver>> buffers_;
  std::string title_;
  std::uint64_t rows_ = 0;
  std::uint64_t markers_ = 0;
  std::uint64_t window_end_ = UINT64_MAX, window_tail_ = 0;
  int fragment_group_ = 0, fragment_sort_ = 0;  ///< fragment mode: its group (0: not a fragment)
  bool finished_ = false;
  bool sent_in_window(std::uint64_t ts) const { return ts <= window_end_; }
  bool in_window(std::uint64_t ts) const { return ts <= window_end_ || ts - window_end_ <= window_tail_; }
};

/// The row format of an --events path: ".csv" -> Csv, ".jsonl" -> Jsonl; else InputError("--events").
RowFormat row_format(const std::filesystem::path& path);

}  // namespace ipilab::trace
