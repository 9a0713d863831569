// ipilab/trace/tracefs_compat.h — includes the C headers of libtracecmd / libtracefs / libtraceevent
// from C++. tracefs.h (libtracefs 1.6) has one line that is valid C but not C++: the static inline
// tracefs_hist_start() passes the literal 0 where `enum tracefs_hist_command` is expected. A C++
// overload taking int, declared before the header, makes that call resolve; it forwards to the real
// C function. Do not include event-utils.h from C++: it defines min/max macros.
#pragma once

#include <cstdarg>

struct tracefs_instance;
struct tracefs_hist;
int tracefs_hist_command(struct tracefs_instance* instance, struct tracefs_hist* hist, int command);

extern "C" {
#include <trace-cmd/trace-cmd.h>
#include <traceevent/event-parse.h>
#include <traceevent/trace-seq.h>
#include <tracefs/tracefs.h>

// From traceevent/event-utils.h (not included, see above): the default printer behind tep_vprint.
int __tep_vprint(const char* name, enum tep_loglevel level, bool print_err, const char* fmt, va_list ap);
int tep_vprint(const char* name, enum tep_loglevel level, bool print_err, const char* fmt, va_list ap);

// Exported by libtracecmd.so.1 (1.3) but declared only in trace-cmd's private header
// (lib/trace-cmd/include/private/trace-cmd-private.h): the size in bytes of a CPU's event data as libtracecmd
// sees it (uncompressed, whole pages; `trace-cmd report --stat`: "CPU0 data recorded at offset=0x1000
// 589824 bytes in size"), or -1 for a bad CPU index.
long long tracecmd_get_cpu_file_size(struct tracecmd_input* handle, int cpu);
}

inline int tracefs_hist_command(struct tracefs_instance* instance, struct tracefs_hist* hist, int command) {
  return tracefs_hist_command(instance, hist, static_cast<enum tracefs_hist_command>(command));
}
