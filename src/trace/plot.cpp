#include "trace/plot.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>

#include <fmt/format.h>

#include "common/error.h"
#include "common/output.h"

namespace ipilab::trace {

namespace {

constexpr IpiKind kKinds[] = {IpiKind::Reschedule, IpiKind::CallFunction, IpiKind::CallFunctionSingle,
                              IpiKind::IrqWork,    IpiKind::TimerBroadcast, IpiKind::Other, IpiKind::Unknown};

std::string quote(const std::filesystem::path& p) { return output::gp_quote(p.string()); }

void write_data(const IpiAnalysis& a, output::TempDir& dir) {
  for (IpiKind k : kKinds) {
    const auto& h = a.by_kind()[static_cast<std::size_t>(k)].latency;
    if (!h.count()) continue;
    std::ofstream f(dir.file(fmt::format("cdf-{}.dat", kind_name(k))));
    // The CDF from the histogram's quantiles (0.5 % steps, and the extremes), each within the
    // histogram's stated error.
    f << fmt::format("{} {:.6f}\n", std::max<std::int64_t>(h.min(), 1), 0.0);
    for (int q = 1; q <= 200; ++q)
      f << fmt::format("{:.1f} {:.6f}\n", std::max(h.percentile(q * 0.5), 1.0), q / 200.0);
  }
  std::ofstream m(dir.file("pairs.dat"));
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

void plot_trace(const IpiAnalysis& a, const std::filesystem::path& target, output::OutputSet& outs) {
  const output::ImageFormat format = output::image_format_of(target, "--plot");
  output::AtomicFile& image = outs.add(target, "--plot");
  output::require_gnuplot("--plot");
  output::TempDir tmp("ipilab-trace-plot");
  write_data(a, tmp);
  output::render(image, format, tmp, "--plot", [&](const std::string& image_file) {
    return plot_script(a, tmp.path(), image_file, format == output::ImageFormat::Svg);
  });
}

void plot_trace(const IpiAnalysis& a, const std::filesystem::path& target) {
  output::OutputSet outs;
  plot_trace(a, target, outs);
  outs.commit_all();
}

}  // namespace ipilab::trace
