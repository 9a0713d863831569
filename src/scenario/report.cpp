// The terminal report of a scenario: the summary (header, side-by-side table, what is the same in
// every variant, notes, checks, costs, a hint) and, with --details, the sections of
// report_details.cpp between the table and the footer.
#include "scenario/report.h"

#include <algorithm>
#include <cmath>
#include <set>

#include <fmt/format.h>

#include "scenario/report_format.h"

namespace ipilab::scenario {

namespace {

using report::column_format;
using report::format_count;
using report::format_fixed;
using report::NumberFormat;

// The counters the table may show, in column order. lost and misdelivered are shown whenever they
// are non-zero (they say a model lost or misrouted an interrupt); the others only when they differ
// between variants (a value every variant shares is listed once below the table).
const std::vector<std::string> kKeyCounters = {"sends",     "hypercalls", "native_fallbacks", "icr_writes",
                                               "sgir_writes", "its_remote", "kicks",          "vm_exits",
                                               "coalesced", "polling_skips", "misdelivered",  "lost"};
// Which counter columns give way first when the table is wider than TextOptions::max_width.
const std::vector<std::string> kDropFirst = {"sends",       "vm_exits",   "coalesced",  "kicks",     "polling_skips",
                                             "its_remote",  "sgir_writes", "icr_writes", "native_fallbacks", "hypercalls"};

std::uint64_t counter(const VariantResult& v, const std::string& name) {
  const auto it = v.result.counters.find(name);
  return it == v.result.counters.end() ? 0 : it->second;
}

const workload::Metric& main_metric(const VariantResult& v) { return v.result.metrics.front(); }

// Every {key, source} object inside any "costs" array of a provenance document.
void collect_costs(const nlohmann::json& j, std::set<std::string>& keys, std::set<std::string>& sources,
                   std::set<std::string>& estimates) {
  if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it) {
      if (it.key() == "costs" && it.value().is_array()) {
        for (const auto& c : it.value()) {
          if (!c.is_object()) continue;
          auto k = c.find("key");
          if (k == c.end() || !k->is_string()) continue;
          keys.insert(k->get<std::string>());
          if (auto s = c.find("source"); s != c.end() && s->is_string()) sources.insert(s->get<std::string>());
          if (auto cl = c.find("class"); cl != c.end() && cl->is_string() && *cl == "estimate") estimates.insert(k->get<std::string>());
        }
      } else {
        collect_costs(it.value(), keys, sources, estimates);
      }
    }
  } else if (j.is_array()) {
    for (const auto& e : j) collect_costs(e, keys, sources, estimates);
  }
}

struct CounterChoice {
  std::vector<std::string> columns;   // in kKeyCounters order
  std::vector<std::string> constant;  // non-zero and the same in every variant
};

CounterChoice choose_counters(const ScenarioResult& r) {
  CounterChoice c;
  for (const auto& name : kKeyCounters) {
    std::set<std::uint64_t> values;
    bool any = false;
    for (const auto& v : r.variants) {
      values.insert(counter(v, name));
      any = any || counter(v, name) != 0;
    }
    if (!any) continue;
    const bool alarm = name == "lost" || name == "misdelivered";
    if (!alarm && r.variants.size() >= 2 && values.size() == 1) c.constant.push_back(name);
    else c.columns.push_back(name);
  }
  return c;
}

// The check cell of one variant: its pass mark and the expected values ("✓ 8,043 ±2%",
// "✓ send_cost 12,650 ±3%" for another metric than the table's); a miss adds the model's value when
// the row does not show it, and how far off it is ("✗ send_cost 12,650 ±3% (model 13,400) (off +5.9%)").
std::string check_cell(const ScenarioResult& r, const VariantResult& v, const NumberFormat& main_fmt,
                       const std::vector<std::string>& counter_columns) {
  std::vector<const CheckOutcome*> cs;
  for (const auto& c : r.checks)
    if (c.expect.variant == v.name && c.skipped.empty()) cs.push_back(&c);
  if (cs.empty()) return "";
  bool all = true;
  std::string parts;
  const std::string& main = main_metric(v).name;
  for (const CheckOutcome* c : cs) {
    all = all && c->pass;
    const bool on_main = !c->counter && c->expect.key == main;
    std::string txt;
    bool shown = on_main;  // the actual value is in the row already
    if (on_main) {
      txt = (c->expect.stat == "mean" ? "" : c->expect.stat + " ") + format_fixed(c->expect.value, main_fmt);
    } else {
      const double both[] = {c->expect.value, c->actual};
      const NumberFormat f = c->counter ? NumberFormat{0} : column_format(both);
      txt = c->expect.key + (c->counter || c->expect.stat == "mean" ? "" : " " + c->expect.stat) + " " +
            format_fixed(c->expect.value, f);
      shown = c->counter && std::find(counter_columns.begin(), counter_columns.end(), c->expect.key) != counter_columns.end();
      if (c->expect.tolerance > 0) txt += " " + report::format_tolerance(c->expect.tolerance);
      // A miss shows the model's value when the row does not (a pass lies within the tolerance).
      if (!c->pass && !shown) txt += fmt::format(" (model {})", format_fixed(c->actual, f));
    }
    if (on_main && c->expect.tolerance > 0) txt += " " + report::format_tolerance(c->expect.tolerance);
    if (!c->pass && c->expect.value != 0) txt += fmt::format(" (off {})", report::format_percent(change_pct(c->actual, c->expect.value)));
    parts += (parts.empty() ? "" : "; ") + txt;
  }
  return std::string(all ? "✓ " : "✗ ") + parts;
}

// The summary table; `with_checks` false leaves the check column out (to measure the rest).
report::Table summary_table(const ScenarioResult& r, const std::vector<std::string>& counters, bool with_checks = true) {
  const bool has_checks = with_checks && !r.checks.empty();
  std::vector<std::string> head = {"variant", "mean", "p50", "p99", "vs first"};
  for (const auto& c : counters) head.push_back(c);
  std::set<std::size_t> left = {0};
  if (has_checks) {
    left.insert(head.size());
    head.push_back("check");
  }
  report::Table t(head, left);
  std::vector<double> figures;
  for (const auto& v : r.variants) {
    const auto& s = main_metric(v).summary;
    if (s.count == 0) continue;
    figures.insert(figures.end(), {s.mean, s.p50, s.p99});
  }
  const NumberFormat f = column_format(figures);
  const auto& first = main_metric(r.variants.front()).summary;
  for (std::size_t i = 0; i < r.variants.size(); ++i) {
    const VariantResult& v = r.variants[i];
    const auto& s = main_metric(v).summary;
    std::vector<std::string> row = {v.name};
    if (s.count == 0) {  // e.g. every IPI lost: no sample, no figure (never a 0)
      row.insert(row.end(), {"—", "—", "—", "—"});
    } else {
      row.insert(row.end(), {format_fixed(s.mean, f), format_fixed(s.p50, f), format_fixed(s.p99, f),
                             i == 0 || first.count == 0 ? "—" : report::format_percent(change_pct(s.mean, first.mean))});
    }
    for (const auto& c : counters) row.push_back(format_count(counter(v, c)));
    if (has_checks) row.push_back(check_cell(r, v, f, counters));
    t.add(std::move(row));
  }
  return t;
}

std::string header(const ScenarioResult& r) {
  std::string out = fmt::format("== {}: {} ==\n", r.name, r.title);
  if (!r.description.empty()) out += report::wrap("  ", r.description, "  ");
  if (!r.variants.empty()) {
    const VariantResult& first = r.variants.front();
    auto line = [&](const char* label, std::string VariantResult::*field) {
      const bool differs = std::any_of(r.variants.begin(), r.variants.end(),
                                       [&](const VariantResult& v) { return v.*field != first.*field; });
      out += report::wrap(fmt::format("  {:<11}", label),
                          first.*field + (differs ? " (first variant; others differ)" : ""),
                          std::string(14, ' '));
    };
    line("host", &VariantResult::host_label);
    line("VM", &VariantResult::vm_label);
    line("profile", &VariantResult::profile_label);
  }
  out += fmt::format("  {:<11} {} workload, seed {}, {} iterations per variant after {} warm-up\n", "run", r.workload,
                     r.seed, format_count(r.iterations), format_count(r.warmup));
  out += report::wrap(fmt::format("  {:<11}", "reproduces"),
                      r.reproduces.empty() ? "(the scenario names no published figure)" : r.reproduces, std::string(14, ' '));
  return out;
}

std::string footer(const ScenarioResult& r, const TextOptions& opt) {
  std::string out;
  if (!r.checks.empty()) {
    const std::size_t evaluated = r.checks_evaluated(), passed = r.checks_passed();
    out += fmt::format("  checks: {} of {} expectations hold{}\n", passed, evaluated,
                       passed == evaluated ? "" : " (--check makes this exit 1)");
    if (evaluated < r.checks.size())
      out += fmt::format("  not checked: {} expected counts (written for {} iterations, this run {})\n",
                         format_count(r.checks.size() - evaluated), format_count(r.scenario_iterations),
                         format_count(r.iterations));
  }
  std::set<std::string> keys, sources, files, estimates;
  for (const auto& v : r.variants) {
    collect_costs(v.result.provenance, keys, sources, estimates);
    files.insert(v.profile_file);
  }
  std::string file_list;
  for (const auto& f : files) file_list += (file_list.empty() ? "" : ", ") + f;
  out += fmt::format("  costs: {} used from {}, {} distinct source{}; {} of them estimates{}\n", keys.size(), file_list,
                     sources.size(), sources.size() == 1 ? "" : "s", estimates.size(),
                     estimates.empty() ? "" : opt.details ? " (listed above)" : " (--details lists each with its range and source)");
  const bool samples = std::any_of(r.variants.begin(), r.variants.end(),
                                   [](const VariantResult& v) { return v.result.sample_hypercall.has_value(); });
  out += opt.details ? "  --json FILE: all of it, with every cost's value and source\n"
                     : samples ? "  --details (-v): settings, each variant's first hypercall exactly, metrics, counters, "
                                 "resources, steps; --json FILE: all of it\n"
                               : "  --details (-v): settings, other metrics, counters, throughput, resources, where the time "
                                 "goes; --json FILE: all of it\n";
  return out;
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
  std::string out = header(r);
  if (r.variants.empty()) return out;

  const workload::Metric& main0 = main_metric(r.variants.front());
  out += "\n" + report::wrap(fmt::format("  {} ({}){}", main0.name, main0.unit, main0.description.empty() ? "" : ":"),
                             main0.description, "    ");
  CounterChoice cc = choose_counters(r);
  std::vector<std::string> dropped;
  // The check column comes last and may run past the limit; the other columns fit in it.
  for (const auto& d : kDropFirst) {
    if (summary_table(r, cc.columns, false).width() + 2 <= opt.max_width) break;
    auto it = std::find(cc.columns.begin(), cc.columns.end(), d);
    if (it == cc.columns.end()) continue;
    dropped.push_back(*it);
    cc.columns.erase(it);
  }
  out += summary_table(r, cc.columns).render("  ");

  if (!cc.constant.empty()) {
    std::string s;
    for (const auto& c : cc.constant) s += fmt::format("{}{} {}", s.empty() ? "" : ", ", c, format_count(counter(r.variants.front(), c)));
    out += report::wrap("  in every variant:", s, "    ");
  }
  if (!dropped.empty()) {
    std::string s;
    for (const auto& c : dropped) s += (s.empty() ? "" : ", ") + c;
    out += report::wrap("  not shown for width:", s + " (--details lists every counter)", "    ");
  }
  std::string empty;
  for (const auto& v : r.variants)
    if (main_metric(v).summary.count == 0) empty += (empty.empty() ? "" : ", ") + v.name;
  if (!empty.empty()) out += report::wrap("  — no samples:", empty + fmt::format(" (no {} figure; not a 0)", main0.name), "    ");
  // A spread of exactly zero is the model's, not the machine's: say so rather than let p50 = p99
  // read as a measured property of the path.
  std::string flat;
  for (const auto& v : r.variants) {
    const auto& m = main_metric(v).summary;
    if (m.count > 1 && m.min == m.max) flat += (flat.empty() ? "" : ", ") + v.name;
  }
  if (!flat.empty())
    out += report::wrap("  — no spread:", flat + fmt::format(": every sample of {} is the same; each step of this path is priced as a "
                                                             "constant (no cost on it has a distribution), so its p50 = p99 "
                                                             "is the model's, not a machine's run-to-run spread",
                                                             main0.name),
                        "    ");
  // Every note, once: a note several variants share names them all.
  std::vector<std::pair<std::string, std::string>> notes;  // (note, variants)
  for (const auto& v : r.variants)
    for (const auto& n : v.result.notes) {
      auto it = std::find_if(notes.begin(), notes.end(), [&](const auto& p) { return p.first == n; });
      if (it == notes.end()) notes.emplace_back(n, v.name);
      else it->second += ", " + v.name;
    }
  for (const auto& [n, who] : notes) out += report::wrap("  note", fmt::format("[{}] {}", who, n), "        ");

  if (opt.details) out += report::format_details(r, opt);
  out += "\n" + footer(r, opt);
  return out;
}

}  // namespace ipilab::scenario
