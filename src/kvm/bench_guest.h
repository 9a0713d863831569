// ipilab/kvm/bench_guest.h — the guest code of the interleaved benchmark (ipi_bench.h), generated with
// Xbyak. Internal to src/kvm: ipi_bench.cpp drives it through the SharedArea and the CaseCtl blocks.
//
// Sender (vCPU 0):
//   [Hyper-V: write HV_X64_MSR_GUEST_OS_ID and HV_X64_MSR_HYPERCALL]; wait until the target is ready;
//   for round in 0 .. rounds_total-1:            (SharedArea::round, rounds_total)
//     for each case i:                           (unrolled at generation time)
//       put the target in the case's mode (TargetMode; a halted target is woken by an x2APIC IPI)
//       Sync(stage = i << 8 | 1)                 (the VMM fills CaseCtl i)
//       chunk i: warm-up iterations, then samples: [idle gap] t0 = read; N x iteration; t1 = read;
//                store {t1 - t0, N}; stop after samples_max or once t1 - chunk start >= slice
//       Sync(stage = i << 8 | 2)                 (the VMM reads the samples and counts)
//   target mode Stop; Done.
// Target (vCPU 1): loops in the mode the sender sets (Halt: `cli; check; sti; hlt`, Spin: a plain load
// loop with IF = 1), acknowledges each mode in target_mode_ack; Stop: Done.
// Handlers: round trip (EOI, count, set ack) and call-single (EOI, count, func(arg), unlock the CSD).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "kvm/ipi_bench.h"
#include "kvm/vm.h"

namespace ipilab::kvm {

inline constexpr std::uint64_t kSyncChunkStart = 1;
inline constexpr std::uint64_t kSyncChunkEnd = 2;

/// The bench VM's two vCPUs: vCPU 0 sends, vCPU 1 is the target.
inline constexpr unsigned kSenderVcpu = 0, kTargetVcpu = 1;

/// Guest check ids (GuestError "check N"):
///   1 — KVM_HC_SEND_IPI returned RAX != 1 (number of vCPUs that accepted the IPI)
///   2 — a Hyper-V IPI hypercall returned a status whose low 16 bits are not HV_STATUS_SUCCESS
enum : std::uint64_t { kCheckPvResult = 1, kCheckHvStatus = 2 };

struct BenchGuestOptions {
  bool hyperv = false;                     ///< write the Hyper-V MSRs first (any Hv mechanism measured)
  std::optional<FakeCounter> fake_counter;
};

/// The program for `cases` (all available on this host), vCPU 0 sender, vCPU 1 target.
GuestImage build_bench_guest(const std::vector<BenchCase>& cases, const BenchGuestOptions& options);

}  // namespace ipilab::kvm
