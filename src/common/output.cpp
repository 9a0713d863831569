// Output files, the checks before any work, and checked standard output (contract: output.h).
#include "common/output.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <streambuf>

#include <fmt/format.h>

#include "common/error.h"

namespace ipilab {

namespace output {

namespace fs = std::filesystem;

namespace {

constexpr std::size_t kBufferBytes = 1 << 16;

bool device_or_pipe(const fs::path& p, struct stat* out = nullptr) {
  struct stat st {};
  if (::stat(p.c_str(), &st) != 0) return false;
  if (out) *out = st;
  return S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode);
}

/// write(2) until done; 0 or the errno of the failure.
int write_all(int fd, const char* p, std::size_t n) {
  while (n > 0) {
    const ssize_t w = ::write(fd, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    p += w;
    n -= static_cast<std::size_t>(w);
  }
  return 0;
}

fs::path folder_of(const fs::path& p) { return p.has_parent_path() ? p.parent_path() : fs::path("."); }

std::string place(const std::string& option, const fs::path& target) {
  return option.empty() ? target.string() : fmt::format("{} '{}'", option, target.string());
}

}  // namespace

// A streambuf that hands its bytes to AtomicFile::write().
class AtomicFile::Buf : public std::streambuf {
 public:
  explicit Buf(AtomicFile& f) : f_(f) {}

 protected:
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    if (f_.error_) return 0;
    f_.pending_.append(s, static_cast<std::size_t>(n));
    if (f_.pending_.size() >= kBufferBytes) f_.flush_buffer();
    return f_.error_ ? 0 : n;
  }
  int_type overflow(int_type c) override {
    if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
    const char ch = traits_type::to_char_type(c);
    return xsputn(&ch, 1) == 1 ? c : traits_type::eof();
  }

 private:
  AtomicFile& f_;
};

AtomicFile::AtomicFile(fs::path target, std::string option) : target_(std::move(target)), option_(std::move(option)) {
  struct stat st {};
  if (device_or_pipe(target_, &st)) {
    fd_ = ::open(target_.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd_ < 0) fail("cannot open", errno);
    return;
  }
  std::error_code ec;
  if (fs::is_directory(target_, ec)) throw InputError(place(option_, target_), "is a folder, not a file");
  if (fs::exists(target_, ec) && !fs::is_regular_file(target_, ec))
    throw InputError(place(option_, target_), "exists and is not a regular file, a character device or a pipe");
  const fs::path dir = folder_of(target_);
  if (!fs::is_directory(dir, ec))
    throw InputError(place(option_, target_), fmt::format("folder '{}' does not exist", dir.string()));
  std::string tmpl = (dir / ("." + target_.filename().string() + ".XXXXXX")).string();
  fd_ = ::mkostemp(tmpl.data(), O_CLOEXEC);
  if (fd_ < 0)
    throw InputError(place(option_, target_), fmt::format("cannot create a file in '{}': {}", dir.string(),
                                                          std::strerror(errno)));
  temp_ = TrackedPath(tmpl);
  ::fchmod(fd_, 0644);
}

AtomicFile::~AtomicFile() {
  if (fd_ >= 0) ::close(fd_);
  // temp_ removes the temporary file unless commit() released it.
}

void AtomicFile::fail(const std::string& what, int err) {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  temp_.remove();
  throw InputError(place(option_, target_), fmt::format("{}: {}", what, std::strerror(err)));
}

void AtomicFile::flush_buffer() {
  if (error_ || pending_.empty()) return;
  error_ = write_all(fd_, pending_.data(), pending_.size());
  pending_.clear();
}

void AtomicFile::write(std::string_view bytes) {
  if (prepared_) throw std::logic_error("AtomicFile::write after prepare");
  pending_.append(bytes);
  if (pending_.size() >= kBufferBytes) flush_buffer();
  if (error_) fail("cannot write", error_);
}

std::ostream& AtomicFile::stream() {
  if (!os_) {
    buf_ = std::make_unique<Buf>(*this);
    os_ = std::make_unique<std::ostream>(buf_.get());
  }
  return *os_;
}

void AtomicFile::prepare() {
  if (prepared_) return;
  flush_buffer();
  if (error_) fail("cannot write", error_);
  if (fd_ < 0) throw std::logic_error("AtomicFile::prepare without a file");
  if (!straight_through() && ::fsync(fd_) != 0) fail("cannot write", errno);
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) {
    const int err = errno;
    temp_.remove();
    throw InputError(place(option_, target_), fmt::format("cannot write: {}", std::strerror(err)));
  }
  prepared_ = true;
}

void AtomicFile::commit() {
  if (committed_) return;
  prepare();
  if (!straight_through()) {
    if (::rename(temp_.path().c_str(), target_.c_str()) != 0) {
      const int err = errno;
      temp_.remove();
      throw InputError(place(option_, target_), fmt::format("cannot write: {}", std::strerror(err)));
    }
    temp_.release();
  }
  committed_ = true;
}

void write_file(const fs::path& path, std::string_view content, const std::string& option) {
  AtomicFile f(path, option);
  f.write(content);
  f.commit();
}

AtomicFile& OutputSet::add(const fs::path& target, const std::string& option) {
  files_.push_back(std::make_unique<AtomicFile>(target, option));
  return *files_.back();
}

void OutputSet::write(const fs::path& target, const std::string& option, std::string_view content) {
  add(target, option).write(content);
}

void OutputSet::prepare_all() {
  for (auto& f : files_) f->prepare();
}

void OutputSet::commit_all() {
  // Every byte first (write errors surface here, before any rename), then the renames.
  for (auto& f : files_) f->prepare();
  for (auto& f : files_) f->commit();
  files_.clear();
}

// ---------------------------------------------------------------------------------------------

namespace {

fs::path identity(const std::string& path) {
  std::error_code ec;
  fs::path p = fs::weakly_canonical(fs::absolute(path, ec), ec);
  return ec ? fs::path(path) : p;
}

bool same_file(const std::string& a, const std::string& b) {
  struct stat sa {}, sb {};
  if (::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0) return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
  return identity(a) == identity(b);
}

void check_one(const OutputRequest& o) {
  if (o.path == "-") {
    if (!o.allow_stdout) throw InputError(o.option, "'-' (standard output) is not possible here: name a file");
    return;
  }
  const fs::path p(o.path);
  if (device_or_pipe(p)) return;  // written straight through
  std::error_code ec;
  if (fs::is_directory(p, ec)) throw InputError(o.option, fmt::format("'{}' is a folder, not a file", o.path));
  if (p.filename().empty() || p.filename() == "." || p.filename() == "..")
    throw InputError(o.option, fmt::format("'{}' names no file", o.path));
  const fs::path dir = folder_of(p);
  if (!fs::is_directory(dir, ec))
    throw InputError(o.option, fmt::format("'{}': folder '{}' does not exist", o.path, dir.string()));
  if (::access(dir.c_str(), W_OK | X_OK) != 0)
    throw InputError(o.option, fmt::format("'{}': folder '{}' is not writable: {}", o.path, dir.string(),
                                           std::strerror(errno)));
}

}  // namespace

void check_outputs(const std::vector<OutputRequest>& outputs, const std::vector<InputFile>& inputs) {
  std::vector<const OutputRequest*> seen;
  for (const OutputRequest& o : outputs) {
    if (o.path.empty()) continue;
    check_one(o);
    if (o.path == "-") {
      for (const OutputRequest* s : seen)
        if (s->path == "-")
          throw InputError(o.option, fmt::format("standard output ('-') is also the output of {}: give one of them a file",
                                                 s->option));
    } else {
      const bool dev = device_or_pipe(o.path);
      for (const OutputRequest* s : seen)
        if (!dev && s->path != "-" && same_file(s->path, o.path))
          throw InputError(o.option, fmt::format("'{}' is also the file of {}: give each output its own file", o.path,
                                                 s->option));
      for (const InputFile& in : inputs)
        if (!dev && !in.path.empty() && same_file(in.path, o.path))
          throw InputError(o.option, fmt::format("'{}' is also the input {}: writing it would destroy what is read",
                                                 o.path, in.option));
    }
    seen.push_back(&o);
  }
}

// ---------------------------------------------------------------------------------------------
// Standard output: C's stdout is replaced by a stream whose writes go to fd 1 through one function
// that keeps the first error (glibc's own stream sets only an error flag, and errno is lost by the
// time anyone looks); std::cout is pointed at the same stream so the two stay in order.

namespace {

int g_stdout_error = 0;

// fopencookie(3): the write function returns the bytes it took, 0 on error, never a negative value
// (glibc's fwrite adds a -1 to its counts as SIZE_MAX: a large fwrite then runs off its buffer).
ssize_t stdout_write(void*, const char* buf, size_t n) {
  if (g_stdout_error) return 0;
  if (const int err = write_all(1, buf, n)) {
    g_stdout_error = err;
    errno = err;
    return 0;
  }
  return static_cast<ssize_t>(n);
}

class StdoutBuf : public std::streambuf {
 protected:
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    if (n <= 0) return 0;  // an empty string_view may carry a null data(): fwrite's pointer must not be null
    return static_cast<std::streamsize>(std::fwrite(s, 1, static_cast<std::size_t>(n), stdout));
  }
  int_type overflow(int_type c) override {
    if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
    return std::fputc(traits_type::to_char_type(c), stdout) == EOF ? traits_type::eof() : c;
  }
  int sync() override { return std::fflush(stdout) == 0 ? 0 : -1; }
};

}  // namespace

void install_checked_stdout() {
  static bool done = false;
  if (done) return;
  done = true;
  cookie_io_functions_t io{};
  io.write = stdout_write;
  FILE* f = ::fopencookie(nullptr, "w", io);
  if (!f) return;  // keep the plain stream: still written, only the error reason is less precise
  std::fflush(stdout);
  ::setvbuf(f, nullptr, ::isatty(1) ? _IOLBF : _IOFBF, BUFSIZ);
  stdout = f;
  // Never destroyed: std::ios_base::Init's destructor flushes std::cout at exit, after every
  // function-local static is gone, so a static buffer object would be flushed after its death.
  static StdoutBuf* const buf = new StdoutBuf;
  std::cout.rdbuf(buf);
}

std::string finish_stdout() {
  std::cout.flush();
  const bool flushed = std::fflush(stdout) == 0;
  if (g_stdout_error) return fmt::format("cannot write standard output: {}", std::strerror(g_stdout_error));
  if (!flushed || std::ferror(stdout) || !std::cout)
    return fmt::format("cannot write standard output: {}", errno ? std::strerror(errno) : "write error");
  return {};
}

std::string csv_field(std::string_view s) {
  if (s.find_first_of(",\"\n\r") == std::string_view::npos) return std::string(s);
  std::string o = "\"";
  for (char c : s) {
    if (c == '"') o += '"';
    o += c;
  }
  return o + "\"";
}

}  // namespace output

void write_file_atomically(const std::filesystem::path& path, std::string_view content) {
  output::write_file(path, content);
}

}  // namespace ipilab
