#include "common/file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "common/data_lookup.h"
#include "common/error.h"

namespace ipilab {

std::string read_text_file(const std::filesystem::path& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) throw InputError(path.string(), "no such file");
  if (std::filesystem::is_directory(path, ec)) throw InputError(path.string(), "is a directory, not a file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path.string(), fmt::format("cannot open: {}", std::strerror(errno)));
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) throw InputError(path.string(), "read error");
  return ss.str();
}

namespace {

// A device or a pipe (/dev/null, /dev/stdout, a FIFO) is written straight through: renaming a
// temporary file over it would replace the device node itself (as root, /dev/null would become a
// regular file for every process on the machine).
bool write_through_if_special(const std::filesystem::path& path, std::string_view content) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || S_ISREG(st.st_mode)) return false;
  if (S_ISDIR(st.st_mode)) throw InputError(path.string(), "is a folder, not a file");
  if (!S_ISCHR(st.st_mode) && !S_ISFIFO(st.st_mode))
    throw InputError(path.string(), "exists and is not a regular file, a character device or a pipe");
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) throw InputError(path.string(), fmt::format("cannot open: {}", std::strerror(errno)));
  const char* p = content.data();
  std::size_t left = content.size();
  while (left > 0) {
    const ssize_t n = ::write(fd, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      ::close(fd);
      throw InputError(path.string(), fmt::format("cannot write: {}", std::strerror(err)));
    }
    p += n;
    left -= static_cast<std::size_t>(n);
  }
  ::close(fd);
  return true;
}

}  // namespace

void write_file_atomically(const std::filesystem::path& path, std::string_view content) {
  if (write_through_if_special(path, content)) return;
  const std::filesystem::path dir = path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec))
    throw InputError(path.string(), fmt::format("folder '{}' does not exist", dir.string()));
  std::string tmpl = (dir / ("." + path.filename().string() + ".XXXXXX")).string();
  const int fd = ::mkstemp(tmpl.data());
  if (fd < 0) throw InputError(path.string(), fmt::format("cannot create a file there: {}", std::strerror(errno)));
  const char* p = content.data();
  std::size_t left = content.size();
  bool ok = true;
  while (left > 0) {
    const ssize_t n = ::write(fd, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      ok = false;
      break;
    }
    p += n;
    left -= static_cast<std::size_t>(n);
  }
  const int saved = errno;
  if (ok && ::fsync(fd) != 0) ok = false;
  ::fchmod(fd, 0644);
  ::close(fd);
  if (!ok || ::rename(tmpl.c_str(), path.c_str()) != 0) {
    const int err = ok ? errno : saved;
    ::unlink(tmpl.c_str());
    throw InputError(path.string(), fmt::format("cannot write: {}", std::strerror(err)));
  }
}

std::filesystem::path data_dir() { return locate_data().dir; }

}  // namespace ipilab
