// ipilab/cost/profile.h — a cost profile: the price of each primitive operation, with its source.
//
// File format (profiles/README.md has the full description and examples):
//
//   [profile]
//   name = "hyperv-ws2019"
//   description = "..."                    # optional (inherited from a base unless set)
//   host = "ws2019-2s-e5-2420v2"           # optional: the host preset it was calibrated on (inherited)
//   clock_ghz = 2.2                        # converts cycles <-> time (inherited from a base unless set)
//   clock_source = "Intel ARK: E5-2420 v2 base clock"
//   extends = "kunpeng920-2s"              # optional: a base profile (shipped name or file path)
//
//   [cost.hv.hypercall_entry_exit]         # the key "hv.hypercall_entry_exit" of the catalog
//   value = 1500                           # the MEAN, in `unit`
//   unit = "cycles"                        # cycles | ns | ps | us (catalog.h: UnitKind::Duration)
//   dist = "lognormal"                     # optional: fixed | lognormal | normal | exponential | empirical
//   spread = 0.05                          # lognormal / normal: relative standard deviation
//   bins = [[700, 710, 12], [710, 720, 40]]   # empirical: [lo, hi, count] in `unit`
//   class = "measured"                     # optional: sourced | estimate | fitted | measured
//   source = "commit b264f57fde0c: ... / measured with ... / paper ..."   # required
//   note = "how the value was derived"     # optional
//   range = [1200, 1900]                   # optional: how far the MEAN may be off, [low, high] in `unit`
//   range = 0.3                            #   ... or relative: value * (1 -+ 0.3); 0 < r <= 1
//   range_reason = "why this range"        # required beside range
//
// Values are stored converted to integer picoseconds (cycles * 1000 / clock_ghz, rounded), the
// engine's time base (sim/time.h); the value and unit as written are kept for provenance. Each
// entry becomes a sim::Distribution (sim/rng.h says how each kind is sampled): Cost::jitter().
//
// Ranges (what `ipilab run --uncertainty / --sensitivity` draws from; docs/uncertainty.md): `range`
// bounds the mean itself (how wrong the value may be), not the spread of one occurrence (`spread`,
// `dist`). low <= value <= high, low >= 0. An entry without `range` gets its class's documented
// default (default_range(), flagged `is_default` so reports can say so): ESTIMATE and unclassified
// +-50 % (an order-of-magnitude engineering estimate), SOURCED, MEASURED and FITTED +-10 % (write
// the source's own spread, or the fit's range from `ipilab calibrate`, instead). A scenario override
// (Profile::set) is a variant's setting, not an uncertain value: its range is [value, value].
//
// Layers. `extends` names a base profile: a value ending in ".toml" or containing '/' is a path
// (relative to the extending file's folder), any other value a shipped profile,
// data_dir()/profiles/NAME.toml. The base is read the same way (it may extend another, up to
// kMaxExtendsDepth levels; a cycle is an error naming the chain). Every entry of the base applies
// unless this file sets the key (an entry is replaced whole, never merged field by field). An
// entry's cycles are converted with the clock of the file that states it (they were counted at
// that clock); the profile's clock_ghz is this file's if it sets one (clock_ghz and clock_source
// go together), else the base's. Provenance names the file every used entry came from.
//
// Errors (InputError, place "FILE:LINE:COLUMN: cost.<key>.<field>"): an unknown cost key (not in
// the catalog), an unknown field, a wrong type, a missing value/unit/source, a unit that does not
// fit the key's kind ("unit mismatch"), a negative or out-of-range value (above 1 s), a field
// that does not fit the dist (spread on fixed/exponential/empirical, bins on anything but
// empirical), lognormal/normal without spread, normal with spread > 0.3, bad bins (not [lo, hi,
// count], lo >= hi, overlapping or descending, all counts 0), a value that is not the bins' mean
// within 1 %, an unknown class or one that contradicts the source's leading class word, a missing
// [profile] table or clock, and for extends: a base that does not exist, a cycle, more than
// kMaxExtendsDepth levels. A workload asking for a key the profile lacks gets InputError naming
// the profile file and the key (get() / require()).
#pragma once

#include <initializer_list>
#include <map>
#include <set>
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

/// How a cost's value was obtained (the brief's provenance classes).
enum class CostClass { Unclassified, Sourced, Estimate, Fitted, Measured };
/// "unclassified", "sourced", "estimate", "fitted", "measured".
std::string_view class_name(CostClass c);
/// The class a source text declares by its leading word (SOURCED, ESTIMATE, FITTED or MEASURED,
/// upper case, followed by the end or a non-letter), else Unclassified.
CostClass class_of_source(std::string_view source);

/// How far a cost's mean may be off: factors on the mean (lo <= 1 <= hi), with the reason.
struct CostRange {
  double lo = 1.0;
  double hi = 1.0;
  std::string reason;
  bool is_default = false;  ///< not written in the profile: the class's default (default_range())
  bool fixed() const noexcept { return lo == 1.0 && hi == 1.0; }
};

/// The documented default range of a class (relative half-width): estimate 0.5, others 0.1.
double default_relative_range(CostClass c);
/// A default CostRange for class `c` (is_default set, the reason says it is the default).
CostRange default_range(CostClass c);

/// One priced operation.
struct Cost {
  std::string name;
  sim::Ps mean;        ///< the value (the mean) in ps, converted with the clock of the file stating it
  double spread = 0;   ///< relative standard deviation as written (lognormal/normal); 0 otherwise
  double value = 0;    ///< as written in the profile
  Unit unit = Unit::Ns;
  std::string source;
  std::string note;
  sim::DistKind dist = sim::DistKind::Fixed;
  std::vector<sim::EmpiricalBin> bins;  ///< empirical: as written, in `unit`
  CostClass cls = CostClass::Unclassified;
  std::string from;    ///< the profile file it came from, as opened ("override" for set())
  sim::Distribution sampler;  ///< built once from the fields above
  CostRange range;     ///< how far `mean` may be off (the profile's `range`, else the class default)

  /// The sampler for the simulator (sim::Distribution). `shape` is for callers of the Jitter era:
  /// NormalClipped samples a lognormal entry's spread normally instead; other kinds ignore it.
  sim::Jitter jitter(sim::SpreadShape shape = sim::SpreadShape::Lognormal) const {
    if (shape == sim::SpreadShape::NormalClipped && dist == sim::DistKind::Lognormal) return sim::Distribution(mean, spread, shape);
    return sampler;
  }
};

/// The keys of the costs a run priced with, for its provenance. The run's pricer keeps them
/// (workload::Pricer), not the profile: a profile is read, never marked.
using UsedCosts = std::set<std::string, std::less<>>;

/// A used cost as reported in JSON output (key, value and unit as written, ps, spread, dist, class,
/// source, the file it came from, the bins of an empirical entry).
struct ProvenanceEntry {
  std::string key;
  double value;
  std::string unit;
  std::int64_t ps;
  double spread;
  std::string source;
  std::string dist;
  std::string cls;
  std::string from;    ///< as shown: relative to data_dir() when it lies there, else as opened
  std::vector<sim::EmpiricalBin> bins;
  double range_low = 0;   ///< how far the mean may be off, in `unit` (Cost::range applied to value)
  double range_high = 0;
  bool range_default = false;  ///< the class's default range (not stated in the profile)
};

class Profile {
 public:
  /// Levels of `extends` a profile may stack (this file and 7 bases).
  static constexpr int kMaxExtendsDepth = 8;

  /// One file of a layered profile.
  struct Layer {
    std::string file;   ///< as opened
    std::string shown;  ///< relative to data_dir() when it lies there, else as opened
    std::string name;   ///< its [profile] name
  };

  /// Reads and parses a profile file (and the bases it extends).
  static Profile load_file(const std::string& path);
  /// Parses profile text; `file` names it in messages and is where a relative `extends` starts.
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
  /// This file first, then the base it extends, that base's base, ...: one entry if no extends.
  const std::vector<Layer>& layers() const noexcept { return layers_; }

  bool has(std::string_view key) const { return costs_.find(key) != costs_.end(); }
  /// The cost of `key`. Absent key -> InputError(place "<profile file>: cost.<key>", reason
  /// naming the profile and the catalog description).
  const Cost& get(std::string_view key) const;
  /// Checks that every key is present; InputError naming the profile file and ALL missing keys
  /// ("needed by <who>").
  void require(std::span<const std::string_view> keys, std::string_view who = {}) const;
  void require(std::initializer_list<std::string_view> keys, std::string_view who = {}) const {
    require(std::span<const std::string_view>(keys.begin(), keys.size()), who);
  }

  /// Sets or replaces a cost (a scenario variant's override) with a new mean. Validated like a
  /// file entry: InputError(place `where`, ...) for an unknown key, a negative or out-of-range
  /// value or spread, an empty source. The entry keeps the family of the one it replaces: a
  /// lognormal or fixed entry becomes lognormal with `spread` (fixed if 0), a normal one normal
  /// (fixed if 0; spread <= 0.3), an exponential one exponential with the new mean, an empirical
  /// one keeps its bins scaled to the new mean (its shape); a spread for exponential or empirical
  /// is an error. A new key is lognormal or fixed. Its provenance says from "override".
  void set(std::string_view key, double value, Unit unit, double spread, std::string source,
           std::string_view where = "override");

  /// Multiplies the mean of `key` (present) by `factor` > 0, keeping its shape (spread, bins
  /// scaled), class, source and range: one draw of an uncertain value (--uncertainty).
  void scale_mean(std::string_view key, double factor);

  /// Keys present, sorted.
  std::vector<std::string> keys() const;
  /// The entries of the `used` costs this profile has, sorted by key.
  std::vector<ProvenanceEntry> provenance(const UsedCosts& used) const;
  /// {"profile": name, "file": file, "clock_ghz", "clock_source", "costs": [{key, value, unit, ps,
  /// spread, dist, class, source, from, bins (empirical only)}, ...]} for the `used` costs, plus
  /// "extends": [{"profile", "file"}, ...] (the bases, nearest first) when the profile has any.
  nlohmann::json provenance_json(const UsedCosts& used) const;

  /// value in `unit` -> ps with this profile's clock (cycles need clock_ghz > 0).
  sim::Ps to_ps(double value, Unit unit) const;
  /// ps -> cycles at this profile's clock.
  double to_cycles(sim::Ps t) const { return t.cycles(clock_ghz_); }

 private:
  struct CostReader;  // reads one file's [cost.*] entries into the profile (profile.cpp)
  static Profile load_layer(const toml::table& root, std::string_view file, std::vector<std::string>& chain);
  std::string file_, name_, description_, host_, clock_source_;
  double clock_ghz_ = 0;
  std::vector<Layer> layers_;
  std::map<std::string, Cost, std::less<>> costs_;
};

}  // namespace ipilab::cost
