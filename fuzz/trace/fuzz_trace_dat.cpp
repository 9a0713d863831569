// Fuzzes the trace.dat reader that ipilab added over libtracecmd: the documented layout (v6/v7
// headers, options, buffers, per-CPU tables, zstd/zlib chunks), the event formats it parses, and
// the direct ring-buffer page decoding. The input is written to a memory file and read as a
// trace.dat; it must be analysed or rejected with InputError.
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "common/error.h"
#include "trace/analysis.h"
#include "trace/dat_layout.h"
#include "trace/reader.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    (void)ipilab::trace::parse_dat_layout(data, size, "fuzz");
  } catch (const ipilab::InputError&) {
  }
  const int fd = ::memfd_create("fuzz.dat", MFD_CLOEXEC);
  if (fd < 0) return 0;
  if (::write(fd, data, size) == static_cast<ssize_t>(size)) {
    try {
      ipilab::trace::TraceAnalysis a;
      const auto info = ipilab::trace::read_dat_trace("fuzz.dat", a, fd, "fuzz");
      a.finish(info, "fuzz");
    } catch (const ipilab::InputError&) {
    }
  }
  ::close(fd);
  return 0;
}
