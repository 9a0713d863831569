// ipilab/workload/workload.h — the contract between a scenario (src/scenario) and a workload.
//
// A workload is a registered, named family ("smp_call_function_single", "ipi_hw", "multicast",
// "kick"). The scenario layer builds one RunSpec per variant (host, VM, a private copy of the cost
// profile, the merged [workload] table, seed, iterations) and calls Workload::run(spec), which runs a
// discrete-event simulation (src/sim) and returns a RunResult: metrics with spreads, counters, a
// breakdown of where the time goes and the provenance of every cost used. The scenario layer prints,
// compares and serialises RunResults; it never computes figures itself.
//
// Parameters are declared once per workload (name, type, default, description: SST-ELI style) so
// unknown keys are errors and `ipilab list --workloads` can print them. Parameter errors name the
// scenario file, line, column and key (Params carries the TOML source regions).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>
#include <toml++/toml.h>

#include "cost/profile.h"
#include "sim/histogram.h"
#include "topology/host.h"
#include "topology/vm.h"

namespace ipilab::workload {

/// A declared workload parameter.
struct ParamInfo {
  std::string name;
  std::string type;          ///< "string", "int", "float", "bool", "int list"
  std::string default_text;  ///< as shown in --help / list ("" = required)
  std::string description;   ///< what it does; allowed values; unit
};

/// The [workload] table of a scenario after variant overrides, with the file it came from. Getters
/// validate type and range and throw InputError("FILE:LINE:COL: workload.<key>", reason).
class Params {
 public:
  Params() = default;
  Params(toml::table table, std::string file, std::string key_prefix = "workload")
      : table_(std::move(table)), file_(std::move(file)), prefix_(std::move(key_prefix)) {}

  bool has(std::string_view key) const { return table_.contains(key); }
  std::string get_string(std::string_view key, std::string_view fallback) const;
  /// One of `allowed` (error lists them).
  std::string get_choice(std::string_view key, std::string_view fallback,
                         const std::vector<std::string_view>& allowed) const;
  std::int64_t get_int(std::string_view key, std::int64_t fallback, std::int64_t min, std::int64_t max) const;
  double get_float(std::string_view key, double fallback, double min, double max) const;
  bool get_bool(std::string_view key, bool fallback) const;
  std::vector<std::int64_t> get_int_list(std::string_view key, const std::vector<std::int64_t>& fallback) const;

  /// Throws InputError for the first key not in `declared` (naming it and listing the declared ones).
  void reject_unknown(const std::vector<ParamInfo>& declared) const;
  /// "FILE:LINE:COL: workload.key" for messages (or "FILE: workload.key" without a source position).
  std::string place(std::string_view key) const;
  const toml::table& table() const noexcept { return table_; }
  const std::string& file() const noexcept { return file_; }

 private:
  const toml::node* node(std::string_view key) const { return table_.get(key); }
  toml::table table_;
  std::string file_;
  std::string prefix_;
};

/// Everything one run of one variant needs. `profile` is the variant's own copy (overrides applied);
/// the workload calls profile.get() for every cost it uses, which records provenance.
struct RunSpec {
  std::string scenario;            ///< scenario name, for messages
  std::string variant;             ///< variant name, for messages
  const topology::Host* host = nullptr;
  topology::Vm vm;
  cost::Profile profile;
  Params params;
  std::uint64_t seed = 1;
  std::uint64_t iterations = 10000;  ///< measured iterations (after warm-up)
  std::uint64_t warmup = 100;        ///< iterations simulated and discarded first
};

/// One reported metric. Values are in `unit` ("cycles", "ns", "us"): the unit the field uses for it
/// (cycles for x86 guest loops, ns for Arm micro-bench). `summary` is computed from a histogram of
/// per-iteration samples; `histogram` keeps the samples (in ps) for plots.
struct Metric {
  std::string name;          ///< e.g. "cycles_per_iteration", "ipi_round_trip", "send_cost"
  std::string unit;
  std::string description;   ///< one line: what is measured, from where to where
  sim::Summary summary;      ///< in `unit`
  sim::Histogram histogram;  ///< raw samples in ps (unit-independent)
  double ps_per_unit = 1000; ///< ps in one `unit` (1000 for ns; 1000/clock_ghz for cycles)
};

/// One row of "where the time goes".
struct BreakdownRow {
  std::string step;          ///< e.g. "sender: hypercall entry/exit (hv.hypercall_entry_exit)"
  double mean_per_iteration = 0;  ///< in the main metric's unit
  double share = 0;          ///< of the summed step time, [0, 1] (steps may overlap in time)
};

struct RunResult {
  /// metrics[0] is the main metric (the one compared across variants).
  std::vector<Metric> metrics;
  /// sends, misdelivered, lost, native_fallbacks, hypercalls (total) and per-kind counters such as
  /// "hypercalls.HvCallSendSyntheticClusterIpiEx", "icr_writes", "vm_exits", "coalesced".
  std::map<std::string, std::uint64_t> counters;
  std::vector<BreakdownRow> breakdown;
  /// Profile provenance (cost::Profile::provenance_json()) plus anything else the figures rest on.
  nlohmann::json provenance;
  /// Short remarks for the reader (e.g. "v2 sent VP 70's IPI to VP 6: misdelivered").
  std::vector<std::string> notes;
  /// What the workload resolved (mechanism, policies, ITS choice...): shown under the table.
  std::vector<std::pair<std::string, std::string>> settings;
  /// Simulated events and wall time, for the speed report.
  std::uint64_t events = 0;
};

class Workload {
 public:
  virtual ~Workload() = default;
  /// Runs the variant. Throws InputError for bad parameters or missing costs (naming file and key).
  virtual RunResult run(const RunSpec& spec) const = 0;
};

struct WorkloadInfo {
  std::string name;
  std::string description;
  std::vector<ParamInfo> params;
  std::function<std::unique_ptr<Workload>()> make;
};

/// All built-in workloads, sorted by name. (Explicit registry, not static self-registration: a static
/// library drops unreferenced objects, so each workload's describe function is listed in registry.cpp;
/// adding a workload = one new file + one line there.)
std::vector<const WorkloadInfo*> list_workloads();
/// The workload by name, or InputError(place, reason listing the known names).
const WorkloadInfo& find_workload(std::string_view name, std::string_view place);

}  // namespace ipilab::workload
