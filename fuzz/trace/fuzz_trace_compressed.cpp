// Fuzzes compressed input: the content is given a gzip, zstd or xz magic (by its first byte) and
// read through the decompressor and the text reader, as `ipilab trace FILE.gz` does. Corrupt or
// truncated streams must be InputError — no crash, no hang, no sanitizer report.
#include <cstddef>
#include <cstdint>
#include <string>

#include "common/error.h"
#include "trace/analysis.h"
#include "trace/input.h"
#include "trace/reader.h"
#include "trace/text_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string bytes(reinterpret_cast<const char*>(data), size);
  using ipilab::trace::Compression;
  Compression c = ipilab::trace::detect_compression(bytes);
  if (c == Compression::None) {
    static const char* const kMagic[] = {"\x1f\x8b", "\x28\xb5\x2f\xfd", "\xfd\x37\x7a\x58\x5a"};
    const int pick = size ? data[0] % 3 : 0;
    bytes = std::string(kMagic[pick], pick == 2 ? 6 : (pick == 1 ? 4 : 2)) + bytes;
    c = ipilab::trace::detect_compression(bytes);
  }
  try {
    ipilab::trace::Input in;
    in.place = "fuzz";
    in.compression = c;
    in.rest = ipilab::trace::make_decompressor(c, std::string(), ipilab::trace::memory_source(bytes), "fuzz");
    ipilab::trace::TraceAnalysis a;
    ipilab::trace::ReadInfo info;
    ipilab::trace::read_text_input(in, a, info);
    a.finish(info, "fuzz");
  } catch (const ipilab::InputError&) {
  }
  return 0;
}
