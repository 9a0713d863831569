// ipilab/sweep/spec.h — sweep spec files: a base scenario, axes of values, skips, a baseline, plots.
// Format reference: docs/sweep.md.
//
//   [sweep]
//   name = "its-local-gain"          # optional; default: the file name without .toml
//   title = "..."                    # optional one line (default: name)
//   description = "..."              # optional
//   scenario = "seed003-ipi-hw"      # required: a built-in scenario name or a scenario file (relative
//                                    #   paths: beside the spec, then the data folder)
//   variant = "local ITS, VM on socket 0"   # optional: the base variant every point starts from
//                                    #   (default: the scenario's first variant)
//   iterations = 2000                # optional: overrides the scenario's (1..1e9)
//   seed = 1                         # optional: the base of the per-point seeds (default: scenario's)
//   seeds = "per-point"              # per-point (default): seed = f(seed, the point's settings);
//                                    #   common: every point runs with `seed` (common random numbers)
//   skip_invalid = false             # true: a point whose host/VM/profile/parameters do not build is
//                                    #   skipped with that error as its reason (default: exit 2)
//   baseline = { its = "pre-seed" }  # optional: axis name -> value; a point is compared against the
//                                    #   point with these values and its own on the other axes
//                                    #   (default: the first point)
//
//   [[axis]]                         # one per dimension; points = the cartesian product
//   name = "vcpus"                   # optional column name (default: key); unique
//   key = "vm.vcpus"                 # dotted key under host / vm / profile / workload; quote parts
//                                    #   holding dots: 'profile.override."its.sgir_write_remote"'
//   values = [4, 8, 16]              # any TOML values (a table value deep-merges) ...
//   range = { from = 4, to = 256, factor = 2 }   # ... or a range: step = S or factor = F (> 1)
//   labels = ["4", "8", "16"]        # optional, shown instead of the values (as many as values)
//   unit = "vCPUs"                   # optional: plot axis label
//
//   [[axis]]                         # or a compound axis: each value sets several keys
//   name = "send path"
//   set = [{ label = "fast", workload.mechanism = "hyperv" },
//          { label = "native", workload.hypercall_page = false }]
//
//   [[skip]]                         # optional filters: points matching every condition are skipped
//   when = { sockets = 2, vcpus = { gt = 64 } }  # axis -> value, or { eq|ne|lt|le|gt|ge = v, in = [..] }
//   reason = "a 2-socket host has 64 CPUs"       # required: shown for each skipped point
//
//   [[plot]]                         # optional (default: one line plot and, with >= 2 axes, a heat map)
//   name = "by-sockets"              # used in the file name (FILE-<name>.svg); unique
//   kind = "line"                    # line | heatmap
//   x = "sockets"                    # axis along x
//   lines = "placement"              # line: one line per value of this axis (optional)
//   y = "vcpus"                      # heatmap: axis along y (required)
//   value = "mean"                   # mean | p50 | p99 | change_pct | counter.NAME (default mean)
//   where = { vcpus = 4 }            # the other axes' values (default: the baseline point's)
//   title = "..."                    # optional
//   x_scale = "linear"               # optional: linear | log (numeric axes: placed by value) or
//                                    #   category (evenly spaced in axis order; default for an axis
//                                    #   whose values are not all numbers)
//
// A value given in baseline, skip or where matches an axis value by its label or by the value
// written in the axis (numbers compare as numbers: 4 == 4.0 == "4").
//
// Errors: InputError("FILE:LINE:COLUMN: dotted.key", reason): TOML syntax, unknown keys, wrong types,
// a key outside host/vm/profile/workload, an empty axis, labels of the wrong length, duplicate axis
// or plot names, a baseline/skip/plot naming an axis or value that does not exist, a range with no
// values or more than 100000, more than 1000000 points. Reading the base scenario and building each
// point are later steps (sweep/base.h), still before any point runs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <toml++/toml.h>

namespace ipilab::sweep {

/// One value of an axis: the overrides it applies and how it is shown.
struct AxisValue {
  std::string label;              ///< shown in tables, CSV, JSON, plots
  toml::table set;                ///< nested tables (host / vm / profile / workload) to deep-merge
  std::optional<double> number;   ///< the value as a number (a number, or a label that reads as one)
  std::string canonical;          ///< the value as written, canonical text (matching, messages)
  std::string place;              ///< "FILE:LINE:COL: axis[i].values[j]"
};

struct Axis {
  std::string name;               ///< unique; the column name
  std::string key;                ///< dotted key ("" for a compound `set` axis)
  std::string unit;               ///< for plot labels ("" = none)
  std::string place;              ///< place of the axis' key (or set)
  std::vector<AxisValue> values;  ///< never empty
  /// Every value has a number (plots place them by value, not by order).
  bool numeric() const;
  /// The index of the value matching `v` (a label, or the value as written), or nullopt.
  std::optional<std::size_t> find(const toml::node& v) const;
};

/// A condition of a [[skip]] on one axis.
struct Condition {
  enum class Op { Eq, Ne, Lt, Le, Gt, Ge, In };
  std::size_t axis = 0;
  Op op = Op::Eq;
  double number = 0;                ///< Lt..Ge
  std::vector<std::size_t> values;  ///< Eq / Ne / In: matching value indexes of the axis
};

struct Skip {
  std::vector<Condition> when;
  std::string reason;
  std::string place;
};

struct PlotSpec {
  std::string name;
  enum class Kind { Line, Heatmap } kind = Kind::Line;
  std::size_t x = 0;
  std::optional<std::size_t> second;  ///< line: the `lines` axis; heatmap: the `y` axis
  std::string value = "mean";         ///< mean | p50 | p99 | change_pct | counter.NAME
  std::vector<std::pair<std::size_t, std::size_t>> where;  ///< axis -> value index
  std::string title;
  enum class Scale { Linear, Log, Category } x_scale = Scale::Linear;
  std::string place;
};

struct Spec {
  std::string file;               ///< as shown in messages and outputs (display_path of the file)
  std::filesystem::path dir;      ///< the folder holding the file (a relative scenario is looked up there)
  std::string name, title, description;
  std::string scenario;           ///< as written
  std::string scenario_place;
  std::optional<std::string> variant;
  std::string variant_place;
  std::optional<std::uint64_t> iterations;
  std::optional<std::uint64_t> seed;
  bool per_point_seeds = true;
  bool skip_invalid = false;
  std::vector<Axis> axes;         ///< never empty
  std::vector<Skip> skips;
  std::vector<std::pair<std::size_t, std::size_t>> baseline;  ///< axis -> value index (named axes)
  std::string baseline_place;
  std::vector<PlotSpec> plots;    ///< as written (may be empty: the command adds defaults)
  std::size_t point_count() const;
};

/// Parses sweep spec text (`file` names it in messages; dir = its folder). No file system access.
Spec parse_spec(std::string_view text, const std::string& file);
/// Reads and parses a spec file (InputError(path, "no such sweep spec file") if missing); messages
/// name it by display_path(path), so outputs do not depend on where the data folder lies.
Spec load_spec(const std::string& path);

/// A path as shown in messages and outputs: relative to the data folder (common/file.h) when the
/// file lies inside it ("scenarios/sweeps/x.toml"), else as given.
std::string display_path(const std::filesystem::path& p);

/// Splits a dotted key into its parts; parts may be quoted ("..." or '...') to hold dots.
/// Throws InputError(place, reason) for an empty part or an unterminated quote.
std::vector<std::string> split_dotted_key(std::string_view key, const std::string& place);

/// The canonical text of a TOML value: strings quoted with JSON escapes, integers in decimal, floats
/// with 17 significant digits, booleans, arrays [a, b], tables {k = v} with keys sorted. Stable
/// across platforms (it feeds the per-point seeds).
std::string canonical(const toml::node& n);

/// The leaf keys table `t` sets (an empty table counts as a leaf), each its path of keys from `t`
/// joined by `separator` (e.g. '.': "vm.vcpus").
void leaf_keys(const toml::table& t, char separator, std::vector<std::string>& out);

}  // namespace ipilab::sweep
