// ipilab/hv/guest_config.h — what a Linux guest on Hyper-V (or KVM's Hyper-V emulation) knows when it
// sends an IPI: kernel build constants, CPU masks, the CPU -> VP index map, and the Hyper-V features.
//
// Sources: include/linux/cpumask.h (v5.4 and v6.3+), arch/x86/Kconfig (NR_CPUS_RANGE_END, MAXSMP),
// include/asm-generic/mshyperv.h (hv_vp_index, hv_max_vp_index, VP_INVAL, __cpumask_to_vpset),
// drivers/hv/hv_common.c (hv_common_init, hv_common_cpu_init: where hv_vp_index[] is filled),
// arch/x86/hyperv/hv_apic.c (__send_ipi_mask_ex).
//
// NR_CPUS versus the scan length (which one a helper uses matters for the seed-000 work):
//  * `struct cpumask` always holds NR_CPUS bits, so `struct cpumask mask = CPU_MASK_NONE;` (pre-seed
//    `__send_ipi_one`) zeroes NR_CPUS/8 bytes of stack: 1024 bytes with NR_CPUS = 8192, 8 with 64.
//  * The helpers scan `nr_cpumask_bits` words, not NR_CPUS:
//      - v2.6.29 .. v6.2 (so v5.4, the seed's base; CpumaskBitsRule::kNrCpumaskBits):
//        nr_cpumask_bits = CONFIG_CPUMASK_OFFSTACK ? nr_cpu_ids : NR_CPUS.
//      - v6.3+ (CpumaskBitsRule::kSmallLarge, Linus's small/large_cpumask_bits): scans use
//        small_cpumask_bits and cpumask_copy uses large_cpumask_bits; NR_CPUS <= 64: both NR_CPUS;
//        NR_CPUS <= 256: nr_cpu_ids / NR_CPUS; above: both nr_cpu_ids. OFFSTACK no longer matters.
//  * On x86_64, NR_CPUS > 512 requires CONFIG_CPUMASK_OFFSTACK (arch/x86/Kconfig NR_CPUS_RANGE_END:
//    8192 if CPUMASK_OFFSTACK else 512; Linus Torvalds on netdev, 7 Sep 2021). Distribution kernels
//    (Debian, Fedora, RHEL: CONFIG_MAXSMP=y, which selects CPUMASK_OFFSTACK and NR_CPUS = 8192) therefore
//    scan only nr_cpu_ids bits even though every on-stack cpumask is 1 KiB. `identity()` follows that
//    rule; a config with NR_CPUS > 512 and cpumask_offstack = false is accepted as a *hypothetical*
//    kernel (it cannot be built for x86_64) so the simulator can show what full-length scans would cost.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "hv/abi.h"
#include "hv/guest_cpumask.h"

namespace ipilab::hv {

/// Which cpumask.h decides the scan/copy lengths (see the header comment).
enum class CpumaskBitsRule : std::uint8_t {
  kNrCpumaskBits,  ///< v2.6.29..v6.2: nr_cpumask_bits = OFFSTACK ? nr_cpu_ids : NR_CPUS
  kSmallLarge,     ///< v6.3+: small_cpumask_bits (scans), large_cpumask_bits (cpumask_copy)
};

/// Page size of the per-CPU hypercall input page (hyperv_pcpu_input_arg).
inline constexpr std::uint64_t kHvInputPageBytes = 4096;

struct GuestConfig {
  // ---- kernel build ----
  unsigned nr_cpus = 64;               ///< CONFIG_NR_CPUS: bits of every struct cpumask (1..8192)
  bool cpumask_offstack = false;       ///< CONFIG_CPUMASK_OFFSTACK (selected by CONFIG_MAXSMP)
  CpumaskBitsRule bits_rule = CpumaskBitsRule::kNrCpumaskBits;
  // ---- CPUs ----
  unsigned nr_cpu_ids = 2;             ///< possible CPUs (runtime); 1..nr_cpus
  std::vector<unsigned> present;       ///< cpu_present_mask (CPU numbers < nr_cpu_ids)
  std::vector<unsigned> online;        ///< cpu_online_mask (subset of present)
  /// hv_vp_index[cpu] for cpu < nr_cpu_ids: the VP index read from HV_X64_MSR_VP_INDEX when the CPU came
  /// online, or VP_INVAL (never onlined, or not yet: hv_cpu_init runs after the CPU is marked online).
  /// Linux reads it as `int`, so values must be < 2^31 or VP_INVAL. Values may repeat: KVM lets the
  /// host give two vCPUs one VP index (then both receive what targets it).
  std::vector<std::uint32_t> hv_vp_index;
  /// hv_max_vp_index; default (nullopt) = the largest non-INVAL hv_vp_index, as hv_common_cpu_init
  /// leaves it. An override must be >= that.
  std::optional<std::uint32_t> hv_max_vp_index;
  // ---- Hyper-V features and per-CPU state ----
  /// HV_X64_CLUSTER_IPI_RECOMMENDED (CPUID 0x40000004 EAX bit 10): hv_apic_init installs the six IPI
  /// hooks only when set; otherwise every send is the native APIC callback itself.
  bool cluster_ipi_recommended = true;
  bool hypercall_page = true;                  ///< hv_hypercall_pg != NULL
  bool ex_processor_masks_recommended = true;  ///< HV_X64_EX_PROCESSOR_MASKS_RECOMMENDED (CPUID 0x40000004 EAX bit 11)
  bool input_page_present = true;              ///< *this_cpu_ptr(hyperv_pcpu_input_arg) != NULL
  /// Mainline only: hv_isolation_type_tdx() && !ms_hyperv.paravisor_present; such a guest sends
  /// without a hypercall page (GHCI). Ignored by the 2019/2021 send paths, which predate it.
  bool fully_enlightened_tdx = false;
  /// The hyperv_send_ipi_one / hyperv_send_ipi_mask tracepoints are enabled (then the mask event's
  /// TP_fast_assign runs cpumask_weight on the mask).
  bool tracepoints_enabled = false;
  /// GPA of CPU 0's input page; CPU n's page is at base + n * 4096.
  std::uint64_t input_page_gpa_base = 0x100000;

  /// A guest with CPUs 0..ncpus-1 present and online, VP index == CPU number, nr_cpu_ids = ncpus,
  /// NR_CPUS = nr_cpus and CONFIG_CPUMASK_OFFSTACK = (nr_cpus > 512) as x86_64 Kconfig forces.
  /// Throws InputError like validate().
  static GuestConfig identity(unsigned ncpus, unsigned nr_cpus);

  /// Throws InputError("guest: <key>", reason) on the first inconsistency.
  void validate() const;
  /// Scan length of cpumask_empty/last/next/weight/equal (see header comment).
  unsigned scan_bits() const noexcept;
  /// Length cpumask_copy copies.
  unsigned copy_bits() const noexcept;
  /// hv_max_vp_index as the kernel holds it.
  std::uint32_t max_vp_index() const noexcept;
  /// hv_cpu_number_to_vp_number(cpu) as the kernel computes it: (int)hv_vp_index[cpu] (VP_INVAL -> -1).
  std::int32_t vp_number(unsigned cpu) const;
  /// The lowest CPU whose hv_vp_index is `vp`, if any (inverse map, used by the oracle).
  std::optional<unsigned> cpu_of_vp(std::uint32_t vp) const noexcept;
  Cpumask present_mask() const;
  Cpumask online_mask() const;
  /// GPA of `cpu`'s per-CPU input page.
  std::uint64_t input_page_gpa(unsigned cpu) const noexcept { return input_page_gpa_base + cpu * kHvInputPageBytes; }
};

}  // namespace ipilab::hv
