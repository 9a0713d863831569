// ipilab/trace/live.h — `ipilab trace --live`: IPI events streamed from tracefs as they happen.
//
// The ring buffer is the one `trace record` uses (record.h: its own tracefs instance, default
// "ipilab-live", the same events enabled, removed on exit, also on SIGINT/SIGTERM, and on errors).
// Every 100 ms the raw pages of each CPU are read (tracefs_cpu_read); each event is printed by
// libtraceevent as `trace-cmd report -t` prints it, held back until every CPU has been read past
// it (drained, or read to a newer event), so that lines of all CPUs come in time order however
// slow the reader is (a read round gives up a CPU after 250 ms, so --duration holds), and fed to
// the text parser (text_reader.h) and through it to `sink`:
// the same parser and analysis as `ipilab trace FILE` on that text, so the counts at the end are
// those of the file read afterwards. With `save`, the raw pages are also kept and written as a
// trace.dat v6 (dat_writer.h) under a temporary name renamed over `save` at the end.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>

#include "trace/event.h"
#include "trace/reader.h"
#include "trace/record.h"

namespace ipilab::trace {

struct LiveOptions {
  double duration_s = 0;          ///< 0: until SIGINT / SIGTERM
  std::filesystem::path save;     ///< keep the raw events as a trace.dat ("" = no)
  std::string instance = "ipilab-live";
  unsigned buffer_kb = 0;         ///< per-CPU buffer size in KiB; 0 = leave as is
  double interval_s = 1.0;        ///< how often `tick` is called
};

struct LiveResult {
  RecordResult record;  ///< events, lost, cpus, seconds, missing events
  ReadInfo info;        ///< what the text parser learnt (as for a file)
};

/// Streams until the duration passes or a stop signal comes, calling `tick(elapsed seconds)` once per
/// interval on this thread, then feeds what is left and finishes the parser (not the sink's
/// analysis). Throws UnavailableError (no tracefs, not root, instance busy, no IPI events in this
/// kernel), InputError("--save", ...) for a bad --save folder.
LiveResult live_trace(const LiveOptions& options, EventSink& sink, const std::function<void(double)>& tick);

}  // namespace ipilab::trace
