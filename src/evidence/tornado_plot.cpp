#include "evidence/tornado_plot.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "common/file.h"

namespace ipilab::evidence {

namespace fs = std::filesystem;

namespace {

// A label safe inside a gnuplot double-quoted string.
std::string quoted(const std::string& s) { return output::gp_double_quoted_body(s); }

// The main metric's 90 % interval of `variant` in `p`, if it has one.
const Interval* band_of(const Propagation* p, const std::string& variant) {
  if (!p) return nullptr;
  for (const auto& v : p->variants)
    if (v.variant == variant && !v.metrics.empty() && v.metrics.front().has_interval) return &v.metrics.front().interval;
  return nullptr;
}

}  // namespace

TornadoScript tornado_script(const scenario::ScenarioResult& r, const Sensitivity& s, const std::string& data_file,
                             const std::string& image_file, bool png, const Propagation* p) {
  TornadoScript out;
  const std::size_t panels = std::max<std::size_t>(1, s.variants.size());
  std::size_t rows_total = 0;
  for (const auto& v : s.variants) rows_total += std::min(v.swings.size(), kTornadoRows) + 2;
  const int height = static_cast<int>(std::max<std::size_t>(300, 60 + 22 * rows_total));
  std::string& g = out.script;
  g += png ? fmt::format("set terminal pngcairo size 1000,{} font ',10'\n", height)
           : fmt::format("set terminal svg size 1000,{} font 'sans,10' background rgb 'white'\n", height);
  g += "set termoption noenhanced\n";  // cost keys and variant names are plain text (no _ subscripts)
  g += fmt::format("set output \"{}\"\n", quoted(image_file));
  g += "set datafile separator '\\t'\nset style fill solid 0.8 noborder\nset grid x\nunset key\n";
  g += fmt::format("set multiplot layout {},1 title \"{}: what decides the main metric (one cost at a time over its range)\"\n", panels,
                   quoted(r.name));
  for (std::size_t b = 0; b < s.variants.size(); ++b) {
    const auto& v = s.variants[b];
    const std::size_t n = std::min(v.swings.size(), kTornadoRows);
    out.data += fmt::format("# {}\n", v.variant);
    for (std::size_t i = 0; i < n; ++i) {
      const Swing& w = v.swings[i];
      // y = n - i: the largest swing on top.
      out.data += fmt::format("{}\t{:.6g}\t{:.6g}\t{:.6g}\t{} ({})\n", n - i, v.point, w.low, w.high, w.key, cost::class_name(w.cls));
    }
    if (n == 0) out.data += fmt::format("0\t{:.6g}\t{:.6g}\t{:.6g}\tnone\n", v.point, v.point, v.point);
    out.data += "\n\n";
    g += fmt::format("set title \"variant '{}': {} ({}), mean {:.6g}\"\n", quoted(v.variant), quoted(v.metric), quoted(v.unit), v.point);
    const Interval* band = band_of(p, v.variant);
    g += fmt::format("set xlabel \"{} ({}); blue: the cost at its range's low end, red: at its high end{}\"\n", quoted(v.metric), quoted(v.unit),
                     band ? "; grey band: 90 % interval" : "");
    double xmin = band ? std::min(v.point, band->lo) : v.point, xmax = band ? std::max(v.point, band->hi) : v.point;
    for (std::size_t i = 0; i < n; ++i) {
      xmin = std::min({xmin, v.swings[i].low, v.swings[i].high});
      xmax = std::max({xmax, v.swings[i].low, v.swings[i].high});
    }
    const double pad = std::max(0.06 * (xmax - xmin), 1e-9 + 0.01 * std::fabs(v.point));
    g += fmt::format("set xrange [{:.6g}:{:.6g}]\n", xmin - pad, xmax + pad);
    g += band ? fmt::format("set object 1 rect from {:.6g}, graph 0 to {:.6g}, graph 1 behind fc rgb '#d9d9d9' fs solid 0.6 noborder\n",
                            band->lo, band->hi)
              : "unset object 1\n";
    g += fmt::format("set yrange [0.3:{}]\nset arrow 1 from {:.6g}, graph 0 to {:.6g}, graph 1 nohead dt 2 lc rgb 'black'\n", n + 0.7,
                     v.point, v.point);
    g += fmt::format("plot \"{0}\" index {1} using (($2+$3)/2):1:(($2<$3)?$2:$3):(($2<$3)?$3:$2):($1-0.35):($1+0.35):ytic(5) "
                     "with boxxyerror lc rgb '#3b6fb6', \\\n"
                     "     \"{0}\" index {1} using (($2+$4)/2):1:(($2<$4)?$2:$4):(($2<$4)?$4:$2):($1-0.35):($1+0.35) "
                     "with boxxyerror lc rgb '#c0392b'\n",
                     quoted(data_file), b);
  }
  g += "unset multiplot\n";
  return out;
}

std::vector<fs::path> render_tornados(const std::vector<scenario::ScenarioResult>& rs,
                                      const std::vector<const Sensitivity*>& s, const std::string& requested,
                                      output::OutputSet& outs, const std::vector<const Propagation*>& p) {
  return scenario::render_each(
      rs, requested, "ipilab-tornado", "tornado", ".tsv",
      [&](std::size_t i) { return s[i] && !s[i]->variants.empty(); },
      [&](std::size_t i, const std::string& data_file, const std::string& image_file, bool png) {
        TornadoScript ts = tornado_script(rs[i], *s[i], data_file, image_file, png, i < p.size() ? p[i] : nullptr);
        return scenario::ImageText{std::move(ts.script), std::move(ts.data)};
      },
      outs);
}

}  // namespace ipilab::evidence
