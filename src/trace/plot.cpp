#include "trace/plot.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>

#include <fmt/format.h>

#include "common/error.h"

extern char** environ;

namespace ipilab::trace {

namespace {

constexpr IpiKind kKinds[] = {IpiKind::Reschedule, IpiKind::CallFunction, IpiKind::CallFunctionSingle,
                              IpiKind::IrqWork,    IpiKind::TimerBroadcast, IpiKind::Other, IpiKind::Unknown};

std::string quote(const std::filesystem::path& p) {
  std::string s = "'";
  for (char c : p.string()) {
    if (c == '\'') s += "''";
    else s += c;
  }
  return s + "'";
}

struct TempDir {
  std::filesystem::path path;
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "ipilab-plot.XXXXXX").string();
    if (!::mkdtemp(tmpl.data())) throw std::runtime_error(fmt::format("mkdtemp: {}", std::strerror(errno)));
    path = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
};

void write_data(const IpiAnalysis& a, const std::filesystem::path& dir) {
  for (IpiKind k : kKinds) {
    const auto& h = a.by_kind()[static_cast<std::size_t>(k)].latency;
    if (!h.count()) continue;
    std::ofstream f(dir / fmt::format("cdf-{}.dat", kind_name(k)));
    // The CDF from the histogram's quantiles (0.5 % steps, and the extremes), each within the
    // histogram's stated error.
    f << fmt::format("{} {:.6f}\n", std::max<std::int64_t>(h.min(), 1), 0.0);
    for (int q = 1; q <= 200; ++q)
      f << fmt::format("{:.1f} {:.6f}\n", std::max(h.percentile(q * 0.5), 1.0), q / 200.0);
  }
  std::ofstream m(dir / "pairs.dat");
  const std::uint32_t n = std::max<std::uint32_t>(a.cpus(), 1);
  for (std::uint32_t s = 0; s < n; ++s) {
    for (std::uint32_t d = 0; d < n; ++d) {
      auto it = a.pairs().find({s, d});
      m << s << ' ' << d << ' ' << (it == a.pairs().end() ? 0 : it->second.sends) << '\n';
    }
    m << '\n';
  }
}

}  // namespace

std::string plot_script(const IpiAnalysis& a, const std::filesystem::path& dir, const std::filesystem::path& image,
                        bool svg) {
  std::string s;
  auto out = std::back_inserter(s);
  fmt::format_to(out, "set terminal {} size 1400,600 font 'sans,11'\n",
                 svg ? "svg dynamic enhanced background rgb 'white'" : "pngcairo enhanced");
  fmt::format_to(out, "set output {}\n", quote(image));
  fmt::format_to(out, "set multiplot layout 1,2 title 'IPI send -> handler entry ({} IPIs sent, {} matched)'\n",
                 a.ipis_sent(), a.matched());
  fmt::format_to(out, "set logscale x\nset grid\nset key bottom right\nset xlabel 'latency (ns)'\n"
                      "set ylabel 'fraction of IPIs <= latency'\nset yrange [0:1]\nset title 'Latency CDF per kind'\n");
  std::string plots;
  for (IpiKind k : kKinds) {
    const auto& h = a.by_kind()[static_cast<std::size_t>(k)].latency;
    if (!h.count()) continue;
    if (!plots.empty()) plots += ", ";
    plots += fmt::format("{} using 1:2 with steps lw 2 title '{} (n={}, p50={} ns)'",
                         quote(dir / fmt::format("cdf-{}.dat", kind_name(k))), kind_name(k), h.count(),
                         static_cast<std::int64_t>(h.percentile(50)));
  }
  if (plots.empty()) fmt::format_to(out, "set label 1 'no matched IPI' at graph 0.35,0.5\nplot [1:10] NaN notitle\n");
  else fmt::format_to(out, "plot {}\n", plots);
  const std::uint32_t n = std::max<std::uint32_t>(a.cpus(), 1);
  fmt::format_to(out,
                 "unset logscale x\nunset label 1\nset grid front\nset key off\nset title 'IPIs sent per source x "
                 "target CPU'\nset xlabel 'source CPU'\nset ylabel 'target CPU'\nset autoscale y\n"
                 "set xrange [-0.5:{0}-0.5]\nset yrange [-0.5:{0}-0.5]\nset cblabel 'IPIs'\nset palette "
                 "defined (0 'white', 1 '#fdd49e', 2 '#ef6548', 3 '#7f0000')\n",
                 n);
  if (n <= 16) fmt::format_to(out, "set xtics 1\nset ytics 1\n");
  fmt::format_to(out, "plot {} using 1:2:3 with image\nunset multiplot\n", quote(dir / "pairs.dat"));
  return s;
}

void plot_trace(const IpiAnalysis& a, const std::filesystem::path& output) {
  const std::string ext = output.extension().string();
  if (ext != ".svg" && ext != ".png")
    throw InputError("--plot", fmt::format("'{}': the file name must end in .svg or .png", output.string()));
  const std::filesystem::path folder = output.has_parent_path() ? output.parent_path() : ".";
  std::error_code ec;
  if (!std::filesystem::is_directory(folder, ec))
    throw InputError("--plot", fmt::format("folder '{}' does not exist", folder.string()));
  TempDir tmp;
  write_data(a, tmp.path);
  std::string image_tmpl = (folder / ("." + output.filename().string() + ".XXXXXX")).string();
  const int fd = ::mkstemp(image_tmpl.data());
  if (fd < 0) throw InputError("--plot", fmt::format("cannot create a file in '{}': {}", folder.string(), std::strerror(errno)));
  ::fchmod(fd, 0644);
  ::close(fd);
  const std::filesystem::path image_tmp = image_tmpl;
  struct Cleanup {
    std::filesystem::path p;
    bool keep = false;
    ~Cleanup() {
      std::error_code e;
      if (!keep) std::filesystem::remove(p, e);
    }
  } cleanup{image_tmp};
  {
    std::ofstream script(tmp.path / "plot.gp");
    script << plot_script(a, tmp.path, image_tmp, ext == ".svg");
  }
  const std::string script_path = (tmp.path / "plot.gp").string();
  const std::string err_path = (tmp.path / "stderr.txt").string();
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 2, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  char arg0[] = "gnuplot";
  std::string arg1 = script_path;
  char* argv[] = {arg0, arg1.data(), nullptr};
  pid_t pid = 0;
  const int rc = ::posix_spawnp(&pid, "gnuplot", &fa, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0)
    throw UnavailableError(fmt::format("cannot run gnuplot ({}): install it (Debian: apt-get install gnuplot-nox)",
                                       std::strerror(rc)));
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::ifstream e(err_path);
    std::string msg((std::istreambuf_iterator<char>(e)), std::istreambuf_iterator<char>());
    if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
      throw UnavailableError("gnuplot not found: install it (Debian: apt-get install gnuplot-nox)");
    throw std::runtime_error(fmt::format("gnuplot failed: {}", msg.substr(0, 2000)));
  }
  if (std::filesystem::file_size(image_tmp, ec) == 0 || ec) throw std::runtime_error("gnuplot wrote an empty image");
  if (::rename(image_tmp.c_str(), output.c_str()) != 0)
    throw InputError("--plot", fmt::format("cannot write '{}': {}", output.string(), std::strerror(errno)));
  cleanup.keep = true;
}

}  // namespace ipilab::trace
