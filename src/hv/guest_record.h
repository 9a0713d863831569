// ipilab/hv/guest_record.h — what one Linux IPI send did: the hypercalls it issued (exact registers and
// input bytes), the native APIC send it fell back to, and a WorkRecord of the guest-side work the
// simulator prices (cost profile entries are per unit of each counter).
//
// Every counter names the Linux function that does the work (arch/x86/hyperv/hv_apic.c,
// include/asm-generic/mshyperv.h, include/linux/cpumask.h, lib/find_bit.c).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>
#include <vector>

#include "hv/guest_cpumask.h"
#include "hv/hypercall.h"

namespace ipilab::hv {

/// The six `struct apic` IPI callbacks hv_apic_init hooks (arch/x86/hyperv/hv_apic.c); a native fallback names
/// the orig_apic callback it called.
enum class SendHook : std::uint8_t {
  kSendIpi,                 ///< send_IPI(cpu, vector)
  kSendIpiMask,             ///< send_IPI_mask(mask, vector)
  kSendIpiMaskAllButSelf,   ///< send_IPI_mask_allbutself(mask, vector)
  kSendIpiAllButSelf,       ///< send_IPI_allbutself(vector)
  kSendIpiAll,              ///< send_IPI_all(vector)
  kSendIpiSelf,             ///< send_IPI_self(vector)
};
std::string_view hook_name(SendHook h) noexcept;  ///< "send_IPI", "send_IPI_mask", ...

/// Hypercalls issued, by call code and input form.
struct HypercallCounts {
  std::uint32_t send_ipi_fast = 0;     ///< HvCallSendSyntheticClusterIpi, fast (hv_do_fast_hypercall16)
  std::uint32_t send_ipi_slow = 0;     ///< HvCallSendSyntheticClusterIpi, memory input (Linux never does this)
  std::uint32_t send_ipi_ex_slow = 0;  ///< HvCallSendSyntheticClusterIpiEx, memory input (hv_do_rep_hypercall)
  std::uint32_t send_ipi_ex_xmm = 0;   ///< HvCallSendSyntheticClusterIpiEx, XMM fast (Linux never does this)
  std::uint32_t failed = 0;            ///< of the above, how many returned a status the caller judged a failure
  std::uint32_t total() const noexcept { return send_ipi_fast + send_ipi_slow + send_ipi_ex_slow + send_ipi_ex_xmm; }
  friend bool operator==(const HypercallCounts&, const HypercallCounts&) = default;
};

/// Guest-side work of one send. All counts are events or sizes, never time.
struct WorkRecord {
  /// Bytes of `struct cpumask` placed on the stack (NR_CPUS/8 each): pre-seed __send_ipi_one's `mask`,
  /// v5.4 hv_send_ipi_mask_allbutself's `new_mask`.
  std::uint32_t stack_cpumask_bytes = 0;
  /// Of those, bytes zeroed by `= CPU_MASK_NONE` (pre-seed __send_ipi_one): the memset the compiler emits.
  std::uint32_t stack_cpumask_bytes_zeroed = 0;
  /// 64-bit cpumask words loaded/compared/copied/modified, per helper (guest_cpumask.h).
  CpumaskWork cpumask_words;
  /// hv_cpu_number_to_vp_number() calls (one load of hv_vp_index[cpu] each).
  std::uint32_t vp_lookups = 0;
  /// __cpumask_to_vpset: bank_contents[] QWORDs zeroed (hv_max_vp_index/64 + 1 per call).
  std::uint32_t vpset_banks_cleared = 0;
  /// __cpumask_to_vpset: banks in the built set (nr_bank = varhead) summed over calls that built one.
  std::uint32_t vpset_banks_built = 0;
  /// local_irq_save/restore pairs (__send_ipi_mask_ex).
  std::uint32_t irq_save_restore = 0;
  HypercallCounts hypercalls;
  /// Variable-header QWORDs announced in the control words (sum over hypercalls).
  std::uint32_t varhead_qwords = 0;
  /// Bytes of memory input the hypervisor has to read for slow calls (24 + 8*varhead for Ex).
  std::uint32_t slow_input_bytes = 0;
  /// trace_hyperv_send_ipi_one / trace_hyperv_send_ipi_mask call sites passed (static-key NOPs when off).
  std::uint32_t tracepoint_sites = 0;
  /// Of those, events recorded because GuestConfig::tracepoints_enabled.
  std::uint32_t tracepoints_emitted = 0;
  /// orig_apic.* calls (0 or 1 per send).
  std::uint32_t native_fallbacks = 0;

  WorkRecord& operator+=(const WorkRecord& o) noexcept;
  friend bool operator==(const WorkRecord&, const WorkRecord&) = default;
};

/// One hypercall as the guest issued it.
struct IssuedHypercall {
  HypercallRegs regs;                ///< RCX control word, RDX/R8 (fast inputs, or input GPA / output GPA 0)
  std::vector<std::uint8_t> input;   ///< slow calls: the input bytes the call announces (empty for fast)
  std::uint64_t result = 0;          ///< RAX the hypervisor returned
  bool judged_success = false;       ///< how the Linux caller judged `result`
  /// The rule it judged by (guest_policy.h success_rule): which bits of RAX had to be 0. Static.
  std::string_view judged_by;
};

/// A fallback to the native (architectural) APIC: which orig_apic callback, and the CPUs it targets
/// (send_IPI: the CPU; send_IPI_mask: the mask; send_IPI_mask_allbutself: the mask minus self;
/// send_IPI_all: online CPUs incl. self; send_IPI_self: self). ICR encoding is the x86 model's job.
struct NativeSend {
  SendHook hook = SendHook::kSendIpi;
  std::vector<unsigned> cpus;
  std::uint32_t vector = 0;
  /// The CPU argument orig_apic.<hook> was called with, ascending: send_IPI its cpu; send_IPI_mask and
  /// send_IPI_mask_allbutself the mask as given (self included); nullopt for send_IPI_allbutself,
  /// send_IPI_all and send_IPI_self, which take none. (Linux's hv_send_ipi_allbutself passes
  /// cpu_online_mask to orig_apic.send_IPI_mask_allbutself: hook kSendIpiMaskAllButSelf.)
  std::optional<std::vector<unsigned>> argument;
};

/// Everything one send did.
struct SendResult {
  SendHook hook = SendHook::kSendIpi;
  unsigned sender_cpu = 0;
  std::uint32_t vector = 0;
  /// The CPUs the caller asked for (allbutself: minus the sender), ascending. The oracle's reference.
  std::vector<unsigned> intended_cpus;
  std::vector<IssuedHypercall> hypercalls;
  std::optional<NativeSend> native;
  WorkRecord work;
  /// The hv_apic.c function the hook called ("__send_ipi_one" / "__send_ipi_mask") and what it
  /// returned (false = fall back to native); empty / nullopt when the hooks are not installed
  /// (GuestConfig::cluster_ipi_recommended false): then `native` is the whole send.
  std::string_view hv_function;
  std::optional<bool> hv_returned;
};

/// The hypervisor as the guest sees it: executes one hypercall issued on `sender_cpu` with `regs`
/// (the guest's memory readable through `memory`) and returns RAX.
using HypervisorCall =
    std::function<std::uint64_t(unsigned sender_cpu, const HypercallRegs& regs, const GuestMemory& memory)>;

}  // namespace ipilab::hv
