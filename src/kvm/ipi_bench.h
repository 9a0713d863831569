// ipilab/kvm/ipi_bench.h — IPI micro-benchmarks run in a real KVM guest (issue 5).
//
// Two workloads, each against a target vCPU that spins (interrupts on, a plain load loop without
// PAUSE so pause-loop exiting never yields it) or halts (`sti; hlt`, woken by the IPI):
//   RoundTrip  — the kvm-unit-tests `ipi` shape: the sender clears a shared flag, starts the TSC, sends
//                one IPI; the target's handler EOIs and sets the flag; the sender stops the TSC when it
//                sees the flag. One sample = send + delivery + handler entry + cache-line return.
//   CallSingle — smp_call_function_single(wait=1)-like: the sender locks a CSD slot (flags = 1), queues
//                func + arg, sends; the target's handler EOIs (as Linux sysvec_call_function_single
//                does first), calls func(arg) and releases the CSD (flags = 0); the sender waits for the
//                release (csd_lock_wait).
// Send mechanisms: the exact instruction sequence the Linux guest policy produces (src/x86, src/hv):
//   X2apic  — x2apic_phys send_IPI: one WRMSR 0x830 (ICR, fixed, physical destination = APIC ID).
//   KvmPv   — kvm_send_ipi_mask: one VMCALL KVM_HC_SEND_IPI (RAX = 10, RBX/RCX = 128-bit bitmap,
//             RDX = min APIC ID, RSI = ICR low); the guest checks RAX == 1 (one vCPU got it).
//   HvFast  — HvCallSendSyntheticClusterIpi, fast (RDX = vector, R8 = 1 << VP), through the hypercall
//             page; executed by ipilab's hv::Partition in user space (one I/O exit per call).
//   HvEx    — HvCallSendSyntheticClusterIpiEx, memory input (sparse vpset), through the hypercall page.
// Timing: RDTSC fenced with LFENCE on both sides; one sample per iteration written to shared memory
// (kSamplesGpa); nothing exits to user space inside the timed loop except the Hyper-V hypercalls
// (BenchResult::sender_loop_exits proves it).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "kvm/vm.h"

namespace ipilab::kvm {

enum class Mechanism { X2apic, KvmPv, HvFast, HvEx };
enum class TargetState { Spin, Halt };
enum class Workload { RoundTrip, CallSingle };

const char* to_string(Mechanism m);
const char* to_string(TargetState t);
const char* to_string(Workload w);

inline constexpr std::uint8_t kBenchVectorRoundTrip = 0xF0;
inline constexpr std::uint8_t kBenchVectorCallSingle = 0xF1;

struct BenchConfig {
  Mechanism mechanism = Mechanism::X2apic;
  TargetState target = TargetState::Spin;
  Workload workload = Workload::RoundTrip;
  std::uint64_t iterations = 1000;  ///< timed iterations per batch
  std::uint64_t batches = 10;
  std::uint64_t warmup = 200;       ///< untimed iterations first (discarded)
  /// Halt target only: TSC time the sender waits between sends so the target is back in HLT, in µs.
  double halt_gap_us = 30.0;
  /// Host PUs for the sender (vCPU 0) and the target (vCPU 1); empty = 0 and 1 (mod the PU count).
  std::vector<unsigned> host_pus;
  /// Stop the timed loop early once this much TSC time has passed since it started (0 = never); the
  /// result then holds fewer samples (BenchResult::samples_cycles.size()). Keeps `ipilab measure` bounded
  /// on hosts where one configuration is pathologically slow.
  double max_seconds = 0;
  std::chrono::milliseconds timeout{30000};
};

struct BenchResult {
  BenchConfig config;
  /// Up to batches * iterations timed samples in order (fewer when max_seconds cut the loop), TSC cycles.
  std::vector<std::uint64_t> samples_cycles;
  bool truncated = false;                     ///< max_seconds cut the loop
  std::uint64_t tsc_khz = 0;                  ///< guest TSC frequency (KVM_GET_TSC_KHZ)
  std::uint64_t target_irqs = 0;              ///< IPIs the target's handler counted
  std::uint64_t csd_calls = 0;                ///< CallSingle: times the queued function ran
  RunReport report;                           ///< all user-space exits per vCPU
  /// User-space exits of the sender between the start and the end of the loop (warm-up included),
  /// per reason; x2APIC and PV must show none, Hyper-V one io:hv-hypercall per call.
  ExitCounts sender_loop_exits;
  std::uint64_t loop_iterations = 0;          ///< warmup + batches * iterations
  std::vector<unsigned> host_pus;             ///< where vCPU 0 and 1 ran
};

/// The cost of one VM exit and entry handled inside KVM: a 1-vCPU guest times `iterations` CPUID
/// (leaf 0) instructions one by one (CPUID always exits; KVM answers from its CPUID table), the
/// kvm-unit-tests vmexit `cpuid` test shape. Samples in TSC cycles.
struct ExitBenchResult {
  std::vector<std::uint64_t> samples_cycles;
  std::uint64_t tsc_khz = 0;
  RunReport report;
};
ExitBenchResult run_cpuid_exit_bench(std::uint64_t iterations, std::uint64_t warmup = 100);

/// Whether VMCALL completes on this KVM (a 1-vCPU guest issues KVM hypercall number 12345 and must get
/// -KVM_ENOSYS back within 1 s). False on the PVM backend (kvm_pvm), where the vCPU never leaves the
/// VMCALL. Cached after the first call. Throws UnavailableError when KVM itself is unusable.
bool kvm_hypercall_works();

/// Runs one benchmark in a fresh 2-vCPU VM. KvmPv on a host where kvm_hypercall_works() is false ->
/// UnavailableError. Throws UnavailableError (no KVM), GuestError (the guest
/// failed, e.g. a mechanism returned an error: check ids are documented in ipi_bench.cpp),
/// std::invalid_argument for iterations * batches + warmup > kSamplesMaxCount or 0 iterations.
BenchResult run_ipi_bench(const BenchConfig& config);

}  // namespace ipilab::kvm
