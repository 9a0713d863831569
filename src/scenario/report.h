// ipilab/scenario/report.h — a scenario's results as a terminal report and as the JSON contract.
//
// Both are pure functions of the results: the same scenario, seed and iterations give byte-identical
// text and JSON (no wall times, no absolute paths of the data folder).
//
// Text, by default one screen per scenario (report_summary.cpp):
//   header      name and title, description, host, VM and profile (of the first variant, "differs by
//               variant" when others differ), run (workload, seed, iterations, warm-up), `reproduces`
//               (the published figure the scenario reproduces, or that it is a prediction)
//   table       the main metric (metrics[0]) with its unit and description above the table; one row per
//               variant: mean, p50, p99 (one number format for the three columns), the change of the
//               mean against the first variant; the key counters (sends, hypercalls,
//               native_fallbacks, icr_writes, sgir_writes, its_remote, kicks, vm_exits, coalesced,
//               polling_skips, misdelivered, lost) that are non-zero somewhere and differ between
//               variants (lost and misdelivered whenever non-zero); a check column ("✓ 8,043 ±2%":
//               pass mark and the expected values) when the scenario states expectations. Counter
//               columns beyond TextOptions::max_width are left to --details, lowest priority first.
//   below       key counters equal in every variant ("in every variant: sends 20,000"), variants
//               without samples, every note of the workloads (lost IPIs, MODEL ERROR), the check
//               total, the costs (files, number used, distinct sources), and a one-line hint to
//               --details and --json.
// With TextOptions::details the sections of report_details.cpp follow (settings, other metrics,
// throughput, then per variant: settings that differ, host/VM/profile when they differ, every
// non-zero counter, resources, where the time goes, checks). A per-variant section identical to an
// earlier variant's says so in one line instead of repeating itself.
//
// Adding a section to --details (e.g. a new part of RunResult): write a function with the
// VariantSection (one variant's lines, "" when it has nothing to say) or ScenarioSection (one block
// over all variants) signature in report_details.cpp and add it to the list there, in print order.
//
// JSON: docs/json.md (the contract). One scenario -> the object below; several -> {"scenarios": [..]}.
//   {"scenario", "title", "description", "file", "workload", "reproduces", "seed", "iterations",
//    "warmup", "main_metric", "variants": [{"name", "description", "host", "vm", "profile",
//      "metrics": {NAME: {"mean","p50","p90","p99","p999","min","max","stddev","count","unit",
//                         "description"}},
//      "counters": {NAME: N}, "change_vs_first_pct", "breakdown": [{"step","mean_per_iteration",
//      "share"}], "throughput", "resources", "settings": {KEY: VALUE}, "notes": [..],
//      "provenance": {..}, "events",
//      "check"?: [{"key","stat","expected","tolerance","actual","pass"}]}],
//    "check"?: {"expectations": N, "passed": N, "pass": bool}}
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "scenario/runner.h"

namespace ipilab::scenario {

struct TextOptions {
  bool details = false;        ///< --details / -v: the per-variant sections after the summary
  bool breakdown = true;       ///< within the details: where the time goes (--no-breakdown hides it)
  std::size_t top_steps = 6;   ///< breakdown rows per variant
  std::size_t max_width = 124; ///< the summary table leaves counter columns beyond this to --details
};

/// The terminal report of one scenario (ends with a newline).
std::string format_text(const ScenarioResult& r, const TextOptions& opt = {});

/// The JSON contract object of one scenario (keys in the documented order).
nlohmann::ordered_json to_json(const ScenarioResult& r);
/// One scenario -> its object; several -> {"scenarios": [...]}.
nlohmann::ordered_json to_json(const std::vector<ScenarioResult>& rs);

/// Change of `value` against `first` in percent (0 when first is 0).
double change_pct(double value, double first);

/// One number on its own (messages, single figures): 4 significant digits at most, no exponent for
/// table-sized values (8043.2 -> "8043", 850.44 -> "850.4", 0.01234 -> "0.0123"). Tables use the
/// column formats of report_format.h instead.
std::string format_number(double v);

namespace report {

/// A --details section over one variant: its lines (indented by 4, a 9-column label first), or ""
/// when it has nothing to say for this variant.
using VariantSection = std::string (*)(const ScenarioResult& r, const VariantResult& v, const TextOptions& opt);
/// A --details section over the whole scenario (a block of lines, "" when empty).
using ScenarioSection = std::string (*)(const ScenarioResult& r, const TextOptions& opt);

/// Everything --details adds between the summary's table and its footer ("" without variants).
std::string format_details(const ScenarioResult& r, const TextOptions& opt);

}  // namespace report

}  // namespace ipilab::scenario
