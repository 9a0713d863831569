// ipilab/evidence/draws.h — the uncertain costs of a prepared scenario and the runs of its variants
// with those costs moved: the machinery --uncertainty, --sensitivity and calibrate share.
//
// Uncertain costs: the union, over the variants, of the costs each variant's run used (its
// provenance) whose range (cost/profile.h CostRange) is not fixed, and the latency classes with a
// stated range of the host of each variant whose run reads the host's matrix (host.latency.*,
// below), sorted by key. A variant's scenario override is its setting and stays fixed in that variant.
//
// A point of the design gives every uncertain cost a position u in [0, 1) of its range; in each
// variant that cost's mean becomes mean * (lo + u * (hi - lo)) with that variant's own range, the
// costs it does not use or holds fixed stay as they are. Every variant of one point sees the same
// u (common random numbers) and runs with the scenario's seed, so two variants' difference moves
// only through what the point changed, and the same point gives the same figures.
//
// Runs go through the sweep executor (sweep/exec.h): `jobs` threads, results by position, so the
// figures do not depend on -j.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cost/profile.h"
#include "scenario/runner.h"
#include "topology/host.h"

namespace ipilab::evidence {

/// One uncertain cost as the first variant that uses it has it.
struct UncertainCost {
  std::string key;
  cost::CostClass cls = cost::CostClass::Unclassified;
  double value = 0;          ///< as written, in `unit`
  std::string unit;
  cost::CostRange range;     ///< factors on the mean
  std::string source;
  std::string from;          ///< the profile file, as shown in provenance
};

/// Every cost a run of the scenario used, uncertain or not (for the "N of M are estimates" line and
/// --details), and the uncertain ones.
struct CostInventory {
  std::vector<UncertainCost> used;       ///< sorted by key, each once
  std::vector<UncertainCost> uncertain;  ///< the subset with a range that is not fixed
  std::size_t estimates() const;         ///< used costs of class estimate
  std::size_t defaults() const;          ///< uncertain costs whose range is their class default
};
CostInventory inventory(const scenario::PreparedScenario& p, const scenario::ScenarioResult& base);

/// The mean of every metric of one run (NaN for a metric without samples), by metric name.
using MetricMeans = std::map<std::string, double>;

/// One design point: u per uncertain cost (same order as CostInventory::uncertain); a value below 0
/// means "leave this cost at its mean" (used by one-at-a-time swings).
using Point = std::vector<double>;
inline constexpr double kAtMean = -1.0;

struct RunOptions {
  unsigned jobs = 1;
  std::uint64_t iterations = 0;  ///< per run; 0 = the prepared scenario's
  /// Each metric's median converted to ns instead of its mean in its unit (for measured figures,
  /// calibrate.h); NaN for a metric without samples.
  bool median_ns = false;
};

/// Runs every variant at every point: result[point][variant]. InputErrors of a run propagate (the
/// first by position).
std::vector<std::vector<MetricMeans>> run_points(const scenario::PreparedScenario& p,
                                                 const std::vector<UncertainCost>& costs,
                                                 const std::vector<Point>& points, const RunOptions& opt);

/// Runs every variant with the costs `keys` multiplied by factors (one vector per point, same order
/// as keys; a variant without a key, or holding it fixed by an override, runs it unchanged):
/// result[point][variant]. For calibration (calibrate.h).
std::vector<std::vector<MetricMeans>> run_scaled(const scenario::PreparedScenario& p, const std::vector<std::string>& keys,
                                                 const std::vector<std::vector<double>>& factors, const RunOptions& opt);

/// A host's uncertain latency class (topology/host.h LatencyRange) is drawn as a cost keyed
/// "host.latency.<class key>" ("host.latency.cross_socket_ns"), class estimate, its range the
/// factors lo/ns .. hi/ns; a draw sets every matrix entry of that class of a copy of the variant's
/// host. A variant whose host has no range for it runs it unchanged.
std::string host_latency_key(topology::LatencyClass c);
/// Whether `key` names a host latency class (host.latency.*), not a profile cost.
bool is_host_latency_key(std::string_view key);
/// The range of `key` in `host`'s latency, or nullptr (not a host latency key, or no such range).
const topology::LatencyRange* host_latency_range(const topology::Host* host, std::string_view key);
cost::CostRange latency_cost_range(const topology::LatencyRange& r);
/// Whether a run rests on its host's latency matrix: its provenance names the matrix's source (the
/// whole-VM core and replay do; a workload that never reads the matrix does not, and its host's
/// latency ranges are then no input of it).
bool reads_host_latency(const workload::RunResult& r);
/// The range variant `v` gives uncertain cost `key` (a host latency key or a profile cost), or
/// nullopt when the variant has no such cost or holds it fixed.
std::optional<cost::CostRange> variant_range(const scenario::PreparedVariant& v, const std::string& key);

/// The metric means of a finished run.
MetricMeans means_of(const workload::RunResult& r);
/// Its metric medians in ns (summary.p50 * ps_per_unit / 1000).
MetricMeans medians_ns_of(const workload::RunResult& r);

}  // namespace ipilab::evidence
