// ipilab/kvm/ipi_bench.h — IPI micro-benchmarks in a real KVM guest, measured in interleaved rounds.
//
// Cases (BenchCase):
//   counter-read — an empty timed region: what one timestamp pair (LFENCE; RDTSC; LFENCE, twice) costs.
//                  Reported apart; no other sample carries it more than once per batch.
//   loop         — the batch loop with nothing in it: loop control per iteration.
//   cpuid-exit   — CPUID leaf 0: one VM exit handled inside KVM and the entry back (the kvm-unit-tests
//                  vmexit `cpuid` shape). The default reference of the ratios.
//   ipi          — workload x target state x send mechanism:
//     RoundTrip  — the kvm-unit-tests `ipi` shape: clear a shared flag, send one IPI; the target's
//                  handler EOIs and sets the flag; the sender waits for it.
//     CallSingle — smp_call_function_single(wait=1)-like: lock a CSD slot, queue func + arg, send; the
//                  target's handler EOIs (as Linux sysvec_call_function_single does first), calls
//                  func(arg), releases the CSD; the sender waits for the release (csd_lock_wait).
//     target Spin (a load loop with interrupts on, no PAUSE so pause-loop exiting never yields it) or
//     Halt (`sti; hlt`, woken by the IPI; the sender idles halt_gap_us before each send).
//     Mechanisms (the exact instructions the Linux guest policy issues, src/x86 and src/hv), named as the
//     simulator's mechanisms (src/workload/mechanisms/) that model the same path:
//       X2apic "x2apic-physical" — x2apic_phys send_IPI: one WRMSR 0x830.
//       KvmPv  "kvm-pv"          — kvm_send_ipi_mask: VMCALL KVM_HC_SEND_IPI; the guest checks RAX == 1.
//       HvFast "hyperv"          — hv_apic.c __send_ipi_one for VP 1: HvCallSendSyntheticClusterIpi (fast)
//                                  through the hypercall page, executed by ipilab's hv::Partition in user
//                                  space (one I/O exit per call).
//       HvEx   "hyperv-ex"       — HvCallSendSyntheticClusterIpiEx forced (memory input, sparse vpset), the
//                                  same way; Linux takes this path for a VP index >= 64.
//     The names before they followed the simulator's — x2apic, hv-fast, hv-ex — are still accepted.
//
// How it runs (one VM, one run): every case's code is in one guest; the sender visits the cases in
// rounds, A B C ... A B C ..., so slow drift of the host hits all of them alike. Round 0 is a pilot
// (its samples are discarded) that sizes the batches: per case, iterations per sample
// N = iterations_for_bias(counter read, operation, max_bias) (common/estimator.h), so the counter read
// is at most max_bias of a sample; N = 1 (per-iteration timing) where the operation is that long anyway,
// and always for a halted target (the idle gap before each send must stay outside the timed window) and
// for counter-read itself. A sample is one timestamp pair around N iterations, stored as
// {elapsed, N}; its value is elapsed / N. Per round a case takes samples_per_round samples, or fewer
// when its slice of the time budget (budget_seconds_per_case / rounds) runs out (CaseResult says so).
// Between chunks the sender syncs with the VMM (an exit outside any timed window): the VMM fills the
// next chunk's control block and counts the exits, target IRQs and CSD calls of each chunk, so
// CaseResult::sender_exits proves the x2APIC and PV loops take no user-space exit and the Hyper-V ones
// exactly one per hypercall. Mechanisms share the VM: it shows Hyper-V CPUID leaves (our user-space
// Hyper-V); KVM still serves KVM_HC_SEND_IPI then, since it enforces PV feature bits only with
// KVM_CAP_ENFORCE_PV_FEATURE_CPUID (arch/x86/kvm/cpuid.h, guest_pv_has()).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kvm/vm.h"

namespace ipilab::kvm {

enum class Mechanism { X2apic, KvmPv, HvFast, HvEx };
/// A Hyper-V enlightened IPI: HvCallSendSyntheticClusterIpi (fast) or its Ex form.
constexpr bool is_hyperv(Mechanism m) { return m == Mechanism::HvFast || m == Mechanism::HvEx; }
enum class TargetState { Spin, Halt };
enum class Workload { RoundTrip, CallSingle };
enum class CaseKind { CounterRead, Loop, CpuidExit, Ipi };

const char* to_string(Mechanism m);
const char* to_string(TargetState t);
const char* to_string(Workload w);
/// The name (to_string) or an old alias (x2apic, hv-fast, hv-ex).
std::optional<Mechanism> mechanism_from_string(std::string_view s);
/// The names to_string gives, in the default measuring order.
std::vector<std::string_view> mechanism_names();
std::optional<TargetState> target_from_string(std::string_view s);
std::optional<Workload> workload_from_string(std::string_view s);

inline constexpr std::uint8_t kBenchVectorRoundTrip = 0xF0;
inline constexpr std::uint8_t kBenchVectorCallSingle = 0xF1;

struct BenchCase {
  CaseKind kind = CaseKind::Ipi;
  Mechanism mechanism = Mechanism::X2apic;  ///< Ipi only
  Workload workload = Workload::RoundTrip;  ///< Ipi only
  TargetState target = TargetState::Halt;   ///< Ipi only (the other kinds keep the target halted)
  /// "counter-read", "loop", "cpuid-exit" or "<mechanism>/<workload>/<target>"
  /// (x2apic-physical/ipi-roundtrip/halt).
  std::string name() const;
  static BenchCase of(CaseKind k) {
    BenchCase b;
    b.kind = k;
    return b;
  }
  static BenchCase counter_read() { return of(CaseKind::CounterRead); }
  static BenchCase loop() { return of(CaseKind::Loop); }
  static BenchCase cpuid_exit() { return of(CaseKind::CpuidExit); }
  static BenchCase ipi(Mechanism m, Workload w, TargetState t) { return {CaseKind::Ipi, m, w, t}; }
  bool operator==(const BenchCase&) const = default;
  /// An IPI case sent by a Hyper-V hypercall (the guest needs the Hyper-V MSRs written first).
  bool is_hyperv_ipi() const { return kind == CaseKind::Ipi && is_hyperv(mechanism); }
};
/// The case a name means (BenchCase::name(), or one with an old mechanism alias:
/// "x2apic/ipi-roundtrip/halt"); nullopt for anything else.
std::optional<BenchCase> case_from_name(std::string_view name);

/// Why a case's samples have the batch size they have.
enum class TimingRule {
  ByDefinition,  ///< counter-read: an empty region, one pair
  IdleGap,       ///< halted target: the sender idles between sends, outside the timed window: N = 1
  LongOperation, ///< the operation is >= overhead / max_bias: N = 1 keeps the read below max_bias
  Batch,         ///< N > 1 iterations per timestamp pair
};
const char* to_string(TimingRule r);

/// Estimator self-test: replaces every timestamp read with a software counter that advances by
/// `read_cost` per read, and adds `op_cost` to it per iteration of every case but counter-read. The real
/// operations still run; only the clock is fake. tests/kvm checks the guest loops against it.
struct FakeCounter {
  std::uint32_t read_cost = 10;
  std::uint32_t op_cost = 16;
};

struct RoundsConfig {
  /// The cases, in visiting order. counter-read is always measured first (the others are sized from
  /// it) and added when missing; duplicates are an error.
  std::vector<BenchCase> cases;
  unsigned rounds = 20;                 ///< timed rounds (after the pilot round)
  std::uint64_t samples_per_round = 200;
  std::uint64_t pilot_samples = 20;     ///< per case in the pilot round, one iteration each
  std::uint64_t warmup = 5;             ///< untimed iterations at the start of every chunk
  double halt_gap_us = 30.0;            ///< halted targets: sender idle time before each send
  double budget_seconds_per_case = 2.0; ///< split evenly over the rounds (0 = no budget)
  double max_bias = 0.001;              ///< counter read's largest share of a sample
  std::uint64_t max_batch = 1u << 20;   ///< largest N
  std::vector<unsigned> host_pus;       ///< PUs of the sender (vCPU 0) and the target (vCPU 1)
  std::optional<FakeCounter> fake_counter;
  /// Called after each round (1..rounds+1 of rounds+1, pilot included) on a vCPU thread.
  std::function<void(unsigned done, unsigned total)> progress;
  /// Bound of the whole run (a hung guest is stopped after it); 0 = 3 x the budgets + 60 s (at least
  /// 60 s), or 10 minutes without a budget.
  std::chrono::milliseconds timeout{0};
};

struct CaseResult {
  BenchCase bench;
  bool available = true;
  std::string unavailable_reason;  ///< e.g. VMCALL on the PVM backend
  std::uint64_t batch_n = 0;       ///< iterations per timed sample
  TimingRule timing = TimingRule::Batch;
  double pilot_op = 0;             ///< pilot median minus the counter read, counter units per iteration
  /// Per timed round: the samples' per-iteration values (elapsed / N), counter units (TSC cycles).
  std::vector<std::vector<double>> rounds;
  std::vector<double> pilot;       ///< the pilot round's samples (N = 1; not used in statistics)
  std::uint64_t iterations_planned = 0;  ///< rounds * samples_per_round * N
  std::uint64_t iterations_run = 0;      ///< timed iterations actually run
  unsigned rounds_truncated = 0;         ///< rounds the time budget cut short
  std::uint64_t loop_iterations = 0;     ///< every iteration the guest ran: pilot + warm-up + timed
  std::uint64_t target_irqs = 0;         ///< IPIs the target's handlers counted during this case's chunks
  std::uint64_t csd_calls = 0;           ///< CallSingle: times the queued function ran
  ExitCounts sender_exits;               ///< the sender's user-space exits inside this case's chunks
};

struct RoundsResult {
  std::vector<CaseResult> cases;   ///< in the measured order (counter-read first); unavailable ones too
  std::uint64_t tsc_khz = 0;       ///< guest TSC frequency (KVM_GET_TSC_KHZ)
  double counter_read = 0;         ///< pilot median of counter-read, counter units: what sized the batches
  unsigned rounds = 0;             ///< timed rounds run
  std::vector<unsigned> host_pus;  ///< where vCPU 0 and 1 ran
  RunReport report;                ///< all user-space exits per vCPU
};

/// Whether VMCALL completes on this KVM (a 1-vCPU guest issues KVM hypercall number 12345 and must get
/// -KVM_ENOSYS back within 1 s). False on the PVM backend (kvm_pvm), where the vCPU never leaves the
/// VMCALL. Cached after the first call. Throws UnavailableError when KVM itself is unusable.
bool kvm_hypercall_works();

/// Runs the cases in interleaved rounds in one 2-vCPU VM. A KvmPv case on a host where
/// kvm_hypercall_works() is false is returned unavailable (with the reason) and the rest still run.
/// Throws UnavailableError (no KVM), GuestError (a guest failed; the message names the case and round),
/// std::invalid_argument for a bad configuration (no rounds, no samples, more than kMaxBenchCases cases,
/// more samples per chunk than kMaxChunkRecords, a duplicate case).
RoundsResult run_bench_rounds(const RoundsConfig& config);

}  // namespace ipilab::kvm
