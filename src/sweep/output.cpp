#include "sweep/output.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include <fmt/format.h>

#include "common/output.h"
#include "scenario/report.h"

namespace ipilab::sweep {

using ojson = nlohmann::ordered_json;

namespace {

const std::vector<std::string> kMainCounters = {"sends", "hypercalls", "native_fallbacks", "misdelivered", "lost"};
constexpr std::size_t kMaxCounterColumn = 16;
constexpr std::size_t kMaxCounterColumns = 6;

ojson num_or_null(std::optional<double> v) {
  if (!v || !std::isfinite(*v)) return nullptr;
  return *v;
}

ojson num_json(double v) { return std::isfinite(v) ? ojson(v) : ojson(nullptr); }

const MetricSummary* main_metric(const PointResult& r) {
  if (r.status != PointResult::Status::Ok || r.metrics.empty()) return nullptr;
  return &r.metrics.front();
}


// A table with a header row; columns right-aligned except those in `left`.
std::string render(const std::vector<std::vector<std::string>>& rows, const std::set<std::size_t>& left) {
  std::vector<std::size_t> w;
  auto len = [](const std::string& s) {  // display width: count UTF-8 lead bytes
    std::size_t n = 0;
    for (unsigned char c : s) n += (c & 0xC0) != 0x80;
    return n;
  };
  for (const auto& r : rows)
    for (std::size_t i = 0; i < r.size(); ++i) {
      if (w.size() <= i) w.push_back(0);
      w[i] = std::max(w[i], len(r[i]));
    }
  std::string out;
  for (const auto& r : rows) {
    std::string line = " ";
    for (std::size_t i = 0; i < r.size(); ++i) {
      const std::string pad(w[i] - len(r[i]), ' ');
      line += " " + (left.count(i) ? r[i] + pad : pad + r[i]);
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}

}  // namespace

std::string exact_number(double v) {
  if (!std::isfinite(v)) return "";
  return fmt::format("{}", v);
}

std::size_t SweepRun::count(PointResult::Status s) const {
  return static_cast<std::size_t>(std::count_if(results.begin(), results.end(), [s](const PointResult& r) { return r.status == s; }));
}

std::vector<std::string> SweepRun::counter_names() const {
  std::set<std::string> names;
  for (const auto& r : results)
    for (const auto& [k, v] : r.counters) {
      (void)v;
      names.insert(k);
    }
  return {names.begin(), names.end()};
}

std::optional<double> SweepRun::mean(std::size_t i) const {
  const MetricSummary* m = main_metric(results.at(i));
  if (!m || m->summary.count == 0 || !std::isfinite(m->summary.mean)) return std::nullopt;
  return m->summary.mean;
}

std::optional<double> SweepRun::change_pct(std::size_t i) const {
  const auto v = mean(i);
  const auto b = mean(points.at(i).baseline);
  if (!v || !b || *b == 0) return std::nullopt;
  return scenario::change_pct(*v, *b);
}

std::optional<double> SweepRun::value(std::size_t i, const std::string& what) const {
  if (what == "mean") return mean(i);
  if (what == "change_pct") return change_pct(i);
  const MetricSummary* m = main_metric(results.at(i));
  if (!m) return std::nullopt;
  if (what == "p50" || what == "p99") {
    if (m->summary.count == 0) return std::nullopt;
    return what == "p50" ? m->summary.p50 : m->summary.p99;
  }
  if (what.rfind("counter.", 0) == 0) {
    const auto it = results[i].counters.find(what.substr(8));
    return it == results[i].counters.end() ? 0.0 : static_cast<double>(it->second);
  }
  return std::nullopt;
}

std::string to_csv(const SweepRun& r) {
  const Spec& s = *r.spec;
  const auto counters = r.counter_names();
  std::vector<std::string> head = {"point"};
  for (const auto& a : s.axes) head.push_back(a.name);
  for (const char* h : {"status", "metric", "unit", "mean", "p50", "p99", "change_pct", "baseline"}) head.emplace_back(h);
  head.insert(head.end(), counters.begin(), counters.end());
  for (const char* h : {"events", "seed", "error"}) head.emplace_back(h);
  std::string out;
  auto emit = [&out](const std::vector<std::string>& row) {
    for (std::size_t i = 0; i < row.size(); ++i) out += (i ? "," : "") + output::csv_field(row[i]);
    out += "\n";
  };
  emit(head);
  for (std::size_t i = 0; i < r.points.size(); ++i) {
    const Point& p = r.points[i];
    const PointResult& res = r.results[i];
    const MetricSummary* m = main_metric(res);
    const bool has = m && m->summary.count > 0;
    std::vector<std::string> row = {fmt::format("{}", p.index)};
    for (std::size_t a = 0; a < s.axes.size(); ++a) row.push_back(s.axes[a].values[p.value[a]].label);
    row.push_back(status_name(res.status));
    row.push_back(m ? m->name : "");
    row.push_back(m ? m->unit : "");
    row.push_back(has ? exact_number(m->summary.mean) : "");
    row.push_back(has ? exact_number(m->summary.p50) : "");
    row.push_back(has ? exact_number(m->summary.p99) : "");
    const auto ch = r.change_pct(i);
    row.push_back(ch ? exact_number(*ch) : "");
    row.push_back(fmt::format("{}", p.baseline));
    for (const auto& c : counters) {
      if (res.status != PointResult::Status::Ok) {
        row.emplace_back();
        continue;
      }
      const auto it = res.counters.find(c);
      row.push_back(fmt::format("{}", it == res.counters.end() ? 0 : it->second));
    }
    row.push_back(res.status == PointResult::Status::Ok ? fmt::format("{}", res.events) : "");
    row.push_back(fmt::format("{}", p.seed));
    row.push_back(res.error);
    emit(row);
  }
  return out;
}

ojson to_json(const SweepRun& r) {
  const Spec& s = *r.spec;
  ojson j;
  j["sweep"] = s.name;
  j["title"] = s.title;
  j["description"] = s.description;
  j["spec"] = r.spec_shown;
  j["scenario"] = {{"name", r.scenario_name}, {"file", r.scenario_file}, {"workload", r.workload}, {"variant", r.variant}};
  j["seed"] = r.seed;
  j["seeds"] = s.per_point_seeds ? "per-point" : "common";
  j["iterations"] = r.iterations;
  j["warmup"] = r.warmup;
  auto& axes = j["axes"] = ojson::array();
  for (const auto& a : s.axes) {
    ojson ax;
    ax["name"] = a.name;
    ax["key"] = a.key.empty() ? ojson(nullptr) : ojson(a.key);
    ax["unit"] = a.unit;
    auto& vals = ax["values"] = ojson::array();
    for (const auto& v : a.values) vals.push_back(v.label);
    axes.push_back(std::move(ax));
  }
  if (s.baseline.empty()) {
    j["baseline"] = nullptr;
  } else {
    ojson b = ojson::object();
    for (const auto& [a, v] : s.baseline) b[s.axes[a].name] = s.axes[a].values[v].label;
    j["baseline"] = std::move(b);
  }
  j["points_total"] = r.points.size();
  j["complete"] = !r.interrupted && r.count(PointResult::Status::NotRun) == 0;
  j["counts"] = {{"ok", r.count(PointResult::Status::Ok)},
                 {"failed", r.count(PointResult::Status::Failed)},
                 {"skipped", r.count(PointResult::Status::Skipped)},
                 {"not-run", r.count(PointResult::Status::NotRun)}};
  auto& pts = j["points"] = ojson::array();
  for (std::size_t i = 0; i < r.points.size(); ++i) {
    const Point& p = r.points[i];
    const PointResult& res = r.results[i];
    ojson o;
    o["point"] = p.index;
    o["label"] = p.label;
    ojson vals = ojson::object();
    for (std::size_t a = 0; a < s.axes.size(); ++a) vals[s.axes[a].name] = s.axes[a].values[p.value[a]].label;
    o["values"] = std::move(vals);
    o["seed"] = p.seed;
    o["status"] = status_name(res.status);
    if (!res.error.empty()) o["error"] = res.error;
    o["baseline"] = p.baseline;
    if (res.status == PointResult::Status::Ok) {
      o["main"] = res.metrics.empty() ? ojson(nullptr) : ojson(res.metrics.front().name);
      ojson ms = ojson::object();
      for (const auto& m : res.metrics) {
        const auto& su = m.summary;
        const bool has = su.count > 0;
        ms[m.name] = {{"unit", m.unit},
                      {"mean", has ? num_json(su.mean) : ojson(nullptr)},
                      {"p50", has ? num_json(su.p50) : ojson(nullptr)},
                      {"p90", has ? num_json(su.p90) : ojson(nullptr)},
                      {"p99", has ? num_json(su.p99) : ojson(nullptr)},
                      {"p999", has ? num_json(su.p999) : ojson(nullptr)},
                      {"min", has ? num_json(su.min) : ojson(nullptr)},
                      {"max", has ? num_json(su.max) : ojson(nullptr)},
                      {"stddev", has ? num_json(su.stddev) : ojson(nullptr)},
                      {"count", su.count}};
      }
      o["metrics"] = std::move(ms);
      o["change_pct"] = num_or_null(r.change_pct(i));
      o["counters"] = res.counters;
      ojson st = ojson::object();
      for (const auto& [k, v] : res.settings) st[k] = v;
      o["settings"] = std::move(st);
      o["notes"] = res.notes;
      o["events"] = res.events;
      o["host"] = res.host;
      o["vm"] = res.vm;
      o["profile"] = res.profile;
    }
    pts.push_back(std::move(o));
  }
  return j;
}

namespace {

// The lines above the table: the spec, its base scenario, axes, run settings and baseline.
std::string table_heading(const SweepRun& r) {
  const Spec& s = *r.spec;
  std::string out = fmt::format("== {}: {} ==\n", s.name, s.title);
  if (!s.description.empty()) out += fmt::format("  {}\n", s.description);
  out += fmt::format("  {:<10} {} ({}), variant '{}', workload {}\n", "base", r.scenario_name, r.scenario_file, r.variant,
                     r.workload);
  std::string axes;
  for (const auto& a : s.axes) axes += fmt::format("{}{} ({})", axes.empty() ? "" : " x ", a.name, a.values.size());
  out += fmt::format("  {:<10} {} = {} points\n", "axes", axes, r.points.size());
  // Each axis's unit, so that a column of bare numbers says what it counts.
  for (const auto& a : s.axes)
    if (!a.unit.empty()) out += fmt::format("  {:<10} {}: {}\n", "", a.name, a.unit);
  out += fmt::format("  {:<10} {} iterations per point after {} warm-up; {}\n", "run", r.iterations, r.warmup,
                     s.per_point_seeds ? fmt::format("seeds derived per point from {}", r.seed)
                                       : fmt::format("seed {} for every point", r.seed));
  if (s.baseline.empty()) {
    out += fmt::format("  {:<10} point 0 ({})\n", "baseline", r.points.empty() ? "" : r.points[0].label);
  } else {
    std::string b;
    for (const auto& [a, v] : s.baseline) b += fmt::format("{}{}={}", b.empty() ? "" : ", ", s.axes[a].name, s.axes[a].values[v].label);
    out += fmt::format("  {:<10} {}{}\n", "baseline", b,
                       s.baseline.size() < s.axes.size() ? " (with the point's own values on the other axes)" : "");
  }
  return out;
}

// Point i ran but has no value of the main metric (every measured iteration lost its IPI, or the
// window held none).
bool ran_without_value(const SweepRun& r, std::size_t i) {
  return r.results[i].status == PointResult::Status::Ok && !r.mean(i);
}

// Per axis value, the spread of the points' means.
// (Points that ran without a measured value are counted beside them, never averaged in silently.)
std::string axis_summaries(const SweepRun& r, const std::vector<std::size_t>& shown, bool any_without_value) {
  const Spec& s = *r.spec;
  std::string out;
  for (std::size_t a = 0; a < s.axes.size(); ++a) {
    std::vector<std::vector<std::string>> rows = {{s.axes[a].name, "mean", "min", "max", "points"}};
    if (any_without_value) rows[0].emplace_back("no value");
    for (std::size_t j = 0; j < s.axes[a].values.size(); ++j) {
      double sum = 0, lo = INFINITY, hi = -INFINITY;
      std::size_t n = 0, none = 0;
      for (auto i : shown) {
        if (r.points[i].value[a] != j) continue;
        if (auto m = r.mean(i)) {
          sum += *m;
          lo = std::min(lo, *m);
          hi = std::max(hi, *m);
          ++n;
        } else if (ran_without_value(r, i)) {
          ++none;
        }
      }
      rows.push_back({s.axes[a].values[j].label, n ? scenario::format_number(sum / static_cast<double>(n)) : "—",
                      n ? scenario::format_number(lo) : "—", n ? scenario::format_number(hi) : "—", fmt::format("{}", n)});
      if (any_without_value) rows.back().push_back(fmt::format("{}", none));
    }
    out += "\n" + render(rows, {0});
  }
  return out;
}

std::size_t count_without_value(const SweepRun& r) {
  std::size_t n = 0;
  for (std::size_t i = 0; i < r.points.size(); ++i)
    if (ran_without_value(r, i)) ++n;
  return n;
}

// The `total` points that ran without a value, the first ten with their lost counters.
std::string without_value(const SweepRun& r, std::size_t total) {
  if (total == 0) return {};
  std::string out = fmt::format(
      "\n  {} point{} ran but measured no value of the main metric (no mean, no change; left out of every mean above):\n",
      total, total == 1 ? "" : "s");
  std::size_t listed = 0;
  for (std::size_t i = 0; i < r.points.size() && listed < 10; ++i) {
    if (!ran_without_value(r, i)) continue;
    ++listed;
    const auto& c = r.results[i].counters;
    const auto lost = c.find("lost");
    const auto lost_req = c.find("requests_lost");
    out += fmt::format("    point {} ({}): {}\n", r.points[i].index, r.points[i].label,
                       lost != c.end() && lost->second > 0
                           ? fmt::format("{} intended targets lost, {} requests lost", lost->second,
                                         lost_req == c.end() ? 0 : lost_req->second)
                           : std::string("no measured iteration"));
  }
  if (total > listed) out += fmt::format("    ... and {} more (all in --csv / --json: an empty mean)\n", total - listed);
  return out;
}

// Failed points (the first ten), points without a value and skipped ones (by reason) below the table.
std::string failures_and_skips(const SweepRun& r, std::size_t failed, std::size_t without) {
  std::string out;
  std::size_t listed = 0;
  for (std::size_t i = 0; i < r.points.size(); ++i) {
    if (r.results[i].status != PointResult::Status::Failed) continue;
    if (listed == 0) out += "\n  failed points:\n";
    if (++listed > 10) {
      out += fmt::format("    ... and {} more (all in --csv / --json)\n", failed - 10);
      break;
    }
    out += fmt::format("    point {} ({}): {}\n", r.points[i].index, r.points[i].label, r.results[i].error);
  }
  out += without_value(r, without);
  std::map<std::string, std::size_t> reasons;
  std::vector<std::string> order;
  for (std::size_t i = 0; i < r.points.size(); ++i) {
    if (r.results[i].status != PointResult::Status::Skipped) continue;
    if (!reasons.count(r.results[i].error)) order.push_back(r.results[i].error);
    ++reasons[r.results[i].error];
  }
  if (!order.empty()) out += "\n  skipped points:\n";
  for (const auto& why : order) out += fmt::format("    {} point{}: {}\n", reasons[why], reasons[why] == 1 ? "" : "s", why);
  return out;
}

}  // namespace

std::string format_table(const SweepRun& r, const TableOptions& opt) {
  const Spec& s = *r.spec;
  std::string out = table_heading(r);
  const std::size_t ok = r.count(PointResult::Status::Ok), failed = r.count(PointResult::Status::Failed),
                    skipped = r.count(PointResult::Status::Skipped), notrun = r.count(PointResult::Status::NotRun);
  const std::size_t without = count_without_value(r);
  out += fmt::format("  {:<10} {} ok{}, {} failed, {} skipped{}{}\n", "points", ok,
                     without ? fmt::format(" ({} of them without a measured value: listed below)", without) : "", failed,
                     skipped, notrun ? fmt::format(", {} not run", notrun) : "", r.interrupted ? " (interrupted)" : "");

  // Counter columns: the usual ones first, then other short names, only when some point has one non-zero.
  std::set<std::string> nonzero;
  for (const auto& res : r.results)
    for (const auto& [k, n] : res.counters)
      if (n) nonzero.insert(k);
  std::vector<std::string> cols;
  for (const auto& c : kMainCounters)
    if (nonzero.count(c)) cols.push_back(c);
  for (const auto& c : nonzero)
    if (std::find(kMainCounters.begin(), kMainCounters.end(), c) == kMainCounters.end() && c.size() <= kMaxCounterColumn)
      cols.push_back(c);
  if (cols.size() > kMaxCounterColumns) cols.resize(kMaxCounterColumns);

  std::string unit;
  for (const auto& res : r.results)
    if (const auto* m = main_metric(res)) {
      unit = m->name + " (" + m->unit + ")";
      break;
    }
  auto row_of = [&](std::size_t i) {
    const Point& p = r.points[i];
    const PointResult& res = r.results[i];
    std::vector<std::string> row = {fmt::format("{}", p.index)};
    for (std::size_t a = 0; a < s.axes.size(); ++a) row.push_back(s.axes[a].values[p.value[a]].label);
    const MetricSummary* m = main_metric(res);
    const bool has = m && m->summary.count > 0;
    row.push_back(has ? scenario::format_number(m->summary.mean) : "—");
    row.push_back(has ? scenario::format_number(m->summary.p50) : "—");
    row.push_back(has ? scenario::format_number(m->summary.p99) : "—");
    row.push_back(m ? m->unit : "");
    const auto ch = r.change_pct(i);
    row.push_back(p.baseline == i ? "base" : ch ? fmt::format("{:+.1f}%", *ch) : "—");
    for (const auto& c : cols) {
      const auto it = res.counters.find(c);
      row.push_back(res.status == PointResult::Status::Ok ? fmt::format("{}", it == res.counters.end() ? 0 : it->second) : "");
    }
    row.push_back(status_name(res.status));
    return row;
  };
  std::vector<std::string> head = {"point"};
  for (const auto& a : s.axes) head.push_back(a.name);
  for (const char* h : {"mean", "p50", "p99", "unit", "vs baseline"}) head.emplace_back(h);
  head.insert(head.end(), cols.begin(), cols.end());
  head.emplace_back("status");
  std::set<std::size_t> left;
  for (std::size_t a = 0; a < s.axes.size(); ++a) left.insert(a + 1);
  left.insert(s.axes.size() + 4);
  left.insert(head.size() - 1);

  std::vector<std::size_t> shown;  // ok and failed points
  for (std::size_t i = 0; i < r.points.size(); ++i)
    if (r.results[i].status == PointResult::Status::Ok || r.results[i].status == PointResult::Status::Failed) shown.push_back(i);
  out += "\n";
  if (shown.size() <= opt.max_rows) {
    std::vector<std::vector<std::string>> rows = {head};
    for (auto i : shown) rows.push_back(row_of(i));
    out += render(rows, left);
  } else {
    // Summary: per axis value, the spread of the points' means; then the extremes.
    out += fmt::format("  {} points ran: a summary (every point: --csv FILE or --json FILE)\n", shown.size());
    if (!unit.empty()) out += fmt::format("  main metric {}; per axis value: mean of the points' means [min .. max], points\n", unit);
    out += axis_summaries(r, shown, without > 0);
    std::vector<std::size_t> by_mean;
    for (auto i : shown)
      if (r.mean(i)) by_mean.push_back(i);
    std::stable_sort(by_mean.begin(), by_mean.end(), [&](std::size_t x, std::size_t y) { return *r.mean(x) < *r.mean(y); });
    const std::size_t k = std::min<std::size_t>(5, by_mean.size() / 2);
    if (k > 0) {
      std::vector<std::vector<std::string>> rows = {head};
      for (std::size_t i = 0; i < k; ++i) rows.push_back(row_of(by_mean[i]));
      out += fmt::format("\n  the {} lowest means:\n", k) + render(rows, left);
      rows = {head};
      for (std::size_t i = by_mean.size() - k; i < by_mean.size(); ++i) rows.push_back(row_of(by_mean[i]));
      out += fmt::format("\n  the {} highest means:\n", k) + render(rows, left);
    }
  }

  out += failures_and_skips(r, failed, without);
  if (notrun) out += fmt::format("\n  {} points did not run (interrupted): the outputs hold the points that finished\n", notrun);
  return out;
}

}  // namespace ipilab::sweep
