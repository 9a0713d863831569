// The text of `ipilab calibrate` and the profile layer it writes (calibrate.h).
#include <cmath>

#include <fmt/format.h>

#include "evidence/calibrate.h"
#include "scenario/report_format.h"

namespace ipilab::evidence {

namespace rf = ipilab::scenario::report;

namespace {

std::string num(double v) {
  const double vals[] = {v};
  return rf::format_fixed(v, rf::column_format(vals));
}

// A TOML basic string.
std::string toml_string(const std::string& s) {
  std::string out = "\"";
  for (char ch : s) {
    if (ch == '"' || ch == '\\') out += '\\';
    if (ch == '\n') {
      out += "\\n";
      continue;
    }
    out += ch;
  }
  return out + "\"";
}

std::string figure_ids(const Calibration& c) {
  std::string ids;
  for (const auto& f : c.figures) ids += (ids.empty() ? "" : ", ") + f.figure.id;
  return ids;
}

}  // namespace

std::string format_calibration(const Calibration& c) {
  std::string s = fmt::format("Calibration of profile {} ({}): {} value{} to {} figure{} by least squares (Eigen Levenberg-Marquardt), "
                              "{} model evaluations, {}\n",
                              c.profile, c.base_file, c.values.size(), c.values.size() == 1 ? "" : "s", c.figures.size(),
                              c.figures.size() == 1 ? "" : "s", c.evaluations, c.converged ? "converged" : "NOT CONVERGED (" + c.solver_info + ")");
  if (!c.figures_from.empty()) s += fmt::format("  figures: {}\n", c.figures_from);
  s += fmt::format("  ranges: 90 %, from the fit's Jacobian with the figures' relative standard error assumed {:g} % (--precision); "
                   "the other costs held at their values\n",
                   c.precision * 100);
  for (const auto& f : c.figures)
    if (f.figure.kind == FigureKind::Predicted)
      s += fmt::format("  note: {} is a PREDICTED figure of the validation set; a profile fitted to it can no longer count it as a prediction\n",
                       f.figure.id);
  rf::Table v({"value", "unit", "start", "fitted", "90 % range", "profile had"}, {0, 1});
  for (const auto& f : c.values)
    v.add({f.key, f.unit, num(f.start), num(f.value), f.lo ? fmt::format("[{} - {}]", num(*f.lo), num(*f.hi)) : "not determined",
           num(f.base.value)});
  s += "\n" + v.render("  ");
  rf::Table t({"figure", "scenario / variant / metric", c.measured ? "measured" : "published", "model", "residual", "leave-one-out"}, {0, 1});
  for (const auto& f : c.figures)
    t.add({f.figure.id, fmt::format("{} / {} / {}{}", f.figure.scenario, f.figure.variant, f.figure.metric, f.figure.stat == "median" ? " (median)" : ""),
           fmt::format("{} {}", num(f.figure.value), f.figure.unit), num(f.model), fmt::format("{:+.2f}%", f.residual * 100),
           f.loo_error ? fmt::format("{} ({:+.1f}%)", num(*f.loo_model), *f.loo_error * 100) : "—"});
  s += "\n" + t.render("  ");
  if (!c.loo_possible)
    s += rf::wrap("  leave-one-out: ",
                  fmt::format("none possible. {} value{} and {} figure{}: without any one figure the values are underdetermined, so "
                              "this fit reproduces its figures and predicts none of them. Add published figures (or fit fewer "
                              "values) to get predictions.",
                              c.values.size(), c.values.size() == 1 ? "" : "s", c.figures.size(), c.figures.size() == 1 ? "" : "s"),
                  "    ");
  else
    s += fmt::format("  leave-one-out: each figure predicted by the fit to the others (error against the {} value)\n", c.measured ? "measured" : "published");
  return s;
}

std::string calibration_profile(const Calibration& c) {
  std::string s = fmt::format("# Written by `ipilab calibrate --profile {}`: the values below fitted by least squares to {}\n", c.base_ref,
                              figure_ids(c));
  s += fmt::format("# ({} has their sources); every other value comes from the base through `extends`.\n",
                   c.figures_from.empty() ? "validation/figures.toml" : c.figures_from);
  s += fmt::format("[profile]\nname = {}\nextends = {}\n", toml_string(c.profile + "-calibrated"), toml_string(c.base_ref));
  s += fmt::format("description = {}\n", toml_string(fmt::format("{} with {} refitted by ipilab calibrate", c.profile, c.values.size() == 1 ? "one value" : fmt::format("{} values", c.values.size()))));
  for (const auto& v : c.values) {
    s += fmt::format("\n[cost.{}]\nvalue = {:.6g}\nunit = \"{}\"\n", v.key, v.value, v.unit);
    const cost::Cost& b = v.base;
    if (b.dist == sim::DistKind::Lognormal || b.dist == sim::DistKind::Normal)
      s += fmt::format("dist = \"{}\"\nspread = {:g}\n", sim::dist_name(b.dist), b.spread);
    else if (b.dist == sim::DistKind::Exponential)
      s += "dist = \"exponential\"\n";
    else if (b.dist == sim::DistKind::Empirical) {
      const double f = b.value > 0 ? v.value / b.value : 1.0;
      s += "dist = \"empirical\"\nbins = [";
      for (std::size_t i = 0; i < b.bins.size(); ++i)
        s += fmt::format("{}[{:.6g}, {:.6g}, {:g}]", i ? ", " : "", b.bins[i].lo * f, b.bins[i].hi * f, b.bins[i].count);
      s += "]\n";
    }
    s += "class = \"fitted\"\n";
    if (v.lo && *v.lo <= v.value && *v.hi >= v.value) {
      s += fmt::format("range = [{:.6g}, {:.6g}]\n", *v.lo, *v.hi);
      s += fmt::format("range_reason = {}\n",
                       toml_string(fmt::format("90 % from the least-squares fit, figures' relative standard error assumed {:g} %", c.precision * 100)));
    }
    std::string res;
    for (const auto& f : c.figures) res += fmt::format("{}{} {:+.2f}%", res.empty() ? "" : ", ", f.figure.id, f.residual * 100);
    s += fmt::format("source = {}\n", toml_string(fmt::format("FITTED to {}{} by ipilab calibrate (least squares, Eigen Levenberg-Marquardt); "
                                                               "residuals {}; the base had {:g} {}",
                                                               figure_ids(c), c.figures_from.empty() ? "" : " (" + c.figures_from + ")",
                                                               res, b.value, v.unit)));
  }
  return s;
}

}  // namespace ipilab::evidence
