// ipilab/cost/profile.h — a cost profile: the price of each primitive operation, with its source.
//
// File format (profiles/README.md has the full description and examples):
//
//   [profile]
//   name = "hyperv-ws2019"
//   description = "..."                    # optional
//   host = "ws2019-2s-e5-2420v2"           # optional: the host preset it was calibrated on
//   clock_ghz = 2.2                        # converts cycles <-> time
//   clock_source = "Intel ARK: E5-2420 v2 base clock"
//
//   [cost.hv.hypercall_entry_exit]         # the key "hv.hypercall_entry_exit" of the catalog
//   value = 1500
//   unit = "cycles"                        # cycles | ns | ps | us (catalog.h: UnitKind::Duration)
//   spread = 0.05                          # optional: relative standard deviation (>= 0)
//   source = "seed 000: ... / measured with ... / paper ..."   # required
//   note = "how the value was derived"     # optional
//
// Values are stored converted to integer picoseconds (cycles * 1000 / clock_ghz, rounded), the
// engine's time base (sim/time.h); the value and unit as written are kept for provenance.
//
// Errors (InputError, place "FILE:LINE:COLUMN: cost.<key>.<field>"): an unknown cost key (not in
// the catalog), an unknown field, a wrong type, a missing value/unit/source, a unit that does not
// fit the key's kind ("unit mismatch"), a negative value or spread, a missing [profile] table or
// clock. A workload asking for a key the profile lacks gets InputError naming the profile file and
// the key (get() / require()).
#pragma once

#include <initializer_list>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>
#include <toml++/toml.h>

#include "sim/rng.h"
#include "sim/time.h"

namespace ipilab::cost {

enum class Unit { Cycles, Ns, Ps, Us };
std::string_view unit_name(Unit u);

/// One priced operation.
struct Cost {
  std::string name;
  sim::Ps mean;        ///< the value in ps (converted with the profile clock if given in cycles)
  double spread = 0;   ///< relative standard deviation; 0 = exact
  double value = 0;    ///< as written in the profile
  Unit unit = Unit::Ns;
  std::string source;
  std::string note;

  /// A sampler for the simulator (lognormal spread by default; see sim/rng.h).
  sim::Jitter jitter(sim::SpreadShape shape = sim::SpreadShape::Lognormal) const { return sim::Jitter(mean, spread, shape); }
};

/// A used cost as reported in JSON output (key, value and unit as written, ps, spread, source).
struct ProvenanceEntry {
  std::string key;
  double value;
  std::string unit;
  std::int64_t ps;
  double spread;
  std::string source;
};

class Profile {
 public:
  /// Reads and parses a profile file.
  static Profile load_file(const std::string& path);
  /// Parses profile text; `file` names it in messages.
  static Profile parse(std::string_view text, std::string_view file);
  /// From an already parsed document (root table holding [profile] and [cost]); other top-level
  /// keys are errors.
  static Profile from_document(const toml::table& root, std::string_view file);

  const std::string& file() const noexcept { return file_; }
  const std::string& name() const noexcept { return name_; }
  const std::string& description() const noexcept { return description_; }
  const std::string& host() const noexcept { return host_; }
  double clock_ghz() const noexcept { return clock_ghz_; }
  const std::string& clock_source() const noexcept { return clock_source_; }

  bool has(std::string_view key) const { return costs_.find(key) != costs_.end(); }
  /// The cost of `key`; marks it used (provenance). Absent key -> InputError(place
  /// "<profile file>: cost.<key>", reason naming the profile and the catalog description).
  const Cost& get(std::string_view key) const;
  /// Checks that every key is present; InputError naming the profile file and ALL missing keys
  /// ("needed by <who>"). Does not mark keys used.
  void require(std::span<const std::string_view> keys, std::string_view who = {}) const;
  void require(std::initializer_list<std::string_view> keys, std::string_view who = {}) const {
    require(std::span<const std::string_view>(keys.begin(), keys.size()), who);
  }

  /// Sets or replaces a cost (a scenario variant's override). Validated like a file entry:
  /// InputError(place `where`, ...) for an unknown key, negative value/spread, empty source.
  void set(std::string_view key, double value, Unit unit, double spread, std::string source,
           std::string_view where = "override");

  /// Keys present, sorted.
  std::vector<std::string> keys() const;
  /// Costs used through get() so far, sorted by key.
  std::vector<ProvenanceEntry> provenance() const;
  /// {"profile": name, "file": file, "clock_ghz", "clock_source", "costs": [{key, value, unit, ps,
  /// spread, source}, ...]} for the used costs.
  nlohmann::json provenance_json() const;
  /// Forgets which costs were used (e.g. between variants).
  void clear_used() const;

  /// value in `unit` -> ps with this profile's clock (cycles need clock_ghz > 0).
  sim::Ps to_ps(double value, Unit unit) const;
  /// ps -> cycles at this profile's clock.
  double to_cycles(sim::Ps t) const { return t.cycles(clock_ghz_); }

 private:
  struct Entry {
    Cost cost;
    mutable bool used = false;
  };
  std::string file_, name_, description_, host_, clock_source_;
  double clock_ghz_ = 0;
  std::map<std::string, Entry, std::less<>> costs_;
};

}  // namespace ipilab::cost
