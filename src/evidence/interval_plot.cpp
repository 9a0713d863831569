#include "evidence/interval_plot.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "common/file.h"

namespace ipilab::evidence {

namespace fs = std::filesystem;

namespace {

std::string quoted(const std::string& s) { return output::gp_double_quoted_body(s); }

// A variant name as a data column: tabs would split it.
std::string cell(std::string s) {
  std::replace(s.begin(), s.end(), '\t', ' ');
  return s;
}

struct Row {
  std::string label;
  double point = 0, lo = 0, hi = 0;
  bool has = false;
};

// The padded x range over the rows (and 0 when `zero`).
std::string xrange(const std::vector<Row>& rows, bool zero) {
  double lo = zero ? 0 : INFINITY, hi = zero ? 0 : -INFINITY;
  for (const auto& r : rows)
    if (std::isfinite(r.point)) {
      lo = std::min({lo, r.point, r.lo});
      hi = std::max({hi, r.point, r.hi});
    }
  if (!std::isfinite(lo)) return "set autoscale x\n";
  // Room on the right for the bounds written beside each bar.
  const double span = std::max(hi - lo, 1e-9 + 0.02 * std::max(std::fabs(lo), std::fabs(hi)));
  return fmt::format("set xrange [{:.6g}:{:.6g}]\n", lo - 0.08 * span, hi + 0.45 * span);
}

void add_panel(IntervalScript& out, const std::vector<Row>& rows, std::size_t index, const std::string& title, const std::string& xlabel,
               bool zero_line, const std::string& data_file, const char* colour) {
  const std::size_t n = rows.size();
  for (std::size_t i = 0; i < n; ++i) {
    const Row& r = rows[i];
    // y = n - i: the first variant on top.
    out.data += fmt::format("{}\t{:.6g}\t{:.6g}\t{:.6g}\t{}\t{}\n", n - i, r.point, r.has ? r.lo : r.point, r.has ? r.hi : r.point,
                            cell(r.label), r.has ? fmt::format("[{:.4g} - {:.4g}]", r.lo, r.hi) : std::string("no interval"));
  }
  out.data += "\n\n";
  std::string& g = out.script;
  g += fmt::format("set title \"{}\"\nset xlabel \"{}\"\n", quoted(title), quoted(xlabel));
  g += xrange(rows, zero_line);
  g += fmt::format("set yrange [0.4:{}]\n", n + 0.6);
  g += zero_line ? "set arrow 1 from 0, graph 0 to 0, graph 1 nohead dt 2 lc rgb 'black'\n" : "unset arrow 1\n";
  g += fmt::format("plot \"{0}\" index {1} using 2:1:3:4:ytic(5) with xerrorbars pt 7 ps 1.1 lw 2 lc rgb '{2}', \\\n"
                   "     \"{0}\" index {1} using 4:1:(\"  \".strcol(6)) with labels left tc rgb '#333333'\n",
                   quoted(data_file), index, colour);
}

}  // namespace

IntervalScript interval_script(const scenario::ScenarioResult& r, const Propagation& p, const std::string& data_file,
                               const std::string& image_file, bool png) {
  IntervalScript out;
  if (p.variants.empty() || p.variants.front().metrics.empty()) return out;
  const MetricInterval& m0 = p.variants.front().metrics.front();
  std::vector<Row> values, diffs;
  for (const auto& v : p.variants) {
    if (v.metrics.empty()) continue;
    const MetricInterval& m = v.metrics.front();
    values.push_back(Row{v.variant, m.point, m.interval.lo, m.interval.hi, m.has_interval});
  }
  for (const auto& d : p.differences)
    if (d.metric == m0.name) diffs.push_back(Row{d.variant, d.point_pct, d.interval_pct.lo, d.interval_pct.hi, d.has_interval});
  const std::size_t panels = diffs.empty() ? 1 : 2;
  const int height = static_cast<int>(std::max<std::size_t>(320, 140 * panels + 26 * (values.size() + diffs.size())));
  std::string& g = out.script;
  g += png ? fmt::format("set terminal pngcairo size 1000,{} font ',10'\n", height)
           : fmt::format("set terminal svg size 1000,{} font 'sans,10' background rgb 'white'\n", height);
  g += "set termoption noenhanced\n";  // variant names and metric names are plain text
  g += fmt::format("set output \"{}\"\n", quoted(image_file));
  g += "set datafile separator '\\t'\nset grid x\nunset key\nset bars 2\n";
  g += fmt::format("set multiplot layout {},1 title \"{}: 90 % intervals over the costs' ranges ({} draws, Latin hypercube, "
                   "common random numbers)\"\n",
                   panels, quoted(r.name), p.draws);
  add_panel(out, values, 0, fmt::format("{}: point value (dot) and 90 % interval (bar) per variant", m0.name),
            fmt::format("{} ({})", m0.name, m0.unit), false, data_file, "#3b6fb6");
  if (!diffs.empty())
    add_panel(out, diffs, 1,
              fmt::format("difference against '{}' (a bar across the dashed zero line: the change may not matter here)",
                          p.variants.front().variant),
              fmt::format("change of {} in % of '{}'", m0.name, p.variants.front().variant), true, data_file, "#c0392b");
  g += "unset multiplot\n";
  return out;
}

std::vector<fs::path> render_interval_plots(const std::vector<scenario::ScenarioResult>& rs, const std::vector<const Propagation*>& p,
                                            const std::string& requested, output::OutputSet& outs) {
  return scenario::render_each(
      rs, requested, "ipilab-intervals", "intervals", ".tsv",
      [&](std::size_t i) { return p[i] && !p[i]->variants.empty(); },
      [&](std::size_t i, const std::string& data_file, const std::string& image_file, bool png) {
        IntervalScript s = interval_script(rs[i], *p[i], data_file, image_file, png);
        return scenario::ImageText{std::move(s.script), std::move(s.data)};
      },
      outs);
}

}  // namespace ipilab::evidence
