// ipilab/hv/partition.h — the hypervisor side of Hyper-V enlightened IPIs: a partition of vCPUs
// with a VP-index map that executes one hypercall exactly the way KVM does, and reports which VPs
// received which vector and how much work the host did.
//
// Source of every behaviour: Linux 6.12 arch/x86/kvm/hyperv.c — kvm_hv_hypercall (validation order),
// hv_check_hypercall_access, is_xmm_fast_hypercall, kvm_hv_send_ipi, kvm_get_sparse_vp_set /
// kvm_hv_get_hc_data, kvm_hv_send_ipi_to_many, hv_is_vp_in_sparse_set; and, for the Xen flavour,
// xen/arch/x86/hvm/viridian/viridian.c (hvcall_ipi, hvcall_ipi_ex). Test cases: the KVM selftests
// tools/testing/selftests/kvm/x86/hyperv_ipi.c and hyperv_features.c (x86_64/ before Linux 6.13).
//
// Validation order of Partition::execute (ErrorFlavor::Kvm, the default); the first failing step
// decides the outcome, and HypercallOutcome::rejected_by names it (steps 1-6: kvm_hv_hypercall):
//   1. CPL != 0 or not protected mode                      -> inject #UD, RAX untouched
//   2. decode the control word (abi.h decode_control)
//   3. enforce_cpuid: SEND_IPI needs cluster_ipi_recommended; SEND_IPI_EX needs that and
//      ex_processor_masks_recommended; FLUSH_*_EX need ex_processor_masks + remote_tlb_flush;
//      FLUSH_* need remote_tlb_flush -> HV_STATUS_ACCESS_DENIED            (hv_check_hypercall_access)
//   4. any RsvdZ control bit (31:27, 47:44, 63:60)       -> HV_STATUS_INVALID_HYPERCALL_INPUT
//   5. fast + XMM-capable code (SEND_IPI_EX, the four FLUSH codes): enforce_cpuid and no XMM input
//      CPUID bit -> inject #UD; otherwise XMM0..XMM5 are read (HostWork::xmm_registers_read)
//      (is_xmm_fast_hypercall, kvm_hv_hypercall_read_xmm)
//   6. dispatch: SEND_IPI with varhead != 0 or rep; SEND_IPI_EX with rep -> INVALID_HYPERCALL_INPUT;
//      a code KVM implements but ipilab does not model (flush, spin-wait, post message, signal event,
//      debug, extended calls 0x8001..0x8041) -> HV_STATUS_INVALID_HYPERCALL_CODE with
//      `modelled == false` and rejected_by "call code implemented by KVM but not modelled by ipilab";
//      any other code -> HV_STATUS_INVALID_HYPERCALL_CODE
//   7. kvm_hv_send_ipi:
//      a. no in-kernel LAPIC                              -> INVALID_HYPERCALL_INPUT
//      b. SEND_IPI slow: read 16 bytes at RDX (fail -> INVALID_HYPERCALL_INPUT); bytes 4..7 (TargetVtl
//         + padding) are NOT checked. Fast: RDX[63:32] != 0 -> INVALID_HYPERCALL_INPUT; vector =
//         RDX[31:0], mask = R8. The mask becomes bank 0 of a sparse set (valid_bank_mask = 1).
//      c. SEND_IPI_EX slow: read the 24-byte header at RDX (fail -> INVALID_HYPERCALL_INPUT); XMM fast:
//         vector = RDX[31:0] (RDX[63:32] ignored, unchecked), format = R8, valid_bank_mask = XMM0.lo.
//         all = (format == 1); ANY other format (2, 3, ...) is sparse.
//         varhead != popcount(valid_bank_mask) -> INVALID_HYPERCALL_INPUT (SET_ALL included).
//         all -> step d. Sparse with varhead 0 -> SUCCESS at once, the vector is NOT checked.
//         varhead > 64 -> INVALID_HYPERCALL_INPUT (unreachable after the popcount check; kept).
//         fast: varhead > 11 -> INVALID_HYPERCALL_INPUT; banks from XMM0.hi, XMM1.lo, ...
//         slow: only min(varhead, ceil(max_vcpus / 64)) banks are read, from RDX + 24 (fail ->
//         INVALID_HYPERCALL_INPUT); higher banks cannot hold a legal VP index.
//      d. vector outside 0x10..0xFF -> INVALID_HYPERCALL_INPUT (after set parsing).
//      e. walk EVERY vCPU in vCPU order, the sender included; select it when all, or its VP index is
//         in the sparse set (compact bank array); a selected vCPU whose APIC is disabled silently
//         drops the IPI (kvm_apic_set_irq fails, result ignored).
//      f. SUCCESS. RAX = status with reps completed 0 (encode_result), for every status.
//
// KVM vs TLFS differences (KVM's behaviour is what this model does; the TLFS one is noted):
//   - Bad vector: KVM INVALID_HYPERCALL_INPUT (0x3). TLFS pages list it as invalid input too, but
//     Xen returns INVALID_PARAMETER (0x5) — see ErrorFlavor.
//   - Sparse Ex call with varhead 0: KVM returns SUCCESS without checking the vector. TLFS: the vector
//     is always validated.
//   - TargetVtl/padding: KVM checks it only in the fast non-Ex form (RDX[63:32]); slow non-Ex and
//     both Ex forms ignore it. TLFS: TargetVtl must name a valid VTL, padding is RsvdZ.
//   - Format: KVM treats any format != 1 as SPARSE_4K. TLFS defines only 0 and 1 (others invalid).
//   - varhead must equal popcount(valid_bank_mask) even for SET_ALL. TLFS: the variable header is
//     whatever the vpset occupies beyond the fixed header (for ALL, just the bank mask's banks).
//   - Slow-call GPAs: KVM does not enforce 8-byte alignment or "must not cross a page"; reads that
//     cross pages are fine. TLFS: misaligned/crossing GPA -> HV_STATUS_INVALID_ALIGNMENT; an
//     unbacked GPA is also INVALID_ALIGNMENT in the TLFS table, KVM says INVALID_HYPERCALL_INPUT.
//   - Targets that match no VP (bits for nonexistent VP indices): silently ignored, SUCCESS. KVM
//     never returns HV_STATUS_INVALID_VP_INDEX. What real Hyper-V returns: UNKNOWN.
//   - Disabled target APIC: IPI dropped, status SUCCESS (TLFS says nothing).
//   - Reserved control bit 31 (Linux HV_HYPERCALL_NESTED) is rejected like the other RsvdZ bits.
//   - Only the 64-bit register convention is modelled (RCX/RDX/R8/XMM); the 32-bit EDX:EAX form is not.
//   - No output GPA is written by the IPI calls; R8 (output GPA for slow calls) is unused.
//   - Duplicate VP indices: KVM allows them (a host write of HV_X64_MSR_VP_INDEX only checks
//     `new_vp_index >= KVM_MAX_VCPUS`, kvm_hv_set_msr) and kvm_hv_send_ipi_to_many tests every vCPU's
//     own VP index, so every vCPU holding a targeted VP index receives the IPI. The model does the
//     same. (TLFS: a VP index names one VP.) Xen cannot have them (VP index = vCPU id): refused.
//
// KVM versions (PartitionConfig::kvm_version, kvm_version.h): the order above is mainline's. Older
// versions differ, each step named by the commit that changed it:
//   - before 413af6601f76 (v5.15, v5.16): step 4 is absent (reserved control bits ignored).
//   - before 47d3e5cdfe60 (v5.15, v5.16): SEND_IPI_EX is not XMM-fast, so step 5 never applies to it
//     (no #UD gate, no XMM read) and step 6 rejects a fast SEND_IPI_EX with INVALID_HYPERCALL_INPUT.
//   - before 40421f38f637 (v5.15, v5.16): step 6 accepts SEND_IPI with a varhead.
//   - before bd1ba5732bb9 (v5.15, v5.16): step 7c ignores varhead: the bank count is
//     popcount(valid_bank_mask); no varhead/popcount or > 64 check.
//   - before 79661c3766f8 (v5.15, v5.16): slow sparse reads fetch every announced bank (no cap).
//   - before 3244867af8c0 (v5.15): in 7c the bank count is tested first: popcount(valid_bank_mask)
//     == 0 -> SUCCESS at once for SET_ALL too (nothing delivered, vector unchecked); SET_ALL with a
//     non-zero valid_bank_mask reads no bank and is delivered to all.
//   - before the Feb 2025 LAPIC check (v5.15 .. v5.18): step 7a is absent and a missing in-kernel
//     LAPIC oopses the host; such a partition is refused at construction.
//
// ErrorFlavor::XenViridian (xen/arch/x86/hvm/viridian/viridian.c viridian_hypercall,
// hvcall_ipi, hvcall_ipi_ex, hv_vpset_to_vpmask, send_ipi):
//   - front end: Xen checks neither RsvdZ control bits, nor varhead, nor rep count/start, has no
//     enforce-CPUID access check, no XMM gate and never reads XMM registers, and always has an
//     in-kernel (Xen) vLAPIC. Steps 3-5, the step-6 varhead/rep checks and 7a are skipped. The CPL /
//     protected-mode #UD gate (step 1) is kept: no source read for ipilab says how Xen handles it (UNKNOWN).
//   - SEND_IPI fast: RDX[63:32] != 0 -> error. Slow: read 16 bytes; TargetVtl or padding (bytes
//     4..7) != 0 -> error. Then vector outside 0x10..0xFF -> error.
//   - SEND_IPI_EX fast -> error (never accepted). Slow: read 24 bytes; TargetVtl/padding != 0 ->
//     error; vector checked BEFORE the set (so sparse + no banks + vector 0 is an error, unlike KVM);
//     format 1 = all, format 0 = sparse with popcount(valid_bank_mask) banks read from RDX + 24,
//     any other format -> error.
//   - Every IPI error -> HV_STATUS_INVALID_PARAMETER; unknown code -> INVALID_HYPERCALL_CODE.
//   - Delivery in VP-index order (for_each_vp); disabled vLAPICs skipped. Xen indexes d->vcpu[vp]
//     directly (VP index == vCPU id there); set bits naming no vCPU are ignored by this model.
//
// Hostile input: any register values, any control word, any memory image: execute() never throws
// for them, never reads outside GuestMemory, and always returns a status or inject_ud.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <variant>
#include <vector>

#include "hv/abi.h"
#include "hv/hypercall.h"
#include "hv/kvm_version.h"

namespace ipilab::hv {

/// Which implementation's error codes and IPI-input checks to follow.
enum class ErrorFlavor {
  Kvm,          ///< Linux KVM arch/x86/kvm/hyperv.c kvm_hv_hypercall / kvm_hv_send_ipi (default)
  XenViridian,  ///< Xen viridian.c: every IPI input error is HV_STATUS_INVALID_PARAMETER
};

/// KVM_MAX_VCPUS with CONFIG_MAXSMP (Debian's config; arch/x86/kvm/Kconfig KVM_MAX_NR_VCPUS): the
/// upper bound of VP indices.
inline constexpr std::uint32_t KVM_MAX_VCPUS_MAXSMP = 4096;

/// Static description of a partition (a VM). Feature booleans are the guest-visible Hyper-V CPUID
/// bits; they matter to the host only with enforce_cpuid (KVM_CAP_HYPERV_ENFORCE_CPUID).
struct PartitionConfig {
  /// vCPU i -> VP index (HV_X64_MSR_VP_INDEX as set by the host). Size = number of vCPUs (>= 1,
  /// <= max_vcpus). Each VP index must be < max_vcpus; KVM allows duplicates (Xen does not).
  /// Default-constructed partitions use PartitionConfig::identity(n).
  std::vector<std::uint32_t> vp_index_of_vcpu;
  bool enforce_cpuid = false;                   ///< KVM_CAP_HYPERV_ENFORCE_CPUID
  bool cluster_ipi_recommended = true;          ///< CPUID 0x40000004 EAX bit 10
  bool ex_processor_masks_recommended = true;   ///< CPUID 0x40000004 EAX bit 11
  bool remote_tlb_flush_recommended = true;     ///< CPUID 0x40000004 EAX bit 2 (flush access check only)
  bool xmm_input_available = true;              ///< CPUID 0x40000003 EDX bit 4
  bool lapic_in_kernel = true;                  ///< false: KVM_CREATE_IRQCHIP not used (step 7a)
  /// Per-vCPU APIC software/hardware enable; empty = all enabled; otherwise size = vCPU count.
  std::vector<bool> apic_enabled;
  /// KVM_MAX_VCPUS (1..4096): bounds VP indices and caps slow sparse-bank reads at ceil(/64).
  std::uint32_t max_vcpus = KVM_MAX_VCPUS_MAXSMP;
  ErrorFlavor flavor = ErrorFlavor::Kvm;
  /// Which KVM (ErrorFlavor::Kvm only; kvm_version.h). Default: mainline.
  KvmVersion kvm_version = KvmVersion::kMainline;

  /// n vCPUs with VP index == vCPU number (KVM's default: vp_index = vcpu_idx, kvm_hv_vcpu_init).
  static PartitionConfig identity(std::uint32_t n);
};

/// One IPI accepted by a target's local APIC.
struct Delivery {
  std::uint32_t vcpu = 0;      ///< vCPU number (index in vp_index_of_vcpu)
  std::uint32_t vp_index = 0;  ///< its VP index
  std::uint32_t vector = 0;    ///< 0x10..0xFF
  friend bool operator==(const Delivery&, const Delivery&) = default;
};

/// Work the host did for one hypercall, in units the simulator prices (counts, not time).
struct HostWork {
  std::uint32_t guest_reads = 0;          ///< kvm_read_guest calls made (successful or not)
  std::uint64_t guest_bytes_read = 0;     ///< bytes copied from guest memory by successful reads
  std::uint32_t xmm_registers_read = 0;   ///< 6 when kvm_hv_hypercall_read_xmm ran, else 0
  std::uint32_t banks_read = 0;           ///< sparse bank QWORDs fetched (memory or XMM halves)
  std::uint32_t vcpus_scanned = 0;        ///< vCPUs visited by kvm_hv_send_ipi_to_many
  std::uint32_t apic_set_irq_calls = 0;   ///< kvm_apic_set_irq calls (selected vCPUs, incl. dropped)
  friend bool operator==(const HostWork&, const HostWork&) = default;
};

/// The input as the host decoded it (for display): nothing (rejected before/while reading),
/// hv_send_ipi, or hv_send_ipi_ex with the bank QWORDs actually read.
using DecodedInput = std::variant<std::monostate, SendIpiInput, SendIpiExInput>;

/// Result of one hypercall.
struct HypercallOutcome {
  /// True: the guest gets #UD; no status, RAX not written (`status`/`rax` then hold SUCCESS/0 and
  /// mean nothing).
  bool inject_ud = false;
  HvStatus status = HvStatus::HV_STATUS_SUCCESS;
  std::uint64_t rax = 0;            ///< encode_result({status, reps_completed = 0})
  HypercallControl control;         ///< decode_control(RCX), filled even for #UD
  /// False when the call code is one KVM implements but ipilab does not (the outcome is then
  /// INVALID_HYPERCALL_CODE, which is NOT what KVM would return).
  bool modelled = true;
  std::vector<Delivery> delivered;  ///< in vCPU order; empty unless status == SUCCESS
  std::vector<std::uint32_t> dropped_vcpus;  ///< selected, but the APIC is disabled (IPI lost)
  HostWork work;
  /// Which check decided a non-success outcome ("varhead != popcount(valid_bank_mask)"); empty on
  /// success. Static strings.
  std::string_view rejected_by;
  DecodedInput input;

  std::uint16_t status_code() const noexcept { return static_cast<std::uint16_t>(status); }
  bool success() const noexcept { return !inject_ud && status == HvStatus::HV_STATUS_SUCCESS; }
};

/// A partition: vCPUs, their VP indices and the host's policy. Immutable after construction;
/// execute() is const and thread-compatible.
class Partition {
 public:
  /// Throws std::invalid_argument for: no vCPUs, more vCPUs than max_vcpus, max_vcpus outside
  /// 1..4096, a VP index >= max_vcpus, a duplicate VP index with the Xen flavour, apic_enabled of
  /// the wrong size, and no in-kernel LAPIC on a KVM version that would oops (kvm_version.h).
  explicit Partition(PartitionConfig config);

  /// Executes the hypercall `regs` issued by vCPU `sender_vcpu` (which must exist:
  /// std::out_of_range otherwise). Never throws for register or memory content.
  HypercallOutcome execute(std::uint32_t sender_vcpu, const HypercallRegs& regs,
                           const GuestMemory& memory) const;

  std::uint32_t vcpu_count() const noexcept { return static_cast<std::uint32_t>(config_.vp_index_of_vcpu.size()); }
  std::uint32_t vp_index(std::uint32_t vcpu) const { return config_.vp_index_of_vcpu.at(vcpu); }
  /// The lowest-numbered vCPU whose VP index is `vp`, if any.
  std::optional<std::uint32_t> vcpu_of_vp(std::uint32_t vp) const noexcept;
  /// Every vCPU whose VP index is `vp`, ascending (several with duplicate VP indices).
  std::vector<std::uint32_t> vcpus_of_vp(std::uint32_t vp) const;
  /// The behaviour flags of the configured KVM version (all true for mainline).
  const KvmBehaviour& behaviour() const noexcept { return behaviour_; }
  const PartitionConfig& config() const noexcept { return config_; }

 private:
  PartitionConfig config_;
  KvmBehaviour behaviour_;
  std::vector<std::uint32_t> vcpu_of_vp_;  ///< size max_vcpus; lowest vCPU with that VP, UINT32_MAX = none
};

}  // namespace ipilab::hv
