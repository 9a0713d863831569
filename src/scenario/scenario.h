// ipilab/scenario/scenario.h — scenario files: a host, a VM on it, a cost profile, a workload and a
// list of variants that each override a few keys. Format reference: scenarios/README.md.
//
//   [scenario]
//   name = "seed000-hyperv"          # optional; default: the file name without .toml
//   title = "..."                    # optional one-line title (default: name)
//   description = "..."              # optional
//   workload = "smp_call_function_single"   # required: a registered workload (workload.h)
//   iterations = 10000               # measured iterations per variant, 1..1e9 (default 10000)
//   warmup = 100                     # discarded iterations first, 0..1e9 (default 100)
//   seed = 1                         # RNG seed, >= 0 (default 1); every variant uses the same seed
//   reproduces = "b264f57fde0c: 8043 -> 7761 cycles"   # optional: the published figure it reproduces
//   [scenario.expect.pre-seed]       # optional, per variant: expected values for `--check`
//   cycles_per_iteration = 8043      #   a metric's mean (or a counter's value) ...
//   send_cost = { value = 12650, tolerance = 0.03, stat = "mean" }   # ... or a table
//   tolerance = 0.02                 #   relative, default 0.02, for this variant's entries
//
//   [host]      preset = "NAME" | file = "PATH" | inline host tables (topology/host_toml.h)
//   [profile]   file = "PATH" (cost/profile.h format) and optional overrides:
//               [profile.override."its.sgir_process"] value, unit, spread?, source?, note?
//   [vm]        topology/vm.h
//   [workload]  the workload's parameters (its declared ParamInfo list; unknown keys are errors)
//
//   [[variant]]
//   name = "mainline"                # required, unique
//   description = "..."              # optional
//   workload.send_ipi_one = "mainline"   # any dotted override of host/vm/profile/workload
//
// Semantics: each variant's document = the base document's host/vm/profile/workload tables with the
// variant's tables deep-merged over them (tables merge key by key; any other value, arrays included,
// replaces). One exception: a variant [host] that sets `preset` or `file` replaces the base host
// wholesale. Merged nodes keep their source positions, so an error in a value a variant set names
// the variant's line. A scenario without [[variant]] has one implicit variant named "base".
// Relative paths (host.file, profile.file) are looked up beside the scenario file, then under
// data_dir() (common/file.h).
//
// Errors: InputError with place "FILE:LINE:COLUMN: dotted.key" — unknown top-level key, unknown key
// in [scenario] or a variant, wrong types, out-of-range numbers, a missing or duplicate variant name,
// an expectation for a variant that does not exist, TOML syntax errors. Host, VM, profile and
// workload parameters are validated by prepare() (runner.h), still before any run.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include <toml++/toml.h>

namespace ipilab::scenario {

/// One expected value (for `--check` and the ✓/✗ column).
struct Expectation {
  std::string variant;
  std::string key;          ///< a metric name (compared by `stat`) or a counter name
  std::string stat = "mean";///< mean, p50, p90, p99, p999, min, max (metrics only)
  double value = 0;
  double tolerance = 0.02;  ///< relative: passes when |actual - value| <= tolerance * |value|
  std::string place;        ///< "FILE:LINE:COL: scenario.expect.<variant>.<key>"
  /// "reproduced" (default: a figure the profile's values were derived from or that the model must
  /// hit) or "predicted" (a published figure no value of the profile was fitted to).
  std::string kind = "reproduced";
  std::string reason;       ///< why the tolerance is what it is (required for predicted ones)
};

/// One variant with its merged document (root table holding host, vm, profile, workload).
struct Variant {
  std::string name;
  std::string description;
  std::string place;        ///< place of its name (or of the file for the implicit "base")
  toml::table doc;          ///< merged; nodes keep their source regions
};

/// What names and describes a scenario: its file and its [scenario] table's words.
struct ScenarioHeading {
  std::string file;  ///< path as given (used in messages)
  std::string name, title, description, workload, reproduces;
};

struct Scenario : ScenarioHeading {
  std::filesystem::path dir;   ///< folder of the file, for relative paths
  std::string workload_place;  ///< place of scenario.workload
  std::uint64_t iterations = 10000;
  std::uint64_t warmup = 100;
  std::uint64_t seed = 1;
  std::vector<Expectation> expect;
  std::vector<Variant> variants;  ///< in file order; never empty
};

/// Parses scenario text (`file` names it in messages and is the base for relative paths).
Scenario parse_scenario(std::string_view text, const std::string& file);
/// Reads and parses a scenario file (InputError(path, ...) if it is missing or unreadable).
Scenario load_scenario(const std::string& path);

/// Deep-merges `over` into `base`, moving its nodes (so their source regions survive): a table meets
/// a table -> merged key by key; anything else -> replaced by `over`'s node (and key). Exposed for
/// tests.
void deep_merge(toml::table& base, toml::table&& over);

/// Merges `over` (a root table holding any of host, vm, profile, workload) into variant `v`'s document
/// by the [[variant]] rules above: deep_merge per table, except that a `host` that sets `preset` or
/// `file` replaces the base host. For variants made outside the file (sweep points, sweep/base.h).
void merge_variant_overrides(Variant& v, toml::table&& over);

/// Resolves a relative data path written in a scenario: `dir`/rel, else data_dir()/rel. Absolute
/// paths are taken as they are. Throws InputError(place, "no such file ... (looked in ...)").
std::filesystem::path resolve_data_path(const std::string& rel, const std::filesystem::path& dir,
                                        const std::string& place);

}  // namespace ipilab::scenario
