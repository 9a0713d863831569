// ipilab/hv/oracle.h — did an IPI reach the CPUs the kernel asked for? The intended target set of a
// send (LinuxHvGuest, guest_send.h) against what the host side (Partition, partition.h) delivered,
// mapped back to guest CPUs through the guest's hv_vp_index, plus what the native APIC fallback sent.
//
// Michael Kelley's review of the seed's v2 (LKML, 25 Oct 2019,
// <DM5PR21MB013707183D9E271E60FBD435D7650@DM5PR21MB0137.namprd21.prod.outlook.com>), fixed in v3
// (b264f57fde0c): under the seed's v2 `__send_ipi_one`, a CPU below 64 whose VP index is >= 64 gets
// BIT_ULL(vp) = 1 << (vp & 63) on x86, i.e. the IPI goes to VP (vp & 63) if one exists
// (misdelivered: `extra`) and never to the intended CPU (lost: `missing`).
// Under v3 and the pre-seed path both lists are empty.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "hv/guest_config.h"
#include "hv/guest_record.h"
#include "hv/guest_send.h"
#include "hv/partition.h"

namespace ipilab::hv {

struct OracleReport {
  std::vector<unsigned> intended;    ///< SendResult::intended_cpus (ascending)
  std::vector<unsigned> delivered;   ///< CPUs that received the vector at least once (ascending)
  std::vector<unsigned> missing;     ///< intended, never delivered: lost IPIs
  std::vector<unsigned> extra;       ///< delivered, not intended: misdelivered IPIs
  std::vector<unsigned> duplicated;  ///< delivered more than once (hypercall and native both hit it, ...)
  /// Delivered VP indices that no guest CPU owns (hv_vp_index holds no such VP): misdelivered too.
  std::vector<std::uint32_t> unmapped_vps;
  bool ok() const noexcept {
    return missing.empty() && extra.empty() && duplicated.empty() && unmapped_vps.empty();
  }
};

/// Judges one send. `delivered_vps`: VP indices the host delivered the send's vector to (over all its
/// hypercalls, in any order, repeats allowed), each mapped to the lowest CPU with that VP index.
/// Native fallback CPUs are taken from `send.native`.
OracleReport judge_send(const GuestConfig& guest, const SendResult& send, std::span<const std::uint32_t> delivered_vps);
/// The same from the guest CPUs the host's hypercall deliveries reached (one entry per delivery,
/// repeats allowed) and the delivered VP indices no guest CPU owns. Exact with duplicate VP indices.
OracleReport judge_send_cpus(const SendResult& send, std::span<const unsigned> hypercall_cpus,
                             std::span<const std::uint32_t> unmapped_vps);

/// A Partition whose vCPUs are the guest's CPUs that have a VP index: vCPU i = the i-th such CPU in
/// ascending CPU order, with VP index hv_vp_index[cpu] (what HV_X64_MSR_VP_INDEX returned to it).
/// Throws std::invalid_argument (from Partition) for a VP index >= 4096 (KVM_MAX_VCPUS with MAXSMP).
PartitionConfig partition_config_for(const GuestConfig& guest);

/// The host a guest runs on: a partition with one vCPU per guest CPU that has a VP index a KVM host
/// can hold (not VP_INVAL, below KVM_MAX_VCPUS = 4096), in ascending CPU order.
struct GuestHost {
  PartitionConfig config;
  std::vector<unsigned> cpu_of_vcpu;   ///< vCPU i is guest CPU cpu_of_vcpu[i]
  std::vector<unsigned> inval_cpus;    ///< CPUs left out: hv_vp_index VP_INVAL (the guest never read it)
  std::vector<unsigned> beyond_cpus;   ///< CPUs left out: VP index >= 4096, which no KVM vCPU can have
  /// The vCPU running guest CPU `cpu`, if it has one.
  std::optional<std::uint32_t> vcpu_of_cpu(unsigned cpu) const noexcept;
};
/// Builds it (config.kvm_version = `kvm`). config.vp_index_of_vcpu is empty when no CPU qualifies.
GuestHost guest_host_for(const GuestConfig& guest, KvmVersion kvm = KvmVersion::kMainline);

/// One send run end to end: the guest's record, every host outcome (one per hypercall, same order as
/// send.hypercalls), and the oracle's verdict.
struct GuestHostSend {
  SendResult send;
  std::vector<HypercallOutcome> outcomes;
  OracleReport oracle;
};

/// Runs `request` on `guest`, executing each hypercall with `partition` on the vCPU whose VP index is
/// hv_vp_index[sender] (Partition::vcpu_of_vp). A #UD the host injects (inject_ud) would oops a real
/// guest kernel; here the hypercall returns ~0 (judged a failure, so Linux falls back to native) and
/// the outcome records it. Throws InputError when the sender has no vCPU in the partition (VP_INVAL or
/// a VP index the partition lacks), and whatever LinuxHvGuest::send throws.
GuestHostSend run_on_partition(LinuxHvGuest& guest, const Partition& partition, const SendRequest& request);

/// run_on_partition with the CPU <-> vCPU map of guest_host_for (exact with duplicate VP indices).
/// `forced_rax`: every hypercall returns this RAX to the guest instead of the host's (the host still
/// executes it, so outcomes are filled); its deliveries count for the oracle only when bits 15:0 of
/// `forced_rax` are 0 (KVM delivers only on the path that returns SUCCESS, so a failing status stands
/// for a call that delivered nothing). Throws
/// InputError when the sender has no vCPU and a hypercall is issued.
GuestHostSend run_on_host(LinuxHvGuest& guest, const Partition& partition, const GuestHost& host,
                          const SendRequest& request, std::optional<std::uint64_t> forced_rax = std::nullopt);

}  // namespace ipilab::hv
