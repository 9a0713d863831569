// ipilab/measure/report.h — `ipilab measure`: runs the KVM IPI benchmarks and/or the c2c matrix and
// reports per mechanism and target state the median, p99, mean and CV over batches (stats.h), in TSC
// cycles and ns, with the host's provenance (host_info.h) and the user-space exits the VMM saw.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kvm/ipi_bench.h"
#include "measure/c2c.h"
#include "measure/host_info.h"
#include "measure/stats.h"

namespace ipilab::measure {

struct MeasureOptions {
  bool kvm = true;
  bool c2c = true;
  std::uint64_t iterations = 1000;  ///< timed iterations per batch (KVM); round trips per sample (c2c)
  unsigned batches = 5;
  std::uint64_t warmup = 20;
  double halt_gap_us = 30;
  double max_seconds_per_case = 1.5;  ///< time budget of one KVM case's timed loop
  std::vector<kvm::Mechanism> mechanisms{kvm::Mechanism::X2apic, kvm::Mechanism::KvmPv, kvm::Mechanism::HvFast,
                                         kvm::Mechanism::HvEx};
  std::vector<kvm::Workload> workloads{kvm::Workload::RoundTrip, kvm::Workload::CallSingle};
  std::vector<kvm::TargetState> targets{kvm::TargetState::Spin, kvm::TargetState::Halt};
  unsigned c2c_samples = 30;
};

/// One KVM case. When `available` is false, `unavailable_reason` says why (e.g. VMCALL on PVM).
struct KvmCase {
  kvm::Mechanism mechanism = kvm::Mechanism::X2apic;
  kvm::TargetState target = kvm::TargetState::Spin;
  kvm::Workload workload = kvm::Workload::RoundTrip;
  bool available = true;
  std::string unavailable_reason;
  SampleStats cycles;            ///< statistics of the samples, TSC cycles
  std::uint64_t tsc_khz = 0;
  std::uint64_t loop_iterations = 0;
  bool truncated = false;        ///< the time budget cut the loop
  kvm::ExitCounts sender_loop_exits;
  std::vector<kvm::ExitCounts> exits;  ///< all user-space exits per vCPU
  std::vector<unsigned> host_pus;
};

struct MeasureReport {
  HostInfo host;
  MeasureOptions options;
  std::vector<KvmCase> kvm;
  std::optional<SampleStats> cpuid_exit;  ///< cycles per CPUID exit (vm.exit_entry)
  std::uint64_t tsc_khz = 0;
  std::optional<C2cMatrix> c2c;
  std::string kvm_unavailable;   ///< non-empty: KVM could not be used at all (why)
  double wall_seconds = 0;
};

/// Runs what `options` asks. KVM absent: with options.c2c the report still holds the c2c matrix and
/// kvm_unavailable says why; with only options.kvm it throws UnavailableError.
MeasureReport run_measure(const MeasureOptions& options);

nlohmann::json to_json(const MeasureReport& r);
std::string to_table(const MeasureReport& r);

/// The cost profile (src/cost/profile.h format) of the measured primitives, each with provenance
/// (host, kernel, date, method). Keys written when measured: vm.exit_entry (CPUID exit),
/// mem.cacheline_same_node (c2c median pair), hv.hypercall_entry_exit (derived: Hyper-V fast minus
/// x2APIC halt round trip: the user-space emulation's extra cost), vcpu.halt_wakeup (derived: x2APIC
/// halt minus spin round trip, only when spin < halt). The measured round trips are listed as
/// comments for the `this-host` scenario to compare against.
std::string to_profile_toml(const MeasureReport& r);

}  // namespace ipilab::measure
