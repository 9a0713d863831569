#include "trace/input.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <fmt/format.h>
#include <lzma.h>
#include <zlib.h>
#include <zstd.h>

#include "common/enum_names.h"
#include "common/error.h"

namespace ipilab::trace {

std::string_view compression_name(Compression c) {
  using enum Compression;
  static constexpr EnumName<Compression> kNames[] = {{None, "none"}, {Gzip, "gzip"}, {Zstd, "zstd"}, {Xz, "xz"}};
  return name_of(kNames, c, "none");
}

Compression detect_compression(std::string_view head) {
  auto starts = [&](std::string_view m) { return head.substr(0, m.size()) == m; };
  if (starts("\x1f\x8b")) return Compression::Gzip;
  if (starts("\x28\xb5\x2f\xfd")) return Compression::Zstd;
  if (starts(std::string_view("\xfd" "7zXZ\0", 6))) return Compression::Xz;
  return Compression::None;
}

namespace {

class FdSource : public ByteSource {
 public:
  FdSource(int fd, std::string place, bool owned) : fd_(fd), place_(std::move(place)), owned_(owned) {}
  ~FdSource() override {
    if (owned_ && fd_ >= 0) ::close(fd_);
  }
  FdSource(const FdSource&) = delete;
  FdSource& operator=(const FdSource&) = delete;
  std::size_t read(char* buf, std::size_t n) override {
    for (;;) {
      const ssize_t r = ::read(fd_, buf, n);
      if (r >= 0) return static_cast<std::size_t>(r);
      if (errno == EINTR) continue;
      throw InputError(place_, fmt::format("read error: {}", std::strerror(errno)));
    }
  }

 private:
  int fd_;
  std::string place_;
  bool owned_;
};

class MemorySource : public ByteSource {
 public:
  explicit MemorySource(std::string d) : data_(std::move(d)) {}
  std::size_t read(char* buf, std::size_t n) override {
    const std::size_t k = std::min(n, data_.size() - pos_);
    std::memcpy(buf, data_.data() + pos_, k);
    pos_ += k;
    return k;
  }

 private:
  std::string data_;
  std::size_t pos_ = 0;
};

// Common input side of the three decompressors: the compressed head first, then `in`.
class CompressedInput {
 public:
  CompressedInput(std::string head, std::unique_ptr<ByteSource> in) : head_(std::move(head)), in_(std::move(in)) {
    buf_.resize(256 * 1024);
  }
  /// Next compressed block (empty at the end).
  std::string_view next() {
    if (!head_done_) {
      head_done_ = true;
      if (!head_.empty()) {
        consumed_before_ = offset_;
        offset_ += head_.size();
        return head_;
      }
    }
    const std::size_t n = in_ ? in_->read(buf_.data(), buf_.size()) : 0;
    consumed_before_ = offset_;
    offset_ += n;
    return {buf_.data(), n};
  }
  /// Offset in the compressed data of the start of the block returned last.
  std::uint64_t block_offset() const { return consumed_before_; }

 private:
  std::string head_;
  std::unique_ptr<ByteSource> in_;
  std::vector<char> buf_;
  bool head_done_ = false;
  std::uint64_t offset_ = 0, consumed_before_ = 0;
};

class GzipSource : public ByteSource {
 public:
  GzipSource(std::string head, std::unique_ptr<ByteSource> in, std::string place)
      : in_(std::move(head), std::move(in)), place_(std::move(place)) {
    std::memset(&z_, 0, sizeof z_);
    if (inflateInit2(&z_, 15 + 16) != Z_OK) throw std::runtime_error("zlib: inflateInit2 failed");
  }
  ~GzipSource() override { inflateEnd(&z_); }
  GzipSource(const GzipSource&) = delete;
  GzipSource& operator=(const GzipSource&) = delete;
  std::size_t read(char* buf, std::size_t n) override {
    if (done_) return 0;
    z_.next_out = reinterpret_cast<Bytef*>(buf);
    z_.avail_out = static_cast<uInt>(std::min<std::size_t>(n, 1u << 30));
    while (z_.avail_out > 0) {
      if (z_.avail_in == 0) {
        block_ = in_.next();
        if (block_.empty()) {
          if (!member_started_) {  // clean end after a complete member
            done_ = true;
            break;
          }
          throw InputError(place_, "gzip data ends early (truncated file?)");
        }
        z_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(block_.data()));
        z_.avail_in = static_cast<uInt>(block_.size());
      }
      member_started_ = true;
      const int r = inflate(&z_, Z_NO_FLUSH);
      if (r == Z_STREAM_END) {
        member_started_ = false;
        inflateReset(&z_);  // a further member may follow (gzip -d reads them all)
        continue;
      }
      if (r != Z_OK && r != Z_BUF_ERROR)
        throw InputError(place_, fmt::format("gzip data corrupt near byte {} of the compressed input: {}",
                                             in_.block_offset() + (block_.size() - z_.avail_in),
                                             z_.msg ? z_.msg : "inflate error"));
    }
    return n - z_.avail_out;
  }

 private:
  CompressedInput in_;
  std::string place_;
  z_stream z_;
  std::string_view block_;
  bool member_started_ = false, done_ = false;
};

class ZstdSource : public ByteSource {
 public:
  ZstdSource(std::string head, std::unique_ptr<ByteSource> in, std::string place)
      : in_(std::move(head), std::move(in)), place_(std::move(place)), ds_(ZSTD_createDStream()) {
    if (!ds_) throw std::runtime_error("zstd: cannot create a decompression stream");
    ZSTD_initDStream(ds_);
  }
  ~ZstdSource() override { ZSTD_freeDStream(ds_); }
  ZstdSource(const ZstdSource&) = delete;
  ZstdSource& operator=(const ZstdSource&) = delete;
  std::size_t read(char* buf, std::size_t n) override {
    ZSTD_outBuffer out{buf, n, 0};
    while (out.pos < out.size && !done_) {
      if (inb_.pos == inb_.size) {
        block_ = in_.next();
        if (block_.empty()) {
          if (last_ret_ != 0) throw InputError(place_, "zstd data ends early (truncated file?)");
          done_ = true;
          break;
        }
        inb_ = {block_.data(), block_.size(), 0};
      }
      const std::size_t r = ZSTD_decompressStream(ds_, &out, &inb_);
      if (ZSTD_isError(r))
        throw InputError(place_, fmt::format("zstd data corrupt near byte {} of the compressed input: {}",
                                             in_.block_offset() + inb_.pos, ZSTD_getErrorName(r)));
      last_ret_ = r;  // 0 = a frame ended here
    }
    return out.pos;
  }

 private:
  CompressedInput in_;
  std::string place_;
  ZSTD_DStream* ds_;
  ZSTD_inBuffer inb_{nullptr, 0, 0};
  std::string_view block_;
  std::size_t last_ret_ = 1;
  bool done_ = false;
};

class XzSource : public ByteSource {
 public:
  XzSource(std::string head, std::unique_ptr<ByteSource> in, std::string place)
      : in_(std::move(head), std::move(in)), place_(std::move(place)) {
    if (lzma_stream_decoder(&s_, UINT64_MAX, LZMA_CONCATENATED) != LZMA_OK)
      throw std::runtime_error("liblzma: cannot create a decoder");
  }
  ~XzSource() override { lzma_end(&s_); }
  XzSource(const XzSource&) = delete;
  XzSource& operator=(const XzSource&) = delete;
  std::size_t read(char* buf, std::size_t n) override {
    if (done_) return 0;
    s_.next_out = reinterpret_cast<std::uint8_t*>(buf);
    s_.avail_out = n;
    while (s_.avail_out > 0) {
      lzma_action action = LZMA_RUN;
      if (s_.avail_in == 0 && !eof_) {
        block_ = in_.next();
        if (block_.empty()) eof_ = true;
        s_.next_in = reinterpret_cast<const std::uint8_t*>(block_.data());
        s_.avail_in = block_.size();
      }
      if (eof_) action = LZMA_FINISH;
      const lzma_ret r = lzma_code(&s_, action);
      if (r == LZMA_STREAM_END) {
        done_ = true;
        break;
      }
      if (r == LZMA_BUF_ERROR && eof_) throw InputError(place_, "xz data ends early (truncated file?)");
      if (r != LZMA_OK)
        throw InputError(place_, fmt::format("xz data corrupt near byte {} of the compressed input (liblzma error {})",
                                             in_.block_offset() + (block_.size() - s_.avail_in), static_cast<int>(r)));
    }
    return n - s_.avail_out;
  }

 private:
  CompressedInput in_;
  std::string place_;
  lzma_stream s_ = LZMA_STREAM_INIT;
  std::string_view block_;
  bool eof_ = false, done_ = false;
};

std::size_t fill(ByteSource& src, std::string& out, std::size_t want) {
  std::size_t have = out.size();
  out.resize(want);
  while (have < want) {
    const std::size_t n = src.read(out.data() + have, want - have);
    if (n == 0) break;
    have += n;
  }
  out.resize(have);
  return have;
}

}  // namespace

std::unique_ptr<ByteSource> memory_source(std::string data) { return std::make_unique<MemorySource>(std::move(data)); }

std::unique_ptr<ByteSource> make_decompressor(Compression c, std::string head, std::unique_ptr<ByteSource> in,
                                              std::string place) {
  switch (c) {
    case Compression::Gzip: return std::make_unique<GzipSource>(std::move(head), std::move(in), std::move(place));
    case Compression::Zstd: return std::make_unique<ZstdSource>(std::move(head), std::move(in), std::move(place));
    case Compression::Xz: return std::make_unique<XzSource>(std::move(head), std::move(in), std::move(place));
    case Compression::None: break;
  }
  throw std::logic_error("make_decompressor: no compression");
}

std::size_t Input::read(char* buf, std::size_t n) {
  if (head_pos_ < head.size()) {
    const std::size_t k = std::min(n, head.size() - head_pos_);
    std::memcpy(buf, head.data() + head_pos_, k);
    head_pos_ += k;
    return k;
  }
  return rest ? rest->read(buf, n) : 0;
}

Input open_input(const std::filesystem::path& path) {
  Input in;
  std::unique_ptr<ByteSource> raw;
  if (path == "-") {
    in.place = "<stdin>";
    raw = std::make_unique<FdSource>(STDIN_FILENO, in.place, false);
  } else {
    in.place = path.string();
    in.path = path;
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) throw InputError(in.place, "no such file");
    if (std::filesystem::is_directory(path, ec)) throw InputError(in.place, "is a directory, not a trace file");
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw InputError(in.place, fmt::format("cannot open: {}", std::strerror(errno)));
    struct stat st {};
    in.regular_file = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
    raw = std::make_unique<FdSource>(fd, in.place, true);
  }
  std::string head;
  fill(*raw, head, 64);
  in.compression = detect_compression(head);
  if (in.compression == Compression::None) {
    fill(*raw, head, Input::kHeadBytes);
    in.head = std::move(head);
    in.rest = std::move(raw);
    return in;
  }
  in.regular_file = false;
  in.rest = make_decompressor(in.compression, std::move(head), std::move(raw), in.place);
  fill(*in.rest, in.head, Input::kHeadBytes);
  return in;
}

int spool_to_temp_file(Input& input) {
  const char* tmpdir = std::getenv("TMPDIR");
  std::string tmpl = std::string(tmpdir && *tmpdir ? tmpdir : "/tmp") + "/ipilab-trace.XXXXXX";
  const int fd = ::mkstemp(tmpl.data());
  if (fd < 0) throw InputError(input.place, fmt::format("cannot create a temporary file in {}: {}", tmpl, std::strerror(errno)));
  ::unlink(tmpl.c_str());
  std::vector<char> buf(1 << 20);
  try {
    for (;;) {
      const std::size_t n = input.read(buf.data(), buf.size());
      if (n == 0) break;
      std::size_t off = 0;
      while (off < n) {
        const ssize_t w = ::write(fd, buf.data() + off, n - off);
        if (w < 0) {
          if (errno == EINTR) continue;
          throw InputError(input.place, fmt::format("cannot copy the trace into a temporary file: {}", std::strerror(errno)));
        }
        off += static_cast<std::size_t>(w);
      }
    }
  } catch (...) {
    ::close(fd);
    throw;
  }
  ::lseek(fd, 0, SEEK_SET);
  return fd;
}

}  // namespace ipilab::trace
