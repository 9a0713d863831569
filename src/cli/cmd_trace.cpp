// ipilab trace FILE|- [--json FILE|-] [--plot FILE.svg|.png] [--buffer NAME] [--pair-limit T]
//              [--events FILE.csv|.jsonl] [--perfetto FILE.json]   and   ipilab trace record -o FILE ...
//              and   ipilab trace --live [--duration S] [--save FILE.dat] [the same outputs]
// src/trace/command.h does the work; this file declares the options and their help.
#include <unistd.h>

#include <iostream>
#include <memory>
#include <string>

#include "cli/commands.h"
#include "trace/command.h"

namespace ipilab::cli {

namespace {

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

}  // namespace

void add_trace_command(CLI::App& root) {
  auto targs = std::make_shared<trace::TraceOptions>();
  auto buffer = std::make_shared<std::string>();
  auto rargs = std::make_shared<trace::RecordCommandOptions>();
  auto* cmd = root.add_subcommand("trace", "Analyse a real Linux IPI trace (or record one): per-IPI latency");
  cmd->footer(kTraceHelp);
  cmd->add_option("FILE", targs->file,
                  "trace.dat, 'trace-cmd report' / tracefs / 'perf script' text, plain or gzip/zstd/xz; '-' = stdin");
  cmd->add_option("--json", targs->json, "also write the JSON report to FILE ('-' = stdout, then no text report)");
  cmd->add_option("--plot", targs->plot,
                  "draw latency distributions per kind and a source x target heat map (gnuplot) to FILE.svg|.png");
  auto* buffer_opt =
      cmd->add_option("--buffer", *buffer, "analyse only this ring buffer (a tracefs instance; '' = top level)");
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
  rec->callback([rargs] { trace::record_command(*rargs, std::cerr); });

  cmd->callback([cmd, targs, buffer, buffer_opt] {
    if (!cmd->get_subcommands().empty()) return;
    trace::TraceOptions o = *targs;
    if (buffer_opt->count() > 0) o.buffer = *buffer;
    o.terminal = ::isatty(STDOUT_FILENO) == 1;
    trace::trace_command(o, std::cout, std::cerr);
  });
}

}  // namespace ipilab::cli
