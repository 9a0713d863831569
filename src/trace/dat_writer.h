// ipilab/trace/dat_writer.h — writes a trace.dat in the documented version-6 format
// (trace-cmd.dat.v6(5)): the file header (endianness and long size of this machine, page size),
// header_page/header_event, the ftrace and event formats, kallsyms, printk formats and saved
// cmdlines, the CPU count, a "flyrecord" table of per-CPU (offset, size), and per CPU the raw
// ring-buffer pages exactly as tracefs' per_cpu/cpuN/trace_pipe_raw gave them, page aligned.
// `trace-cmd report` and KernelShark (both libtracecmd) read it like a file of `trace-cmd record`.
// libtracecmd 1.3 declares no output API in its public header, hence this writer.
#pragma once

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

namespace ipilab::trace {

struct DatContents {
  std::uint32_t page_size = 4096;
  std::string header_page, header_event;                          ///< events/header_page, header_event
  std::vector<std::string> ftrace_formats;                        ///< events/ftrace/*/format
  std::vector<std::pair<std::string, std::vector<std::string>>> systems;  ///< (system, its formats)
  std::string kallsyms, printk_formats, saved_cmdlines;
  /// Per CPU (index = CPU number): a file holding that CPU's raw pages (page_size each), read from
  /// its current position to its end. nullptr = no data for that CPU.
  std::vector<std::FILE*> cpu_pages;
};

/// Writes `c` to `out` (sequentially, from a fresh, empty file: output::AtomicFile::stream() for a
/// file). Throws std::runtime_error when the stream fails.
void write_dat_v6(std::ostream& out, const DatContents& c);

/// The tracefs files a trace.dat needs, read from `tracing_dir` (+ /proc/kallsyms), for the event
/// systems given. Missing optional files are left empty.
DatContents dat_contents_from_tracefs(const std::string& tracing_dir, const std::vector<std::string>& systems);

}  // namespace ipilab::trace
