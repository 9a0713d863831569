// ipilab/measure/report.h — `ipilab measure`: runs the KVM benchmark in interleaved rounds
// (kvm/ipi_bench.h) and/or the core-to-core matrix (c2c.h) and reports, per case: the iterations run,
// median and p99 of the per-iteration samples, the 95 % bootstrap interval of the median over rounds, and
// the ratio to a reference case (default cpuid-exit) with its paired interval (bootstrap.h); the
// counter-read overhead apart; warnings where the measurement is weak; the host's provenance.
//
// Status of a case: Ok (it has samples), Unavailable (this KVM cannot run its mechanism, e.g. KVM PV
// send-IPI on the PVM backend: said per case, the rest still run) or Failed (it ran and produced no
// sample). A case without samples has no statistics: it is never shown as 0 (JSON null, table "-").
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "kvm/ipi_bench.h"
#include "measure/bootstrap.h"
#include "measure/c2c.h"
#include "measure/host_info.h"
#include "measure/stats.h"

namespace ipilab::measure {

struct KvmOptions {
  unsigned rounds = 20;
  std::uint64_t samples_per_round = 200;  ///< per case and round
  std::uint64_t pilot_samples = 20;
  std::uint64_t warmup = 5;               ///< untimed iterations at the start of each chunk
  double halt_gap_us = 30;
  double budget_seconds_per_case = 2.0;   ///< over all rounds (0 = none)
  double max_bias = 0.001;                ///< the counter read's largest share of a batch sample
  std::vector<kvm::Mechanism> mechanisms{kvm::Mechanism::X2apic, kvm::Mechanism::KvmPv, kvm::Mechanism::HvFast,
                                         kvm::Mechanism::HvEx};
  std::vector<kvm::Workload> workloads{kvm::Workload::RoundTrip, kvm::Workload::CallSingle};
  std::vector<kvm::TargetState> targets{kvm::TargetState::Spin, kvm::TargetState::Halt};
  std::string reference = "cpuid-exit";   ///< the case every ratio divides by
  std::vector<unsigned> host_pus;         ///< sender and target PUs; empty = 0 and 1
};

struct MeasureOptions {
  bool kvm = true;
  bool c2c = true;
  KvmOptions k;
  C2cConfig c2c_config;
  BootstrapOptions bootstrap;
  /// Progress lines for long work ("round 3/21"); may be empty.
  std::function<void(const std::string&)> progress;
};

/// The cases `k` asks for, in visiting order: counter-read, loop, cpuid-exit, then every
/// mechanism x workload x target.
std::vector<kvm::BenchCase> planned_cases(const KvmOptions& k);

/// Checks options before anything runs: the reference names a planned case (InputError "--reference"
/// listing the names), counts are > 0 (InputError naming the option).
void check_options(const MeasureOptions& o);

enum class CaseStatus { Ok, Unavailable, Failed };
const char* to_string(CaseStatus s);

struct CaseReport {
  kvm::CaseResult result;
  CaseStatus status = CaseStatus::Ok;
  std::string reason;                  ///< Unavailable / Failed: why
  std::optional<SampleStats> cycles;   ///< pooled over the timed rounds, per iteration, TSC cycles
  std::optional<Interval> median_ci;   ///< 95 % bootstrap interval of the median over rounds, cycles
  std::optional<RatioEstimate> ratio;  ///< median / the reference's median, paired over rounds
  std::string timing_note;             ///< why this case is timed per batch or per iteration
  std::vector<Bin> histogram_cycles;   ///< log_bins of the pooled samples
  std::size_t rounds_timed = 0;        ///< timed rounds that ran (result.rounds, also for a recorded case)
  std::string name() const { return result.bench.name(); }
};

struct MeasureReport {
  HostInfo host;
  MeasureOptions options;
  std::vector<std::string> warnings;
  std::string kvm_unavailable;   ///< non-empty: KVM could not be used at all (why)
  std::vector<CaseReport> kvm;   ///< counter-read first
  std::uint64_t tsc_khz = 0;
  unsigned rounds = 0;
  double counter_read_cycles = 0;  ///< the pilot's counter-read median that sized the batches
  std::vector<unsigned> host_pus;
  std::optional<C2cMatrix> c2c;
  double wall_seconds = 0;
  /// The case named `name` (BenchCase::name()), or nullptr.
  const CaseReport* find(std::string_view name) const;
  /// Cases that failed (no samples) — the CLI exits 1 after writing its outputs when there are any.
  std::vector<std::string> failed_cases() const;
};

/// Runs what `options` asks. KVM absent: with options.c2c the report still holds the c2c matrix and
/// kvm_unavailable says why; with only options.kvm it throws UnavailableError.
MeasureReport run_measure(const MeasureOptions& options);

/// The statistics, ratios, timing notes and warnings from raw results (what run_measure does after
/// measuring; pure, for tests).
MeasureReport analyze(HostInfo host, const MeasureOptions& options, const std::optional<kvm::RoundsResult>& kvm,
                      std::string kvm_unavailable, std::optional<C2cMatrix> c2c);

/// Warnings where the measurement is weak: the host is itself a VM (CPUID hypervisor bit), the PVM
/// backend, frequency scaling (a governor other than performance, or none visible), a TSC that is not
/// invariant, c2c pairs whose spread exceeds their mean, wide intervals, time-budget cuts.
std::vector<std::string> measurement_warnings(const MeasureReport& r);

nlohmann::json to_json(const MeasureReport& r);
std::string to_table(const MeasureReport& r);

}  // namespace ipilab::measure
