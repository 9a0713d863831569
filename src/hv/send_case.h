// ipilab/hv/send_case.h — one Linux guest IPI send, as a given kernel version does it, run against
// the modelled KVM host: the pure entry point behind `ipilab hv send` and, later, the simulator's
// per-variant "sample hypercall".
//
// Given a Linux version, the CPU -> VP index map, the present/online masks, hv_max_vp_index, the
// Hyper-V features and one `struct apic` hook call, run_send_case returns every hypercall the send
// emits (control word, RDX/R8 or the exact input page bytes), the native APIC fallback with its
// argument, the hv_apic.c function's return value, what the modelled host (a KVM version) did with
// each hypercall, and the delivery oracle's verdict. Sources: guest_send.h (Linux), partition.h and
// kvm_version.h (KVM), oracle.h (the oracle).
//
// The modelled host is a KVM partition with one vCPU per guest CPU that has a VP index KVM can hold
// (oracle.h guest_host_for). CPUs with VP_INVAL or a VP index >= 4096 have no vCPU there: a hypercall
// never reaches them (the oracle says so in `notes`), and if such a CPU sends, the host cannot execute
// its hypercalls — give `hypercall_status` (then `host[i]` is nullopt and the oracle does not run).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "hv/guest_config.h"
#include "hv/guest_policy.h"
#include "hv/guest_record.h"
#include "hv/kvm_version.h"
#include "hv/oracle.h"
#include "hv/partition.h"

namespace ipilab::hv {

struct SendCase {
  LinuxVersion linux_version = LinuxVersion::kMainline;
  KvmVersion kvm_version = KvmVersion::kMainline;  ///< the modelled host
  /// hv_vp_index[cpu] for CPU 0, 1, ...: its length is nr_cpu_ids. VP_INVAL allowed; values must be
  /// below 2^31 otherwise (Linux reads them as int); repeats allowed (KVM allows them).
  std::vector<std::uint32_t> cpu_vp;
  std::optional<std::vector<unsigned>> present;  ///< cpu_present_mask; default: every CPU
  std::optional<std::vector<unsigned>> online;   ///< cpu_online_mask; default: the present CPUs
  std::optional<std::uint32_t> max_vp_index;     ///< hv_max_vp_index; default: the largest valid VP index
  unsigned nr_cpus = kMaxNrCpus;                 ///< CONFIG_NR_CPUS (>= nr_cpu_ids)
  bool cluster_ipi = true;                       ///< HV_X64_CLUSTER_IPI_RECOMMENDED (hooks installed)
  /// The host's vCPUs have an in-kernel LAPIC. false: the guest's CPUID is what KVM reports for such a
  /// vCPU (hv_cpuid.h: from v6.14 without HV_X64_CLUSTER_IPI_RECOMMENDED, so no hooks); older KVM
  /// would oops on the guest's hypercall and is refused (InputError "lapic_in_kernel").
  bool lapic_in_kernel = true;
  bool ex_processor_masks = true;                ///< HV_X64_EX_PROCESSOR_MASKS_RECOMMENDED
  bool hypercall_page = true;                    ///< hv_hypercall_pg != NULL
  SendHook hook = SendHook::kSendIpi;
  unsigned self = 0;                             ///< smp_processor_id() of the sender (must be online)
  std::uint32_t vector = 0;                      ///< any 32-bit value (Linux: int vector)
  unsigned target_cpu = 0;                       ///< send_IPI
  std::vector<unsigned> mask;                    ///< send_IPI_mask[_allbutself]
  /// Every hypercall returns this 64-bit RAX (status in 15:0, reps completed in 43:32) instead of the
  /// host's answer; see run_on_host for how the oracle then counts deliveries.
  std::optional<std::uint64_t> hypercall_status;
};

struct SendCaseRun {
  GuestConfig guest;
  GuestPolicy policy;
  GuestHost host_map;                      ///< the modelled host's vCPUs (oracle.h)
  SendResult send;                         ///< hypercalls, fallback, hv_function / hv_returned, work
  /// Per hypercall (same order as send.hypercalls): what the modelled host did; nullopt when it could
  /// not run it (sender without a vCPU, forced status).
  std::vector<std::optional<HypercallOutcome>> host;
  /// The verdict; nullopt when the host could not run (then oracle_reason says why).
  std::optional<OracleReport> oracle;
  std::string oracle_reason;
  /// Facts the reader must know to read the verdict (CPUs without a vCPU, a forced status, ...).
  std::vector<std::string> notes;
};

/// Validates and runs. Throws InputError naming the field ("cpu_vp", "cpu_vp[3]", "present",
/// "online", "self", "target_cpu", "mask", "max_vp_index", "nr_cpus") and the reason.
SendCaseRun run_send_case(const SendCase& c);

}  // namespace ipilab::hv
