#include "cost/profile.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <set>
#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/enum_names.h"
#include "common/error.h"
#include "common/file.h"
#include "common/suggest.h"
#include "cost/catalog.h"
#include "cost/shipped.h"
#include "topology/toml_read.h"

namespace ipilab::cost {

namespace fs = std::filesystem;
using toml_read::TableReader;

std::string_view unit_name(Unit u) {
  using enum Unit;
  static constexpr EnumName<Unit> kNames[] = {{Cycles, "cycles"}, {Ns, "ns"}, {Ps, "ps"}, {Us, "us"}};
  return name_of(kNames, u);
}

std::string_view class_name(CostClass c) {
  using enum CostClass;
  static constexpr EnumName<CostClass> kNames[] = {{Unclassified, "unclassified"},
                                                   {Sourced, "sourced"},
                                                   {Estimate, "estimate"},
                                                   {Fitted, "fitted"},
                                                   {Measured, "measured"}};
  return name_of(kNames, c);
}

CostClass class_of_source(std::string_view source) {
  static constexpr std::pair<std::string_view, CostClass> kWords[] = {
      {"SOURCED", CostClass::Sourced}, {"ESTIMATE", CostClass::Estimate},
      {"FITTED", CostClass::Fitted},   {"MEASURED", CostClass::Measured}};
  for (const auto& [word, cls] : kWords) {
    if (source.substr(0, word.size()) != word) continue;
    if (source.size() == word.size()) return cls;
    const char next = source[word.size()];
    if (!((next >= 'A' && next <= 'Z') || (next >= 'a' && next <= 'z'))) return cls;
  }
  return CostClass::Unclassified;
}

double default_relative_range(CostClass c) {
  switch (c) {
    case CostClass::Estimate:
    case CostClass::Unclassified: return 0.5;
    case CostClass::Sourced:
    case CostClass::Measured:
    case CostClass::Fitted: return 0.1;
  }
  return 0.5;
}

CostRange default_range(CostClass c) {
  const double r = default_relative_range(c);
  return CostRange{1.0 - r, 1.0 + r,
                   fmt::format("default for class {}: +-{:g} % (no range in the profile)", class_name(c), r * 100), true};
}

namespace {

// Bounds of a plausible primitive cost and its spread (beyond them the input is a mistake).
constexpr double kMaxPs = 1e12;      // 1 s: no primitive operation of an IPI path comes near it
constexpr double kMaxSpread = 10.0;  // relative standard deviation
constexpr double kMaxNormalSpread = 0.3;
constexpr std::size_t kMaxBins = 100'000;

bool parse_unit(std::string_view s, Unit& out) {
  if (s == "cycles") out = Unit::Cycles;
  else if (s == "ns") out = Unit::Ns;
  else if (s == "ps") out = Unit::Ps;
  else if (s == "us") out = Unit::Us;
  else return false;
  return true;
}

bool parse_class(std::string_view s, CostClass& out) {
  for (CostClass c : {CostClass::Sourced, CostClass::Estimate, CostClass::Fitted, CostClass::Measured})
    if (s == class_name(c)) {
      out = c;
      return true;
    }
  return false;
}

// ps per one `unit` at `ghz` (cycles need ghz > 0).
double ps_per(Unit unit, double ghz) {
  switch (unit) {
    case Unit::Cycles: return 1000.0 / ghz;
    case Unit::Ns: return 1e3;
    case Unit::Ps: return 1.0;
    case Unit::Us: return 1e6;
  }
  return 1.0;
}

bool is_prefix_of_some_key(std::string_view prefix) {
  for (const CostKeyInfo& k : catalog())
    if (k.name.size() > prefix.size() && k.name.substr(0, prefix.size()) == prefix && k.name[prefix.size()] == '.')
      return true;
  return false;
}

// A file as shown in provenance: relative to the data folder when it lies there (so output does not
// depend on where ipilab is installed or built), else as opened.
std::string shown_file(const std::string& file) {
  std::error_code ec;
  const fs::path a = fs::weakly_canonical(file, ec);
  if (ec) return file;
  const fs::path d = fs::weakly_canonical(data_dir(), ec);
  if (ec) return file;
  const fs::path rel = a.lexically_relative(d);
  if (!rel.empty() && *rel.begin() != "..") return rel.string();
  return file;
}

std::string canonical_or_self(const std::string& file) {
  std::error_code ec;
  const fs::path a = fs::weakly_canonical(file, ec);
  return ec ? file : a.string();
}

// Builds c.sampler from the other fields (validated before), with `ps_per_unit` for the bins.
void build_sampler(Cost& c, double ps_per_unit) {
  switch (c.dist) {
    case sim::DistKind::Fixed: c.sampler = sim::Distribution::fixed(c.mean); break;
    case sim::DistKind::Lognormal: c.sampler = sim::Distribution::lognormal(c.mean, c.spread); break;
    case sim::DistKind::Normal: c.sampler = sim::Distribution::normal(c.mean, c.spread); break;
    case sim::DistKind::Exponential: c.sampler = sim::Distribution::exponential(c.mean); break;
    case sim::DistKind::Empirical: {
      std::vector<sim::EmpiricalBin> ps;
      ps.reserve(c.bins.size());
      for (const auto& b : c.bins) ps.push_back({b.lo * ps_per_unit, b.hi * ps_per_unit, b.count});
      c.sampler = sim::Distribution::empirical(c.mean, std::move(ps));
      break;
    }
  }
}

// The mean of bins [lo, hi, count] (uniform inside each bin).
double bins_mean(const std::vector<sim::EmpiricalBin>& bins) {
  double total = 0, m = 0;
  for (const auto& b : bins) {
    total += b.count;
    m += b.count * (b.lo + b.hi) / 2.0;
  }
  return total > 0 ? m / total : 0.0;
}

}  // namespace

sim::Ps Profile::to_ps(double value, Unit unit) const {
  switch (unit) {
    case Unit::Cycles: return sim::from_cycles(value, clock_ghz_);
    case Unit::Ns: return sim::from_ns(value);
    case Unit::Ps: return sim::Ps{static_cast<std::int64_t>(std::llround(value))};
    case Unit::Us: return sim::from_us(value);
  }
  return sim::Ps{};
}

Profile Profile::load_file(const std::string& path) {
  return from_document(toml_read::parse_file(path), path);
}

Profile Profile::parse(std::string_view text, std::string_view file) {
  return from_document(toml_read::parse(text, file), file);
}

Profile Profile::from_document(const toml::table& root, std::string_view file) {
  std::vector<std::string> chain{canonical_or_self(std::string(file))};
  return load_layer(root, file, chain);
}

namespace {

// The [profile] table of one file, read and checked on its own (before the base it extends).
struct LayerMeta {
  std::string name;
  std::optional<std::string> description, host, extends, clock_source;
  std::optional<double> clock;
};

LayerMeta read_layer_meta(TableReader& m) {
  LayerMeta l;
  l.name = m.req_string("name");
  l.description = m.opt_string("description");
  l.host = m.opt_string("host");
  l.extends = m.opt_string("extends");
  l.clock = m.opt_double("clock_ghz");
  l.clock_source = m.opt_string("clock_source");
  const auto& clock = l.clock;
  const auto& clock_source = l.clock_source;
  const auto& extends = l.extends;
  if (clock && !(*clock >= 0.01 && *clock < 100))
    m.fail("clock_ghz", fmt::format("must be a clock in GHz, from 0.01 to below 100; got {}", *clock));
  if (clock_source && clock_source->empty()) m.fail("clock_source", "is empty: say where the clock comes from");
  if (clock && !clock_source) m.fail("clock_source", "missing (a string is required: where clock_ghz comes from)");
  if (clock_source && !clock) m.fail("clock_source", "needs clock_ghz beside it");
  if (!extends && !clock) m.fail("clock_ghz", "missing (a number is required; a profile that extends another may inherit it)");
  m.finish();
  return l;
}

// The file `extends = "..."` names: a path (relative to the extending file's folder) or a shipped
// profile's name; refused when missing, when it closes a cycle or stacks too deep.
std::string resolve_extends(const TableReader& m, const std::string& what, const std::string& file,
                            const std::vector<std::string>& chain) {
  if (what.empty()) m.fail("extends", "is empty: name a shipped profile or a .toml file");
  const bool is_path = what.find('/') != std::string::npos ||
                       (what.size() > 5 && what.compare(what.size() - 5, 5, ".toml") == 0);
  fs::path base;
  if (is_path) {
    base = fs::path(what);
    if (base.is_relative()) base = fs::path(file).parent_path() / base;
    std::error_code ec;
    if (!fs::is_regular_file(base, ec))
      m.fail("extends", fmt::format("no such profile file '{}' (a relative path starts at the extending file's folder)", base.string()));
  } else {
    base = data_dir() / "profiles" / (what + ".toml");
    std::error_code ec;
    if (!fs::is_regular_file(base, ec)) {
      const std::vector<std::string> names = shipped_profile_names();
      m.fail("extends", fmt::format("no shipped profile '{}'{} (shipped: {}; a file path must end in .toml or contain '/')", what,
                                    did_you_mean(what, names), names.empty() ? std::string("none found") : fmt::format("{}", fmt::join(names, ", "))));
    }
  }
  const std::string base_file = base.string();
  const std::string key = canonical_or_self(base_file);
  if (std::find(chain.begin(), chain.end(), key) != chain.end()) {
    std::string path;
    for (const auto& c : chain) path += shown_file(c) + " -> ";
    m.fail("extends", fmt::format("cycle: {}{}", path, shown_file(base_file)));
  }
  constexpr int kMax = Profile::kMaxExtendsDepth;
  if (static_cast<int>(chain.size()) >= kMax)
    m.fail("extends", fmt::format("more than {} levels of extends (this file and {} bases)", kMax, kMax - 1));
  return base_file;
}

}  // namespace

// Walks one file's [cost.*]: a table whose dotted path is a catalog key is an entry; a table whose
// path is a prefix of catalog keys is a namespace; anything else is an unknown key.
struct Profile::CostReader {
  Profile& p;
  const std::string& file;

  void walk(const toml::table& t, const std::string& prefix) {
    for (const auto& [k, v] : t) {
      const std::string name = prefix.empty() ? std::string(k.str()) : prefix + "." + std::string(k.str());
      const std::string where = toml_read::place(file, k.source(), "cost." + name);
      if (const CostKeyInfo* info = find_cost_key(name)) {
        const auto* et = v.as_table();
        if (!et) throw InputError(where, fmt::format("expected a table {{ value, unit, source, dist?, spread?, bins?, class? }}, got {}", toml_read::type_name(v)));
        entry(*et, name, *info);
      } else if (v.as_table() && is_prefix_of_some_key(name)) {
        walk(*v.as_table(), name);
      } else {
        throw InputError(where, "unknown cost key" + did_you_mean_in(name, catalog(), [](const auto& c) { return c.name; }) +
                                    " (not in the catalog; 'ipilab list --costs' lists them)");
      }
    }
  }
  void entry(const toml::table& t, const std::string& name, const CostKeyInfo& info) {
    TableReader e(t, file, "cost." + name);
    Cost c;
    c.name = name;
    c.from = file;
    c.value = e.req_double("value");
    if (!(c.value >= 0) || !std::isfinite(c.value)) e.fail("value", fmt::format("must be >= 0, got {}", c.value));
    const std::string unit = e.req_string("unit");
    if (!parse_unit(unit, c.unit))
      e.fail("unit", fmt::format("unit mismatch: {} is a duration, so unit must be {}; got '{}'", name, units_of(info.kind), unit));
    const double per = ps_per(c.unit, p.clock_ghz_);
    if (c.value * per > kMaxPs)
      e.fail("value", fmt::format("{} {} is out of range for a primitive cost (above 1 s)", c.value, unit));

    read_distribution(e, name, unit, c, per);
    read_source_and_class(e, c);
    c.note = e.opt_string("note").value_or("");
    read_range(e, c, unit);
    e.finish();
    c.mean = p.to_ps(c.value, c.unit);
    build_sampler(c, per);
    p.costs_[name] = std::move(c);
  }

  // `range = [low, high]` (in the entry's unit) or `range = r` (relative), with `range_reason`.
  void read_range(TableReader& e, Cost& c, const std::string& unit) {
    const toml::node* rn = e.node("range");
    const std::optional<std::string> reason = e.opt_string("range_reason");
    if (!rn) {
      if (reason) e.fail("range_reason", "needs range beside it (range = [low, high] or a relative range = 0.3)");
      c.range = default_range(c.cls);
      return;
    }
    if (!reason || reason->empty()) e.fail("range_reason", "missing: a range says why it is that wide (a string)");
    if (const toml::array* a = rn->as_array()) {
      if (a->size() != 2) e.fail("range", "expected [low, high] (two numbers in the entry's unit) or a relative range");
      const std::string key = "cost." + c.name + ".range";
      const double lo = toml_read::node_double((*a)[0], file, key + "[0]");
      const double hi = toml_read::node_double((*a)[1], file, key + "[1]");
      if (!(lo >= 0) || !std::isfinite(lo) || !std::isfinite(hi) || !(lo <= c.value) || !(hi >= c.value))
        e.fail("range", fmt::format("[{}, {}] {} must hold the value {} (0 <= low <= value <= high)", lo, hi, unit, c.value));
      if (c.value > 0) c.range = CostRange{lo / c.value, hi / c.value, *reason, false};
      else c.range = CostRange{1.0, 1.0, *reason, false};
      return;
    }
    const double r = toml_read::node_double(*rn, file, "cost." + c.name + ".range");
    if (!(r > 0 && r <= 1)) e.fail("range", fmt::format("a relative range must be in (0, 1] (0.3 = value -+ 30 %), got {}", r));
    c.range = CostRange{1.0 - r, 1.0 + r, *reason, false};
  }

  // dist, spread and bins of one entry, by the family's rules (fixed takes no spread, lognormal and
  // normal need one, empirical needs bins whose mean is the value).
  void read_distribution(TableReader& e, const std::string& name, const std::string& unit, Cost& c, double per) {
    const std::optional<double> spread = e.opt_double("spread");
    if (spread && (!(*spread >= 0) || !std::isfinite(*spread)))
      e.fail("spread", fmt::format("relative standard deviation must be >= 0, got {}", *spread));
    if (spread && *spread > kMaxSpread)
      e.fail("spread", fmt::format("a relative standard deviation of {} is not a plausible cost spread (at most {})", *spread, kMaxSpread));
    c.spread = spread.value_or(0.0);
    if (const std::optional<std::string> d = e.opt_string("dist")) {
      if (!sim::parse_dist(*d, c.dist))
        e.fail("dist", fmt::format("'{}' is not a distribution: fixed, lognormal, normal, exponential or empirical", *d));
    } else {
      c.dist = c.spread > 0 ? sim::DistKind::Lognormal : sim::DistKind::Fixed;
    }
    const std::string_view dname = sim::dist_name(c.dist);
    switch (c.dist) {
      case sim::DistKind::Fixed:
        if (c.spread > 0) e.fail("spread", "dist = \"fixed\" takes no spread (use lognormal or normal)");
        break;
      case sim::DistKind::Lognormal:
      case sim::DistKind::Normal:
        if (!(c.spread > 0)) e.fail(spread ? "spread" : "dist", fmt::format("dist = \"{}\" needs spread > 0 (the relative standard deviation)", dname));
        if (c.dist == sim::DistKind::Normal && c.spread > kMaxNormalSpread)
          e.fail("spread", fmt::format("dist = \"normal\" allows spread <= {} (it is clipped at 0 ps; use lognormal for wider spreads), got {}",
                                       kMaxNormalSpread, c.spread));
        break;
      case sim::DistKind::Exponential:
        if (spread) e.fail("spread", "dist = \"exponential\" takes no spread (its relative standard deviation is 1)");
        break;
      case sim::DistKind::Empirical:
        if (spread) e.fail("spread", "dist = \"empirical\" takes no spread (the bins give the shape)");
        break;
    }
    if (const toml::node* bn = e.node("bins")) {
      if (c.dist != sim::DistKind::Empirical)
        e.fail("bins", fmt::format("bins belong to dist = \"empirical\" (this entry is {})", dname));
      read_bins(*bn, name, c, per);
    } else if (c.dist == sim::DistKind::Empirical) {
      e.fail("dist", "dist = \"empirical\" needs bins = [[lo, hi, count], ...]");
    }
    if (c.dist == sim::DistKind::Empirical) {
      const double bm = bins_mean(c.bins);
      if (std::abs(c.value - bm) > 0.01 * bm)
        e.fail("value", fmt::format("value {} {} is not the mean of the bins ({:.6g} {}) within 1 %: value is the mean, the bins the shape",
                                    c.value, unit, bm, unit));
    }

  }

  void read_source_and_class(TableReader& e, Cost& c) {
    if (!e.has("source")) e.fail("source", "missing: every cost says where its value comes from (seed figure, paper, measurement)");
    c.source = e.req_string("source");
    if (c.source.empty()) e.fail("source", "is empty: say where the value comes from");
    const CostClass declared = class_of_source(c.source);
    if (const std::optional<std::string> cls = e.opt_string("class")) {
      if (!parse_class(*cls, c.cls)) e.fail("class", fmt::format("'{}' is not a class: sourced, estimate, fitted or measured", *cls));
      if (declared != CostClass::Unclassified && declared != c.cls)
        e.fail("class", fmt::format("'{}' contradicts the source, which starts with {}", *cls, class_name(declared)));
    } else {
      c.cls = declared;
    }
  }

  void read_bins(const toml::node& n, const std::string& name, Cost& c, double per) {
    const std::string key = "cost." + name + ".bins";
    const toml::array* arr = n.as_array();
    if (!arr) throw InputError(toml_read::place(file, n.source(), key), fmt::format("expected an array of [lo, hi, count], got {}", toml_read::type_name(n)));
    if (arr->empty()) throw InputError(toml_read::place(file, n.source(), key), "is empty: give at least one [lo, hi, count]");
    if (arr->size() > kMaxBins) throw InputError(toml_read::place(file, n.source(), key), fmt::format("{} bins: at most {}", arr->size(), kMaxBins));
    double total = 0;
    for (std::size_t i = 0; i < arr->size(); ++i) {
      const toml::node& bn = (*arr)[i];
      const std::string bkey = fmt::format("{}[{}]", key, i);
      const std::string where = toml_read::place(file, bn.source(), bkey);
      const toml::array* b = bn.as_array();
      if (!b || b->size() != 3) throw InputError(where, "expected [lo, hi, count] (three numbers)");
      const double lo = toml_read::node_double((*b)[0], file, bkey + "[0]");
      const double hi = toml_read::node_double((*b)[1], file, bkey + "[1]");
      const double count = toml_read::node_double((*b)[2], file, bkey + "[2]");
      if (!(lo >= 0) || !std::isfinite(lo)) throw InputError(where, fmt::format("lo must be >= 0, got {}", lo));
      if (!(hi > lo) || !std::isfinite(hi)) throw InputError(where, fmt::format("hi must be above lo, got [{}, {}]", lo, hi));
      if (hi * per > kMaxPs) throw InputError(where, fmt::format("hi {} is out of range for a primitive cost (above 1 s)", hi));
      if (!(count >= 0) || !std::isfinite(count)) throw InputError(where, fmt::format("count must be >= 0, got {}", count));
      if (!c.bins.empty() && lo < c.bins.back().hi)
        throw InputError(where, fmt::format("bins must be ascending and must not overlap: [{}, ...) starts before the previous bin ends at {}", lo, c.bins.back().hi));
      c.bins.push_back({lo, hi, count});
      total += count;
    }
    if (!(total > 0)) throw InputError(toml_read::place(file, n.source(), key), "the counts add up to 0");
  }
};

Profile Profile::load_layer(const toml::table& root, std::string_view file_view, std::vector<std::string>& chain) {
  const std::string file(file_view);
  TableReader r(root, file, "");
  const toml::table* meta = r.opt_table("profile");
  if (!meta) r.fail("profile", "missing: a profile starts with a [profile] table (name, clock_ghz, clock_source)");

  // [profile]: read this file's own fields, then the base (if any), then put this file on top.
  TableReader m(*meta, file, "profile");
  const LayerMeta l = read_layer_meta(m);
  Profile p;
  if (l.extends) {
    const std::string base_file = resolve_extends(m, *l.extends, file, chain);
    chain.push_back(canonical_or_self(base_file));
    p = load_layer(toml_read::parse_file(base_file), base_file, chain);
    chain.pop_back();
  }
  p.file_ = file;
  p.name_ = l.name;
  if (l.description) p.description_ = *l.description;
  if (l.host) p.host_ = *l.host;
  if (l.clock) {
    p.clock_ghz_ = *l.clock;
    p.clock_source_ = *l.clock_source;
  }
  p.layers_.insert(p.layers_.begin(), Layer{file, shown_file(file), l.name});

  const toml::table* costs = r.opt_table("cost");
  r.finish();
  if (!costs) return p;
  CostReader{p, file}.walk(*costs, "");
  return p;
}

const Cost& Profile::get(std::string_view key) const {
  auto it = costs_.find(key);
  if (it == costs_.end()) {
    const CostKeyInfo* info = find_cost_key(key);
    throw InputError(fmt::format("{}: cost.{}", file_, key),
                     info ? fmt::format("profile '{}' has no value for this cost ({}), which the workload needs", name_, info->description)
                          : fmt::format("'{}' is not a cost key of the catalog", key));
  }
  return it->second;
}

void Profile::require(std::span<const std::string_view> keys, std::string_view who) const {
  std::vector<std::string> missing;
  for (std::string_view k : keys)
    if (!has(k)) missing.emplace_back(k);
  if (missing.empty()) return;
  std::string reason = fmt::format("profile '{}' lacks {} cost(s){}: ", name_, missing.size(),
                                   who.empty() ? std::string() : fmt::format(" needed by {}", who));
  for (std::size_t i = 0; i < missing.size(); ++i) {
    const CostKeyInfo* info = find_cost_key(missing[i]);
    reason += fmt::format("{}cost.{}{}", i ? "; " : "", missing[i], info ? fmt::format(" ({})", info->description) : " (not in the catalog)");
  }
  throw InputError(file_, reason);
}

void Profile::set(std::string_view key, double value, Unit unit, double spread, std::string source, std::string_view where) {
  const std::string place = fmt::format("{}: cost.{}", where, key);
  if (!find_cost_key(key))
    throw InputError(place, "unknown cost key" + did_you_mean_in(key, catalog(), [](const auto& c) { return c.name; }) +
                                " (not in the catalog)");
  if (!(value >= 0) || !std::isfinite(value)) throw InputError(place, fmt::format("value must be >= 0, got {}", value));
  if (value * ps_per(unit, clock_ghz_) > kMaxPs)
    throw InputError(place, fmt::format("{} {} is out of range for a primitive cost (above 1 s)", value, unit_name(unit)));
  if (!(spread >= 0) || !std::isfinite(spread)) throw InputError(place, fmt::format("spread must be >= 0, got {}", spread));
  if (spread > kMaxSpread) throw InputError(place, fmt::format("spread {} is not a plausible cost spread (at most {})", spread, kMaxSpread));
  if (source.empty()) throw InputError(place, "source is empty: say where the value comes from");
  Cost c;
  c.name = std::string(key);
  c.value = value;
  c.unit = unit;
  c.source = std::move(source);
  c.cls = class_of_source(c.source);
  c.from = "override";
  c.range = CostRange{1.0, 1.0, "a scenario override: the variant's setting, held fixed", false};
  c.mean = to_ps(value, unit);
  const auto old = costs_.find(key);
  const sim::DistKind family = old == costs_.end() ? sim::DistKind::Lognormal : old->second.dist;
  switch (family) {
    case sim::DistKind::Fixed:
    case sim::DistKind::Lognormal:
    case sim::DistKind::Normal:
      if (family == sim::DistKind::Normal && spread > kMaxNormalSpread)
        throw InputError(place, fmt::format("the profile's entry is normal, which allows spread <= {}; got {}", kMaxNormalSpread, spread));
      c.spread = spread;
      c.dist = spread > 0 ? (family == sim::DistKind::Normal ? sim::DistKind::Normal : sim::DistKind::Lognormal) : sim::DistKind::Fixed;
      build_sampler(c, 1.0);
      break;
    case sim::DistKind::Exponential:
      if (spread > 0) throw InputError(place, "the profile's entry is exponential, which takes no spread");
      c.dist = sim::DistKind::Exponential;
      build_sampler(c, 1.0);
      break;
    case sim::DistKind::Empirical: {
      if (spread > 0) throw InputError(place, "the profile's entry is empirical, which takes no spread (its bins give the shape)");
      // Keep the shape: the bins scaled to the new mean, in the new unit.
      const Cost& o = old->second;
      const double old_ps = static_cast<double>(o.mean.v);
      const double per_new = ps_per(unit, clock_ghz_);
      const double per_old = o.value > 0 ? old_ps / o.value : 1.0;
      const double f = old_ps > 0 ? static_cast<double>(c.mean.v) / old_ps : 0.0;
      c.dist = sim::DistKind::Empirical;
      if (!(f > 0)) {
        c.dist = sim::DistKind::Fixed;  // a zero mean: nothing left to spread
        build_sampler(c, 1.0);
        break;
      }
      for (const auto& b : o.bins) c.bins.push_back({b.lo * per_old * f / per_new, b.hi * per_old * f / per_new, b.count});
      build_sampler(c, per_new);
      break;
    }
  }
  costs_[std::string(key)] = std::move(c);
}

void Profile::scale_mean(std::string_view key, double factor) {
  auto it = costs_.find(key);
  if (it == costs_.end() || !(factor > 0) || !std::isfinite(factor))
    throw std::invalid_argument(fmt::format("scale_mean({}, {}): no such cost or a factor that is not > 0", key, factor));
  Cost& c = it->second;
  const double old_ps = static_cast<double>(c.mean.v);
  c.mean = sim::Ps{static_cast<std::int64_t>(std::llround(old_ps * factor))};
  c.value *= factor;
  for (auto& b : c.bins) {
    b.lo *= factor;
    b.hi *= factor;
  }
  build_sampler(c, c.value > 0 && !c.bins.empty() ? static_cast<double>(c.mean.v) / c.value : 1.0);
}

std::vector<std::string> Profile::keys() const {
  std::vector<std::string> out;
  for (const auto& [k, c] : costs_) out.push_back(k);
  return out;
}

std::vector<ProvenanceEntry> Profile::provenance(const UsedCosts& used) const {
  std::vector<ProvenanceEntry> out;
  for (const auto& [k, c] : costs_) {
    if (!used.contains(k)) continue;
    out.push_back({k, c.value, std::string(unit_name(c.unit)), c.mean.v, c.spread, c.source, std::string(sim::dist_name(c.dist)),
                   std::string(class_name(c.cls)), c.from == "override" ? c.from : shown_file(c.from), c.bins,
                   c.value * c.range.lo, c.value * c.range.hi, c.range.is_default});
  }
  return out;
}

nlohmann::json Profile::provenance_json(const UsedCosts& used) const {
  nlohmann::json j;
  j["profile"] = name_;
  j["file"] = file_;
  j["clock_ghz"] = clock_ghz_;
  j["clock_source"] = clock_source_;
  if (layers_.size() > 1) {
    auto& ext = j["extends"] = nlohmann::json::array();
    for (std::size_t i = 1; i < layers_.size(); ++i) ext.push_back({{"profile", layers_[i].name}, {"file", layers_[i].shown}});
  }
  auto& arr = j["costs"] = nlohmann::json::array();
  for (const ProvenanceEntry& e : provenance(used)) {
    nlohmann::json c = {{"key", e.key},     {"value", e.value}, {"unit", e.unit},   {"ps", e.ps},    {"spread", e.spread},
                        {"source", e.source}, {"dist", e.dist},  {"class", e.cls}, {"from", e.from},
                        {"range", {e.range_low, e.range_high}}, {"range_default", e.range_default}};
    if (!e.bins.empty()) {
      auto& bins = c["bins"] = nlohmann::json::array();
      for (const auto& b : e.bins) bins.push_back({b.lo, b.hi, b.count});
    }
    arr.push_back(std::move(c));
  }
  return j;
}

}  // namespace ipilab::cost
