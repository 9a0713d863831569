#include "cost/profile.h"

#include <cmath>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/error.h"
#include "common/suggest.h"
#include "cost/catalog.h"
#include "topology/toml_read.h"

namespace ipilab::cost {

using toml_read::TableReader;

std::string_view unit_name(Unit u) {
  switch (u) {
    case Unit::Cycles: return "cycles";
    case Unit::Ns: return "ns";
    case Unit::Ps: return "ps";
    case Unit::Us: return "us";
  }
  return "?";
}

namespace {

bool parse_unit(std::string_view s, Unit& out) {
  if (s == "cycles") out = Unit::Cycles;
  else if (s == "ns") out = Unit::Ns;
  else if (s == "ps") out = Unit::Ps;
  else if (s == "us") out = Unit::Us;
  else return false;
  return true;
}

bool is_prefix_of_some_key(std::string_view prefix) {
  for (const CostKeyInfo& k : catalog())
    if (k.name.size() > prefix.size() && k.name.substr(0, prefix.size()) == prefix && k.name[prefix.size()] == '.')
      return true;
  return false;
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
  Profile p;
  p.file_ = std::string(file);
  TableReader r(root, p.file_, "");
  const toml::table* meta = r.opt_table("profile");
  if (!meta) r.fail("profile", "missing: a profile starts with a [profile] table (name, clock_ghz, clock_source)");
  {
    TableReader m(*meta, p.file_, "profile");
    p.name_ = m.req_string("name");
    p.description_ = m.opt_string("description").value_or("");
    p.host_ = m.opt_string("host").value_or("");
    p.clock_ghz_ = m.req_double("clock_ghz");
    if (!(p.clock_ghz_ > 0 && p.clock_ghz_ < 100)) m.fail("clock_ghz", "must be a clock in GHz, > 0 and < 100");
    p.clock_source_ = m.req_string("clock_source");
    if (p.clock_source_.empty()) m.fail("clock_source", "is empty: say where the clock comes from");
    m.finish();
  }
  const toml::table* costs = r.opt_table("cost");
  r.finish();
  if (!costs) return p;

  // Walk [cost.*]: a table whose dotted path is a catalog key is an entry; a table whose path is a
  // prefix of catalog keys is a namespace; anything else is an unknown key.
  struct Walker {
    Profile& p;
    void walk(const toml::table& t, const std::string& prefix) {
      for (const auto& [k, v] : t) {
        const std::string name = prefix.empty() ? std::string(k.str()) : prefix + "." + std::string(k.str());
        const std::string where = toml_read::place(p.file_, k.source(), "cost." + name);
        if (const CostKeyInfo* info = find_cost_key(name)) {
          const auto* et = v.as_table();
          if (!et) throw InputError(where, fmt::format("expected a table {{ value, unit, source, spread? }}, got {}", toml_read::type_name(v)));
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
      TableReader e(t, p.file_, "cost." + name);
      Cost c;
      c.name = name;
      c.value = e.req_double("value");
      if (!(c.value >= 0) || !std::isfinite(c.value)) e.fail("value", fmt::format("must be >= 0, got {}", c.value));
      const std::string unit = e.req_string("unit");
      if (!parse_unit(unit, c.unit))
        e.fail("unit", fmt::format("unit mismatch: {} is a duration, so unit must be {}; got '{}'", name, units_of(info.kind), unit));
      c.spread = e.opt_double("spread").value_or(0.0);
      if (!(c.spread >= 0) || !std::isfinite(c.spread)) e.fail("spread", fmt::format("relative standard deviation must be >= 0, got {}", c.spread));
      if (!e.has("source")) e.fail("source", "missing: every cost says where its value comes from (seed figure, paper, measurement)");
      c.source = e.req_string("source");
      if (c.source.empty()) e.fail("source", "is empty: say where the value comes from");
      c.note = e.opt_string("note").value_or("");
      e.finish();
      c.mean = p.to_ps(c.value, c.unit);
      p.costs_[name] = Entry{std::move(c)};
    }
  } walker{p};
  walker.walk(*costs, "");
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
  it->second.used = true;
  return it->second.cost;
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
  if (!(spread >= 0) || !std::isfinite(spread)) throw InputError(place, fmt::format("spread must be >= 0, got {}", spread));
  if (source.empty()) throw InputError(place, "source is empty: say where the value comes from");
  Cost c;
  c.name = std::string(key);
  c.value = value;
  c.unit = unit;
  c.spread = spread;
  c.source = std::move(source);
  c.mean = to_ps(value, unit);
  costs_[std::string(key)] = Entry{std::move(c)};
}

std::vector<std::string> Profile::keys() const {
  std::vector<std::string> out;
  for (const auto& [k, e] : costs_) out.push_back(k);
  return out;
}

std::vector<ProvenanceEntry> Profile::provenance() const {
  std::vector<ProvenanceEntry> out;
  for (const auto& [k, e] : costs_)
    if (e.used)
      out.push_back({k, e.cost.value, std::string(unit_name(e.cost.unit)), e.cost.mean.v, e.cost.spread, e.cost.source});
  return out;
}

nlohmann::json Profile::provenance_json() const {
  nlohmann::json j;
  j["profile"] = name_;
  j["file"] = file_;
  j["clock_ghz"] = clock_ghz_;
  j["clock_source"] = clock_source_;
  auto& arr = j["costs"] = nlohmann::json::array();
  for (const ProvenanceEntry& e : provenance())
    arr.push_back({{"key", e.key}, {"value", e.value}, {"unit", e.unit}, {"ps", e.ps}, {"spread", e.spread}, {"source", e.source}});
  return j;
}

void Profile::clear_used() const {
  for (const auto& [k, e] : costs_) e.used = false;
}

}  // namespace ipilab::cost
