// ipilab/trace/command.h — `ipilab trace FILE|-`, `ipilab trace --live` and `ipilab trace record` as
// functions: the CLI (src/cli/cmd_trace.cpp) only declares the options and calls them.
//
// trace_command, in this order (so that bad input never leaves output behind):
//   1. the form: with `live`, no FILE and no --buffer; without it, no --duration or --save, and a FILE;
//   2. the options: the --plot extension, every output target (folders exist, one file per output,
//      none over FILE), the --events format, --perfetto ending in .json, --pair-limit as a duration;
//   3. the trace: FILE read and analysed (analyse_trace, trace/analysis.h), or with `live` this
//      machine's IPI events streamed (trace/live.h): a table refreshed in place on `out` every second
//      when `terminal`, else one line a second on `err`; then one summary line on `err` (and the
//      events this kernel lacks);
//   4. the files: --plot (one buffer only), --json, --events and --perfetto each to a temporary file,
//      renamed together once all were written; a "wrote" line on `err` for --perfetto and --events;
//   5. the report on `out`: the text (trace/report.h), or the JSON instead with --json -.
// record_command records into opts.output (trace/record.h) and prints what it recorded on `err`.
// Errors: InputError (exit 2) for a bad option or a bad trace (the place names the option, or the file
// and line); UnavailableError (exit 3) without gnuplot for --plot, or without tracefs / root for --live
// and record; CheckFailed (exit 1) when the command run by record exits with a status other than 0.
#pragma once

#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

namespace ipilab::trace {

struct TraceOptions {
  std::string file{};                  ///< FILE; "-" = standard input; "" with `live`
  std::string json{};                  ///< "" = none, "-" = stdout instead of the text report
  std::string plot{};                  ///< "" = none, else FILE.svg|.png
  std::optional<std::string> buffer{}; ///< --buffer NAME: only this ring buffer ("" = the top level)
  std::string pair_limit = "10ms";     ///< a duration: 10ms, 500us, 250000ns, 1s or bare ns
  std::string events{};                ///< "" = none, else FILE.csv|.jsonl
  std::string perfetto{};              ///< "" = none, else FILE.json
  bool live = false;                   ///< stream this machine's tracefs instead of reading FILE
  double duration_s = 0;               ///< --live: stop after this long (0 = at Ctrl-C)
  std::string save{};                  ///< --live: keep the raw events as this trace.dat ("" = no)
  bool terminal = false;               ///< --live: `out` is a terminal (the table refreshed in place)
};

/// `ipilab trace` (see the file comment).
void trace_command(const TraceOptions& opts, std::ostream& out, std::ostream& err);

struct RecordCommandOptions {
  std::string output{};                ///< -o: trace.dat (or with `text`, 'trace-cmd report -t' text)
  double duration_s = 0;               ///< 0: 1 s without a command, until it exits with one
  std::vector<std::string> command{};  ///< run while recording (argv)
  std::string instance = "ipilab";     ///< tracefs instance to create and remove
  bool top_level = false;              ///< the top-level buffer instead of `instance`
  unsigned buffer_kb = 0;              ///< per-CPU ring buffer size in KiB (0 = leave as is)
  bool text = false;
};

/// `ipilab trace record` (see the file comment).
void record_command(const RecordCommandOptions& opts, std::ostream& err);

}  // namespace ipilab::trace
