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
// (lib/trace-cmd/include/private/trace-cmd-private.h): the per-CPU ring-buffer statistics that
// `trace-cmd record` saved in the file ("CPU: 0\n...read events: 17019\n..."), as printed by
// `trace-cmd report --stat`. NULL when the file has none. Used only to detect lost data.
const char* tracecmd_get_cpustats(struct tracecmd_input* handle);
}

inline int tracefs_hist_command(struct tracefs_instance* instance, struct tracefs_hist* hist, int command) {
  return tracefs_hist_command(instance, hist, static_cast<enum tracefs_hist_command>(command));
}
