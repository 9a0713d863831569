// ipilab/kvm/guest_layout.h — the guest-physical memory map of ipilab's micro-benchmark VMs and the
// structures the host and the guest code share there.
//
// The guest runs in 64-bit long mode with the first 1 GiB identity-mapped by 2 MiB pages (GVA == GPA),
// so every address below is both a guest-physical and a guest-virtual address. Only the first
// kGuestMemBytes are backed by host memory (one KVM memslot); a guest access above that is an MMIO
// exit, which the VMM reports as an error naming the address.
#pragma once

#include <cstddef>
#include <cstdint>

namespace ipilab::kvm {

inline constexpr std::uint64_t kGuestMemBytes = 16ull << 20;   ///< backed guest memory, bytes

inline constexpr std::uint64_t kGdtGpa = 0x1000;      ///< GDT: null, code64 (0x08), data (0x10), TSS (0x18)
inline constexpr std::uint64_t kIdtGpa = 0x2000;      ///< IDT: 256 x 16-byte interrupt gates
inline constexpr std::uint64_t kTssGpa = 0x3000;      ///< 64-bit TSS (unused by the code, required by VMX)
inline constexpr std::uint64_t kPml4Gpa = 0x4000;     ///< page tables: PML4, PDPT, PD (2 MiB pages)
inline constexpr std::uint64_t kPdptGpa = 0x5000;
inline constexpr std::uint64_t kPdGpa = 0x6000;
inline constexpr std::uint64_t kCodeGpa = 0x10000;    ///< JIT-generated guest code (Xbyak), up to 960 KiB
inline constexpr std::uint64_t kCodeMaxBytes = 0xF0000;
inline constexpr std::uint64_t kSharedGpa = 0x100000; ///< SharedArea (host <-> guest), 1 MiB
inline constexpr std::uint64_t kSamplesGpa = 0x200000;   ///< timed samples written by benchmark guests
inline constexpr std::uint64_t kSamplesMaxCount = (4ull << 20) / 8;
inline constexpr std::uint64_t kStackGpa = 0x600000;  ///< vCPU i stack: [kStackGpa + i*64 KiB, +64 KiB)
inline constexpr std::uint64_t kStackBytes = 0x10000;
inline constexpr std::uint64_t kHcallGpa = 0x700000;  ///< vCPU i hypercall input page at +i*8 KiB, output +4 KiB
inline constexpr std::uint64_t kHypercallPageGpa = 0x7F0000;  ///< where guests map the Hyper-V hypercall page
inline constexpr unsigned kMaxVcpus = 16;

/// I/O ports the guest uses to talk to the VMM (each access is one KVM_EXIT_IO to user space). Both are
/// below 0x100 so the guest can use `out imm8, eax` and keep rdx (an argument register) intact.
inline constexpr std::uint16_t kUcallPort = 0xE0;  ///< `out 0xE0, eax` with eax = UcallCmd; args in rdi, rsi, rdx
inline constexpr std::uint16_t kHvHypercallPort = 0xE4;  ///< `out 0xE4, eax` in the Hyper-V hypercall page

/// Commands of the ucall port (value written with `out dx, eax`). Only for stage sync and the end of a
/// run, never inside a timed loop.
enum class UcallCmd : std::uint32_t {
  Done = 1,       ///< this vCPU finished
  Sync = 2,       ///< rdi = stage; the host runs its stage check, then resumes the vCPU
  Fail = 3,       ///< rdi = guest check id, rsi = got, rdx = expected (a guest-side assertion failed)
  Exception = 4,  ///< rdi = vector, rsi = faulting RIP, rdx = error code (0 if the vector has none)
  Unexpected = 5, ///< rdi = interrupt vector that has no handler
};

/// One 64-byte cache line holding one 64-bit word (avoids false sharing between flags).
struct alignas(64) Line {
  volatile std::uint64_t v;
  std::uint8_t pad[56];
};
static_assert(sizeof(Line) == 64);

/// Call-single-data slot, the shape of Linux's `struct __call_single_data` reduced to one slot:
/// the sender locks it (flags = 1), queues func + arg, sends the IPI; the target's handler calls
/// func(arg) and releases it (flags = 0); the sender waits for the release (csd_lock_wait).
struct alignas(64) Csd {
  volatile std::uint64_t flags;
  volatile std::uint64_t func;  ///< guest address of a function taking rdi = arg
  volatile std::uint64_t arg;
  std::uint8_t pad[40];
};
static_assert(sizeof(Csd) == 64);

/// The shared page at kSharedGpa. The host writes the parameters before the run and reads the results
/// after it (or at a Sync); the guests use the flags to talk to each other without any VM exit.
struct SharedArea {
  std::uint64_t iterations;     ///< timed iterations per batch
  std::uint64_t batches;        ///< number of batches
  std::uint64_t warmup;         ///< untimed iterations before the first batch
  std::uint64_t halt_gap_tsc;   ///< TSC cycles the sender idles between sends in halt mode
  std::uint64_t target_apic_id; ///< x2APIC ID of the target vCPU
  std::uint64_t target_vp;      ///< Hyper-V VP index of the target vCPU
  std::uint64_t mechanism;      ///< which send path (kvm::Mechanism)
  std::uint64_t param[9];       ///< test-specific
  Line ack;                     ///< IPI round trip: the target's handler sets it to 1
  Line stop;                    ///< sender -> targets: leave the wait loop
  Line go;                      ///< sender -> targets: start
  Csd csd;
  Line csd_calls;               ///< incremented by the queued function
  Line ready[kMaxVcpus];        ///< vCPU i sets ready[i] = 1 when its handlers are live
  Line irqs[kMaxVcpus];         ///< interrupts received by vCPU i (handler increments)
  Line vp_index[kMaxVcpus];     ///< VP index each vCPU read from HV_X64_MSR_VP_INDEX
  Line status[64];              ///< per-case results written by test guests (e.g. HV_STATUS)
  // The interleaved benchmark (ipi_bench.h):
  Line target_mode;             ///< sender -> target: TargetMode the target should be in
  Line target_mode_ack;         ///< target -> sender: the TargetMode it entered last
  Line fake_clock;              ///< software counter replacing RDTSC in estimator self-tests
  Line rounds_total;            ///< rounds the sender runs (the pilot round included)
  Line round;                   ///< the round the sender is in (0 = pilot)
};
static_assert(sizeof(SharedArea) < 0xF0000);

/// What the benchmark's target vCPU does between IPIs (SharedArea::target_mode).
enum class TargetMode : std::uint64_t { Halt = 1, Spin = 2, Stop = 3 };

/// Per-case control block of the interleaved benchmark, at kCaseCtlGpa + case * 64. The host fills the
/// inputs at the case's chunk-start sync and reads the outputs at its chunk-end sync; the guest never
/// exits inside a chunk except for what the mechanism itself does.
struct alignas(64) CaseCtl {
  std::uint64_t batch_n;       ///< in: iterations per timed sample (one counter-read pair per sample)
  std::uint64_t samples_max;   ///< in: samples to take in this chunk
  std::uint64_t slice;         ///< in: stop once this many counter units passed since the chunk began (0 = none)
  std::uint64_t warmup;        ///< in: untimed iterations before the first sample
  std::uint64_t records_gpa;   ///< in: where samples go, as {elapsed, iterations} uint64 pairs
  std::uint64_t samples_done;  ///< out: samples written
  std::uint64_t truncated;     ///< out: 1 when the slice ran out before samples_max
  std::uint64_t reserved;
};
static_assert(sizeof(CaseCtl) == 64);
inline constexpr std::uint64_t kCaseCtlGpa = kSharedGpa + 0xF0000;
inline constexpr unsigned kMaxBenchCases = 64;
/// Samples (records of two uint64) one chunk can hold in the sample area.
inline constexpr std::uint64_t kMaxChunkRecords = kSamplesMaxCount / 2;

}  // namespace ipilab::kvm
