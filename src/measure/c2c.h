// ipilab/measure/c2c.h — one-way core-to-core cache-line latency between host CPUs.
//
// Method (the CAS ping-pong of nviennot/core-to-core-latency; re-implemented): two threads pinned with
// hwloc to PUs i and j share one 64-byte-aligned atomic flag. Thread i CASes it false -> true, thread j
// true -> false, each spinning until its CAS succeeds, for `round_trips` round trips; thread i times the
// whole exchange with ONE steady_clock pair (the batch estimator, common/estimator.h). One sample = elapsed /
// (2 * round_trips) = one-way latency in ns; the clock read's share of it is clock_overhead_ns /
// (2 * round_trips), reported. Pairs are visited in interleaved rounds (every pair once per round, after
// a discarded warm-up exchange), `samples` rounds, so drift hits all pairs alike; the pair's value is the
// mean of its samples (with stddev, min, and the samples themselves). The lower triangle is measured and
// mirrored; the diagonal is NaN (no transfer).
#pragma once

#include "common/output.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace ipilab::measure {

struct C2cConfig {
  std::vector<unsigned> pus;       ///< hwloc logical PU indices; empty = every PU of the machine
  unsigned round_trips = 1000;     ///< per sample
  unsigned samples = 30;           ///< rounds: samples per pair, one per round
};

/// How two PUs relate in the machine's topology (hwloc): which cost key a transfer between them prices
/// (src/cost/catalog.cpp: mem.cacheline_smt / _same_node / _same_socket / _cross_socket).
enum class PairClass { Smt, SameNode, SameSocket, CrossSocket };
const char* cost_key(PairClass c);

struct C2cMatrix {
  std::vector<unsigned> pus;              ///< row/column i is PU pus[i]
  std::vector<std::vector<double>> mean_ns;    ///< one-way ns, symmetric, NaN diagonal
  std::vector<std::vector<double>> stddev_ns;  ///< of the samples
  std::vector<std::vector<double>> min_ns;
  /// samples_ns[i][j]: the pair's samples in round order (same for [j][i]; empty on the diagonal).
  std::vector<std::vector<std::vector<double>>> samples_ns;
  std::vector<std::vector<PairClass>> pair_class;  ///< meaningless on the diagonal
  unsigned round_trips = 0;
  unsigned samples = 0;
  double clock_overhead_ns = 0;  ///< one steady_clock::now() pair, median of empty regions
  /// Sizes every matrix for `pus`: NaN means, deviations and minima, no samples, SameNode classes.
  void size_for_pus();
  /// Median over the off-diagonal pairs (i < j) of mean_ns; NaN with fewer than 2 PUs.
  double median_pair_ns() const;
  /// Pairs (i > j, as PU numbers) whose stddev exceeds their mean: too noisy to trust.
  std::vector<std::pair<unsigned, unsigned>> noisy_pairs() const;
};

/// Measures the matrix. Throws UnavailableError when fewer than 2 PUs are available or a thread cannot
/// be pinned; InputError("--cpus", ...) for a PU index that does not exist.
C2cMatrix measure_c2c(const C2cConfig& config);

/// Text table (lower triangle, mean ± stddev), CSV (full matrix of means, "" on the diagonal) and JSON.
std::string c2c_table(const C2cMatrix& m);
std::string c2c_csv(const C2cMatrix& m);
nlohmann::json c2c_json(const C2cMatrix& m);

/// Writes a heat map of the matrix with gnuplot, in the format the path's extension names (.png, .svg,
/// .pdf; see outputs.h), into the temporary file of an output added to `outs` (the caller commits it).
/// The diagonal (a CPU against itself, not measured) is left blank and said so under the map.
/// Throws UnavailableError when gnuplot is not installed, InputError(path, ...) for another extension or
/// when it cannot write there.
void c2c_heatmap(const C2cMatrix& m, const std::string& path, output::OutputSet& outs);

}  // namespace ipilab::measure
