// ipilab/measure/c2c.h — one-way core-to-core cache-line latency between host CPUs.
//
// Method (the CAS ping-pong of nviennot/core-to-core-latency, anchors.md §1.1; re-implemented): two
// threads pinned with hwloc to PUs i and j share one 64-byte-aligned atomic flag. Thread i CASes it
// false -> true, thread j true -> false, each spinning until its CAS succeeds, for `round_trips`
// round trips; thread i times the whole exchange with steady_clock. One sample = elapsed /
// (2 * round_trips) = one-way latency in ns. A warm-up sample is taken and discarded, then `samples`
// samples; the pair's value is their mean (with stddev and min). Pairs are measured one at a time in
// the lower triangle and mirrored; the diagonal is NaN (no transfer).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace ipilab::measure {

struct C2cConfig {
  std::vector<unsigned> pus;       ///< hwloc logical PU indices; empty = every PU of the machine
  unsigned round_trips = 1000;     ///< per sample
  unsigned samples = 30;           ///< per pair (after one discarded warm-up sample)
};

struct C2cMatrix {
  std::vector<unsigned> pus;              ///< row/column i is PU pus[i]
  std::vector<std::vector<double>> mean_ns;    ///< one-way ns, symmetric, NaN diagonal
  std::vector<std::vector<double>> stddev_ns;  ///< of the samples
  std::vector<std::vector<double>> min_ns;
  unsigned round_trips = 0;
  unsigned samples = 0;
  /// Median over the off-diagonal pairs (i < j) of mean_ns; NaN with fewer than 2 PUs.
  double median_pair_ns() const;
};

/// Measures the matrix. Throws UnavailableError when fewer than 2 PUs are available or a thread cannot
/// be pinned; InputError("--cpus", ...) for a PU index that does not exist.
C2cMatrix measure_c2c(const C2cConfig& config);

/// Text table (lower triangle, mean ± stddev), CSV (full matrix of means, "" on the diagonal) and JSON.
std::string c2c_table(const C2cMatrix& m);
std::string c2c_csv(const C2cMatrix& m);
nlohmann::json c2c_json(const C2cMatrix& m);

/// Writes a heat map (PNG) of the matrix with gnuplot (data through a temporary file; the image is
/// written to a temporary name and renamed). Throws UnavailableError when gnuplot is not installed,
/// InputError(path, ...) when it cannot write there.
void c2c_heatmap_png(const C2cMatrix& m, const std::string& png_path);

}  // namespace ipilab::measure
