#include "sweep/plot.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string_view>

#include <fmt/format.h>

#include "common/error.h"
#include "common/file.h"
#include "scenario/report.h"

namespace ipilab::sweep {

namespace fs = std::filesystem;

namespace {

using output::gp_quote;
std::string dq_body(std::string_view s) { return output::gp_double_quoted_body(s); }

std::string safe_name(std::string s) {
  for (char& c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') c = '_';
  return s;
}

// "name (unit)", naming the axis once: a unit equal to the name is left out, and a unit that starts
// with the name ("vCPUs; target = last vCPU" on the axis vCPUs) keeps only what it adds
// ("vCPUs (target = last vCPU)").
std::string axis_label(const Axis& a) {
  std::string_view unit = a.unit;
  if (unit.size() >= a.name.size() && std::equal(a.name.begin(), a.name.end(), unit.begin(), [](char x, char y) {
        return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
      })) {
    const std::string_view rest = unit.substr(a.name.size());
    if (rest.empty() || !std::isalnum(static_cast<unsigned char>(rest.front()))) {
      unit = rest;
      unit.remove_prefix(std::min(unit.size(), unit.find_first_not_of(" \t;,:-")));
    }
  }
  return unit.empty() ? a.name : fmt::format("{} ({})", a.name, unit);
}

std::string value_label(const SweepRun& r, const std::string& what) {
  std::string metric = "main metric", unit;
  for (const auto& res : r.results)
    if (res.status == PointResult::Status::Ok && !res.metrics.empty()) {
      metric = res.metrics.front().name;
      unit = res.metrics.front().unit;
      break;
    }
  if (what == "change_pct") {
    std::string base;
    for (const auto& [a, v] : r.spec->baseline)
      base += fmt::format("{}{}={}", base.empty() ? "" : ", ", r.spec->axes[a].name, r.spec->axes[a].values[v].label);
    if (r.spec->baseline.empty() && !r.points.empty()) base = "point 0";
    return fmt::format("{} mean: change vs {} (%)", metric, base);
  }
  if (what.rfind("counter.", 0) == 0) return fmt::format("counter {} (per run)", what.substr(8));
  return fmt::format("{} {} ({})", metric, what, unit);
}

// The value index each axis is held at (x and second get SIZE_MAX: drawn).
std::vector<std::size_t> fixed_values(const SweepRun& r, const PlotSpec& p) {
  const Spec& s = *r.spec;
  std::vector<std::size_t> fix(s.axes.size(), 0);
  for (std::size_t a = 0; a < s.axes.size(); ++a) {
    if (p.value == "change_pct")
      for (const auto& [ba, bv] : s.baseline)
        if (ba == a && s.axes[a].values.size() > 1) fix[a] = bv == 0 ? 1 : 0;
  }
  for (const auto& [a, v] : p.where) fix[a] = v;
  fix[p.x] = SIZE_MAX;
  if (p.second) fix[*p.second] = SIZE_MAX;
  return fix;
}

std::size_t point_at(const Spec& s, const std::vector<std::size_t>& v) {
  std::size_t i = 0;
  for (std::size_t a = 0; a < s.axes.size(); ++a) i = i * s.axes[a].values.size() + v[a];
  return i;
}

std::string fixed_text(const Spec& s, const std::vector<std::size_t>& fix) {
  std::string t;
  for (std::size_t a = 0; a < s.axes.size(); ++a)
    if (fix[a] != SIZE_MAX && s.axes[a].values.size() > 1)
      t += fmt::format("{}{}={}", t.empty() ? "" : ", ", s.axes[a].name, s.axes[a].values[fix[a]].label);
  return t;
}

// A point without a value is NaN, which gnuplot reads as undefined: a gap in a line, a blank heat-map
// cell. (Not `set datafile missing 'NaN'`: with it gnuplot 5.4 drops those entries from `with image`
// and misplaces the cells after them.)
std::string number(std::optional<double> v) { return v ? fmt::format("{:.9g}", *v) : "NaN"; }

std::string header(const SweepRun& r, const PlotSpec& p, const std::string& image_file, bool png,
                   const std::vector<std::size_t>& fix, int width, int height) {
  const Spec& s = *r.spec;
  std::string h;
  if (png) h += fmt::format("set terminal pngcairo size {},{} enhanced font 'sans,11' background rgb 'white'\n", width, height);
  else h += fmt::format("set terminal svg size {},{} enhanced font 'sans,11' background rgb 'white'\n", width, height);
  h += fmt::format("set output {}\n", gp_quote(image_file));
  const std::string title = p.title.empty() ? fmt::format("{}: {}", s.name, s.title) : p.title;
  const std::string fixed = fixed_text(s, fix);
  std::string sub = fmt::format("{} iterations per point, {}", r.iterations,
                                s.per_point_seeds ? "per-point seeds" : fmt::format("seed {}", r.seed));
  if (!fixed.empty()) sub = fixed + "; " + sub;
  h += fmt::format("set title \"{}\\n{}\" noenhanced\n", dq_body(title), dq_body(sub));
  return h;
}

std::string categorical_tics(const char* which, const Axis& a) {
  std::string t = fmt::format("set {} (", which);
  for (std::size_t j = 0; j < a.values.size(); ++j)
    t += fmt::format("{}{} {}", j ? ", " : "", gp_quote(a.values[j].label), j);
  return t + ")\n";
}

// The legend's note for a series without a value at `missing` (indexes of x values): " (no value
// from 64 on: IPIs lost, no iteration completed)" for a tail, " (no value at 3, 5: failed)" otherwise.
std::string gap_note(const Axis& xa, const std::vector<std::size_t>& missing, const std::string& reason) {
  if (missing.empty() || missing.size() == xa.values.size()) return {};
  const bool tail = missing.back() == xa.values.size() - 1 && missing.back() - missing.front() + 1 == missing.size();
  if (tail) return fmt::format(" (no value from {} on: {})", xa.values[missing.front()].label, reason);
  std::string at;
  for (std::size_t k = 0; k < missing.size() && k < 4; ++k) at += (k ? ", " : "") + xa.values[missing[k]].label;
  if (missing.size() > 4) at += fmt::format(" and {} more", missing.size() - 4);
  return fmt::format(" (no value at {}: {})", at, reason);
}

SweepPlotScript line_script(const SweepRun& r, const PlotSpec& p, const std::string& data_file, const std::string& image_file,
                            bool png) {
  const Spec& s = *r.spec;
  const Axis& xa = s.axes[p.x];
  const std::vector<std::size_t> fix = fixed_values(r, p);
  const bool numeric = p.x_scale != PlotSpec::Scale::Category && xa.numeric();
  const std::size_t nlines = p.second ? s.axes[*p.second].values.size() : 1;
  SweepPlotScript ps;
  bool any = false;
  std::vector<std::vector<std::optional<double>>> ys(nlines);
  std::vector<std::string> gaps(nlines);  // why a series has no value at some x, for its legend
  for (std::size_t l = 0; l < nlines; ++l) {
    std::vector<std::size_t> v = fix;
    if (p.second) v[*p.second] = l;
    ps.data += fmt::format("# {}\n", p.second ? s.axes[*p.second].values[l].label : "all");
    std::vector<std::size_t> missing;
    std::string reason;
    for (std::size_t j = 0; j < xa.values.size(); ++j) {
      v[p.x] = j;
      const std::size_t i = point_at(s, v);
      const auto y = r.value(i, p.value);
      ys[l].push_back(y);
      any = any || y.has_value();
      if (!y) {
        missing.push_back(j);
        const auto st = r.results[i].status;
        const auto lost = r.results[i].counters.find("lost");
        const bool lost_all = lost != r.results[i].counters.end() && lost->second > 0;
        const std::string why = st != PointResult::Status::Ok ? status_name(st)
                                : lost_all ? "IPIs lost, no iteration completed"
                                           : "no sample of the metric";
        reason = reason.empty() || reason == why ? why : "see the table";
      }
      ps.data += fmt::format("{} {}\n", numeric ? fmt::format("{:.9g}", *xa.values[j].number) : fmt::format("{}", j), number(y));
    }
    ps.data += "\n\n";
    gaps[l] = gap_note(xa, missing, reason);
  }
  ps.empty = !any;
  std::string sc = header(r, p, image_file, png, fix, 1000, 620);
  sc += fmt::format("set xlabel {} noenhanced\n", gp_quote(axis_label(xa)));
  sc += fmt::format("set ylabel {} noenhanced\n", gp_quote(value_label(r, p.value)));
  // The legend below the plot in at most 2 columns: gnuplot sizes columns by the widest entry and
  // cuts the last one at the canvas edge when it fits more.
  sc += "set grid\nset key below noenhanced maxcols 2\n";
  if (numeric) {
    double lo = *xa.values.front().number, hi = lo;
    for (const auto& v : xa.values) {
      lo = std::min(lo, *v.number);
      hi = std::max(hi, *v.number);
    }
    if (p.x_scale == PlotSpec::Scale::Log) {
      sc += "set logscale x 2\n";
      sc += fmt::format("set xrange [{:.9g}:{:.9g}]\n", lo / 1.15, hi * 1.15);
    } else {
      const double pad = hi > lo ? (hi - lo) * 0.04 : std::max(std::fabs(hi) * 0.05, 1.0);
      sc += fmt::format("set xrange [{:.9g}:{:.9g}]\n", lo - pad, hi + pad);
    }
    if (xa.values.size() <= 16) {
      std::string t = "set xtics (";
      for (std::size_t j = 0; j < xa.values.size(); ++j)
        t += fmt::format("{}{} {:.9g}", j ? ", " : "", gp_quote(xa.values[j].label), *xa.values[j].number);
      sc += t + ")\n";
    }
  } else {
    sc += fmt::format("set xrange [-0.3:{}]\n", static_cast<double>(xa.values.size()) - 0.7);
    sc += categorical_tics("xtics", xa);
    if (xa.values.size() > 6) sc += "set xtics rotate by -30\n";
  }
  if (p.value == "change_pct") sc += "set xzeroaxis lt -1 lw 1\n";
  sc += "plot ";
  std::vector<std::string> titles;
  for (std::size_t l = 0; l < nlines; ++l) {
    if (l) sc += ", \\\n     ";
    std::string t = p.second ? fmt::format("{}={}", s.axes[*p.second].name, s.axes[*p.second].values[l].label)
                             : value_label(r, p.value);
    titles.push_back(t);
    // A series drawn exactly on top of an earlier one would hide under it: the legend says so.
    const bool drawn = std::any_of(ys[l].begin(), ys[l].end(), [](const auto& y) { return y.has_value(); });
    for (std::size_t m = 0; drawn && m < l; ++m)
      if (ys[m] == ys[l]) {
        t += fmt::format(" (same values as {})", titles[m]);
        break;
      }
    t += gaps[l];
    sc += fmt::format("{} index {} using 1:2 with linespoints lw 2 pt {} ps 0.9 lc rgb '{}' dt {} title {}", gp_quote(data_file),
                      l, 5 + static_cast<int>(l % 4) * 2, output::series_colour(l), l % 4 + 1, gp_quote(t));
  }
  sc += "\n";
  ps.script = std::move(sc);
  return ps;
}

SweepPlotScript heatmap_script(const SweepRun& r, const PlotSpec& p, const std::string& data_file,
                               const std::string& image_file, bool png) {
  const Spec& s = *r.spec;
  const Axis& xa = s.axes[p.x];
  const Axis& ya = s.axes[*p.second];
  const std::vector<std::size_t> fix = fixed_values(r, p);
  std::vector<std::vector<std::optional<double>>> z(ya.values.size(), std::vector<std::optional<double>>(xa.values.size()));
  std::vector<std::vector<std::string>> why(ya.values.size(), std::vector<std::string>(xa.values.size()));
  double lo = INFINITY, hi = -INFINITY;
  for (std::size_t yj = 0; yj < ya.values.size(); ++yj)
    for (std::size_t xj = 0; xj < xa.values.size(); ++xj) {
      std::vector<std::size_t> v = fix;
      v[p.x] = xj;
      v[*p.second] = yj;
      const std::size_t i = point_at(s, v);
      z[yj][xj] = r.value(i, p.value);
      if (z[yj][xj]) {
        lo = std::min(lo, *z[yj][xj]);
        hi = std::max(hi, *z[yj][xj]);
      } else {
        why[yj][xj] = status_name(r.results[i].status);
        if (r.results[i].status == PointResult::Status::Ok) why[yj][xj] = "n/a";
      }
    }
  SweepPlotScript ps;
  ps.empty = !std::isfinite(lo);
  const bool diverging = p.value == "change_pct";
  if (diverging) {
    const double m = std::max({std::fabs(lo), std::fabs(hi), 1e-9});
    lo = -m;
    hi = m;
  } else if (std::isfinite(lo) && hi <= lo) {
    const double pad = std::max(std::fabs(lo) * 0.01, 1e-9);
    lo -= pad;
    hi += pad;
  }
  // Block 0: the image grid (x fastest, a blank line after each row); 1 and 2: cell texts for
  // light and dark cells; 3: the reason of cells without a value.
  std::string img, light, dark, empty;
  for (std::size_t yj = 0; yj < ya.values.size(); ++yj) {
    for (std::size_t xj = 0; xj < xa.values.size(); ++xj) {
      const auto& v = z[yj][xj];
      img += fmt::format("{} {} {}\n", xj, yj, number(v));
      if (!v) {
        empty += fmt::format("{} {} \"{}\"\n", xj, yj, why[yj][xj]);
        continue;
      }
      const double t = hi > lo ? (*v - lo) / (hi - lo) : 0.5;
      const bool is_dark = diverging ? std::fabs(t - 0.5) > 0.35 : t > 0.6;
      const std::string text = !diverging ? scenario::format_number(*v) : std::fabs(*v) < 0.05 ? "0.0%" : fmt::format("{:+.1f}%", *v);
      (is_dark ? dark : light) += fmt::format("{} {} \"{}\"\n", xj, yj, text);
    }
    img += "\n";
  }
  // gnuplot cannot plot an empty block: a placeholder outside the ranges keeps the indexes stable.
  const std::string none = "-10 -10 \"\"\n";
  ps.data = img + "\n\n" + (light.empty() ? none : light) + "\n\n" + (dark.empty() ? none : dark) + "\n\n" +
            (empty.empty() ? none : empty) + "\n";
  const int w = std::clamp(260 + 90 * static_cast<int>(xa.values.size()), 900, 1600);
  const int h = std::clamp(200 + 46 * static_cast<int>(ya.values.size()), 450, 1200);
  std::string sc = header(r, p, image_file, png, fix, w, h);
  sc += fmt::format("set xlabel {} noenhanced\n", gp_quote(axis_label(xa)));
  sc += fmt::format("set ylabel {} noenhanced\n", gp_quote(axis_label(ya)));
  sc += fmt::format("set cblabel {} noenhanced\n", gp_quote(value_label(r, p.value)));
  sc += fmt::format("set xrange [-0.5:{}]\nset yrange [-0.5:{}]\n", static_cast<double>(xa.values.size()) - 0.5,
                    static_cast<double>(ya.values.size()) - 0.5);
  sc += categorical_tics("xtics", xa) + categorical_tics("ytics", ya);
  if (xa.values.size() > 8) sc += "set xtics rotate by -30\n";
  sc += "set tics scale 0\nunset key\n";
  if (std::isfinite(lo)) sc += fmt::format("set cbrange [{:.9g}:{:.9g}]\n", lo, hi);
  if (diverging)
    sc += "set palette defined (0 '#2166ac', 0.5 '#f7f7f7', 1 '#b2182b')\n";
  else
    sc += "set palette defined (0 '#fff5eb', 0.35 '#fdae6b', 0.7 '#e6550d', 1 '#7f2704')\n";
  const std::string font = xa.values.size() > 10 ? "sans,8" : "sans,10";
  sc += fmt::format("plot {0} index 0 using 1:2:3 with image, \\\n"
                    "     {0} index 1 using 1:2:3 with labels font '{1}' tc rgb 'black', \\\n"
                    "     {0} index 2 using 1:2:3 with labels font '{1}' tc rgb 'white', \\\n"
                    "     {0} index 3 using 1:2:3 with labels font 'sans,8' tc rgb '#888888'\n",
                    gp_quote(data_file), font);
  ps.script = std::move(sc);
  return ps;
}

}  // namespace

std::vector<PlotSpec> default_plots(const Spec& s) {
  std::vector<std::size_t> multi;
  for (std::size_t a = 0; a < s.axes.size(); ++a)
    if (s.axes[a].values.size() > 1) multi.push_back(a);
  std::vector<PlotSpec> out;
  if (multi.empty()) multi.push_back(0);
  PlotSpec line;
  line.kind = PlotSpec::Kind::Line;
  line.x = multi[0];
  if (multi.size() > 1 && s.axes[multi[1]].values.size() <= 12) line.second = multi[1];
  line.name = "line";
  out.push_back(line);
  if (multi.size() > 1) {
    PlotSpec hm;
    hm.kind = PlotSpec::Kind::Heatmap;
    hm.x = multi[0];
    hm.second = multi[1];
    hm.name = "heatmap";
    out.push_back(hm);
  }
  return out;
}

std::vector<fs::path> plot_files(const std::vector<PlotSpec>& plots, const fs::path& requested) {
  if (plots.size() <= 1) return {requested};
  std::vector<fs::path> out;
  for (const auto& p : plots) {
    fs::path f = requested;
    f.replace_filename(fmt::format("{}-{}{}", requested.stem().string(), safe_name(p.name), requested.extension().string()));
    out.push_back(f);
  }
  return out;
}

SweepPlotScript plot_script(const SweepRun& r, const PlotSpec& p, const std::string& data_file, const std::string& image_file,
                            bool png) {
  if (p.kind == PlotSpec::Kind::Heatmap) return heatmap_script(r, p, data_file, image_file, png);
  return line_script(r, p, data_file, image_file, png);
}

std::vector<fs::path> render_plots(const SweepRun& r, const std::vector<PlotSpec>& plots, const fs::path& requested,
                                   std::vector<std::string>& notes, output::OutputSet& outs) {
  const output::ImageFormat format = output::image_format_of(requested, "--plot");
  const bool png = format == output::ImageFormat::Png;
  output::require_gnuplot("--plot");
  const auto files = plot_files(plots, requested);
  std::vector<fs::path> done;
  output::TempDir tmp("ipilab-sweep-plot");
  for (std::size_t i = 0; i < plots.size(); ++i) {
    const fs::path data = tmp.file(fmt::format("data-{}.txt", i));
    if (plot_script(r, plots[i], data.string(), "", png).empty) {
      notes.push_back(fmt::format("plot '{}' not drawn: no point it shows has a value", plots[i].name));
      continue;
    }
    output::AtomicFile& image = outs.add(files[i], "--plot");
    output::render(image, format, tmp, "--plot", [&](const std::string& image_file) {
      const SweepPlotScript ps = plot_script(r, plots[i], data.string(), image_file, png);
      tmp.write(data.filename().string(), ps.data);
      return ps.script;
    });
    done.push_back(files[i]);
  }
  return done;
}

}  // namespace ipilab::sweep
