// ipilab/scenario/report.h — a scenario's results as a terminal table and as the JSON contract.
//
// Both are pure functions of the results: the same scenario, seed and iterations give byte-identical
// text and JSON (no wall times, no absolute paths of the data folder).
//
// Text (one block per scenario):
//   header      name and title, workload, host, profile, VM, run (seed, iterations, warm-up),
//               `reproduces`
//   table       one row per variant: main metric (metrics[0]) mean, p50, p99, unit, change of the
//               mean against the first variant in %, the counters sends, hypercalls,
//               native_fallbacks, misdelivered, lost and any other counter with a name of <= 16
//               characters, as columns only when some variant has it non-zero; a check column
//               (✓ / ✗) when the scenario has expectations
//   per variant its settings, host/VM/profile when they differ from the header's, other metrics,
//               counters too long for a column, the top breakdown steps (mean per iteration in the
//               main metric's unit and share of the summed step time), its checks and notes
//   footer      profile file(s), number of costs used and of distinct sources; "--json" for all
//
// JSON: docs/json.md (the contract). One scenario -> the object below; several -> {"scenarios": [..]}.
//   {"scenario", "title", "description", "file", "workload", "reproduces", "seed", "iterations",
//    "warmup", "variants": [{"name", "description", "host", "vm", "profile",
//      "metrics": {NAME: {"mean","p50","p90","p99","p999","min","max","stddev","count","unit",
//                         "description"}},
//      "counters": {NAME: N}, "change_vs_first_pct", "breakdown": [{"step","mean_per_iteration",
//      "share"}], "settings": {KEY: VALUE}, "notes": [..], "provenance": {..}, "events",
//      "check"?: [{"key","stat","expected","tolerance","actual","pass"}]}],
//    "check"?: {"expectations": N, "passed": N, "pass": bool}}
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "scenario/runner.h"

namespace ipilab::scenario {

struct TextOptions {
  bool breakdown = true;      ///< print the per-variant breakdown steps
  std::size_t top_steps = 6;  ///< breakdown rows per variant
};

/// The terminal report of one scenario (ends with a newline).
std::string format_text(const ScenarioResult& r, const TextOptions& opt = {});

/// The JSON contract object of one scenario (keys in the documented order).
nlohmann::ordered_json to_json(const ScenarioResult& r);
/// One scenario -> its object; several -> {"scenarios": [...]}.
nlohmann::ordered_json to_json(const std::vector<ScenarioResult>& rs);

/// Change of `value` against `first` in percent (0 when first is 0).
double change_pct(double value, double first);

/// A number for the table: 4 significant digits at most, no exponent for table-sized values
/// (8043.2 -> "8043", 850.44 -> "850.4", 0.01234 -> "0.0123").
std::string format_number(double v);

}  // namespace ipilab::scenario
