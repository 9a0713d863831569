// The temporary folder, the gnuplot runner, the image checks and gnuplot quoting of output.h.
#include <fcntl.h>
#include <spawn.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <stdexcept>

#include <fmt/format.h>

#include "common/error.h"
#include "common/output.h"

extern char** environ;

namespace ipilab::output {

namespace fs = std::filesystem;

TempDir::TempDir(std::string_view prefix) {
  std::string tmpl = (fs::temp_directory_path() / fmt::format("{}-XXXXXX", prefix)).string();
  if (!::mkdtemp(tmpl.data()))
    throw std::runtime_error(fmt::format("cannot create a temporary folder in {}: {}",
                                         fs::temp_directory_path().string(), std::strerror(errno)));
  dir_ = TrackedPath(tmpl, true);
}

TempDir::~TempDir() {
  files_.clear();  // the files first, then the folder (dir_ is destroyed after this body)
  std::error_code ec;
  fs::remove_all(dir_.path(), ec);  // anything a program put there untracked
}

fs::path TempDir::file(const std::string& name) {
  const fs::path p = dir_.path() / name;
  for (const TrackedPath& t : files_)
    if (t.path() == p) return p;
  files_.emplace_back(p);
  return p;
}

fs::path TempDir::write(const std::string& name, std::string_view content) {
  const fs::path p = file(name);
  std::ofstream f(p, std::ios::binary | std::ios::trunc);
  f.write(content.data(), static_cast<std::streamsize>(content.size()));
  f.close();
  if (!f) throw std::runtime_error(fmt::format("cannot write the temporary file {}", p.string()));
  return p;
}

// ---------------------------------------------------------------------------------------------

const char* extension(ImageFormat f) {
  static constexpr const char* kExtensions[] = {".png", ".svg", ".pdf"};  // in the order of ImageFormat
  return kExtensions[static_cast<std::size_t>(f)];
}

ImageFormat image_format_of(const fs::path& path, std::string_view option, std::vector<ImageFormat> allowed) {
  std::string ext = path.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return std::tolower(c); });
  std::string names;
  for (std::size_t i = 0; i < allowed.size(); ++i) {
    if (ext == extension(allowed[i])) return allowed[i];
    names += fmt::format("{}{}", i == 0 ? "" : i + 1 == allowed.size() ? " or " : ", ", extension(allowed[i]));
  }
  throw InputError(std::string(option),
                   fmt::format("'{}' must end in {} (the image format follows the name)", path.string(), names));
}

namespace {

std::string find_on_path(const std::string& name) {
  const char* env = std::getenv("PATH");
  const std::string p = env ? env : "/usr/bin:/bin";
  std::size_t pos = 0;
  while (pos <= p.size()) {
    const std::size_t colon = std::min(p.find(':', pos), p.size());
    std::string dir = p.substr(pos, colon - pos);
    if (dir.empty()) dir = ".";
    const std::string cand = dir + "/" + name;
    if (::access(cand.c_str(), X_OK) == 0) return cand;
    pos = colon + 1;
  }
  return {};
}

std::string read_small(const fs::path& p, std::size_t limit) {
  std::ifstream f(p, std::ios::binary);
  std::string s(limit, '\0');
  f.read(s.data(), static_cast<std::streamsize>(limit));
  s.resize(static_cast<std::size_t>(std::max<std::streamsize>(f.gcount(), 0)));
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  return s;
}

}  // namespace

bool gnuplot_available() { return !find_on_path("gnuplot").empty(); }

void require_gnuplot(std::string_view what) {
  if (!gnuplot_available())
    throw UnavailableError(fmt::format("{} needs gnuplot, which is not on PATH (Debian/Ubuntu: apt-get install gnuplot-nox)",
                                       what));
}

void run_gnuplot(TempDir& dir, std::string_view script) {
  const std::string exe = find_on_path("gnuplot");
  if (exe.empty()) require_gnuplot();
  const fs::path script_file = dir.write("plot.gp", script);
  const fs::path err_file = dir.file("gnuplot.err");
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 2, err_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  std::string arg0 = "gnuplot", arg1 = script_file.string();
  char* argv[] = {arg0.data(), arg1.data(), nullptr};
  pid_t pid = 0;
  const int rc = ::posix_spawn(&pid, exe.c_str(), &fa, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) throw UnavailableError(fmt::format("cannot start gnuplot ({}): {}", exe, std::strerror(rc)));
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return;
  const std::string msg = read_small(err_file, 2000);
  if (WIFSIGNALED(status))
    throw std::runtime_error(fmt::format("gnuplot was killed by signal {} ({}){}", WTERMSIG(status),
                                         strsignal(WTERMSIG(status)), msg.empty() ? "" : ": " + msg));
  throw std::runtime_error(fmt::format("gnuplot failed (exit {}): {}", WEXITSTATUS(status),
                                       msg.empty() ? "no message" : msg));
}

void check_image(const fs::path& path, ImageFormat f, const std::string& place) {
  std::ifstream in(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string where = place.empty() ? path.string() : place;
  auto bad = [&](const char* what) {
    // gnuplot (cairo) does not report a failed write; a device without free blocks says why.
    struct statvfs vfs {};
    const bool full = ::statvfs(path.parent_path().empty() ? "." : path.parent_path().c_str(), &vfs) == 0 &&
                      vfs.f_bavail * vfs.f_frsize < 64 * 1024;
    if (full)
      throw InputError(where, fmt::format("cannot write: {} (gnuplot left the image incomplete: {})",
                                          std::strerror(ENOSPC), what));
    throw InputError(where, fmt::format("gnuplot wrote an incomplete image ({})", what));
  };
  if (bytes.empty()) bad("0 bytes");
  switch (f) {
    case ImageFormat::Png: {
      // PNG (ISO/IEC 15948, 5.2 and 11.2.5): an 8-byte signature, and the last chunk is IEND with
      // length 0 and CRC AE 42 60 82.
      static constexpr unsigned char kSig[] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
      static constexpr unsigned char kIend[] = {0, 0, 0, 0, 'I', 'E', 'N', 'D', 0xae, 0x42, 0x60, 0x82};
      if (bytes.size() < sizeof kSig + sizeof kIend || std::memcmp(bytes.data(), kSig, sizeof kSig) != 0)
        bad("no PNG signature");
      if (std::memcmp(bytes.data() + bytes.size() - sizeof kIend, kIend, sizeof kIend) != 0) bad("no PNG IEND chunk");
      return;
    }
    case ImageFormat::Svg: {
      std::size_t end = bytes.find_last_not_of(" \t\r\n");
      if (end == std::string::npos || end < 5 || bytes.compare(end - 5, 6, "</svg>") != 0) bad("no SVG end tag </svg>");
      return;
    }
    case ImageFormat::Pdf: {
      // PDF (ISO 32000-1, 7.5.5): the file ends with %%EOF.
      const std::size_t tail = bytes.size() > 64 ? bytes.size() - 64 : 0;
      if (bytes.compare(0, 5, "%PDF-") != 0 || bytes.find("%%EOF", tail) == std::string::npos) bad("no PDF %%EOF");
      return;
    }
  }
}

// ---------------------------------------------------------------------------------------------

std::string gp_quote(std::string_view s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') out += "''";
    else if (c == '\n') out += ' ';
    else out += c;
  }
  return out + "'";
}

std::string gp_double_quoted_body(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c == '\n' ? ' ' : c;
  }
  return out;
}

}  // namespace ipilab::output
