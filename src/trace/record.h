// ipilab/trace/record.h — `ipilab trace record`: records IPI events through tracefs (libtracefs).
//
// What it does, in order:
//   1. finds tracefs (libtracefs mounts it when root and it is not mounted); else UnavailableError;
//   2. creates its own instance (default "ipilab"; the top-level buffer with an empty name, whose
//      tracing_on, event enables and buffer size are saved and restored — but whose pending content
//      is consumed and dropped, as any trace_pipe_raw reader does); it never writes
//      /proc/sys/kernel/ftrace_enabled and never sets a tracer, which is why it works where
//      `trace-cmd record` fails on that file (tracepoints do not need the function tracer);
//   3. enables exactly recorded_events() that the kernel has (the others are listed as missing);
//   4. runs the command (fork/exec, same process group) or waits --duration, reading the per-CPU raw
//      buffers every 100 ms (tracefs_iterate_raw_events), sorting them by time with a 20 ms
//      hold-back so lines are in time order across CPUs;
//   5. by default, reads the raw ring-buffer pages of each CPU (libtracefs tracefs_cpu_read, the
//      per_cpu/cpuN/trace_pipe_raw pages) into a temporary file per CPU as they fill, and at the end
//      writes a trace.dat version 6 (dat_writer.h: the documented trace-cmd.dat(5) format, with the
//      event formats of the ipi, csd, irq_vectors and sched systems, /proc/kallsyms, printk formats
//      and saved cmdlines) that `trace-cmd report` and KernelShark open; libtracecmd 1.3 declares no
//      output API in its public header, so ipilab writes the format itself.
//      With `text`, it writes the text format of `trace-cmd report -t` instead ("cpus=N" then
//      "<comm>-<pid> [<cpu>] <sec>.<ns>: <event>: <fields>", fields printed by libtraceevent with the
//      running kernel's /proc/kallsyms), sorted by time with a 20 ms hold-back.
//      Either way through the output layer (common/output.h): into a temporary file beside the
//      output, checked on every write, renamed over it at the end, removed on an error, SIGINT or
//      SIGTERM after the recording stopped, or at exit.
//   6. restores the state found (instance removed; top-level: tracing_on and enables restored), also
//      on errors and on SIGINT/SIGTERM, which from the start (while the instance is set up too) stop
//      the recording rather than the process.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace ipilab::trace {

struct RecordOptions {
  std::filesystem::path output;
  double duration_s = 0;              ///< 0: 1 s without a command, unlimited with one
  std::vector<std::string> command;   ///< run while recording (argv); empty: just wait
  std::string instance = "ipilab";    ///< tracefs instance; empty = top-level buffer
  unsigned buffer_kb = 0;             ///< per-CPU buffer size in KiB; 0 = leave as is
  bool text = false;                  ///< write `trace-cmd report -t` text instead of trace.dat
};

struct RecordResult {
  std::uint64_t events = 0;            ///< events written (trace.dat: counted in the pages)
  std::uint64_t lost = 0;              ///< events the ring buffer dropped (known count)
  std::uint32_t cpus = 0;
  double seconds = 0;                  ///< wall time recorded
  std::vector<std::string> missing;    ///< "system:event" the kernel lacks (Arm-only events not
                                       ///< listed on x86, irq_vectors not listed on Arm)
  int command_status = 0;              ///< exit status of the command (128+signal if killed)
};

/// The events `record` enables, as (system, event).
std::vector<std::pair<std::string, std::string>> recorded_events();

/// True when tracefs is mounted and writable by this process (used by tests to skip).
bool tracefs_usable();

/// Records; see the header comment. Throws UnavailableError (no tracefs, no permission, instance
/// busy), InputError (bad output folder, command not found).
RecordResult record_trace(const RecordOptions& options);

}  // namespace ipilab::trace
