// ipilab/hv/oracle.h — did an IPI reach the CPUs the kernel asked for? The intended target set of a
// send (LinuxHvGuest, guest_send.h) against what the host side (Partition, partition.h) delivered,
// mapped back to guest CPUs through the guest's hv_vp_index, plus what the native APIC fallback sent.
//
// Issue 2, item 4 (and fact sheet §3.9 "why v3 matters"): under the seed's v2 `__send_ipi_one`, a CPU
// below 64 whose VP index is >= 64 gets BIT_ULL(vp) = 1 << (vp & 63) on x86, i.e. the IPI goes to
// VP (vp & 63) if one exists (misdelivered: `extra`) and never to the intended CPU (lost: `missing`).
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
/// hypercalls, in any order, repeats allowed). Native fallback CPUs are taken from `send.native`.
OracleReport judge_send(const GuestConfig& guest, const SendResult& send, std::span<const std::uint32_t> delivered_vps);

/// A Partition whose vCPUs are the guest's CPUs that have a VP index: vCPU i = the i-th such CPU in
/// ascending CPU order, with VP index hv_vp_index[cpu] (what HV_X64_MSR_VP_INDEX returned to it).
/// Throws std::invalid_argument (from Partition) for a VP index >= 4096 (KVM_MAX_VCPUS with MAXSMP).
PartitionConfig partition_config_for(const GuestConfig& guest);

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

}  // namespace ipilab::hv
