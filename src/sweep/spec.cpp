#include "sweep/spec.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/error.h"
#include "common/file.h"
#include "common/suggest.h"
#include "scenario/file_names.h"
#include "topology/toml_read.h"
#include "workload/counters.h"

namespace ipilab::sweep {

namespace fs = std::filesystem;
using toml_read::TableReader;

namespace {

constexpr std::array<std::string_view, 4> kSections = {"host", "vm", "profile", "workload"};
constexpr std::size_t kMaxRangeValues = 100'000;
constexpr std::size_t kMaxPoints = 1'000'000;

std::string join(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : ", ") + s;
  return out.empty() ? "none" : out;
}

std::optional<double> parse_number(std::string_view s) {
  if (s.empty()) return std::nullopt;
  double d = 0;
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), d);
  if (ec != std::errc() || p != s.data() + s.size() || !std::isfinite(d)) return std::nullopt;
  return d;
}

std::optional<double> node_number(const toml::node& n) {
  if (const auto* i = n.as_integer()) return static_cast<double>(i->get());
  if (const auto* f = n.as_floating_point()) return std::isfinite(f->get()) ? std::optional<double>(f->get()) : std::nullopt;
  return std::nullopt;
}

// Copies a node into `t` under `key` (the copy has no source region, which is what we want: a value
// from the spec must not be reported at a line of the scenario file).
void copy_into(toml::table& t, const std::string& key, const toml::node& n) {
  n.visit([&](const auto& concrete) { t.insert_or_assign(key, concrete); });
}

// The table at `parts[0..n-1]` inside `root`, created as needed.
toml::table& table_at(toml::table& root, const std::vector<std::string>& parts, std::size_t n) {
  toml::table* t = &root;
  for (std::size_t i = 0; i < n; ++i) {
    toml::node* c = t->get(parts[i]);
    if (!c || !c->is_table()) {
      t->insert_or_assign(parts[i], toml::table{});
      c = t->get(parts[i]);
    }
    t = c->as_table();
  }
  return *t;
}

bool path_prefix(const std::string& a, const std::string& b) {
  return a == b || (b.size() > a.size() && b.compare(0, a.size(), a) == 0 && b[a.size()] == '\x1f');
}

std::string shown_path(std::string p) {
  std::replace(p.begin(), p.end(), '\x1f', '.');
  return p;
}

void check_section(std::string_view first, const std::string& place) {
  if (std::find(kSections.begin(), kSections.end(), first) == kSections.end())
    throw InputError(place, fmt::format("'{}' is not a scenario table an axis can set (host, vm, profile or workload)", first));
}

std::string value_label(const toml::node& n) {
  if (const auto* s = n.as_string()) return s->get();
  return canonical(n);
}

// Integers, or floats when any bound is a float.
std::vector<toml::table> range_values(const toml::table& rt, const std::string& file, const std::string& path,
                                      std::vector<std::string>& labels, std::vector<std::optional<double>>& numbers,
                                      std::vector<std::string>& canon) {
  TableReader r(rt, file, path);
  const toml::node* from = r.node("from");
  const toml::node* to = r.node("to");
  const toml::node* step = r.node("step");
  const toml::node* factor = r.node("factor");
  r.finish();
  if (!from) r.fail("from", "missing (a number is required)");
  if (!to) r.fail("to", "missing (a number is required)");
  if (!step == !factor) r.fail(step ? "factor" : "step", "give exactly one of step (linear) or factor (geometric)");
  const bool ints = from->is_integer() && to->is_integer() && (step ? step->is_integer() : true);
  const double a = toml_read::node_double(*from, file, path + ".from");
  const double b = toml_read::node_double(*to, file, path + ".to");
  const double s = step ? toml_read::node_double(*step, file, path + ".step") : 0;
  const double f = factor ? toml_read::node_double(*factor, file, path + ".factor") : 0;
  if (!std::isfinite(a) || !std::isfinite(b)) r.fail("from", "from and to must be finite numbers");
  if (b < a) r.fail("to", fmt::format("to ({}) is below from ({})", b, a));
  if (step && !(s > 0 && std::isfinite(s))) r.fail("step", "must be a number > 0");
  if (factor && !(f > 1 && std::isfinite(f))) r.fail("factor", "must be a number > 1");
  if (factor && a <= 0) r.fail("from", "a geometric range (factor) needs from > 0");
  std::vector<double> xs;
  const double slack = 1e-9 * std::max(std::fabs(a), std::fabs(b));
  if (step) {
    const double n = std::floor((b - a) / s + 1e-9);
    if (n + 1 > static_cast<double>(kMaxRangeValues))
      r.fail("step", fmt::format("the range has more than {} values", kMaxRangeValues));
    for (std::size_t i = 0; i <= static_cast<std::size_t>(n); ++i) xs.push_back(a + static_cast<double>(i) * s);
  } else {
    for (double x = a; x <= b + slack; x *= f) {
      if (xs.size() >= kMaxRangeValues) r.fail("factor", fmt::format("the range has more than {} values", kMaxRangeValues));
      xs.push_back(ints ? std::round(x) : x);
    }
  }
  std::vector<toml::table> out;
  for (double x : xs) {
    toml::table holder;
    if (ints) {
      if (std::fabs(x) > 9.0e15) r.fail("to", "integer range values beyond 9e15");
      const auto v = static_cast<std::int64_t>(std::llround(x));
      if (!out.empty() && numbers.back() && *numbers.back() == static_cast<double>(v)) continue;  // factor rounding
      holder.insert_or_assign("v", v);
    } else {
      holder.insert_or_assign("v", x);
    }
    const toml::node& n = *holder.get("v");
    labels.push_back(value_label(n));
    numbers.push_back(node_number(n));
    canon.push_back(canonical(n));
    out.push_back(std::move(holder));
  }
  return out;
}

// The fields of one [[axis]] table, read before the axis is built from them.
struct AxisFields {
  std::optional<std::string> name, key;
  const toml::array* values = nullptr;
  const toml::table* range = nullptr;
  const toml::array* set = nullptr;
  const toml::array* labels = nullptr;
};

// A compound axis: set = [{ label = "...", section.key = value, ... }, ...].
void read_compound_values(const TableReader& r, const AxisFields& f, const std::string& file, const std::string& path,
                          Axis& ax) {
  const toml::array* set = f.set;
  ax.place = r.place("set");
  if (set->empty()) r.fail("set", "an empty list: give at least one value");
  for (std::size_t j = 0; j < set->size(); ++j) {
    const toml::node& vn = (*set)[j];
    const std::string vpath = fmt::format("{}.set[{}]", path, j);
    const toml::table* vt = vn.as_table();
    if (!vt)
      throw InputError(toml_read::place(file, vn.source(), vpath),
                       fmt::format("expected a table {{ label = \"...\", section.key = value, ... }}, got {}", toml_read::type_name(vn)));
    AxisValue v;
    v.place = toml_read::place(file, vn.source(), vpath);
    const toml::node* ln = vt->get("label");
    if (!ln || !ln->is_string()) throw InputError(v.place, "each value of a compound axis needs label = \"...\"");
    v.label = ln->as_string()->get();
    for (const auto& [k, n] : *vt) {
      if (k.str() == "label") continue;
      const std::string kp = toml_read::place(file, k.source(), fmt::format("{}.{}", vpath, k.str()));
      check_section(k.str(), kp);
      if (!n.is_table()) throw InputError(kp, fmt::format("expected a table of keys under '{}', got {}", k.str(), toml_read::type_name(n)));
      copy_into(v.set, std::string(k.str()), n);
    }
    if (v.set.empty()) throw InputError(v.place, "sets nothing: add keys such as workload.mechanism = \"hyperv\"");
    v.canonical = canonical(v.set);
    v.number = parse_number(v.label);
    ax.values.push_back(std::move(v));
  }
}

// A one-key axis: key with values = [...] or range = {...}, and optional labels.
void read_keyed_values(const TableReader& r, const AxisFields& f, const std::string& file, const std::string& path,
                       Axis& ax) {
  const std::optional<std::string>& key = f.key;
  const toml::array* values = f.values;
  const toml::table* range = f.range;
  const toml::array* labels = f.labels;
  ax.key = *key;
  ax.place = r.place("key");
  const std::vector<std::string> parts = split_dotted_key(*key, ax.place);
  check_section(parts[0], ax.place);
  if (parts.size() < 2) r.fail("key", fmt::format("'{}' names a whole table: give a key inside it (e.g. {}.something)", *key, parts[0]));
  if (!values == !range) r.fail(values ? "range" : "values", "give exactly one of values = [...] or range = {...}");
  std::vector<std::string> lbl, canon;
  std::vector<std::optional<double>> nums;
  std::vector<std::string> places;
  std::vector<toml::table> holders;  // range values
  std::vector<const toml::node*> nodes;
  if (values) {
    if (values->empty()) r.fail("values", "an empty list: give at least one value");
    for (std::size_t j = 0; j < values->size(); ++j) {
      const toml::node& vn = (*values)[j];
      nodes.push_back(&vn);
      lbl.push_back(value_label(vn));
      nums.push_back(node_number(vn));
      canon.push_back(canonical(vn));
      places.push_back(toml_read::place(file, vn.source(), fmt::format("{}.values[{}]", path, j)));
    }
  } else {
    holders = range_values(*range, file, path + ".range", lbl, nums, canon);
    for (std::size_t j = 0; j < holders.size(); ++j) {
      nodes.push_back(holders[j].get("v"));
      places.push_back(toml_read::place(file, range->source(), fmt::format("{}.range (value {})", path, lbl[j])));
    }
  }
  if (labels) {
    if (labels->size() != nodes.size())
      r.fail("labels", fmt::format("{} labels for {} values", labels->size(), nodes.size()));
    for (std::size_t j = 0; j < labels->size(); ++j) {
      const toml::node& ln = (*labels)[j];
      if (!ln.is_string())
        throw InputError(toml_read::place(file, ln.source(), fmt::format("{}.labels[{}]", path, j)),
                         fmt::format("expected a string, got {}", toml_read::type_name(ln)));
      lbl[j] = ln.as_string()->get();
      if (!nums[j]) nums[j] = parse_number(lbl[j]);
    }
  } else {
    for (std::size_t j = 0; j < lbl.size(); ++j)
      if (!nums[j]) nums[j] = parse_number(lbl[j]);
  }
  for (std::size_t j = 0; j < nodes.size(); ++j) {
    AxisValue v;
    v.label = lbl[j];
    v.number = nums[j];
    v.canonical = canon[j];
    v.place = places[j];
    copy_into(table_at(v.set, parts, parts.size() - 1), parts.back(), *nodes[j]);
    ax.values.push_back(std::move(v));
  }
}

// The axis name and every value's label: printable, labels unique within the axis.
void check_axis_labels(const TableReader& r, const Axis& ax) {
  if (ax.name.empty()) r.fail("name", "must not be empty");
  for (unsigned char c : ax.name)
    if (c < 0x20 || c == 0x7f || c == ',' || c == '=') r.fail("name", "must not contain control characters, ',' or '='");
  for (std::size_t j = 0; j < ax.values.size(); ++j) {
    for (unsigned char c : ax.values[j].label)
      if (c < 0x20 || c == 0x7f) throw InputError(ax.values[j].place, "a label must not contain control characters");
    for (std::size_t k = 0; k < j; ++k)
      if (ax.values[k].label == ax.values[j].label)
        throw InputError(ax.values[j].place, fmt::format("axis '{}' has the label '{}' twice (values {} and {})", ax.name,
                                                         ax.values[j].label, k, j));
    for (std::size_t k = 0; k < j; ++k)  // the same setting under two labels: the same point twice
      if (!ax.values[k].canonical.empty() && ax.values[k].canonical == ax.values[j].canonical)
        throw InputError(ax.values[j].place, fmt::format("axis '{}' has the value {} twice (values {} and {}): each "
                                                         "point would be run twice",
                                                         ax.name, ax.values[j].canonical, k, j));
  }
}

// Entry `path` of an array of tables (`what`: "[[axis]]"); InputError naming it when it is not a table.
const toml::table& array_entry_table(const toml::node& n, const std::string& file, const std::string& path,
                                     std::string_view what) {
  const toml::table* t = n.as_table();
  if (!t)
    throw InputError(toml_read::place(file, n.source(), path),
                     fmt::format("expected a table ({}), got {}", what, toml_read::type_name(n)));
  return *t;
}

Axis read_axis(const toml::node& an, const std::string& file, std::size_t index) {
  const std::string path = fmt::format("axis[{}]", index);
  const toml::table* at = &array_entry_table(an, file, path, "[[axis]]");
  TableReader r(*at, file, path);
  Axis ax;
  AxisFields f;
  f.name = r.opt_string("name");
  f.key = r.opt_string("key");
  f.values = r.opt_array("values");
  f.range = r.opt_table("range");
  f.set = r.opt_array("set");
  f.labels = r.opt_array("labels");
  ax.unit = r.opt_string("unit").value_or("");
  r.finish();

  if (f.set) {
    if (f.key) r.fail("key", "a compound axis (set = [...]) has no key: each value names its keys");
    if (f.values || f.range) r.fail(f.values ? "values" : "range", "give set, or key with values or range, not both");
    if (f.labels) r.fail("labels", "a compound axis' values carry their own label");
    if (!f.name) r.fail("set", "a compound axis needs a name");
    read_compound_values(r, f, file, path, ax);
    ax.name = *f.name;
  } else {
    if (!f.key) r.fail("key", "missing: the dotted scenario key this axis sets (e.g. vm.vcpus), or set = [...]");
    read_keyed_values(r, f, file, path, ax);
    ax.name = f.name.value_or(*f.key);
  }
  check_axis_labels(r, ax);
  return ax;
}

std::size_t find_axis(const std::vector<Axis>& axes, std::string_view name, const std::string& place) {
  for (std::size_t i = 0; i < axes.size(); ++i)
    if (axes[i].name == name) return i;
  for (std::size_t i = 0; i < axes.size(); ++i)
    if (!axes[i].key.empty() && axes[i].key == name) return i;
  std::vector<std::string> names;
  for (const auto& a : axes) names.push_back("'" + a.name + "'");
  throw InputError(place, fmt::format("no axis named '{}' (axes: {})", name, join(names)));
}

std::size_t find_value(const Axis& ax, const toml::node& n, const std::string& place) {
  if (auto j = ax.find(n)) return *j;
  std::vector<std::string> labels;
  for (const auto& v : ax.values) labels.push_back("'" + v.label + "'");
  throw InputError(place, fmt::format("axis '{}' has no value {} (values: {})", ax.name, canonical(n), join(labels)));
}

// axis -> value pairs of a baseline or a plot's where.
std::vector<std::pair<std::size_t, std::size_t>> read_selection(const toml::table& t, const std::vector<Axis>& axes,
                                                                const std::string& file, const std::string& path) {
  std::vector<std::pair<std::size_t, std::size_t>> out;
  for (const auto& [k, n] : t) {
    const std::string place = toml_read::place(file, k.source(), fmt::format("{}.{}", path, k.str()));
    const std::size_t a = find_axis(axes, k.str(), place);
    for (const auto& [b, _] : out)
      if (b == a) throw InputError(place, fmt::format("axis '{}' is named twice", axes[a].name));
    out.emplace_back(a, find_value(axes[a], n, place));
  }
  std::sort(out.begin(), out.end());
  return out;
}

Skip read_skip(const toml::node& sn, const std::vector<Axis>& axes, const std::string& file, std::size_t index) {
  const std::string path = fmt::format("skip[{}]", index);
  const toml::table* st = &array_entry_table(sn, file, path, "[[skip]]");
  TableReader r(*st, file, path);
  Skip s;
  const toml::table* when = r.opt_table("when");
  s.reason = r.req_string("reason");
  r.finish();
  s.place = r.place("when");
  if (!when || when->empty()) r.fail("when", "missing: the conditions (axis = value, or axis = { gt = N }) of the points to skip");
  if (s.reason.empty()) r.fail("reason", "must not be empty: say why these points are skipped");
  for (const auto& [k, n] : *when) {
    const std::string kpath = fmt::format("{}.when.{}", path, k.str());
    const std::string place = toml_read::place(file, k.source(), kpath);
    Condition c;
    c.axis = find_axis(axes, k.str(), place);
    const Axis& ax = axes[c.axis];
    const toml::table* ct = n.as_table();
    if (!ct) {
      c.values = {find_value(ax, n, place)};
      s.when.push_back(std::move(c));
      continue;
    }
    if (ct->size() != 1)
      throw InputError(place, "a condition table holds one operator: eq, ne, lt, le, gt, ge or in");
    const auto first = ct->begin();
    const toml::key& op = first->first;
    const toml::node& arg = first->second;
    const std::string opplace = toml_read::place(file, op.source(), fmt::format("{}.{}", kpath, op.str()));
    const std::string_view o = op.str();
    if (o == "eq" || o == "ne") {
      c.op = o == "eq" ? Condition::Op::Eq : Condition::Op::Ne;
      c.values = {find_value(ax, arg, opplace)};
    } else if (o == "in") {
      c.op = Condition::Op::In;
      const toml::array* arr = arg.as_array();
      if (!arr || arr->empty()) throw InputError(opplace, "expected a non-empty array of values");
      for (const auto& e : *arr) c.values.push_back(find_value(ax, e, opplace));
    } else if (o == "lt" || o == "le" || o == "gt" || o == "ge") {
      c.op = o == "lt" ? Condition::Op::Lt : o == "le" ? Condition::Op::Le : o == "gt" ? Condition::Op::Gt : Condition::Op::Ge;
      const auto num = node_number(arg);
      if (!num) throw InputError(opplace, fmt::format("expected a number, got {}", toml_read::type_name(arg)));
      if (!ax.numeric())
        throw InputError(opplace, fmt::format("axis '{}' has values that are not numbers (give labels that are numbers, or use eq / in)", ax.name));
      c.number = *num;
    } else {
      throw InputError(opplace, fmt::format("unknown operator '{}' (eq, ne, lt, le, gt, ge, in)", o));
    }
    s.when.push_back(std::move(c));
  }
  return s;
}

PlotSpec read_plot(const toml::node& pn, const std::vector<Axis>& axes, const std::string& file, std::size_t index) {
  const std::string path = fmt::format("plot[{}]", index);
  const toml::table* pt = &array_entry_table(pn, file, path, "[[plot]]");
  TableReader r(*pt, file, path);
  PlotSpec p;
  p.place = toml_read::place(file, pt->source(), path);
  const auto name = r.opt_string("name");
  const std::string kind = r.opt_string("kind").value_or("line");
  const std::string x = r.req_string("x");
  const auto lines = r.opt_string("lines");
  const auto y = r.opt_string("y");
  p.value = r.opt_string("value").value_or("mean");
  const toml::table* where = r.opt_table("where");
  p.title = r.opt_string("title").value_or("");
  const auto scale = r.opt_string("x_scale");
  r.finish();
  if (kind == "line") p.kind = PlotSpec::Kind::Line;
  else if (kind == "heatmap") p.kind = PlotSpec::Kind::Heatmap;
  else r.fail("kind", fmt::format("'{}' is not a plot kind: line or heatmap", kind));
  p.x = find_axis(axes, x, r.place("x"));
  if (p.kind == PlotSpec::Kind::Line) {
    if (y) r.fail("y", "a line plot's y is its value (value = ...); y names the second axis of a heat map");
    if (lines) p.second = find_axis(axes, *lines, r.place("lines"));
  } else {
    if (lines) r.fail("lines", "a heat map has x and y axes, no lines");
    if (!y) r.fail("y", "missing: the axis along y of the heat map");
    p.second = find_axis(axes, *y, r.place("y"));
  }
  if (p.second && *p.second == p.x) r.fail(y ? "y" : "lines", "must be another axis than x");
  if (p.value != "mean" && p.value != "p50" && p.value != "p99" && p.value != "change_pct" &&
      !(p.value.rfind("counter.", 0) == 0 && p.value.size() > 8))
    r.fail("value", fmt::format("'{}' is not mean, p50, p99, change_pct or counter.NAME", p.value));
  if (p.value.rfind("counter.", 0) == 0 && !workload::find_counter(p.value.substr(8)))
    r.fail("value", fmt::format("'{}' names no counter{} (the counters: 'ipilab list --counters')", p.value.substr(8),
                                did_you_mean(p.value.substr(8), workload::counter_names())));
  p.x_scale = axes[p.x].numeric() ? PlotSpec::Scale::Linear : PlotSpec::Scale::Category;
  if (scale) {
    const Axis& ax = axes[p.x];
    if (*scale == "category") {
      p.x_scale = PlotSpec::Scale::Category;
    } else if (*scale == "linear" || *scale == "log") {
      bool ok = ax.numeric();
      if (*scale == "log")
        for (const auto& v : ax.values) ok = ok && v.number && *v.number > 0;
      if (!ok)
        r.fail("x_scale", fmt::format("axis '{}' needs {} for a {} x scale (or x_scale = \"category\")", ax.name,
                                      *scale == "log" ? "numbers > 0" : "numbers", *scale));
      p.x_scale = *scale == "log" ? PlotSpec::Scale::Log : PlotSpec::Scale::Linear;
    } else {
      r.fail("x_scale", fmt::format("'{}' is not linear, log or category", *scale));
    }
  }
  if (where) {
    p.where = read_selection(*where, axes, file, path + ".where");
    for (const auto& [a, _] : p.where)
      if (a == p.x || (p.second && a == *p.second))
        r.fail("where", fmt::format("axis '{}' is drawn by the plot; where fixes the other axes", axes[a].name));
  }
  p.name = name.value_or(fmt::format("{}-{}{}", kind, axes[p.x].name, p.second ? "-" + axes[*p.second].name : ""));
  if (p.name.empty()) r.fail("name", "must not be empty");
  return p;
}

}  // namespace

bool Axis::numeric() const {
  return std::all_of(values.begin(), values.end(), [](const AxisValue& v) { return v.number.has_value(); });
}

std::optional<std::size_t> Axis::find(const toml::node& n) const {
  const auto num = node_number(n);
  const std::string canon = canonical(n);
  const toml::value<std::string>* s = n.as_string();
  for (std::size_t j = 0; j < values.size(); ++j) {
    const AxisValue& v = values[j];
    if (s && v.label == s->get()) return j;
    if (v.canonical == canon) return j;
  }
  std::optional<double> want = num;
  if (!want && s) want = parse_number(s->get());
  if (want)
    for (std::size_t j = 0; j < values.size(); ++j)
      if (values[j].number && *values[j].number == *want) return j;
  return std::nullopt;
}

std::size_t Spec::point_count() const {
  std::size_t n = 1;
  for (const auto& a : axes) n *= a.values.size();
  return n;
}

std::vector<std::string> split_dotted_key(std::string_view key, const std::string& place) {
  std::vector<std::string> parts;
  std::string cur;
  bool quoted_part = false;
  std::size_t i = 0;
  while (i <= key.size()) {
    if (i == key.size() || key[i] == '.') {
      std::string t = cur;
      if (!quoted_part) {
        const auto b = t.find_first_not_of(" \t");
        const auto e = t.find_last_not_of(" \t");
        t = b == std::string::npos ? "" : t.substr(b, e - b + 1);
      }
      if (t.empty() && !quoted_part) throw InputError(place, fmt::format("'{}': empty part in a dotted key", key));
      parts.push_back(std::move(t));
      cur.clear();
      quoted_part = false;
      ++i;
      continue;
    }
    const char c = key[i];
    if (c == '"' || c == '\'') {
      const std::size_t close = key.find(c, i + 1);
      if (close == std::string_view::npos) throw InputError(place, fmt::format("'{}': unterminated quote in a dotted key", key));
      if (!cur.empty() && cur.find_first_not_of(" \t") != std::string::npos)
        throw InputError(place, fmt::format("'{}': a quote in the middle of a key part", key));
      cur = std::string(key.substr(i + 1, close - i - 1));
      quoted_part = true;
      i = close + 1;
      while (i < key.size() && (key[i] == ' ' || key[i] == '\t')) ++i;
      if (i < key.size() && key[i] != '.') throw InputError(place, fmt::format("'{}': text after a quoted key part", key));
      continue;
    }
    if (quoted_part) throw InputError(place, fmt::format("'{}': text after a quoted key part", key));
    cur += c;
    ++i;
  }
  return parts;
}

std::string canonical(const toml::node& n) {
  if (const auto* s = n.as_string()) return nlohmann::json(s->get()).dump();
  if (const auto* i = n.as_integer()) return fmt::format("{}", i->get());
  if (const auto* f = n.as_floating_point()) {
    std::string t = fmt::format("{:.17g}", f->get());
    if (t.find_first_of(".eEn") == std::string::npos) t += ".0";
    return t;
  }
  if (const auto* b = n.as_boolean()) return b->get() ? "true" : "false";
  if (const auto* a = n.as_array()) {
    std::string out = "[";
    for (std::size_t i = 0; i < a->size(); ++i) out += (i ? ", " : "") + canonical((*a)[i]);
    return out + "]";
  }
  if (const auto* t = n.as_table()) {
    std::vector<std::pair<std::string, std::string>> kv;
    for (const auto& [k, v] : *t) kv.emplace_back(nlohmann::json(std::string(k.str())).dump(), canonical(v));
    std::sort(kv.begin(), kv.end());
    std::string out = "{";
    for (std::size_t i = 0; i < kv.size(); ++i) out += fmt::format("{}{} = {}", i ? ", " : "", kv[i].first, kv[i].second);
    return out + "}";
  }
  std::ostringstream ss;  // dates and times: TOML's own text form
  n.visit([&](const auto& c) { ss << c; });
  return ss.str();
}

Spec parse_spec(std::string_view text, const std::string& file) {
  Spec s;
  s.file = file;
  s.dir = fs::path(file).parent_path();
  const toml::table root = toml_read::parse(text, file);
  TableReader r(root, file, "");
  const toml::table* sw = r.opt_table("sweep");
  const toml::array* axes = r.opt_array("axis");
  const toml::array* skips = r.opt_array("skip");
  const toml::array* plots = r.opt_array("plot");
  r.finish();
  if (!sw) throw InputError(file, "missing [sweep] table (it needs at least scenario = \"NAME or FILE\")");

  TableReader sr(*sw, file, "sweep");
  scenario::FileHeading heading = scenario::read_file_heading(sr, file);
  s.name = std::move(heading.name);
  s.title = std::move(heading.title);
  s.description = std::move(heading.description);
  s.scenario = sr.req_string("scenario");
  s.scenario_place = sr.place("scenario");
  if (s.scenario.empty()) sr.fail("scenario", "must not be empty");
  s.variant = sr.opt_string("variant");
  s.variant_place = sr.place("variant");
  if (auto v = sr.opt_int("iterations", 1, 1'000'000'000)) s.iterations = static_cast<std::uint64_t>(*v);
  if (auto v = sr.opt_int("seed", 0)) s.seed = static_cast<std::uint64_t>(*v);
  const std::string seeds = sr.opt_string("seeds").value_or("per-point");
  if (seeds == "per-point") s.per_point_seeds = true;
  else if (seeds == "common") s.per_point_seeds = false;
  else sr.fail("seeds", fmt::format("'{}' is not per-point or common", seeds));
  s.skip_invalid = sr.opt_bool("skip_invalid").value_or(false);
  const toml::table* baseline = sr.opt_table("baseline");
  s.baseline_place = sr.place("baseline");
  sr.finish();

  if (!axes || axes->empty()) throw InputError(axes ? r.place("axis") : file, "no [[axis]]: a sweep needs at least one axis");
  for (std::size_t i = 0; i < axes->size(); ++i) {
    Axis ax = read_axis((*axes)[i], file, i);
    for (const auto& other : s.axes)
      if (other.name == ax.name) throw InputError(ax.place, fmt::format("a second axis named '{}'", ax.name));
    s.axes.push_back(std::move(ax));
  }
  // Two axes must not set the same key (the later one would silently win).
  std::vector<std::vector<std::string>> paths(s.axes.size());
  for (std::size_t i = 0; i < s.axes.size(); ++i) {
    for (const auto& v : s.axes[i].values) leaf_keys(v.set, '\x1f', paths[i]);  // overlap checks between axes
    std::sort(paths[i].begin(), paths[i].end());
    paths[i].erase(std::unique(paths[i].begin(), paths[i].end()), paths[i].end());
    for (std::size_t j = 0; j < i; ++j)
      for (const auto& p : paths[i])
        for (const auto& q : paths[j])
          if (path_prefix(p, q) || path_prefix(q, p))
            throw InputError(s.axes[i].place, fmt::format("axis '{}' sets {}, which axis '{}' sets too ({})", s.axes[i].name,
                                                          shown_path(p), s.axes[j].name, shown_path(q)));
  }
  std::size_t n = 1;
  for (const auto& a : s.axes) {
    if (n > kMaxPoints / a.values.size())
      throw InputError(a.place, fmt::format("the sweep has more than {} points", kMaxPoints));
    n *= a.values.size();
  }
  if (skips)
    for (std::size_t i = 0; i < skips->size(); ++i) s.skips.push_back(read_skip((*skips)[i], s.axes, file, i));
  if (baseline) s.baseline = read_selection(*baseline, s.axes, file, "sweep.baseline");
  if (plots)
    for (std::size_t i = 0; i < plots->size(); ++i) {
      PlotSpec p = read_plot((*plots)[i], s.axes, file, i);
      for (const auto& o : s.plots)
        if (o.name == p.name) throw InputError(p.place, fmt::format("a second plot named '{}' (give name = \"...\")", p.name));
      s.plots.push_back(std::move(p));
    }
  return s;
}

Spec load_spec(const std::string& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) throw InputError(path, "no such sweep spec file");
  Spec s = parse_spec(read_text_file(path), display_path(path));
  s.dir = fs::path(path).parent_path();
  return s;
}

std::string display_path(const fs::path& p) {
  if (!p.is_absolute()) return p.string();
  const std::string rel = scenario::path_in_data_dir(p);
  return rel.empty() ? p.string() : rel;
}

namespace {
void leaf_keys_below(const toml::table& t, const std::string& prefix, char separator, std::vector<std::string>& out) {
  for (const auto& [k, n] : t) {
    const std::string p = prefix.empty() ? std::string(k.str()) : prefix + separator + std::string(k.str());
    if (const auto* sub = n.as_table(); sub && !sub->empty())
      leaf_keys_below(*sub, p, separator, out);
    else
      out.push_back(p);
  }
}
}  // namespace

void leaf_keys(const toml::table& t, char separator, std::vector<std::string>& out) {
  leaf_keys_below(t, "", separator, out);
}

}  // namespace ipilab::sweep
