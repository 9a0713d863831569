// ipilab/trace/dat_layout.h — where the event data of a trace.dat lies, from the documented file
// format (trace-cmd.dat.v6(5), trace-cmd.dat.v7(5)): the file header (endianness, long size, page
// size, compression), the ring buffers (top level and instances) and, per buffer and CPU, the offset
// and size of the raw ring-buffer pages (v7 compressed: of the chunk list). The event formats and
// kallsyms are left to libtraceevent/libtracecmd; this only lets ipilab read the pages itself.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace ipilab::trace {

struct DatCpuData {
  std::uint32_t cpu = 0;
  std::uint64_t offset = 0;  ///< in the file
  std::uint64_t size = 0;    ///< bytes in the file (compressed: the chunk list)
};

struct DatBuffer {
  std::string name;                ///< "" = top level
  std::string clock;               ///< v7 only ("local", "x86-tsc"...)
  std::uint32_t page_size = 0;     ///< ring-buffer sub-buffer size
  std::vector<DatCpuData> cpus;    ///< CPUs with data, ascending cpu
  bool latency_text = false;       ///< "latency" data (text, not pages)
};

/// A piece of the file's metadata (in the mapping, or decompressed into DatLayout::owned).
struct DatBlob {
  const unsigned char* data = nullptr;
  std::size_t size = 0;
  bool present() const { return data != nullptr; }
};

struct DatLayout {
  int version = 0;                 ///< 6 or 7
  bool big_endian = false;
  int long_size = 0;               ///< 4 or 8 (file header)
  std::uint32_t page_size = 0;
  std::string compression = "none";  ///< v7: "zstd", "zlib", "none"
  std::uint32_t cpus = 0;          ///< CPU count of the file
  std::vector<DatBuffer> buffers;  ///< top level first
  /// Options that make libtracecmd change the timestamps (DATE, OFFSET, TIME_SHIFT, TSC2NSEC):
  /// their ids; a reader that does not apply them must not read the pages itself.
  std::vector<int> timestamp_options;
  // Metadata sections (for a reader that parses only the event formats it needs):
  DatBlob header_page;                                   ///< events/header_page text
  std::vector<std::pair<std::string, DatBlob>> formats;  ///< (system, events/<system>/<event>/format)
  DatBlob kallsyms, printk;
  bool metadata = false;                                 ///< all of the above were found
  std::vector<std::vector<unsigned char>> owned;         ///< decompressed v7 sections
};

/// Parses the layout of the trace.dat held in `data[0..size)`. Throws InputError(place, reason) for a
/// file that is not a well-formed v6/v7 trace.dat (truncated, sizes past the end, bad magic).
DatLayout parse_dat_layout(const unsigned char* data, std::size_t size, const std::string& place);

/// Decompresses one block of trace.dat's own compression ("zstd" or "zlib") into exactly `out_size`
/// bytes. Returns false when the data does not decode to that size. Throws InputError for an
/// algorithm ipilab does not know.
bool dat_decompress(const std::string& algorithm, const unsigned char* in, std::size_t in_size, unsigned char* out,
                    std::size_t out_size, const std::string& place);

}  // namespace ipilab::trace
