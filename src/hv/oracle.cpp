// The delivery oracle and the guest -> Partition wiring (see oracle.h).
#include "hv/oracle.h"

#include <algorithm>
#include <map>
#include <string>

#include "common/error.h"

namespace ipilab::hv {

OracleReport judge_send(const GuestConfig& guest, const SendResult& send, std::span<const std::uint32_t> delivered_vps) {
  OracleReport r;
  r.intended = send.intended_cpus;
  std::sort(r.intended.begin(), r.intended.end());
  r.intended.erase(std::unique(r.intended.begin(), r.intended.end()), r.intended.end());

  std::map<unsigned, unsigned> hits;  // CPU -> deliveries
  for (std::uint32_t vp : delivered_vps) {
    if (auto cpu = guest.cpu_of_vp(vp)) {
      ++hits[*cpu];
    } else {
      r.unmapped_vps.push_back(vp);
    }
  }
  if (send.native) {
    for (unsigned cpu : send.native->cpus) ++hits[cpu];
  }
  std::sort(r.unmapped_vps.begin(), r.unmapped_vps.end());
  r.unmapped_vps.erase(std::unique(r.unmapped_vps.begin(), r.unmapped_vps.end()), r.unmapped_vps.end());

  for (const auto& [cpu, n] : hits) {
    r.delivered.push_back(cpu);
    if (n > 1) r.duplicated.push_back(cpu);
    if (!std::binary_search(r.intended.begin(), r.intended.end(), cpu)) r.extra.push_back(cpu);
  }
  for (unsigned cpu : r.intended) {
    if (!hits.count(cpu)) r.missing.push_back(cpu);
  }
  return r;
}

PartitionConfig partition_config_for(const GuestConfig& guest) {
  PartitionConfig pc;
  for (std::uint32_t vp : guest.hv_vp_index) {
    if (vp != VP_INVAL) pc.vp_index_of_vcpu.push_back(vp);
  }
  return pc;
}

GuestHostSend run_on_partition(LinuxHvGuest& guest, const Partition& partition, const SendRequest& request) {
  const GuestConfig& cfg = guest.config();
  if (request.sender_cpu >= cfg.nr_cpu_ids) {
    throw InputError("send: sender_cpu", "CPU " + std::to_string(request.sender_cpu) + " >= nr_cpu_ids");
  }
  const std::uint32_t sender_vp = cfg.hv_vp_index[request.sender_cpu];
  const std::optional<std::uint32_t> sender_vcpu = partition.vcpu_of_vp(sender_vp);
  if (sender_vp == VP_INVAL || !sender_vcpu) {
    throw InputError("send: sender_cpu", "CPU " + std::to_string(request.sender_cpu) +
                                             " has no vCPU in the partition (VP index " + std::to_string(sender_vp) + ")");
  }

  GuestHostSend out;
  const HypervisorCall hv = [&](unsigned, const HypercallRegs& regs, const GuestMemory& memory) -> std::uint64_t {
    out.outcomes.push_back(partition.execute(*sender_vcpu, regs, memory));
    const HypercallOutcome& o = out.outcomes.back();
    return o.inject_ud ? ~0ull : o.rax;
  };
  out.send = guest.send(request, hv);

  std::vector<std::uint32_t> vps;
  for (const HypercallOutcome& o : out.outcomes) {
    for (const Delivery& d : o.delivered) vps.push_back(d.vp_index);
  }
  out.oracle = judge_send(cfg, out.send, vps);
  return out;
}

}  // namespace ipilab::hv
