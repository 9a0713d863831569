// ipilab trace FILE|- [--json FILE|-] [--plot FILE.svg|.png] [--buffer NAME] [--pair-limit T]
//              [--events FILE.csv|.jsonl] [--perfetto FILE.json]   and   ipilab trace record -o FILE ...
//              and   ipilab trace --live [--duration S] [--save FILE.dat] [the same outputs]
#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <memory>
#include <optional>
#include <filesystem>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cli/commands.h"
#include "common/error.h"
#include "common/file.h"
#include "trace/analysis.h"
#include "trace/export.h"
#include "trace/live.h"
#include "trace/live_view.h"
#include "trace/plot.h"
#include "trace/record.h"
#include "trace/report.h"

namespace ipilab::cli {

namespace {

struct TraceArgs {
  std::string file;
  std::string json;
  std::string plot;
  std::string buffer;
  bool buffer_given = false;
  std::string pair_limit = "10ms";
  std::string events;
  std::string perfetto;
  bool live = false;
  double duration_s = 0;
  std::string save;
};

// "10ms", "500us", "250000ns", "1s", or a bare number of ns.
std::uint64_t parse_duration_ns(const std::string& text, const std::string& option) {
  std::size_t i = 0;
  while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.')) ++i;
  const std::string num = text.substr(0, i), unit = text.substr(i);
  double v = 0;
  try {
    std::size_t used = 0;
    v = std::stod(num, &used);
    if (used != num.size()) throw std::invalid_argument("x");
  } catch (...) {
    throw InputError(option, fmt::format("'{}': expected a duration such as 10ms, 500us or 250000ns", text));
  }
  double scale = 0;
  if (unit.empty() || unit == "ns") scale = 1;
  else if (unit == "us") scale = 1e3;
  else if (unit == "ms") scale = 1e6;
  else if (unit == "s") scale = 1e9;
  else throw InputError(option, fmt::format("'{}': unit '{}' (use ns, us, ms or s)", text, unit));
  const double ns = v * scale;
  if (!(ns >= 1) || ns > 3.6e12) throw InputError(option, fmt::format("'{}': must be between 1 ns and 1 h", text));
  return static_cast<std::uint64_t>(ns);
}

struct RecordArgs {
  std::string output;
  double duration_s = 0;
  std::vector<std::string> command;
  std::string instance = "ipilab";
  bool top_level = false;
  unsigned buffer_kb = 0;
  bool text = false;
};

constexpr const char* kTraceHelp = R"(Reads a real Linux IPI trace, pairs every IPI send with its arrival on the
target CPU, and reports per-IPI latency (send -> handler entry, ns) and handler time (entry -> exit, ns)
per kind, per callsite, per (source CPU, target CPU), and per target CPU "who interrupts it".

FILE ('-' = standard input) is detected from its content, never from its name: a trace.dat from
trace-cmd (v6/v7, its own compression or none, several buffers), the text of 'trace-cmd report'
(with or without -t/-l), a copy of /sys/kernel/tracing/trace, or 'perf script' text; any of them
may be gzip-, zstd- or xz-compressed. Every rendering of a cpumask is recognised from the value
(kernel hex words, libtraceevent CPU lists such as 0-3,8, old libtraceevent ARRAY[..] bytes); a
value that fits none is left out and reported with its count and first line.
What a real recording holds besides IPI events is read and counted, never fatal: ftrace's own events
(print from trace_marker writes becomes a marker in --perfetto; bprint, function, kernel_stack...
are skipped), ids without a format, the '=> function' lines of a -T (stacktrace) recording, and
what trace-cmd prints on its standard error in a terminal paste ('CPU N is empty', 'version = N').
The CPU set comes from the trace itself ('#P:N' is only the CPUs online when it was read). Every
kind's row balances: sends = raised + coalesced + unmatched, arrivals = raised + unmatched.
Events used: ipi:ipi_send_cpu, ipi:ipi_send_cpumask (Linux >= 6.4), csd:* (>= 6.5),
sched:sched_wake_idle_without_ipi, irq_vectors:{reschedule,call_function,call_function_single,
irq_work}_{entry,exit} (x86), ipi:ipi_raise/ipi_entry/ipi_exit (Arm). Record them with
'ipilab trace record'. The report says which kernel convention the trace shows (6.4: queued calls
traced as ipi_send_*; >= 6.5: csd:csd_queue_cpu) and how each queued call was served (its own IPI,
coalesced onto an earlier one, polling idle, local). A trace with several buffers is paired and
reported per buffer. A send unanswered after --pair-limit is unmatched. See docs/trace.md.

--live streams this machine's IPI events instead of reading a FILE (root; tracefs; its own instance
'ipilab-live', removed at the end, also on Ctrl-C): a compact table refreshed every second on a terminal
(IPIs per second, p50/p99 latency per kind, top sending pairs, coalesced and polling-idle shares), one
line a second on standard error otherwise; at Ctrl-C or after --duration S the full report of what was
streamed, and the outputs asked for (--json, --events, --perfetto, --plot). --save FILE.dat keeps the
raw events as a trace.dat ('ipilab trace FILE.dat' gives the same counts; trace-cmd reads it).

Percentiles: nearest rank from a log-linear histogram (exact below 256 ns, else within 0.4 %).

Examples (the example traces ship with ipilab, in "$(ipilab list --data-dir)/data/traces"):
  ipilab trace "$(ipilab list --data-dir)/data/traces/mixed.dat"
  ipilab trace "$(ipilab list --data-dir)/data/traces/mixed.txt" --json - | jq .by_kind
  gzip -c "$(ipilab list --data-dir)/data/traces/mixed.txt" | ipilab trace -
  ipilab trace "$(ipilab list --data-dir)/data/traces/mixed.dat" --perfetto mixed.json   # ui.perfetto.dev
  ipilab trace "$(ipilab list --data-dir)/data/traces/mixed.dat" --events ipis.csv       # pandas, R
  ipilab trace "$(ipilab list --data-dir)/data/traces/instance-extract.dat" --buffer bigdat
  ipilab trace trace.dat --json report.json --plot ipis.svg
  sudo ipilab trace --live                                   # until Ctrl-C
  sudo ipilab trace --live --duration 10 --save ipis.dat --json live.json)";

constexpr const char* kRecordHelp = R"(Records the IPI events of this machine through tracefs (libtracefs) into FILE,
which 'ipilab trace' reads. Enables exactly: ipi:ipi_send_cpu ipi:ipi_send_cpumask csd:csd_queue_cpu
csd:csd_function_entry csd:csd_function_exit, irq_vectors:{reschedule,call_function,
call_function_single,irq_work}_{entry,exit} (x86) and ipi:ipi_raise/ipi_entry/ipi_exit (Arm), those the
kernel has. It uses its own tracefs instance (default 'ipilab'; --top-level for the top buffer), never
touches /proc/sys/kernel/ftrace_enabled or the function tracer, and restores the tracing state it found.
FILE is a trace.dat (version 6, the documented trace-cmd.dat(5) format, written from the tracefs
raw ring-buffer pages as they fill) that 'trace-cmd report' and KernelShark open; with --text it is
the text of 'trace-cmd report -t' instead. Written all-or-nothing.
Needs root (or tracefs access); exits 3 when tracefs is unavailable.

Examples:
  sudo ipilab trace record -o trace.dat --duration 5
  sudo ipilab trace record -o trace.dat -- stress-ng --pipe 2 -t 3
  ipilab trace trace.dat      # also: trace-cmd report trace.dat, or open it in KernelShark)";

void check_trace_outputs(const TraceArgs& args) {
  if (!args.plot.empty()) output::image_format_of(args.plot, "--plot");
  output::check_outputs({{"--json", args.json, true},
                         {"--plot", args.plot, false},
                         {"--events", args.events, false},
                         {"--perfetto", args.perfetto, false},
                         {"--save", args.save, false}},
                        {{"FILE", args.file == "-" ? std::string() : args.file}});
  if (!args.events.empty()) trace::row_format(args.events);
  if (!args.perfetto.empty() && std::filesystem::path(args.perfetto).extension() != ".json")
    throw InputError("--perfetto", fmt::format("'{}': the file name must end in .json", args.perfetto));
}

// The outputs asked for and the report (text on stdout, or the JSON with --json -).
void write_trace_outputs(const TraceArgs& args, const trace::TraceAnalysis& analysis, const trace::ReadInfo& info,
                         const std::string& name, trace::TraceExports& exports) {
  const auto buffers = analysis.buffers();
  // Every file to its temporary file first; renamed together only when all were written.
  output::OutputSet files_out;
  if (!args.plot.empty()) {
    if (buffers.size() > 1)
      throw InputError("--plot", "this trace has IPI events in several buffers: pick one with --buffer NAME");
    trace::plot_trace(*buffers.front().second, args.plot, files_out);
  }
  std::string doc;
  if (!args.json.empty())
    doc = trace::report_json(analysis, info, name).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  if (!args.json.empty() && args.json != "-") files_out.write(args.json, "--json", doc);
  exports.prepare();
  files_out.prepare_all();
  exports.commit();
  files_out.commit_all();
  if (!args.perfetto.empty())
    fmt::print(stderr, "ipilab: wrote {} ({} flows send -> arrival); open it in ui.perfetto.dev\n", args.perfetto,
               exports.flows());
  if (!args.events.empty()) fmt::print(stderr, "ipilab: wrote {} ({} rows)\n", args.events, exports.rows());
  if (args.json == "-") {
    std::fputs(doc.c_str(), stdout);
    return;
  }
  std::fputs(trace::report_text(analysis, info, name).c_str(), stdout);
}

void run_trace(const TraceArgs& args) {
  // Check every option before the (possibly long) analysis.
  check_trace_outputs(args);
  trace::AnalysisOptions opt;
  opt.pair_limit_ns = parse_duration_ns(args.pair_limit, "--pair-limit");
  const trace::RowFormat rows = args.events.empty() ? trace::RowFormat::Csv : trace::row_format(args.events);
  const std::string name = args.file == "-" ? std::string("<stdin>") : args.file;
  trace::TraceExports exports(args.events, rows, args.perfetto, fmt::format("ipilab trace {}", name));
  trace::TraceAnalysis::ObserverFactory factory;
  if (exports.any()) factory = [&](std::string_view b) { return exports.observer_for(b); };
  trace::TraceAnalysis analysis(opt, {}, {}, factory);
  const trace::ReadInfo info = trace::analyse_trace(
      args.file, analysis, args.buffer_given ? std::optional<std::string>(args.buffer) : std::nullopt);
  write_trace_outputs(args, analysis, info, name, exports);
}

// --live: streams from tracefs (trace/live.h), a table refreshed in place on a terminal or one line
// per interval on stderr, then the full report of what was streamed and the outputs asked for.
void run_live(const TraceArgs& args) {
  if (!args.file.empty()) throw InputError("FILE", "--live reads this machine's tracefs: give no FILE");
  if (args.buffer_given) throw InputError("--buffer", "--live streams its own tracefs instance: no --buffer");
  check_trace_outputs(args);
  trace::AnalysisOptions opt;
  opt.pair_limit_ns = parse_duration_ns(args.pair_limit, "--pair-limit");
  const trace::RowFormat rows = args.events.empty() ? trace::RowFormat::Csv : trace::row_format(args.events);
  const std::string name = "this machine";
  trace::TraceExports exports(args.events, rows, args.perfetto, "ipilab trace --live");
  trace::LiveView view;
  std::vector<std::unique_ptr<trace::TeeAnalysisObserver>> tees;
  auto factory = [&](std::string_view b) -> trace::AnalysisObserver* {
    tees.push_back(std::make_unique<trace::TeeAnalysisObserver>());
    tees.back()->to.push_back(&view);
    if (auto* x = exports.observer_for(b)) tees.back()->to.push_back(x);
    return tees.back().get();
  };
  trace::TraceAnalysis analysis(opt, {}, {}, factory);
  trace::LiveOptions lo;
  lo.duration_s = args.duration_s;
  lo.save = args.save;
  const bool terminal = ::isatty(STDOUT_FILENO) == 1;
  const long ncpu = ::sysconf(_SC_NPROCESSORS_CONF);
  auto tick = [&](double elapsed) {
    if (terminal) fmt::print("\x1b[H\x1b[2J{}", view.table(elapsed, static_cast<std::uint32_t>(ncpu > 0 ? ncpu : 0)));
    else fmt::print(stderr, "{}", view.line(elapsed));
    std::fflush(stdout);
    view.next_interval(elapsed);
  };
  const trace::LiveResult r = trace::live_trace(lo, analysis, tick);
  if (terminal) fmt::print("\x1b[H\x1b[2J");
  fmt::print(stderr, "ipilab: streamed {} events ({} lost) on {} CPUs in {:.3f} s: {} IPI sends, {} queued calls{}\n",
             r.record.events, r.record.lost, r.record.cpus, r.record.seconds, view.ipis(), view.calls(),
             args.save.empty() ? std::string() : fmt::format("; raw events saved in {}", args.save));
  if (!r.record.missing.empty()) {
    std::string m;
    for (const auto& e : r.record.missing) m += " " + e;
    fmt::print(stderr, "ipilab: this kernel lacks:{}\n", m);
  }
  analysis.finish(r.info, name);
  write_trace_outputs(args, analysis, r.info, name, exports);
}

void run_record(const RecordArgs& args) {
  trace::RecordOptions opt;
  opt.output = args.output;
  opt.duration_s = args.duration_s;
  opt.command = args.command;
  opt.instance = args.top_level ? std::string() : args.instance;
  opt.buffer_kb = args.buffer_kb;
  opt.text = args.text;
  const trace::RecordResult r = trace::record_trace(opt);
  fmt::print(stderr, "ipilab: recorded {} events ({} lost) on {} CPUs in {:.3f} s into {}\n", r.events, r.lost,
             r.cpus, r.seconds, args.output);
  if (!r.missing.empty()) {
    fmt::print(stderr, "ipilab: this kernel lacks:");
    for (const auto& m : r.missing) fmt::print(stderr, " {}", m);
    fmt::print(stderr, "\n");
  }
  if (r.command_status != 0) throw CheckFailed(fmt::format("the command exited with status {}", r.command_status));
}

}  // namespace

void add_trace_command(CLI::App& root) {
  auto targs = std::make_shared<TraceArgs>();
  auto rargs = std::make_shared<RecordArgs>();
  auto* cmd = root.add_subcommand("trace", "Analyse a real Linux IPI trace (or record one): per-IPI latency");
  cmd->footer(kTraceHelp);
  cmd->add_option("FILE", targs->file,
                  "trace.dat, 'trace-cmd report' / tracefs / 'perf script' text, plain or gzip/zstd/xz; '-' = stdin");
  cmd->add_option("--json", targs->json, "also write the JSON report to FILE ('-' = stdout, then no text report)");
  cmd->add_option("--plot", targs->plot,
                  "draw latency distributions per kind and a source x target heat map (gnuplot) to FILE.svg|.png");
  cmd->add_option("--buffer", targs->buffer, "analyse only this ring buffer (a tracefs instance; '' = top level)")
      ->each([targs](const std::string&) { targs->buffer_given = true; });
  cmd->add_option("--pair-limit", targs->pair_limit,
                  "a send unanswered for longer is unmatched, never paired with a later arrival (default 10ms)");
  cmd->add_option("--events", targs->events, "write one row per IPI and per queued call to FILE.csv or FILE.jsonl");
  cmd->add_option("--perfetto", targs->perfetto,
                  "write the timeline as Chrome/Perfetto trace-event JSON (open in ui.perfetto.dev)");
  cmd->add_flag("--live", targs->live,
                "stream this machine's IPI events from tracefs (root): a table refreshed every second, the full "
                "report at Ctrl-C or after --duration");
  cmd->add_option("--duration", targs->duration_s, "--live: stop after S seconds (default: at Ctrl-C)")
      ->type_name("S")
      ->check(CLI::Range(0.0, 86400.0));
  cmd->add_option("--save", targs->save, "--live: keep the raw events as a trace.dat that 'ipilab trace' and trace-cmd read")
      ->type_name("FILE.dat");
  cmd->require_subcommand(0, 1);

  auto* rec = cmd->add_subcommand("record", "Record the IPI events of this machine into a file 'ipilab trace' reads");
  rec->footer(kRecordHelp);
  rec->add_option("-o,--output", rargs->output, "output file (trace.dat; with --text, 'trace-cmd report -t' text)")
      ->required();
  rec->add_flag("--text", rargs->text, "write the text of 'trace-cmd report -t' instead of a trace.dat");
  rec->add_option("--duration", rargs->duration_s,
                  "seconds to record (without a command: default 1; with one: stop after S seconds at most)")
      ->check(CLI::Range(0.0, 86400.0));
  rec->add_option("--instance", rargs->instance, "tracefs instance to create and remove (default 'ipilab')");
  rec->add_flag("--top-level", rargs->top_level, "use the top-level buffer instead (its state is restored)");
  rec->add_option("--buffer-kb", rargs->buffer_kb, "per-CPU ring buffer size in KiB (default: leave as is, 0)");
  rec->add_option("command", rargs->command, "command to run while recording (after --)");
  rec->callback([rargs] { run_record(*rargs); });

  cmd->callback([cmd, targs] {
    if (!cmd->get_subcommands().empty()) return;
    if (targs->live) return run_live(*targs);
    if (targs->duration_s > 0 || !targs->save.empty())
      throw InputError(targs->save.empty() ? "--duration" : "--save", "only with --live");
    if (targs->file.empty())
      throw InputError("FILE", "a trace file is required, or --live for this machine's tracefs (see 'ipilab trace --help')");
    run_trace(*targs);
  });
}

}  // namespace ipilab::cli
