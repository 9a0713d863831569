// ipilab trace FILE [--json FILE|-] [--plot FILE.svg|.png]   and   ipilab trace record -o FILE ...
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cli/commands.h"
#include "common/error.h"
#include "common/file.h"
#include "trace/analysis.h"
#include "trace/plot.h"
#include "trace/record.h"
#include "trace/report.h"

namespace ipilab::cli {

namespace {

struct TraceArgs {
  std::string file;
  std::string json;
  std::string plot;
};

struct RecordArgs {
  std::string output;
  double duration_s = 0;
  std::vector<std::string> command;
  std::string instance = "ipilab";
  bool top_level = false;
  unsigned buffer_kb = 0;
};

constexpr const char* kTraceHelp = R"(Reads a real Linux IPI trace, pairs every IPI send with its arrival on the
target CPU, and reports per-IPI latency (send -> handler entry, ns) and handler time (entry -> exit, ns)
per kind, per callsite, per (source CPU, target CPU), and per target CPU "who interrupts it".

FILE is detected from its content: a trace.dat from 'trace-cmd record' (v6/v7, compressed or not),
the text of 'trace-cmd report' (with or without -t), or a copy of /sys/kernel/tracing/trace.
Events used: ipi:ipi_send_cpu, ipi:ipi_send_cpumask (Linux >= 6.4), csd:* (>= 6.5),
irq_vectors:{reschedule,call_function,call_function_single,irq_work}_{entry,exit} (x86),
ipi:ipi_raise/ipi_entry/ipi_exit (Arm). Record them with 'ipilab trace record'.

Percentiles: nearest rank from a log-linear histogram (exact below 256 ns, else within 0.4 %).

Examples:
  ipilab trace "$(ipilab list --data-dir)/data/traces/mixed.dat"     # an example trace shipped with ipilab
  ipilab trace "$(ipilab list --data-dir)/data/traces/mixed.txt" --json - | jq .by_kind
  ipilab trace trace.dat --json report.json --plot ipis.svg)";

constexpr const char* kRecordHelp = R"(Records the IPI events of this machine through tracefs (libtracefs) into FILE,
which 'ipilab trace' reads. Enables exactly: ipi:ipi_send_cpu ipi:ipi_send_cpumask csd:csd_queue_cpu
csd:csd_function_entry csd:csd_function_exit, irq_vectors:{reschedule,call_function,
call_function_single,irq_work}_{entry,exit} (x86) and ipi:ipi_raise/ipi_entry/ipi_exit (Arm), those the
kernel has. It uses its own tracefs instance (default 'ipilab'; --top-level for the top buffer), never
touches /proc/sys/kernel/ftrace_enabled or the function tracer, and restores the tracing state it found.
FILE is written in the text format of 'trace-cmd report -t' (ns timestamps), all-or-nothing.
Needs root (or tracefs access); exits 3 when tracefs is unavailable.

Examples:
  sudo ipilab trace record -o ipis.txt --duration 5
  sudo ipilab trace record -o ipis.txt -- stress-ng --pipe 2 -t 3
  ipilab trace ipis.txt)";

void run_trace(const TraceArgs& args) {
  if (!args.plot.empty()) {  // check before the (possibly long) analysis
    const std::string ext = std::filesystem::path(args.plot).extension().string();
    if (ext != ".svg" && ext != ".png")
      throw InputError("--plot", fmt::format("'{}': the file name must end in .svg or .png", args.plot));
  }
  trace::IpiAnalysis analysis;
  const trace::ReadInfo info = trace::analyse_trace(args.file, analysis);
  if (!args.plot.empty()) trace::plot_trace(analysis, args.plot);
  if (!args.json.empty()) {
    const std::string doc = trace::report_json(analysis, info, args.file).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
    if (args.json == "-") {
      std::fputs(doc.c_str(), stdout);
      return;
    }
    write_file_atomically(args.json, doc);
  }
  std::fputs(trace::report_text(analysis, info, args.file).c_str(), stdout);
}

void run_record(const RecordArgs& args) {
  trace::RecordOptions opt;
  opt.output = args.output;
  opt.duration_s = args.duration_s;
  opt.command = args.command;
  opt.instance = args.top_level ? std::string() : args.instance;
  opt.buffer_kb = args.buffer_kb;
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
  cmd->add_option("FILE", targs->file, "trace.dat, 'trace-cmd report' text, or tracefs 'trace' text");
  cmd->add_option("--json", targs->json, "also write the JSON report to FILE ('-' = stdout, then no text report)");
  cmd->add_option("--plot", targs->plot,
                  "draw latency distributions per kind and a source x target heat map (gnuplot) to FILE.svg|.png");
  cmd->require_subcommand(0, 1);

  auto* rec = cmd->add_subcommand("record", "Record the IPI events of this machine into a file 'ipilab trace' reads");
  rec->footer(kRecordHelp);
  rec->add_option("-o,--output", rargs->output, "output file (text, 'trace-cmd report -t' format)")->required();
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
    if (targs->file.empty()) throw InputError("FILE", "a trace file is required (see 'ipilab trace --help')");
    run_trace(*targs);
  });
}

}  // namespace ipilab::cli
