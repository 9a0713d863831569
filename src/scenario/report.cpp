#include "scenario/report.h"

#include <algorithm>
#include <cmath>
#include <set>

#include <fmt/format.h>

namespace ipilab::scenario {

namespace {

using ojson = nlohmann::ordered_json;

// The counters every workload reports, in the order the table shows them.
const std::vector<std::string> kMainCounters = {"sends", "hypercalls", "native_fallbacks", "misdelivered", "lost"};
constexpr std::size_t kMaxCounterColumn = 16;

// Every {key, source} object inside any "costs" array of a provenance document.
void collect_costs(const nlohmann::json& j, std::set<std::string>& keys, std::set<std::string>& sources) {
  if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it) {
      if (it.key() == "costs" && it.value().is_array()) {
        for (const auto& c : it.value()) {
          if (!c.is_object()) continue;
          if (auto k = c.find("key"); k != c.end() && k->is_string()) keys.insert(k->get<std::string>());
          if (auto s = c.find("source"); s != c.end() && s->is_string()) sources.insert(s->get<std::string>());
        }
      } else {
        collect_costs(it.value(), keys, sources);
      }
    }
  } else if (j.is_array()) {
    for (const auto& e : j) collect_costs(e, keys, sources);
  }
}

std::vector<std::string> counter_columns(const ScenarioResult& r, std::vector<std::string>* long_ones) {
  std::set<std::string> nonzero;
  for (const auto& v : r.variants)
    for (const auto& [k, n] : v.result.counters)
      if (n != 0) nonzero.insert(k);
  std::vector<std::string> cols;
  for (const auto& c : kMainCounters)
    if (nonzero.count(c)) cols.push_back(c);
  for (const auto& c : nonzero) {
    if (std::find(kMainCounters.begin(), kMainCounters.end(), c) != kMainCounters.end()) continue;
    if (c.size() <= kMaxCounterColumn) cols.push_back(c);
    else if (long_ones) long_ones->push_back(c);
  }
  return cols;
}

const CheckOutcome* first_check(const ScenarioResult& r, const std::string& variant, bool* all_pass) {
  const CheckOutcome* first = nullptr;
  *all_pass = true;
  for (const auto& c : r.checks) {
    if (c.expect.variant != variant) continue;
    if (!first) first = &c;
    *all_pass = *all_pass && c.pass;
  }
  return first;
}

// Word-wraps `text` to lines of at most kWidth columns: the first line starts with `first` (already
// counted), continuation lines with `indent`. Long words are not split.
constexpr std::size_t kWidth = 110;
std::string wrap(const std::string& first, const std::string& text, const std::string& indent) {
  auto cols = [](const std::string& s) {
    std::size_t n = 0;
    for (unsigned char c : s) n += (c & 0xC0) != 0x80;
    return n;
  };
  std::string out = first, line;
  std::size_t used = cols(first);
  std::size_t pos = 0;
  bool first_word = true;
  while (pos < text.size()) {
    std::size_t end = text.find(' ', pos);
    if (end == std::string::npos) end = text.size();
    const std::string word = text.substr(pos, end - pos);
    pos = end + 1;
    if (word.empty()) continue;
    if (!first_word && used + 1 + cols(word) > kWidth) {
      out += "\n" + indent;
      used = cols(indent);
    } else if (!first_word || !out.empty()) {
      out += ' ';
      ++used;
    }
    out += word;
    used += cols(word);
    first_word = false;
  }
  return out + "\n";
}

std::string format_tolerance(double t) { return fmt::format("±{:g}%", t * 100); }

// A plain text table: columns in `left` left-aligned, the others right-aligned.
std::string render_table(const std::vector<std::vector<std::string>>& rows, const std::set<std::size_t>& left,
                         const std::string& indent) {
  std::vector<std::size_t> w;
  auto width = [](const std::string& s) {
    std::size_t n = 0;  // UTF-8 code points (✓, ✗, — are one column each)
    for (unsigned char c : s) n += (c & 0xC0) != 0x80;
    return n;
  };
  for (const auto& row : rows) {
    if (w.size() < row.size()) w.resize(row.size(), 0);
    for (std::size_t i = 0; i < row.size(); ++i) w[i] = std::max(w[i], width(row[i]));
  }
  std::string out;
  for (const auto& row : rows) {
    std::string line = indent;
    for (std::size_t i = 0; i < row.size(); ++i) {
      const std::string pad(w[i] - width(row[i]), ' ');
      if (i > 0) line += "  ";
      if (left.count(i)) line += row[i] + pad;
      else line += pad + row[i];
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}


// Throughput and the resources, one row per kind: how many, mean and highest utilisation, mean wait
// (over every arrival) and the worst p99 wait.
std::string format_resources(const workload::RunResult& r, const std::string& ind) {
  if (r.resources.empty()) return {};
  std::string out;
  const auto& t = r.throughput;
  if (t.window_ns > 0)
    out += fmt::format("{}{:<9} {} IPIs/s delivered, {} calls/s completed, over {} us of simulated time\n", ind, "rate",
                       format_number(t.ipis_per_second), format_number(t.calls_per_second), format_number(t.window_ns / 1000));
  std::vector<std::vector<std::string>> rows;
  rows.push_back({"resource kind", "count", "util mean", "util max", "busiest", "wait mean", "wait p99 (worst)"});
  std::vector<std::string> kinds;
  for (const auto& x : r.resources)
    if (std::find(kinds.begin(), kinds.end(), x.kind) == kinds.end()) kinds.push_back(x.kind);
  for (const auto& k : kinds) {
    std::size_t n = 0;
    double usum = 0, wsum = 0, p99 = 0;
    std::uint64_t arrivals = 0;
    const workload::ResourceReport* busiest = nullptr;
    for (const auto& x : r.resources) {
      if (x.kind != k) continue;
      ++n;
      usum += x.utilisation;
      wsum += x.wait_mean * static_cast<double>(x.arrivals);
      arrivals += x.arrivals;
      p99 = std::max(p99, x.wait_p99);
      if (!busiest || x.utilisation > busiest->utilisation) busiest = &x;
    }
    rows.push_back({k, std::to_string(n), fmt::format("{:.3f}", usum / static_cast<double>(n)),
                    fmt::format("{:.3f}", busiest->utilisation), busiest->name,
                    format_number(arrivals ? wsum / static_cast<double>(arrivals) : 0) + " ns", format_number(p99) + " ns"});
  }
  out += render_table(rows, {0, 4}, ind + std::string(10, ' '));
  return out;
}

ojson metric_json(const workload::Metric& m) {
  const sim::Summary& s = m.summary;
  ojson j;
  j["mean"] = s.mean;
  j["p50"] = s.p50;
  j["p90"] = s.p90;
  j["p99"] = s.p99;
  j["p999"] = s.p999;
  j["min"] = s.min;
  j["max"] = s.max;
  j["stddev"] = s.stddev;
  j["count"] = s.count;
  j["unit"] = m.unit;
  j["description"] = m.description;
  return j;
}

}  // namespace

double change_pct(double value, double first) { return first == 0 ? 0.0 : (value - first) / first * 100.0; }

std::string format_number(double v) {
  if (!std::isfinite(v)) return fmt::format("{}", v);
  const double a = std::fabs(v);
  if (a >= 1000 || a == 0) return fmt::format("{:.0f}", v);
  if (a >= 100) return fmt::format("{:.1f}", v);
  if (a >= 10) return fmt::format("{:.2f}", v);
  if (a >= 1) return fmt::format("{:.3f}", v);
  return fmt::format("{:.3g}", v);
}

std::string format_text(const ScenarioResult& r, const TextOptions& opt) {
  std::string out;
  const VariantResult* first = r.variants.empty() ? nullptr : &r.variants.front();
  out += fmt::format("== {}: {} ==\n", r.name, r.title);
  if (!r.description.empty()) out += fmt::format("  {}\n", r.description);
  out += fmt::format("  {:<11} {}\n", "workload", r.workload);
  if (first) {
    out += fmt::format("  {:<11} {}\n", "host", first->host_label);
    out += fmt::format("  {:<11} {}\n", "profile", first->profile_label);
    out += fmt::format("  {:<11} {}\n", "VM", first->vm_label);
  }
  out += fmt::format("  {:<11} seed {}, {} iterations per variant after {} warm-up\n", "run", r.seed, r.iterations, r.warmup);
  if (!r.reproduces.empty()) out += fmt::format("  {:<11} {}\n", "reproduces", r.reproduces);
  if (!first) return out;

  const workload::Metric& main0 = first->result.metrics.front();
  out += "\n" + wrap(fmt::format("  {} ({}){}", main0.name, main0.unit, main0.description.empty() ? "" : ":"),
                     main0.description, "    ");

  std::vector<std::string> long_counters;
  const auto cols = counter_columns(r, &long_counters);
  const bool has_checks = !r.checks.empty();
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> head = {"variant", "mean", "p50", "p99", "unit", "vs first"};
  for (const auto& c : cols) head.push_back(c);
  if (has_checks) head.push_back("check");
  rows.push_back(head);
  for (std::size_t i = 0; i < r.variants.size(); ++i) {
    const auto& v = r.variants[i];
    const workload::Metric& m = v.result.metrics.front();
    std::vector<std::string> row = {v.name, format_number(m.summary.mean), format_number(m.summary.p50),
                                    format_number(m.summary.p99), m.unit};
    if (m.summary.count == 0) {  // e.g. every IPI lost: no sample, no figure
      row[1] = row[2] = row[3] = "—";
      row.push_back("—");
    } else {
      row.push_back(i == 0 || main0.summary.count == 0 ? "—"
                                                       : fmt::format("{:+.1f}%", change_pct(m.summary.mean, main0.summary.mean)));
    }
    for (const auto& c : cols) {
      auto it = v.result.counters.find(c);
      row.push_back(fmt::format("{}", it == v.result.counters.end() ? 0 : it->second));
    }
    if (has_checks) {
      bool all = true;
      row.push_back(first_check(r, v.name, &all) ? (all ? "✓" : "✗") : "");
    }
    rows.push_back(std::move(row));
  }
  std::set<std::size_t> left = {0, 4};
  if (has_checks) left.insert(head.size() - 1);
  out += render_table(rows, left, "  ");
  // Legend of the other metrics, once (the per-variant lines give only their figures).
  std::vector<std::string> seen;
  for (const auto& v : r.variants)
    for (std::size_t i = 1; i < v.result.metrics.size(); ++i) {
      const auto& m = v.result.metrics[i];
      if (std::find(seen.begin(), seen.end(), m.name) != seen.end()) continue;
      if (seen.empty()) out += "  other metrics, per variant below:\n";
      seen.push_back(m.name);
      out += wrap(fmt::format("    {} ({}){}", m.name, m.unit, m.description.empty() ? "" : ":"), m.description, "      ");
    }

  for (const auto& v : r.variants) {
    out += fmt::format("\n  {}{}{}\n", v.name, v.description.empty() ? "" : ": ", v.description);
    const std::string ind = "    ";
    if (!v.result.settings.empty()) {
      std::string s;
      // Wrap between settings, not inside one: spaces inside an item are held as \x1f meanwhile.
      for (const auto& [k, val] : v.result.settings) s += fmt::format("{}{}={}", s.empty() ? "" : ", ", k, val);
      std::string item_spaces;
      for (std::size_t i = 0; i < s.size(); ++i) item_spaces += (s[i] == ' ' && (i == 0 || s[i - 1] != ',')) ? '\x1f' : s[i];
      std::string wrapped = wrap(fmt::format("{}{:<9}", ind, "settings"), item_spaces, ind + std::string(10, ' '));
      std::replace(wrapped.begin(), wrapped.end(), '\x1f', ' ');
      out += wrapped;
    }
    if (v.host_label != first->host_label) out += fmt::format("{}{:<9} {}\n", ind, "host", v.host_label);
    if (v.vm_label != first->vm_label) out += fmt::format("{}{:<9} {}\n", ind, "VM", v.vm_label);
    if (v.profile_label != first->profile_label) out += fmt::format("{}{:<9} {}\n", ind, "profile", v.profile_label);
    for (std::size_t i = 1; i < v.result.metrics.size(); ++i) {
      const auto& m = v.result.metrics[i];
      if (m.summary.count == 0) out += fmt::format("{}{:<9} {}: no samples\n", ind, "metric", m.name);
      else
        out += fmt::format("{}{:<9} {}: mean {} p50 {} p99 {} {}\n", ind, "metric", m.name, format_number(m.summary.mean),
                           format_number(m.summary.p50), format_number(m.summary.p99), m.unit);
    }
    std::string longc;
    for (const auto& c : long_counters)
      if (auto it = v.result.counters.find(c); it != v.result.counters.end() && it->second != 0)
        longc += fmt::format("{}{}={}", longc.empty() ? "" : ", ", c, it->second);
    if (!longc.empty()) out += fmt::format("{}{:<9} {}\n", ind, "counters", longc);
    out += format_resources(v.result, ind);
    if (opt.breakdown && !v.result.breakdown.empty()) {
      std::vector<workload::BreakdownRow> steps = v.result.breakdown;
      std::stable_sort(steps.begin(), steps.end(),
                       [](const workload::BreakdownRow& a, const workload::BreakdownRow& b) { return a.share > b.share; });
      const std::size_t n = std::min(opt.top_steps, steps.size());
      const std::string& unit = v.result.metrics.front().unit;
      std::size_t wnum = 0;
      for (std::size_t i = 0; i < n; ++i) wnum = std::max(wnum, format_number(steps[i].mean_per_iteration).size());
      for (std::size_t i = 0; i < n; ++i)
        out += fmt::format("{}{:<9} {:>{}} {} {:>6}  {}\n", ind, i == 0 ? "time" : "",
                           format_number(steps[i].mean_per_iteration), wnum, unit,
                           fmt::format("{:.1f}%", steps[i].share * 100), steps[i].step);
      out += fmt::format("{}{:<9} (top {} of {} steps, mean per iteration; share of the summed step time, steps may overlap)\n",
                         ind, "", n, steps.size());
    }
    for (const auto& c : r.checks) {
      if (c.expect.variant != v.name) continue;
      out += fmt::format("{}{:<9} {}{} = {} vs expected {} {}: {}\n", ind, "check", c.expect.key,
                         c.counter ? "" : " " + c.expect.stat,
                         c.counter ? fmt::format("{:.0f}", c.actual) : format_number(c.actual),
                         c.counter ? fmt::format("{:g}", c.expect.value) : format_number(c.expect.value),
                         c.expect.tolerance == 0 ? std::string("exactly") : format_tolerance(c.expect.tolerance),
                         c.pass ? "✓" : fmt::format("✗ ({:+.1f}%)", change_pct(c.actual, c.expect.value)));
    }
    for (const auto& note : v.result.notes) out += wrap(fmt::format("{}{:<9}", ind, "note"), note, ind + std::string(10, ' '));
  }

  std::set<std::string> keys, sources, files;
  for (const auto& v : r.variants) {
    collect_costs(v.result.provenance, keys, sources);
    files.insert(v.profile_file);
  }
  std::string file_list;
  for (const auto& f : files) file_list += (file_list.empty() ? "" : ", ") + f;
  out += fmt::format("\n  costs from {}: {} cost{} used, {} distinct source{} (--json lists every value and its source)\n",
                     file_list, keys.size(), keys.size() == 1 ? "" : "s", sources.size(), sources.size() == 1 ? "" : "s");
  if (has_checks) {
    std::size_t passed = 0;
    for (const auto& c : r.checks) passed += c.pass;
    out += fmt::format("  checks: {} of {} expectations hold{}\n", passed, r.checks.size(),
                       passed == r.checks.size() ? "" : " (--check makes this exit 1)");
  }
  return out;
}

ojson to_json(const ScenarioResult& r) {
  ojson j;
  j["scenario"] = r.name;
  j["title"] = r.title;
  j["description"] = r.description;
  j["workload"] = r.workload;
  j["reproduces"] = r.reproduces;
  j["seed"] = r.seed;
  j["iterations"] = r.iterations;
  j["warmup"] = r.warmup;
  ojson vars = ojson::array();
  const double first_mean = r.variants.empty() ? 0 : r.variants.front().result.metrics.front().summary.mean;
  const std::uint64_t first_count = r.variants.empty() ? 0 : r.variants.front().result.metrics.front().summary.count;
  for (const auto& v : r.variants) {
    ojson jv;
    jv["name"] = v.name;
    jv["description"] = v.description;
    jv["host"] = v.host_label;
    jv["vm"] = v.vm_label;
    jv["profile"] = v.profile_file;
    ojson metrics = ojson::object();
    for (const auto& m : v.result.metrics) metrics[m.name] = metric_json(m);
    jv["metrics"] = std::move(metrics);
    ojson counters = ojson::object();
    for (const auto& [k, n] : v.result.counters) counters[k] = n;
    jv["counters"] = std::move(counters);
    if (v.result.metrics.front().summary.count == 0 || first_count == 0) jv["change_vs_first_pct"] = nullptr;
    else jv["change_vs_first_pct"] = change_pct(v.result.metrics.front().summary.mean, first_mean);
    ojson bd = ojson::array();
    for (const auto& b : v.result.breakdown)
      bd.push_back(ojson{{"step", b.step}, {"mean_per_iteration", b.mean_per_iteration}, {"share", b.share}});
    jv["breakdown"] = std::move(bd);
    jv["throughput"] = ojson{{"window_ns", v.result.throughput.window_ns},
                             {"ipis_per_second", v.result.throughput.ipis_per_second},
                             {"calls_per_second", v.result.throughput.calls_per_second}};
    ojson res = ojson::array();
    for (const auto& x : v.result.resources)
      res.push_back(ojson{{"name", x.name}, {"kind", x.kind}, {"utilisation", x.utilisation}, {"wait_mean", x.wait_mean},
                          {"wait_p99", x.wait_p99}, {"unit", x.unit}, {"arrivals", x.arrivals},
                          {"little", ojson{{"l", x.little_l}, {"lambda_w", x.little_lambda_w}, {"carried", x.little_carried}, {"exact", x.little_exact}}}});
    jv["resources"] = std::move(res);
    ojson settings = ojson::object();
    for (const auto& [k, val] : v.result.settings) settings[k] = val;
    jv["settings"] = std::move(settings);
    jv["notes"] = v.result.notes;
    jv["provenance"] = ojson::parse(v.result.provenance.dump());
    // The profile file as shown (relative to the data folder), not where this checkout lies.
    if (auto& pf = jv["provenance"]; pf.is_object() && pf.contains("file") && pf["file"] == v.profile_path)
      pf["file"] = v.profile_file;
    jv["events"] = v.result.events;
    ojson checks = ojson::array();
    for (const auto& c : r.checks) {
      if (c.expect.variant != v.name) continue;
      checks.push_back(ojson{{"key", c.expect.key}, {"stat", c.counter ? std::string("counter") : c.expect.stat}, {"expected", c.expect.value},
                             {"tolerance", c.expect.tolerance}, {"actual", c.actual}, {"pass", c.pass}});
    }
    if (!checks.empty()) jv["check"] = std::move(checks);
    vars.push_back(std::move(jv));
  }
  j["variants"] = std::move(vars);
  if (!r.checks.empty()) {
    std::size_t passed = 0;
    for (const auto& c : r.checks) passed += c.pass;
    j["check"] = ojson{{"expectations", r.checks.size()}, {"passed", passed}, {"pass", passed == r.checks.size()}};
  }
  return j;
}

ojson to_json(const std::vector<ScenarioResult>& rs) {
  if (rs.size() == 1) return to_json(rs.front());
  ojson arr = ojson::array();
  for (const auto& r : rs) arr.push_back(to_json(r));
  return ojson{{"scenarios", std::move(arr)}};
}

}  // namespace ipilab::scenario
