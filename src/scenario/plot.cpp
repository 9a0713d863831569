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

// A gnuplot single-quoted string ('' stands for one quote; no backslash escapes).
std::string gp_quote(std::string_view s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') out += "''";
    else if (c == '\n') out += ' ';
    else out += c;
  }
  return out + "'";
}

// The inside of a gnuplot double-quoted string (backslash escapes for quotes and backslashes).
std::string double_quoted_body(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c == '\n' ? ' ' : c;
  }
  return out;
}

std::vector<double> quantile_grid() {
  std::vector<double> q;
  for (int i = 0; i <= 198; ++i) q.push_back(i * 0.5);
  for (int i = 1; i <= 9; ++i) q.push_back(99.0 + i * 0.1);
  q.push_back(99.95);
  q.push_back(99.99);
  q.push_back(100.0);
  return q;
}

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

struct TempDir {
  fs::path path;
  TempDir() {
    std::string templ = (fs::temp_directory_path() / "ipilab-plot-XXXXXX").string();
    if (!::mkdtemp(templ.data())) throw std::runtime_error(fmt::format("cannot create a temporary folder: {}", std::strerror(errno)));
    path = templ;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
};

fs::path temp_beside(const fs::path& final) {
  std::string templ = final.string() + ".tmp-XXXXXX";
  const int fd = ::mkstemp(templ.data());
  if (fd < 0) throw InputError("--plot", fmt::format("cannot write beside {}: {}", final.string(), std::strerror(errno)));
  ::close(fd);
  return templ;
}

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

PlotScript plot_script(const ScenarioResult& r, const std::string& data_file, const std::string& image_file, bool png) {
  PlotScript ps;
  const auto grid = quantile_grid();
  double lo = 0, hi = 0;
  bool first = true;
  std::string unit, metric;
  for (const auto& v : r.variants) {
    const workload::Metric& m = v.result.metrics.front();
    const double k = m.ps_per_unit > 0 ? m.ps_per_unit : 1.0;
    const double vmin = static_cast<double>(m.histogram.min()) / k;
    const double vcut = m.histogram.percentile(99.9) / k;
    lo = first ? vmin : std::min(lo, vmin);
    hi = first ? vcut : std::max(hi, vcut);
    if (first) {
      unit = m.unit;
      metric = m.name;
    }
    first = false;
    ps.data += fmt::format("# {}\n", v.name);
    for (double q : grid) ps.data += fmt::format("{:.6g} {:.6g}\n", m.histogram.percentile(q) / k, q);
    ps.data += "\n\n";
  }
  double pad = (hi - lo) * 0.04;
  if (pad <= 0) pad = std::max(std::abs(hi) * 0.01, 1.0);
  std::string s;
  if (png) s += "set terminal pngcairo size 1100,650 enhanced font 'sans,11' background rgb 'white'\n";
  else s += "set terminal svg size 1100,650 enhanced font 'sans,11' background rgb 'white'\n";
  s += fmt::format("set output {}\n", gp_quote(image_file));
  // Double quotes here so that \n breaks the title line (gnuplot expands escapes only there).
  s += fmt::format("set title \"{}\\nseed {}, {} iterations per variant\" noenhanced\n",
                   double_quoted_body(fmt::format("{}: {}", r.name, r.title)), r.seed, r.iterations);
  s += fmt::format("set xlabel {} noenhanced\n", gp_quote(fmt::format("{} ({})", metric, unit)));
  s += "set ylabel '% of iterations <= x'\n";
  s += "set yrange [0:100]\nset ytics 10\nset grid\nset key below noenhanced\n";
  s += fmt::format("set xrange [{:.6g}:{:.6g}]\n", lo - pad, hi + pad);
  s += fmt::format("set label 1 {} at graph 0.01, graph 0.97 font 'sans,9' noenhanced\n",
                   gp_quote(fmt::format("x axis cut at the largest p99.9 ({} {})", format_number(hi), unit)));
  s += "plot ";
  for (std::size_t i = 0; i < r.variants.size(); ++i) {
    if (i) s += ", \\\n     ";
    // Distinct colour and dash per variant, so identical curves drawn on top of each other stay visible.
    static constexpr const char* kColours[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e",
                                               "#9467bd", "#8c564b", "#e377c2", "#17becf"};
    s += fmt::format("{} index {} using 1:2 with lines lw 2 lc rgb '{}' dt {} title {}", gp_quote(data_file), i,
                     kColours[i % 8], i % 5 + 1, gp_quote(r.variants[i].name));
  }
  s += "\n";
  ps.script = std::move(s);
  return ps;
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
