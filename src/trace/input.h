// ipilab/trace/input.h — where a trace's bytes come from: a file or standard input ("-"), plain or
// compressed with gzip, zstd or xz, recognised by the magic bytes of the content (never by the name).
//
// Decompression uses the reference library of each format (Debian: zlib1g-dev, libzstd-dev,
// liblzma-dev), streamed: memory does not grow with the size of the input. Concatenated gzip
// members, zstd frames and xz streams are read one after the other, as gzip -d / zstd -d / xz -d do.
// A compressed stream that is corrupt or ends early is an InputError naming the input and the byte
// offset (in the compressed data) where decoding failed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

namespace ipilab::trace {

/// A stream of (decompressed) bytes.
class ByteSource {
 public:
  virtual ~ByteSource() = default;
  /// Reads up to `n` bytes into `buf`; returns 0 at the end. Throws InputError on a read or
  /// decompression error.
  virtual std::size_t read(char* buf, std::size_t n) = 0;
};

enum class Compression : std::uint8_t { None, Gzip, Zstd, Xz };

/// "none", "gzip", "zstd", "xz".
std::string_view compression_name(Compression c);

/// The compression a content starts with (gzip 1f 8b, zstd 28 b5 2f fd, xz fd '7zXZ' 00), or None.
Compression detect_compression(std::string_view head);

/// An opened input: its name for messages, its compression, and its decompressed bytes, of which
/// the first up to `kHeadBytes` are already in `head` (the stream continues after them).
struct Input {
  static constexpr std::size_t kHeadBytes = 64 * 1024;
  std::string place;                  ///< the path, or "<stdin>"
  Compression compression = Compression::None;
  bool regular_file = false;          ///< an uncompressed regular file: `path` can be opened again
  std::filesystem::path path;         ///< the file (empty for stdin)
  std::string head;                   ///< first bytes of the (decompressed) content
  std::unique_ptr<ByteSource> rest;   ///< the bytes after `head`

  /// Reads from `head` and then from `rest`.
  std::size_t read(char* buf, std::size_t n);

 private:
  std::size_t head_pos_ = 0;
};

/// Opens `path` ("-" = standard input). Throws InputError for a missing file, a directory, an
/// unreadable file, or a compressed stream whose first block does not decode.
Input open_input(const std::filesystem::path& path);

/// Wraps a compressed stream `in` (its own first bytes in `head`) into a decompressing source.
/// `place` names the input in errors. Exposed for the fuzzer and the tests.
std::unique_ptr<ByteSource> make_decompressor(Compression c, std::string head, std::unique_ptr<ByteSource> in,
                                              std::string place);

/// A source over a memory buffer (tests, fuzzers).
std::unique_ptr<ByteSource> memory_source(std::string data);

/// Copies the rest of `input` (head included) into an unnamed temporary file under $TMPDIR (or
/// /tmp) and returns an open descriptor on it, positioned at 0: for trace.dat content that arrives
/// through a pipe or compressed, since libtracecmd needs a seekable file. The file is deleted when
/// the descriptor is closed. Throws InputError when the copy fails (disk full...).
int spool_to_temp_file(Input& input);

}  // namespace ipilab::trace
