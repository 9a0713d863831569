// The gnuplot script and data of `ipilab run --plot` (what the plot shows: plot.h).
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "scenario/plot.h"
#include "scenario/report.h"
#include "scenario/report_format.h"

namespace ipilab::scenario {

namespace {

using output::gp_quote;
std::string double_quoted_body(std::string_view s) { return output::gp_double_quoted_body(s); }

std::vector<double> quantile_grid() {
  std::vector<double> q;
  for (int i = 0; i <= 198; ++i) q.push_back(i * 0.5);
  for (int i = 1; i <= 9; ++i) q.push_back(99.0 + i * 0.1);
  q.push_back(99.95);
  q.push_back(99.99);
  q.push_back(100.0);
  return q;
}

// Distinct colour and dash per variant (output::series_colour / series_dash), so identical curves
// drawn on top of each other stay visible.
constexpr const char* kShared = "#444444";  // a published mark several variants share

// The height on the CDF of a percentile stat; -1 for the mean (a vertical line).
double stat_height(const std::string& stat) {
  if (stat == "p50") return 50;
  if (stat == "p90") return 90;
  if (stat == "p99") return 99;
  if (stat == "p999") return 99.9;
  if (stat == "min") return 0;
  if (stat == "max") return 100;
  return -1;
}

// A published value as written (850 -> "850", 8043 -> "8,043", 198.5 -> "198.5", 75.7 -> "75.7").
std::string published(double v) {
  if (v == std::floor(v) && std::fabs(v) < 1e15) return report::format_fixed(v, {0});
  return fmt::format("{:.4g}", v);
}

// Ticks 1, 2, 5 x 10^k inside [lo, hi] (a logarithmic axis labels only decades otherwise).
std::string log_ticks(double lo, double hi) {
  std::string out;
  for (double decade = std::pow(10.0, std::floor(std::log10(lo))); decade <= hi; decade *= 10)
    for (double f : {1.0, 2.0, 5.0}) {
      const double v = decade * f;
      if (v < lo || v > hi) continue;
      out += fmt::format("{}{:g}", out.empty() ? "" : ", ", v);
    }
  return out;
}


struct Mark {
  std::string stat;
  double value = 0;  // in the metric's unit
  double tolerance = 0;
  std::vector<std::size_t> variants;
};

}  // namespace

AxisUnit axis_unit(const std::string& unit, double largest) {
  static const char* kTime[] = {"ps", "ns", "us", "ms", "s"};
  const auto* it = std::find_if(std::begin(kTime), std::end(kTime), [&](const char* u) { return unit == u; });
  AxisUnit a{unit, 1};
  if (it == std::end(kTime)) return a;  // cycles and other counts keep their unit
  while (std::fabs(largest) / a.divisor > 10000 && it + 1 != std::end(kTime)) {
    ++it;
    a.divisor *= 1000;
    a.unit = *it;
  }
  return a;
}

namespace {

// What the plot draws: the variants with samples, the axis range and the published marks.
struct Layout {
  std::vector<std::size_t> drawn;
  std::string metric, unit;
  double lo = 0, hi = 0, cut = 0;  // metric unit
  std::vector<Mark> marks;
  std::vector<std::string> elsewhere;  // published figures not on this axis
};

double k_of(const workload::Metric& m) { return m.ps_per_unit > 0 ? m.ps_per_unit : 1.0; }

// Published figures: marks on this axis (widening the range to their tolerance), the others named under it.
void collect_marks(const ScenarioResult& r, Layout& l) {
  const std::vector<std::size_t>& drawn = l.drawn;
  const std::string& metric = l.metric;
  double& lo = l.lo;
  double& hi = l.hi;
  std::vector<Mark>& marks = l.marks;
  std::vector<std::string>& elsewhere = l.elsewhere;
  for (const auto& c : r.checks) {
    if (!c.skipped.empty()) continue;  // a count for another iteration count: not a figure of this run
    const auto vi = static_cast<std::size_t>(
        std::find_if(r.variants.begin(), r.variants.end(), [&](const VariantResult& v) { return v.name == c.expect.variant; }) -
        r.variants.begin());
    if (vi >= r.variants.size()) continue;
    const bool on_axis = !c.counter && c.expect.key == metric;
    const bool has_curve = std::find(drawn.begin(), drawn.end(), vi) != drawn.end();
    if (!on_axis || !has_curve) {
      const std::string what = on_axis ? fmt::format("{} of '{}' (no samples)", c.expect.key, c.expect.variant)
                                       : c.expect.key + (c.counter || c.expect.stat == "mean" ? "" : " " + c.expect.stat);
      if (std::find(elsewhere.begin(), elsewhere.end(), what) == elsewhere.end()) elsewhere.push_back(what);
      continue;
    }
    auto it = std::find_if(marks.begin(), marks.end(), [&](const Mark& mk) {
      return mk.stat == c.expect.stat && mk.value == c.expect.value && mk.tolerance == c.expect.tolerance;
    });
    if (it == marks.end()) marks.push_back({c.expect.stat, c.expect.value, c.expect.tolerance, {vi}});
    else it->variants.push_back(vi);
    if (!drawn.empty()) {
      lo = std::min(lo, c.expect.value * (1 - c.expect.tolerance));
      hi = std::max(hi, c.expect.value * (1 + c.expect.tolerance));
    }
  }
}

// The height where the curve reaches the mean (the model's mean dot on its curve); where the curve is
// vertical at that x (samples of one value), the middle of the jump.
double mean_height(const workload::Metric& m, const std::vector<double>& grid, bool log_x) {
  const double mean_ps = m.summary.mean * k_of(m);
  double y = 100;
  for (std::size_t j = 0; j < grid.size(); ++j) {
    const double x = m.histogram.percentile(grid[j]);
    if (x < mean_ps) continue;
    std::size_t last = j;
    while (last + 1 < grid.size() && m.histogram.percentile(grid[last + 1]) == x) ++last;
    std::size_t first = j;
    while (first > 0 && m.histogram.percentile(grid[first - 1]) == x) --first;
    const double px = j ? m.histogram.percentile(grid[j - 1]) : x;
    // On the segment gnuplot draws from (px, q[j-1]) to (x, q[j]): straight on the screen, so
    // interpolated in log x on a logarithmic axis. Only a mean equal to a repeated value sits on
    // the vertical jump, at its middle.
    const bool on_jump = last > first && x == mean_ps;
    const bool logs = log_x && px > 0 && mean_ps > 0;
    const double t = x == px ? 1.0
                     : logs  ? (std::log(mean_ps) - std::log(px)) / (std::log(x) - std::log(px))
                             : (mean_ps - px) / (x - px);
    if (on_jump) y = (grid[first] + grid[last]) / 2;
    else y = j == 0 ? grid[j] : grid[j - 1] + (grid[j] - grid[j - 1]) * t;
    break;
  }
  return y;
}

// Data: one block per drawn variant, then its mean dot, then one block per mark.
std::string plot_data(const ScenarioResult& r, const Layout& l, const std::vector<double>& grid, double div, bool log_x) {
  std::string data;
  for (std::size_t i : l.drawn) {
    const workload::Metric& m = r.variants[i].result.metrics.front();
    const double k = k_of(m) * div;
    data += fmt::format("# {}\n", r.variants[i].name);
    for (double q : grid) data += fmt::format("{:.6g} {:.6g}\n", m.histogram.percentile(q) / k, q);
    data += "\n\n";
  }
  for (std::size_t i : l.drawn) {
    const workload::Metric& m = r.variants[i].result.metrics.front();
    data += fmt::format("# mean of {}\n{:.6g} {:.6g}\n\n\n", r.variants[i].name, m.summary.mean / div,
                        mean_height(m, grid, log_x));
  }
  for (const auto& mk : l.marks) {
    const double x = mk.value / div, h = stat_height(mk.stat);
    if (h < 0) data += fmt::format("# published mean\n{:.6g} 0\n{:.6g} 100\n\n\n", x, x);
    else
      data += fmt::format("# published {}\n{:.6g} {:.6g} {:.6g} {:.6g}\n\n\n", mk.stat, x, h, x * (1 - mk.tolerance),
                          x * (1 + mk.tolerance));
  }
  return data;
}

// Title and x label (double quotes where \n must break a line: gnuplot expands escapes only there);
// label_lines counts the x label's lines.
std::string plot_labels(const ScenarioResult& r, const Layout& l, const PlotScript& ps, std::size_t& label_lines) {
  const std::vector<std::size_t>& drawn = l.drawn;
  const double div = ps.axis.divisor;
  const double cut = l.cut;
  const std::string& metric = l.metric;
  const std::vector<std::string>& elsewhere = l.elsewhere;
  std::string s;
  std::string title = fmt::format("{}: {}", r.name, r.title);
  std::string sub = fmt::format("seed {}, {} iterations per variant", r.seed, r.iterations);
  if (!ps.no_samples.empty()) {
    std::string names;
    for (const auto& n : ps.no_samples) names += (names.empty() ? "" : ", ") + n;
    sub += fmt::format("; not drawn (no samples): {}", names);
  }
  s += fmt::format("set title \"{}\\n{}\" noenhanced\n", double_quoted_body(title), double_quoted_body(sub));
  std::string xlabel = fmt::format("{} ({})", metric, ps.axis.unit);
  if (!drawn.empty())
    xlabel += fmt::format("\\naxis cut at the largest p99.9, {} {}{}", double_quoted_body(format_number(cut / div)),
                          double_quoted_body(ps.axis.unit), ps.log_x ? "; logarithmic" : "");
  label_lines = drawn.empty() ? 1 : 2;
  if (!elsewhere.empty()) {
    std::string names;
    for (const auto& e : elsewhere) names += (names.empty() ? "" : ", ") + e;
    const std::string text = report::wrap("", "expected values of " + names + ": checked in the table, not on this axis", "", 110);
    for (std::size_t a = 0, b; a < text.size(); a = b + 1) {
      b = text.find('\n', a);
      xlabel += "\\n" + double_quoted_body(text.substr(a, b - a));
      ++label_lines;
    }
  }
  s += fmt::format("set xlabel \"{}\" noenhanced\n", xlabel);
  return s;
}

// Axes and ranges, then the tolerance bands of the published means behind the curves.
std::string plot_axes(const Layout& l, const PlotScript& ps) {
  const double div = ps.axis.divisor, lo = l.lo, hi = l.hi;
  std::string s;
  s += "set ylabel '% of iterations <= x'\n";
  s += "set yrange [0:100]\nset ytics 10\nset grid\nset key below noenhanced\n";
  if (l.drawn.empty()) {
    s += "set xrange [0:1]\nset format x ''\n";
    s += fmt::format("set label 1 {} at graph 0.5, graph 0.5 center noenhanced\n",
                     gp_quote(fmt::format("no variant has a sample of {}: nothing to draw", l.metric)));
  } else if (ps.log_x) {
    s += "set logscale x 10\nset format x '%g'\nset mxtics 10\n";
    s += fmt::format("set xtics ({})\n", log_ticks(lo / div / 1.08, hi / div * 1.08));
    s += fmt::format("set xrange [{:.6g}:{:.6g}]\n", lo / div / 1.08, hi / div * 1.08);
  } else {
    double pad = (hi - lo) * 0.04;
    if (pad <= 0) pad = std::max(std::abs(hi) * 0.01, 1.0);
    s += fmt::format("set xrange [{:.6g}:{:.6g}]\n", (lo - pad) / div, (hi + pad) / div);
  }
  // Tolerance bands of the published means, behind the curves.
  int object = 1;
  for (const auto& mk : l.marks) {
    if (stat_height(mk.stat) >= 0 || mk.tolerance <= 0) continue;
    const char* colour = mk.variants.size() == 1 ? output::series_colour(mk.variants.front()) : kShared;
    s += fmt::format("set object {} rect from {:.6g}, graph 0 to {:.6g}, graph 1 fc rgb '{}' fs transparent solid 0.12 noborder behind\n",
                     object++, mk.value * (1 - mk.tolerance) / div, mk.value * (1 + mk.tolerance) / div, colour);
  }
  return s;
}

// The plot command's items: curves, mean dots, published marks, and the variants not drawn.
std::vector<std::string> plot_items(const ScenarioResult& r, const Layout& l, const PlotScript& ps,
                                    const std::string& data_file) {
  const double div = ps.axis.divisor;
  std::vector<std::string> items = {"NaN notitle"};
  std::size_t index = 0;
  for (std::size_t i : l.drawn)
    items.push_back(fmt::format("{} index {} using 1:2 with lines lw 2 lc rgb '{}' dt {} title {}", gp_quote(data_file), index++,
                                output::series_colour(i), output::series_dash(i), gp_quote(r.variants[i].name)));
  for (std::size_t i : l.drawn)
    items.push_back(fmt::format("{} index {} using 1:2 with points pt 7 ps 0.9 lc rgb '{}' notitle", gp_quote(data_file), index++,
                                output::series_colour(i)));
  if (!l.drawn.empty()) items.push_back("keyentry with points pt 7 ps 0.9 lc rgb '#444444' title 'model mean (dot on each curve)'");
  for (const auto& mk : l.marks) {
    const char* colour = mk.variants.size() == 1 ? output::series_colour(mk.variants.front()) : kShared;
    std::string who;
    for (std::size_t vi : mk.variants) who += (who.empty() ? "" : "; ") + r.variants[vi].name;
    if (who.size() > 60) who = fmt::format("{} variants", mk.variants.size());
    const std::string tol = mk.tolerance > 0 ? " " + report::format_tolerance(mk.tolerance) : "";
    const std::string t = fmt::format("published {} {} {}{}: {}", mk.stat, published(mk.value / div), ps.axis.unit, tol, who);
    if (stat_height(mk.stat) < 0)
      items.push_back(fmt::format("{} index {} using 1:2 with lines lw 2 dt 3 lc rgb '{}' title {}", gp_quote(data_file), index++,
                                  colour, gp_quote(t)));
    else
      items.push_back(fmt::format("{} index {} using 1:2:3:4 with xerrorbars pt 9 ps 1.6 lw 2 lc rgb '{}' title {}",
                                  gp_quote(data_file), index++, colour, gp_quote(t)));
  }
  for (const auto& n : ps.no_samples)
    items.push_back(fmt::format("keyentry with lines lc rgb 'white' title {}", gp_quote(n + ": no samples, not drawn")));
  return items;
}

// Taller when the legend below needs more rows (gnuplot fits as many columns as its widest entry
// allows), so the plot itself keeps its height.
std::size_t legend_rows(const std::vector<std::string>& items) {
  std::size_t entries = 0, widest = 0;
  for (const auto& it : items) {
    const std::size_t at = it.rfind(" title '");
    if (at == std::string::npos) continue;
    ++entries;
    widest = std::max(widest, it.size() - at - 9);
  }
  const std::size_t columns = std::max<std::size_t>(1, 1040 / (widest * 8 + 110));
  return (entries + columns - 1) / columns;
}

}  // namespace

PlotScript plot_script(const ScenarioResult& r, const std::string& data_file, const std::string& image_file, bool png) {
  PlotScript ps;
  const auto grid = quantile_grid();
  Layout l;
  for (std::size_t i = 0; i < r.variants.size(); ++i) {
    if (r.variants[i].result.metrics.front().summary.count > 0) {
      l.drawn.push_back(i);
      ps.drawn.push_back(r.variants[i].name);
    } else {
      ps.no_samples.push_back(r.variants[i].name);
    }
  }
  const workload::Metric* m0 = r.variants.empty() ? nullptr : &r.variants.front().result.metrics.front();
  l.metric = m0 ? m0->name : "";
  l.unit = m0 ? m0->unit : "";

  // The range of the drawn curves (metric unit), cut at the largest p99.9.
  for (std::size_t n = 0; n < l.drawn.size(); ++n) {
    const workload::Metric& m = r.variants[l.drawn[n]].result.metrics.front();
    const double vmin = static_cast<double>(m.histogram.min()) / k_of(m);
    const double vcut = m.histogram.percentile(99.9) / k_of(m);
    l.lo = n ? std::min(l.lo, vmin) : vmin;
    l.hi = n ? std::max(l.hi, vcut) : vcut;
  }
  l.cut = l.hi;
  collect_marks(r, l);

  ps.axis = axis_unit(l.unit, std::max(std::fabs(l.lo), std::fabs(l.hi)));
  ps.log_x = !l.drawn.empty() && l.lo > 0 && l.hi / l.lo >= 20;
  ps.data = plot_data(r, l, grid, ps.axis.divisor, ps.log_x);

  std::size_t label_lines = 0;
  std::string s = plot_labels(r, l, ps, label_lines) + plot_axes(l, ps);
  const std::vector<std::string> items = plot_items(r, l, ps, data_file);
  s += "plot ";
  for (std::size_t i = 0; i < items.size(); ++i) s += (i ? ", \\\n     " : "") + items[i];
  s += "\n";
  const std::size_t rows = legend_rows(items);
  const std::size_t height = std::max<std::size_t>(650, 480 + rows * 19 + label_lines * 17);
  // gnuplot's own bottom margin can let the legend run into a multi-line x label: set it.
  ps.script = fmt::format("set terminal {} size 1100,{} enhanced font 'sans,11' background rgb 'white'\nset output {}\n"
                          "set bmargin {}\n",
                          png ? "pngcairo" : "svg", height, gp_quote(image_file), 3 + label_lines + rows) +
              s;
  return ps;
}

}  // namespace ipilab::scenario
