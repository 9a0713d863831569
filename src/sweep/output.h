// ipilab/sweep/output.h — a finished (or interrupted) sweep as CSV, JSON and a terminal table.
//
// All three are pure functions of the points and their results: no wall times, no host names, no
// absolute data-folder paths, so the same spec gives byte-identical CSV and JSON with any -j and any
// number of MPI ranks. Contract: docs/sweep.md ("Output").
//
// CSV: a header, then one row per point in point order (RFC 4180 quoting):
//   point, <one column per axis: the value's label>, status, metric, unit, mean, p50, p99,
//   change_pct, baseline, <one column per counter any point reported, sorted>, events, seed, error
// change_pct = (mean - baseline's mean) / baseline's mean * 100; empty when either has no mean.
// Numbers are written in their shortest exact form; counters a point lacks are 0; skipped, failed
// and not-run points have empty figures and their reason in `error`.
//
// JSON: {"sweep", "title", "description", "spec", "scenario": {"name", "file", "workload",
//   "variant"}, "seed", "seeds", "iterations", "warmup", "axes": [{"name", "key", "unit",
//   "values": [labels]}], "baseline": {axis: label} | null, "points_total", "complete",
//   "counts": {"ok", "failed", "skipped", "not-run"},
//   "points": [{"point", "label", "values": {axis: label}, "seed", "status", "error"?,
//     "main": NAME, "metrics": {NAME: {"unit", "mean", "p50", "p90", "p99", "p999", "min", "max",
//     "stddev", "count"}}, "baseline", "change_pct", "counters": {..}, "settings": {..},
//     "notes": [..], "events", "host", "vm", "profile"}]}
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sweep/points.h"
#include "sweep/result.h"
#include "sweep/spec.h"

namespace ipilab::sweep {

/// Everything the writers need. `results[i]` belongs to `points[i]`.
struct SweepRun {
  const Spec* spec = nullptr;
  std::string spec_shown;  ///< the spec file as shown (relative to the data folder when there)
  std::string scenario_name, scenario_file, workload, variant;
  std::uint64_t seed = 1, iterations = 0, warmup = 0;
  std::vector<Point> points;
  std::vector<PointResult> results;
  bool interrupted = false;

  std::size_t count(PointResult::Status s) const;
  /// Every counter name any point reported, sorted.
  std::vector<std::string> counter_names() const;
  /// The main metric's mean of point i (nullopt unless ok with samples).
  std::optional<double> mean(std::size_t i) const;
  /// Change of point i's mean against its baseline's, in % (nullopt when either lacks a mean or the
  /// baseline's is 0).
  std::optional<double> change_pct(std::size_t i) const;
  /// A plot value of point i: mean, p50, p99, change_pct or counter.NAME.
  std::optional<double> value(std::size_t i, const std::string& what) const;
};

std::string to_csv(const SweepRun& r);
nlohmann::ordered_json to_json(const SweepRun& r);

struct TableOptions {
  std::size_t max_rows = 40;  ///< above this many points, a summary instead of every row
};
/// The terminal report (ends with a newline).
std::string format_table(const SweepRun& r, const TableOptions& opt = {});

/// A number in its shortest form that reads back exactly ("850", "0.1", "1e+20").
std::string exact_number(double v);

}  // namespace ipilab::sweep
