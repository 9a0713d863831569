#include "scenario/plot.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>

#include "common/error.h"
#include "common/file.h"
#include "scenario/report.h"

extern char** environ;

namespace ipilab::scenario {

namespace fs = std::filesystem;

namespace {

std::string find_on_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::string p = path ? path : "/usr/bin:/bin";
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

using TempDir = PlotTempDir;

void run_gnuplot(const fs::path& script, const fs::path& err_file) {
  const std::string exe = find_on_path("gnuplot");
  if (exe.empty()) require_gnuplot();
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 2, err_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  std::string arg0 = "gnuplot", arg1 = script.string();
  char* argv[] = {arg0.data(), arg1.data(), nullptr};
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, exe.c_str(), &fa, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) throw std::runtime_error(fmt::format("cannot start gnuplot: {}", std::strerror(rc)));
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::string msg;
    try {
      msg = read_text_file(err_file);
    } catch (...) {
    }
    while (!msg.empty() && (msg.back() == '\n' || msg.back() == ' ')) msg.pop_back();
    throw std::runtime_error(fmt::format("gnuplot failed: {}", msg.empty() ? "no message" : msg));
  }
}

}  // namespace

PlotTempDir::PlotTempDir() {
  std::string templ = (fs::temp_directory_path() / "ipilab-plot-XXXXXX").string();
  if (!::mkdtemp(templ.data())) throw std::runtime_error(fmt::format("cannot create a temporary folder: {}", std::strerror(errno)));
  path = templ;
}

PlotTempDir::~PlotTempDir() {
  std::error_code ec;
  fs::remove_all(path, ec);
}

fs::path temp_beside(const fs::path& final) {
  std::string templ = final.string() + ".tmp-XXXXXX";
  const int fd = ::mkstemp(templ.data());
  if (fd < 0) throw InputError("--plot", fmt::format("cannot write beside {}: {}", final.string(), std::strerror(errno)));
  ::close(fd);
  return templ;
}

void run_gnuplot_script(const fs::path& script, const fs::path& err_file) { run_gnuplot(script, err_file); }

void check_plot_path(const fs::path& requested) {
  const std::string ext = requested.extension().string();
  if (ext != ".svg" && ext != ".png")
    throw InputError("--plot", fmt::format("'{}' must end in .svg or .png (the format follows the name)", requested.string()));
  const fs::path dir = requested.parent_path().empty() ? fs::path(".") : requested.parent_path();
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    throw InputError("--plot", fmt::format("folder '{}' does not exist", dir.string()));
}

void require_gnuplot() {
  if (find_on_path("gnuplot").empty())
    throw UnavailableError("--plot needs gnuplot, which is not on PATH (Debian/Ubuntu: apt-get install gnuplot-nox)");
}

std::vector<fs::path> plot_paths(const std::vector<ScenarioResult>& rs, const fs::path& requested) {
  if (rs.size() <= 1) return {requested};
  std::vector<fs::path> out;
  for (const auto& r : rs) {
    fs::path p = requested;
    std::string safe = r.name;  // a file-name-safe form of the scenario name
    for (char& c : safe)
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') c = '_';
    p.replace_filename(fmt::format("{}-{}{}", requested.stem().string(), safe, requested.extension().string()));
    out.push_back(p);
  }
  return out;
}

std::vector<RenderedPlot> render_plots(const std::vector<ScenarioResult>& rs, const fs::path& requested) {
  check_plot_path(requested);
  require_gnuplot();
  const bool png = requested.extension() == ".png";
  const auto finals = plot_paths(rs, requested);
  std::vector<RenderedPlot> done;
  try {
    TempDir tmp;
    for (std::size_t i = 0; i < rs.size(); ++i) {
      const fs::path data = tmp.path / fmt::format("data-{}.txt", i);
      const fs::path script = tmp.path / fmt::format("plot-{}.gp", i);
      RenderedPlot rp{temp_beside(finals[i]), finals[i]};
      done.push_back(rp);
      const PlotScript ps = plot_script(rs[i], data.string(), rp.temp.string(), png);
      write_file_atomically(data, ps.data);
      write_file_atomically(script, ps.script);
      run_gnuplot(script, tmp.path / "gnuplot.err");
    }
  } catch (...) {
    discard_plots(done);
    throw;
  }
  return done;
}

void commit_plots(const std::vector<RenderedPlot>& plots) {
  for (const auto& p : plots) {
    std::error_code ec;
    fs::permissions(p.temp, fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read | fs::perms::others_read,
                    ec);
    fs::rename(p.temp, p.final, ec);
    if (ec) throw InputError("--plot", fmt::format("cannot write {}: {}", p.final.string(), ec.message()));
  }
}

void discard_plots(const std::vector<RenderedPlot>& plots) noexcept {
  for (const auto& p : plots) {
    std::error_code ec;
    fs::remove(p.temp, ec);
  }
}

}  // namespace ipilab::scenario
