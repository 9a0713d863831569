// `ipilab run --details`: the sections after the summary table. Scenario sections compare every
// variant in one block (settings shared by all, other metrics, throughput, resources, checks); then
// one block per variant with the variant sections (what differs, every counter, where the time
// goes). Adding a section: a function of the ScenarioSection / VariantSection shape (report.h),
// listed in kScenarioSections / kVariantSections below in print order.
#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "scenario/report.h"
#include "scenario/report_format.h"
#include "scenario/sample_hypercall.h"

namespace ipilab::scenario::report {

namespace {

const std::string kInd = "    ";               // a variant block's lines
const std::string kCont = kInd + std::string(10, ' ');  // their continuation lines

std::string label(const char* l) { return fmt::format("{}{:<9}", kInd, l); }

// "k=v, k=v" wrapped between items, never inside one.
std::string wrap_items(const std::string& first, const std::vector<std::string>& items, const std::string& indent) {
  std::string s;
  for (const auto& it : items) {
    // Spaces inside an item are held as \x1f while wrapping, except after "; " (a long item such as
    // "ITS written=socket 0 -> ...; socket 1 -> ..." may break between its parts).
    std::string held = it;
    for (std::size_t i = 0; i < held.size(); ++i)
      if (held[i] == ' ' && !(i > 0 && held[i - 1] == ';')) held[i] = '\x1f';
    s += (s.empty() ? "" : ", ") + held;
  }
  std::string out = wrap(first, s, indent);
  std::replace(out.begin(), out.end(), '\x1f', ' ');
  return out;
}

// Settings every variant has with the same value, in the first variant's order.
std::vector<std::pair<std::string, std::string>> common_settings(const ScenarioResult& r) {
  std::vector<std::pair<std::string, std::string>> out;
  if (r.variants.size() < 2) return out;
  for (const auto& kv : r.variants.front().result.settings) {
    const bool everywhere = std::all_of(r.variants.begin(), r.variants.end(), [&](const VariantResult& v) {
      return std::find(v.result.settings.begin(), v.result.settings.end(), kv) != v.result.settings.end();
    });
    if (everywhere) out.push_back(kv);
  }
  return out;
}

// ---- scenario sections ----------------------------------------------------------------------

std::string section_common_settings(const ScenarioResult& r, const TextOptions&) {
  const auto common = common_settings(r);
  if (common.empty()) return {};
  std::vector<std::string> items;
  for (const auto& [k, v] : common) items.push_back(k + "=" + v);
  return wrap_items("  settings in every variant:", items, "    ");
}

// One table per metric other than the main one: mean, p50, p99, change against the first variant.
std::string section_other_metrics(const ScenarioResult& r, const TextOptions&) {
  std::vector<std::string> names;
  std::map<std::string, const workload::Metric*> shown;  // name -> a metric carrying unit, description
  for (const auto& v : r.variants)
    for (std::size_t i = 1; i < v.result.metrics.size(); ++i) {
      const auto& m = v.result.metrics[i];
      if (!shown.count(m.name)) {
        names.push_back(m.name);
        shown[m.name] = &m;
      }
    }
  std::string out;
  for (const auto& name : names) {
    const workload::Metric& proto = *shown[name];
    auto find = [&](const VariantResult& v) -> const workload::Metric* {
      for (const auto& m : v.result.metrics)
        if (m.name == name) return &m;
      return nullptr;
    };
    std::vector<double> figures;
    for (const auto& v : r.variants)
      if (const auto* m = find(v); m && m->summary.count) figures.insert(figures.end(), {m->summary.mean, m->summary.p50, m->summary.p99});
    const NumberFormat f = column_format(figures);
    Table t({"variant", "mean", "p50", "p99", "vs first"});
    const workload::Metric* first = find(r.variants.front());
    for (std::size_t i = 0; i < r.variants.size(); ++i) {
      const auto* m = find(r.variants[i]);
      if (!m) {
        t.add({r.variants[i].name, "", "", "", "(not reported)"});
      } else if (m->summary.count == 0) {
        t.add({r.variants[i].name, "—", "—", "—", "—"});
      } else {
        const bool cmp = i > 0 && first && first->summary.count > 0;
        t.add({r.variants[i].name, format_fixed(m->summary.mean, f), format_fixed(m->summary.p50, f), format_fixed(m->summary.p99, f),
               cmp ? format_percent(change_pct(m->summary.mean, first->summary.mean)) : "—"});
      }
    }
    out += "\n" + wrap(fmt::format("  {} ({}){}", name, proto.unit, proto.description.empty() ? "" : ":"), proto.description, "    ");
    out += t.render("  ");
  }
  return out;
}

std::string section_throughput(const ScenarioResult& r, const TextOptions&) {
  const bool any = std::any_of(r.variants.begin(), r.variants.end(), [](const VariantResult& v) { return v.result.throughput.window_ns > 0; });
  if (!any) return {};
  std::vector<double> win, ipis, calls;
  for (const auto& v : r.variants) {
    win.push_back(v.result.throughput.window_ns / 1000);
    ipis.push_back(v.result.throughput.ipis_per_second);
    calls.push_back(v.result.throughput.calls_per_second);
  }
  const NumberFormat fw = column_format(win), fi = column_format(ipis), fc = column_format(calls);
  Table t({"variant", "window (us)", "IPIs/s delivered", "calls/s completed"});
  bool any_lost = false;
  for (std::size_t i = 0; i < r.variants.size(); ++i) {
    const auto& counters = r.variants[i].result.counters;
    const auto lost = counters.find("lost");
    const bool all_lost = calls[i] == 0 && lost != counters.end() && lost->second > 0;
    any_lost |= all_lost;
    t.add({r.variants[i].name, format_fixed(win[i], fw), format_fixed(ipis[i], fi),
           all_lost ? format_fixed(calls[i], fc) + " (all lost)" : format_fixed(calls[i], fc)});
  }
  return "\n  throughput over the measured window of simulated time\n" + t.render("  ") +
         (any_lost ? "  (all lost: every measured call lost an IPI, so none completed; see the counter lost)\n" : "");
}

// Every resource kind of every variant: how many, mean and highest utilisation (and which), mean
// wait over every arrival, the worst p99 wait.
std::string section_resources(const ScenarioResult& r, const TextOptions&) {
  struct Row {
    std::string variant, kind, busiest, unit;
    std::size_t n = 0;
    double umean = 0, umax = 0, wmean = 0, wp99 = 0;
  };
  std::vector<Row> rows;
  for (const auto& v : r.variants) {
    std::vector<std::string> kinds;
    for (const auto& x : v.result.resources)
      if (std::find(kinds.begin(), kinds.end(), x.kind) == kinds.end()) kinds.push_back(x.kind);
    for (const auto& k : kinds) {
      Row row;
      row.variant = v.name;
      row.kind = k;
      double usum = 0, wsum = 0;
      std::uint64_t arrivals = 0;
      const workload::ResourceReport* busiest = nullptr;
      for (const auto& x : v.result.resources) {
        if (x.kind != k) continue;
        ++row.n;
        usum += x.utilisation;
        wsum += x.wait_mean * static_cast<double>(x.arrivals);
        arrivals += x.arrivals;
        row.wp99 = std::max(row.wp99, x.wait_p99);
        if (!busiest || x.utilisation > busiest->utilisation) busiest = &x;
      }
      row.umean = usum / static_cast<double>(row.n);
      row.umax = busiest->utilisation;
      row.busiest = busiest->name;
      row.unit = busiest->unit;
      row.wmean = arrivals ? wsum / static_cast<double>(arrivals) : 0;
      rows.push_back(std::move(row));
    }
  }
  if (rows.empty()) return "\n  resources: none: no variant used a queue or a shared resource\n";
  std::vector<double> waits;
  for (const auto& x : rows) waits.insert(waits.end(), {x.wmean, x.wp99});
  const NumberFormat fw = column_format(waits), fu{3};
  const std::string unit = rows.front().unit;
  Table t({"variant", "kind", "count", "util mean", "util max", "busiest", fmt::format("wait mean ({})", unit),
           fmt::format("worst p99 ({})", unit)},
          {0, 1, 5});
  std::string last;
  for (const auto& x : rows) {
    t.add({x.variant == last ? "" : x.variant, x.kind, format_count(x.n), format_fixed(x.umean, fu), format_fixed(x.umax, fu),
           x.busiest, format_fixed(x.wmean, fw) + (x.unit == unit ? "" : " " + x.unit), format_fixed(x.wp99, fw) + (x.unit == unit ? "" : " " + x.unit)});
    last = x.variant;
  }
  return "\n  resources: utilisation over the measured window (mean and busiest), queueing waits (mean over all, worst p99)\n" + t.render("  ");
}

std::string section_checks(const ScenarioResult& r, const TextOptions&) {
  if (r.checks.empty()) return {};
  std::vector<const CheckOutcome*> checks;  // in variant order
  for (const auto& v : r.variants)
    for (const auto& c : r.checks)
      if (c.expect.variant == v.name) checks.push_back(&c);
  // One format for the metric values of the two number columns; counters are counts.
  std::vector<double> values;
  for (const auto* c : checks)
    if (!c->counter) values.insert(values.end(), {c->actual, c->expect.value});
  const NumberFormat fm = column_format(values);
  Table u({"variant", "value", "model", "expected", "tolerance", "result"}, {0, 1, 5});
  for (const auto* cp : checks) {
    const CheckOutcome& c = *cp;
    const NumberFormat f = c.counter ? NumberFormat{0} : fm;
    u.add({c.expect.kind == "predicted" ? c.expect.variant + " (predicted)" : c.expect.variant, c.counter ? c.expect.key : c.expect.key + " " + c.expect.stat, format_fixed(c.actual, f),
           format_fixed(c.expect.value, f), format_tolerance(c.expect.tolerance),
           !c.skipped.empty() ? "not checked (" + format_count(r.scenario_iterations) + " iterations)"
           : c.pass         ? "✓"
                            : fmt::format("✗ ({})", format_percent(change_pct(c.actual, c.expect.value)))});
  }
  return "\n  checks (scenario.expect: the published figures)\n" + u.render("  ");
}

// Every cost object ({"key", "value", ...}) under a provenance, in order.
void cost_objects(const nlohmann::json& j, std::vector<const nlohmann::json*>& out) {
  if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it) {
      if (it.key() == "costs" && it.value().is_array()) {
        for (const auto& c : it.value())
          if (c.is_object() && c.contains("key")) out.push_back(&c);
      } else {
        cost_objects(it.value(), out);
      }
    }
  } else if (j.is_array()) {
    for (const auto& e : j) cost_objects(e, out);
  }
}

std::string str_of(const nlohmann::json& c, const char* k) {
  auto it = c.find(k);
  return it != c.end() && it->is_string() ? it->get<std::string>() : std::string();
}
double num_of(const nlohmann::json& c, const char* k) {
  auto it = c.find(k);
  return it != c.end() && it->is_number() ? it->get<double>() : 0.0;
}

// Each cost any variant used, once per (key, value, source): class, value, the range its mean may
// be off by (docs/uncertainty.md) and its source; the variants that used it when not all did.
std::string section_costs(const ScenarioResult& r, const TextOptions&) {
  struct Row {
    const nlohmann::json* c;
    std::vector<std::string> variants;
  };
  std::map<std::string, Row> rows;  // key \x1f value \x1f source -> row, sorted by key
  for (const auto& v : r.variants) {
    std::vector<const nlohmann::json*> cs;
    cost_objects(v.result.provenance, cs);
    for (const auto* c : cs) {
      const std::string id = str_of(*c, "key") + '\x1f' + fmt::format("{}", num_of(*c, "value")) + '\x1f' + str_of(*c, "source");
      auto [it, fresh] = rows.emplace(id, Row{c, {}});
      if (it->second.variants.empty() || it->second.variants.back() != v.name) it->second.variants.push_back(v.name);
    }
  }
  if (rows.empty()) return {};
  std::size_t estimates = 0;
  for (const auto& [id, row] : rows) estimates += str_of(*row.c, "class") == "estimate" ? 1 : 0;
  std::string out = fmt::format("\n  costs used: class, value, the range its mean may be off by, source ({} of {} are estimates)\n",
                                estimates, rows.size());
  for (const auto& [id, row] : rows) {
    const nlohmann::json& c = *row.c;
    const std::string unit = str_of(c, "unit");
    std::string range = "-";
    if (auto it = c.find("range"); it != c.end() && it->is_array() && it->size() == 2) {
      const double lo = (*it)[0].get<double>(), hi = (*it)[1].get<double>();
      range = lo == hi ? "fixed" : fmt::format("[{} - {}]", format_number(lo), format_number(hi));
      if (c.value("range_default", false)) range += " class default";
    }
    std::string line = fmt::format("    {:<34} {:<9} {:>9} {:<6} {}", str_of(c, "key"), str_of(c, "class"),
                                   format_number(num_of(c, "value")), unit, range);
    if (row.variants.size() != r.variants.size()) {
      std::string names;
      for (const auto& n : row.variants) names += (names.empty() ? "" : ", ") + n;
      line += " (in " + names + ")";
    }
    out += line + "\n" + wrap(kCont.substr(1), str_of(c, "source"), kCont);  // wrap puts a space after `first`
  }
  return out;
}

// ---- variant sections -----------------------------------------------------------------------

std::string section_settings(const ScenarioResult& r, const VariantResult& v, const TextOptions&) {
  const auto common = common_settings(r);
  std::vector<std::string> items;
  for (const auto& kv : v.result.settings)
    if (std::find(common.begin(), common.end(), kv) == common.end()) items.push_back(kv.first + "=" + kv.second);
  if (items.empty()) return {};
  return wrap_items(label("settings"), items, kCont);
}

std::string section_setup(const ScenarioResult& r, const VariantResult& v, const TextOptions&) {
  const VariantResult& first = r.variants.front();
  std::string out;
  if (v.host_label != first.host_label) out += wrap(label("host"), v.host_label, kCont);
  if (v.vm_label != first.vm_label) out += wrap(label("VM"), v.vm_label, kCont);
  if (v.profile_label != first.profile_label) out += wrap(label("profile"), v.profile_label, kCont);
  return out;
}

std::string section_counters(const ScenarioResult&, const VariantResult& v, const TextOptions&) {
  std::vector<std::string> items;
  for (const auto& [k, n] : v.result.counters)
    if (n != 0) items.push_back(k + "=" + format_count(n));
  if (items.empty()) return {};
  return wrap_items(label("counters"), items, kCont);
}

std::string section_breakdown(const ScenarioResult&, const VariantResult& v, const TextOptions& opt) {
  if (!opt.breakdown || v.result.breakdown.empty()) return {};
  std::vector<workload::BreakdownRow> steps = v.result.breakdown;
  std::stable_sort(steps.begin(), steps.end(), [](const auto& a, const auto& b) { return a.share > b.share; });
  const std::size_t n = std::min(opt.top_steps, steps.size());
  std::vector<double> means;
  for (std::size_t i = 0; i < n; ++i) means.push_back(steps[i].mean_per_iteration);
  const NumberFormat f = column_format(means);
  const std::string& unit = v.result.metrics.front().unit;
  Table t({"", "", "", ""}, {0, 3});
  for (std::size_t i = 0; i < n; ++i)
    t.add({fmt::format("{:<8}", i == 0 ? "time" : ""), format_fixed(steps[i].mean_per_iteration, f) + " " + unit,
           fmt::format("{:.1f}%", steps[i].share * 100), steps[i].step});
  std::string body = t.render(kInd);
  body.erase(0, body.find('\n') + 1);  // the empty header row
  return body + fmt::format("{}(top {} of {} steps, mean per iteration; share of the summed step time, steps may overlap)\n",
                            kCont, n, steps.size());
}

// The run's first send exactly as `ipilab hv send` prints it (an x86 Hyper-V variant only).
std::string section_sample(const ScenarioResult&, const VariantResult& v, const TextOptions&) {
  return format_sample_hypercall(v.result, kInd);
}

constexpr ScenarioSection kScenarioSections[] = {section_common_settings, section_other_metrics, section_throughput,
                                                 section_resources, section_checks, section_costs};

struct NamedVariantSection {
  VariantSection render;
  const char* label = nullptr;  ///< non-null: identical text to an earlier variant's becomes one line
  const char* what = nullptr;   ///<   "<label> the same <what> as 'X'"
};
constexpr NamedVariantSection kVariantSections[] = {
    {section_settings},
    {section_setup},
    {section_counters},
    {section_sample},
    {section_breakdown, "time", "steps"},
};

}  // namespace

std::string format_details(const ScenarioResult& r, const TextOptions& opt) {
  if (r.variants.empty()) return {};
  std::string out = "\n  ---- details ----\n";
  for (ScenarioSection s : kScenarioSections) out += s(r, opt);
  // Per variant: the sections, an identical dedupe-able section named instead of repeated.
  std::vector<std::map<std::string, std::string>> seen(std::size(kVariantSections));  // text -> first variant
  for (const auto& v : r.variants) {
    std::string block;
    for (std::size_t i = 0; i < std::size(kVariantSections); ++i) {
      const auto& sec = kVariantSections[i];
      const std::string text = sec.render(r, v, opt);
      if (text.empty()) continue;
      if (sec.label) {
        auto [it, fresh] = seen[i].emplace(text, v.name);
        if (!fresh) {
          block += fmt::format("{}{:<9} the same {} as '{}'\n", kInd, sec.label, sec.what, it->second);
          continue;
        }
      }
      block += text;
    }
    out += "\n" + wrap("  " + v.name + (v.description.empty() ? "" : ":"), v.description, "    ") + block;
  }
  return out;
}

}  // namespace ipilab::scenario::report
