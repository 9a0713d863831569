// ipilab/workload/workload.h — the contract between a scenario (src/scenario) and a workload.
//
// A workload is a registered, named family ("smp_call_function_single", "ipi_hw", "multicast",
// "kick", "storm", "wakeup"). The scenario layer builds one RunSpec per variant (host, VM, a private
// copy of the cost profile, the merged [workload] table, seed, iterations) and calls
// Workload::run(spec). Every workload is a set of programs, one per vCPU, run by the one simulation
// core (vm_run.h) through the mechanism the scenario names (mechanism.h); the result holds metrics
// with spreads, counters, throughput, per-resource utilisation and queue waits, a breakdown of where
// the time goes and the provenance of every cost used. The scenario layer prints, compares and
// serialises RunResults; it never computes figures itself.
//
// Parameters are declared once per workload (params.h) and once per mechanism, so unknown keys are
// errors and `ipilab list --workloads` / `--mechanisms` can print them. A run must not touch mutable
// globals or statics: the sweep runs many variants at once in threads.
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

#include "cost/catalog.h"
#include "cost/profile.h"
#include "sim/histogram.h"
#include "topology/host.h"
#include "topology/vm.h"
#include "workload/params.h"

namespace ipilab::workload {

class Observer;  // vm_run.h

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
  /// Sees the run as it goes (vm_run.h Observer), e.g. a timeline writer; none: no cost. Not owned.
  Observer* observer = nullptr;
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
  std::string step;          ///< e.g. "sender: hypercall dispatch and return [hv.hypercall_entry_exit]"
  double mean_per_iteration = 0;  ///< in the main metric's unit
  double share = 0;          ///< of the summed step time, [0, 1] (steps may overlap in time)
};

/// A shared thing of the run and how loaded it was over the measured window (vm_run.h lists them).
struct ResourceReport {
  std::string name;          ///< "vcpu3.call_single_queue", "its1.sgir", "pcpu0.hypervisor", ...
  std::string kind;          ///< call_single_queue | interrupts | hypervisor | its_sgir | its_command_queue | its_lock
  double utilisation = 0;    ///< busy fraction (queues: fraction of time non-empty), [0, 1]
  double wait_mean = 0;      ///< mean queueing delay, in `unit`
  double wait_p99 = 0;
  std::string unit = "ns";
  std::uint64_t arrivals = 0;
  // Little's law, both sides measured independently: L (the time-average number in the system, from
  // the area under n(t)) = lambda * W (arrivals per time x their mean time in the system, clipped at
  // the window's end) + carried (items that arrived before the measured window).
  double little_l = 0;
  double little_lambda_w = 0;
  double little_carried = 0;
  bool little_exact = true;
};

/// Rates over the measured window (simulated time).
struct Throughput {
  double window_ns = 0;
  double ipis_per_second = 0;   ///< interrupts delivered to the vCPUs
  double calls_per_second = 0;  ///< calls, IPI sends and wake-ups the programs completed (Op::Call, Ipi, Wake);
                                ///< one with a lost IPI is not counted (its function never ran there)
};

/// One send of the run shown exactly: the first send the core asked the mechanism to plan
/// (deterministic for a scenario and seed), with every hypercall as it went on the wire. Filled by the
/// mechanisms whose guest side issues Hyper-V hypercalls (hyperv); JSON: docs/json.md
/// ("sample_hypercall"), text: scenario/sample_hypercall.h.
struct SampleHypercall {
  std::string call;               ///< "CPU 0: apic->send_IPI(cpu 1, vector 0xfb)"
  /// An `ipilab hv send` command that runs the same send on the same guest and host ("" when none
  /// exists; then no_command_reason says why).
  std::string command;
  std::string no_command_reason;
  /// `ipilab hv send`'s text for it: each hypercall's control word decoded, RDX/R8 or the input
  /// QWORDs decoded per the TLFS, the host's answer, the fallback, the oracle's verdict.
  std::string text;
  /// {"call", "linux", "kvm", "command", then `hv send --json`'s "hypercalls", "fallback",
  /// "returned", "oracle"} (docs/json.md).
  nlohmann::ordered_json json;
};

struct RunResult {
  /// metrics[0] is the main metric (the one compared across variants).
  std::vector<Metric> metrics;
  /// sends, misdelivered, lost, native_fallbacks, hypercalls (total) and per-kind counters such as
  /// "hypercalls.HvCallSendSyntheticClusterIpiEx", "icr_writes", "vm_exits", "coalesced".
  std::map<std::string, std::uint64_t> counters;
  std::vector<BreakdownRow> breakdown;
  Throughput throughput;
  /// Every resource of the run (sorted by kind, then name).
  std::vector<ResourceReport> resources;
  /// Profile provenance (cost::Profile::provenance_json()) plus anything else the figures rest on.
  nlohmann::json provenance;
  /// Short remarks for the reader (e.g. "v2 sent VP 70's IPI to VP 6: misdelivered").
  std::vector<std::string> notes;
  /// What the workload resolved (mechanism, policies, ITS choice...): shown under the table.
  std::vector<std::pair<std::string, std::string>> settings;
  /// Simulated events, for the speed report.
  std::uint64_t events = 0;
  /// The mechanism's sample send (nullopt for mechanisms without hypercalls).
  std::optional<SampleHypercall> sample_hypercall;
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
  /// The workload's own parameters (the mechanism's are listed by `ipilab list --mechanisms`).
  std::vector<ParamInfo> params;
  std::function<std::unique_ptr<Workload>()> make;
  /// Cost keys the workload itself reads (the mechanism declares its own).
  std::vector<cost::CostKey> cost_keys = {};
  /// The metrics a run may report (RunResult::metrics names; a scenario's `expect` may name them as
  /// well as the counters of workload/counters.h). The scenario runner refuses a run that reports
  /// one not listed here.
  std::vector<std::string> metrics = {};
  /// Checks a [workload] table before any run: unknown keys (the workload's and its mechanism's
  /// parameters are known), a mechanism this workload cannot use. Throws InputError naming the key.
  /// Empty: only `params` are accepted.
  std::function<void(const Params&)> validate = {};
  /// The default of the `mechanism` parameter ("" when the workload takes none).
  std::string default_mechanism = {};
};

/// All built-in workloads, sorted by name. (Explicit registry, not static self-registration: a static
/// library drops unreferenced objects, so each workload's describe function is listed in registry.cpp;
/// adding a workload = one new file + one line there.)
std::vector<const WorkloadInfo*> list_workloads();
/// The workload by name, or InputError(place, reason listing the known names).
const WorkloadInfo& find_workload(std::string_view name, std::string_view place);

}  // namespace ipilab::workload
