#include "evidence/report.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "scenario/report.h"
#include "scenario/report_format.h"

namespace ipilab::evidence {

namespace rf = ipilab::scenario::report;
using ojson = nlohmann::ordered_json;

namespace {

std::string fixed(double v, const rf::NumberFormat& f) { return std::isfinite(v) ? rf::format_fixed(v, f) : "—"; }

std::string signed_fixed(double v, const rf::NumberFormat& f) {
  const std::string s = fixed(v, f);
  return v > 0 ? "+" + s : s;
}

std::string range_text(const UncertainCost& c) {
  const double lo = c.value * c.range.lo, hi = c.value * c.range.hi;
  const double vals[] = {lo, c.value, hi};
  const rf::NumberFormat f = rf::column_format(vals);
  return fmt::format("{} [{} - {}] {}", rf::format_fixed(c.value, f), rf::format_fixed(lo, f), rf::format_fixed(hi, f), c.unit);
}

// Beyond rounding: a point a hair outside its interval (draws identical to it) is not flagged.
bool outside(double point, const Interval& i) {
  const double slack = 1e-9 * std::max({1.0, std::fabs(i.lo), std::fabs(i.hi)});
  return point < i.lo - slack || point > i.hi + slack;
}

std::string metric_table(const Propagation& u, std::size_t mi) {
  const auto& first = u.variants[0].metrics[mi];
  std::vector<double> vals;
  for (const auto& v : u.variants)
    for (const auto& m : v.metrics)
      if (m.name == first.name) vals.insert(vals.end(), {m.point, m.interval.lo, m.interval.hi});
  const rf::NumberFormat f = rf::column_format(vals);
  std::vector<double> dvals;
  for (const auto& d : u.differences)
    if (d.metric == first.name) dvals.insert(dvals.end(), {d.point, d.interval.lo, d.interval.hi});
  const rf::NumberFormat df = rf::column_format(dvals);
  rf::Table t({"variant", fmt::format("{} ({}) [90 %]", first.name, first.unit), "vs first [90 %]", "change", ""}, {0, 4});
  bool starred = false;
  for (std::size_t vi = 0; vi < u.variants.size(); ++vi) {
    const MetricInterval* m = nullptr;
    for (const auto& x : u.variants[vi].metrics)
      if (x.name == first.name) m = &x;
    if (!m) continue;
    std::vector<std::string> row{u.variants[vi].variant,
                                 m->has_interval ? fmt::format("{} [{} - {}]", fixed(m->point, f), fixed(m->interval.lo, f), fixed(m->interval.hi, f))
                                                 : fmt::format("{} [no interval]", fixed(m->point, f)),
                                 "", "", ""};
    for (const auto& d : u.differences)
      if (vi > 0 && d.variant == u.variants[vi].variant && d.metric == first.name) {
        if (!d.has_interval) {
          row[2] = signed_fixed(d.point, df);
          break;
        }
        row[2] = fmt::format("{} [{} - {}]", signed_fixed(d.point, df), signed_fixed(d.interval.lo, df), signed_fixed(d.interval.hi, df));
        row[3] = fmt::format("{} [{} - {}]", rf::format_percent(d.point_pct), rf::format_percent(d.interval_pct.lo),
                             rf::format_percent(d.interval_pct.hi));
        // Exactly zero in every draw: the variants compute the same thing (the metric does not
        // depend on what differs between them), which is no change rather than an uncertain one.
        const bool none = d.point == 0 && d.interval.lo == 0 && d.interval.hi == 0;
        row[4] = none ? "no change in any draw" : d.interval.spans_zero() ? "the change may not matter here" : "";
        if (outside(d.point, d.interval) || outside(d.point_pct, d.interval_pct)) {
          row[4] += row[4].empty() ? "*" : " *";
          starred = true;
        }
      }
    if (m->has_interval && outside(m->point, m->interval)) {
      row[4] += row[4].empty() ? "*" : " *";
      starred = true;
    }
    t.add(std::move(row));
  }
  std::string out = "\n" + t.render("  ");
  if (starred)
    out += rf::wrap("  *", "the point value (every cost at its written value) lies outside the 90 % interval of the draws: a "
                           "range not centred on its value (an asymmetric one, or a term that is not linear in its cost) moves "
                           "the draws' distribution away from the point; read the interval, not the point, as the spread",
                    "    ");
  return out;
}

}  // namespace

std::string format_figure_value(double v) {
  const double vals[] = {v};
  return rf::format_fixed(v, rf::column_format(vals));
}

std::string format_with_interval(double point, const Interval& i) {
  const double vals[] = {point, i.lo, i.hi};
  const rf::NumberFormat f = rf::column_format(vals);
  return fmt::format("{} [{} - {}]", fixed(point, f), fixed(i.lo, f), fixed(i.hi, f));
}

std::string format_uncertainty(const Propagation& u, bool details) {
  std::string s = fmt::format("\nUncertainty: {} draws (Latin hypercube over {} uncertain cost{}, seed {}, {} iterations per run), "
                              "90 % intervals of each mean\n",
                              u.draws, u.costs.uncertain.size(), u.costs.uncertain.size() == 1 ? "" : "s", u.seed,
                              rf::format_count(u.iterations));
  s += fmt::format("  {} cost{} used, {} of them estimates; {} of the {} ranges are their class's default (not stated in the profile){}\n",
                   u.costs.used.size(), u.costs.used.size() == 1 ? "" : "s", u.costs.estimates(), u.costs.defaults(),
                   u.costs.uncertain.size(), details ? "" : "; --details lists each cost");
  std::size_t drawn_latency = 0;
  for (const auto& c : u.costs.uncertain)
    if (is_host_latency_key(c.key)) ++drawn_latency;
  s += drawn_latency ? fmt::format("  drawn from the host file: {} latency class{} with a stated range (host.latency.*); held fixed: the "
                                   "host's other latencies, scenario overrides, the seed\n",
                                   drawn_latency, drawn_latency == 1 ? "" : "es")
                     : "  held fixed: the host's latency matrix (cross-socket lines and hops; its file states no range), scenario "
                       "overrides, the seed\n";
  if (u.costs.uncertain.empty()) s += "  no cost of this run has a range: every interval is the point value\n";
  if (!u.variants.empty())
    for (std::size_t mi = 0; mi < u.variants[0].metrics.size(); ++mi) s += metric_table(u, mi);
  if (details) {
    s += "  costs used (class, value [range], where the range comes from, source):\n";
    for (const auto& c : u.costs.used)
      s += rf::wrap(fmt::format("    {}  {}  {}  ", c.key, cost::class_name(c.cls), range_text(c)),
                    fmt::format("{}{} — {}", c.range.fixed() ? "fixed: " : "", c.range.reason, c.source), "        ");
  }
  return s;
}

std::string format_sensitivity(const Sensitivity& s, std::size_t top) {
  std::string out = "\nSensitivity: one cost at a time at each end of its range, the others at their means (largest swing first);\n"
                    "  share = swing^2 / sum of swings^2 (each cost uniform over its range, the metric additive in its costs)\n";
  for (const auto& v : s.variants) {
    out += fmt::format("  {} ({}), variant '{}', mean {}:\n", v.metric, v.unit, v.variant, scenario::format_number(v.point));
    if (v.swings.empty()) {
      out += "    no uncertain cost moves it\n";
      continue;
    }
    std::vector<double> vals;
    for (const auto& w : v.swings) vals.insert(vals.end(), {w.low, w.high, w.swing});
    const rf::NumberFormat f = rf::column_format(vals);
    const bool fo = v.first_order_sum.has_value();
    std::vector<std::string> head{"cost", "class", "at low", "at high", "swing", "share"};
    if (fo) head.push_back("first-order");
    rf::Table t(head, {0, 1});
    for (std::size_t i = 0; i < v.swings.size() && i < top; ++i) {
      const Swing& w = v.swings[i];
      std::vector<std::string> row{w.key, std::string(cost::class_name(w.cls)), fixed(w.low, f), fixed(w.high, f),
                                   fixed(w.swing, f) + (w.additive ? "" : " !"), fmt::format("{:.1f}%", w.share * 100)};
      if (fo) row.push_back(w.first_order ? fmt::format("{:.1f}%", *w.first_order * 100) : "—");
      t.add(std::move(row));
    }
    out += t.render("    ");
    if (v.swings.size() > top) out += fmt::format("    ... {} more with smaller swings (--json lists all)\n", v.swings.size() - top);
    std::string odd;
    for (std::size_t i = 0; i < v.swings.size() && i < top; ++i)
      if (!v.swings[i].additive) odd += (odd.empty() ? "" : ", ") + v.swings[i].key;
    if (!odd.empty())
      out += rf::wrap("    !", fmt::format("{}: not additive over the range (the metric falls as the cost rises, or both ends "
                                          "move it the same way): the run takes another path at one end (its counters "
                                          "say which); the swing is real, its share is no share of variance",
                                          odd),
                      "      ");
    if (fo)
      out += fmt::format("    first-order indices add up to {:.0f}% (from the {} --uncertainty draws, each +-{:.0f}% or so; near 100% = "
                         "additive in its costs)\n",
                         *v.first_order_sum * 100, v.draws, 100.0 / std::sqrt(static_cast<double>(v.draws)));
    else if (v.draws > 0)
      out += fmt::format("    first-order indices need --uncertainty {} or more draws ({} given)\n", kMinDrawsForIndices, v.draws);
  }
  return out;
}

namespace {

ojson interval_json(const Interval& i) { return ojson::array({i.lo, i.hi}); }

// `obj` with `key`: `value` inserted right after `after` (ordered_json appends otherwise).
ojson insert_after(const ojson& obj, const std::string& after, const std::string& key, ojson value) {
  ojson out = ojson::object();
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    out[it.key()] = it.value();
    if (it.key() == after) out[key] = value;
  }
  if (!out.contains(key)) out[key] = std::move(value);
  return out;
}

}  // namespace

void add_uncertainty_json(ojson& j, const Propagation& u) {
  auto& vars = j["variants"];
  for (std::size_t vi = 0; vi < u.variants.size() && vi < vars.size(); ++vi) {
    auto& metrics = vars[vi]["metrics"];
    for (const auto& m : u.variants[vi].metrics)
      if (metrics.contains(m.name))
        metrics[m.name] = insert_after(metrics[m.name], "mean", "interval", m.has_interval ? interval_json(m.interval) : ojson());
    if (vi == 0) continue;
    ojson diff = ojson::object();
    for (const auto& d : u.differences)
      if (d.variant == u.variants[vi].variant)
        diff[d.metric] = {{"mean", d.point},
                          {"interval", d.has_interval ? interval_json(d.interval) : ojson()},
                          {"pct", d.point_pct},
                          {"interval_pct", d.has_interval ? interval_json(d.interval_pct) : ojson()},
                          {"may_not_matter", d.has_interval && d.interval.spans_zero()}};
    vars[vi]["difference_vs_first"] = std::move(diff);
  }
  ojson costs = ojson::array();
  for (const auto& c : u.costs.used)
    costs.push_back({{"key", c.key},
                     {"class", cost::class_name(c.cls)},
                     {"value", c.value},
                     {"unit", c.unit},
                     {"range", ojson::array({c.value * c.range.lo, c.value * c.range.hi})},
                     {"range_reason", c.range.reason},
                     {"range_default", c.range.is_default},
                     {"source", c.source}});
  j["uncertainty"] = {{"draws", u.draws},
                      {"seed", u.seed},
                      {"level", kLevel},
                      {"iterations", u.iterations},
                      {"method", "latin hypercube, each cost uniform over its range and independent, common random numbers across variants"},
                      {"costs_used", u.costs.used.size()},
                      {"uncertain", u.costs.uncertain.size()},
                      {"estimates", u.costs.estimates()},
                      {"default_ranges", u.costs.defaults()},
                      {"costs", std::move(costs)}};
}

void add_sensitivity_json(ojson& j, const Sensitivity& s) {
  ojson arr = ojson::array();
  for (const auto& v : s.variants) {
    ojson rows = ojson::array();
    for (const auto& w : v.swings) {
      ojson r = {{"key", w.key},   {"class", cost::class_name(w.cls)}, {"range_factors", ojson::array({w.range_lo, w.range_hi})},
                 {"low", w.low},   {"high", w.high},                   {"swing", w.swing},
                 {"share", w.share}, {"additive", w.additive}};
      if (w.first_order) r["first_order"] = *w.first_order;
      rows.push_back(std::move(r));
    }
    ojson e = {{"variant", v.variant}, {"metric", v.metric}, {"unit", v.unit}, {"mean", v.point}, {"tornado", std::move(rows)}};
    if (v.first_order_sum) e["first_order_sum"] = *v.first_order_sum;
    arr.push_back(std::move(e));
  }
  j["sensitivity"] = std::move(arr);
}

}  // namespace ipilab::evidence
