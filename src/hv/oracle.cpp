// The delivery oracle and the guest -> Partition wiring (see oracle.h).
#include "hv/oracle.h"

#include <algorithm>
#include <optional>
#include <string>

#include "common/error.h"

namespace ipilab::hv {

namespace {
constexpr unsigned kNoCpu = ~0u;
}  // namespace


namespace {

/// `hits`: one entry per delivery (hypercall deliveries mapped to guest CPUs), any order. Sorted here,
/// so each CPU's run of entries is its delivery count (the ascending CPU order a map would give).
OracleReport judge(const SendResult& send, std::vector<unsigned> hits, std::vector<std::uint32_t> unmapped_vps) {
  OracleReport r;
  r.intended = send.intended_cpus;
  if (!std::is_sorted(r.intended.begin(), r.intended.end())) std::sort(r.intended.begin(), r.intended.end());
  r.intended.erase(std::unique(r.intended.begin(), r.intended.end()), r.intended.end());
  if (send.native) hits.insert(hits.end(), send.native->cpus.begin(), send.native->cpus.end());
  if (!std::is_sorted(hits.begin(), hits.end())) std::sort(hits.begin(), hits.end());  // usually in vCPU order already
  std::sort(unmapped_vps.begin(), unmapped_vps.end());
  unmapped_vps.erase(std::unique(unmapped_vps.begin(), unmapped_vps.end()), unmapped_vps.end());
  r.unmapped_vps = std::move(unmapped_vps);
  r.delivered.reserve(hits.size());
  std::size_t in = 0;  // both ascending: walk `intended` along
  for (std::size_t i = 0; i < hits.size();) {
    const unsigned cpu = hits[i];
    std::size_t j = i + 1;
    while (j < hits.size() && hits[j] == cpu) ++j;
    r.delivered.push_back(cpu);
    if (j - i > 1) r.duplicated.push_back(cpu);
    while (in < r.intended.size() && r.intended[in] < cpu) ++in;
    if (in == r.intended.size() || r.intended[in] != cpu) r.extra.push_back(cpu);
    i = j;
  }
  // Both ascending: an intended CPU is missing when `delivered` does not hold it.
  std::size_t k = 0;
  for (unsigned cpu : r.intended) {
    while (k < r.delivered.size() && r.delivered[k] < cpu) ++k;
    if (k == r.delivered.size() || r.delivered[k] != cpu) r.missing.push_back(cpu);
  }
  return r;
}

}  // namespace

OracleReport judge_send(const GuestConfig& guest, const SendResult& send, std::span<const std::uint32_t> delivered_vps) {
  std::vector<unsigned> hits;
  std::vector<std::uint32_t> unmapped;
  for (std::uint32_t vp : delivered_vps) {
    if (auto cpu = guest.cpu_of_vp(vp)) {
      hits.push_back(*cpu);
    } else {
      unmapped.push_back(vp);
    }
  }
  return judge(send, std::move(hits), std::move(unmapped));
}

OracleReport judge_send_cpus(const SendResult& send, std::span<const unsigned> hypercall_cpus,
                             std::span<const std::uint32_t> unmapped_vps) {
  return judge(send, {hypercall_cpus.begin(), hypercall_cpus.end()}, {unmapped_vps.begin(), unmapped_vps.end()});
}

std::optional<std::uint32_t> GuestHost::vcpu_of_cpu(unsigned cpu) const noexcept {
  for (std::size_t i = 0; i < cpu_of_vcpu.size(); ++i)
    if (cpu_of_vcpu[i] == cpu) return static_cast<std::uint32_t>(i);
  return std::nullopt;
}

GuestHost guest_host_for(const GuestConfig& guest, KvmVersion kvm) {
  GuestHost h;
  h.config.kvm_version = kvm;
  for (unsigned cpu = 0; cpu < guest.hv_vp_index.size(); ++cpu) {
    const std::uint32_t vp = guest.hv_vp_index[cpu];
    if (vp == VP_INVAL) {
      h.inval_cpus.push_back(cpu);
    } else if (vp >= h.config.max_vcpus) {
      h.beyond_cpus.push_back(cpu);
    } else {
      h.config.vp_index_of_vcpu.push_back(vp);
      h.cpu_of_vcpu.push_back(cpu);
    }
  }
  return h;
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
  // The partition built by partition_config_for (vCPU i = i-th CPU with a VP index) maps exactly,
  // duplicates included; any other partition is matched by VP index.
  const PartitionConfig mine = partition_config_for(cfg);
  GuestHost host;
  host.config = partition.config();
  if (mine.vp_index_of_vcpu == partition.config().vp_index_of_vcpu) {
    for (unsigned cpu = 0; cpu < cfg.hv_vp_index.size(); ++cpu)
      if (cfg.hv_vp_index[cpu] != VP_INVAL) host.cpu_of_vcpu.push_back(cpu);
  } else {
    for (std::uint32_t v = 0; v < partition.vcpu_count(); ++v) {
      const auto cpu = cfg.cpu_of_vp(partition.vp_index(v));
      host.cpu_of_vcpu.push_back(cpu ? *cpu : kNoCpu);
    }
  }
  const std::uint32_t sender_vp = cfg.hv_vp_index[request.sender_cpu];
  if (sender_vp == VP_INVAL || !host.vcpu_of_cpu(request.sender_cpu)) {
    throw InputError("send: sender_cpu", "CPU " + std::to_string(request.sender_cpu) +
                                             " has no vCPU in the partition (VP index " + std::to_string(sender_vp) + ")");
  }
  return run_on_host(guest, partition, host, request);
}

GuestHostSend run_on_host(LinuxHvGuest& guest, const Partition& partition, const GuestHost& host,
                          const SendRequest& request, std::optional<std::uint64_t> forced_rax) {
  const std::optional<std::uint32_t> sender_vcpu = host.vcpu_of_cpu(request.sender_cpu);
  GuestHostSend out;
  std::vector<bool> counts;  // per hypercall: do its deliveries count for the oracle
  const HypervisorCall hv = [&](unsigned, const HypercallRegs& regs, const GuestMemory& memory) -> std::uint64_t {
    if (!sender_vcpu) {
      throw InputError("send: sender_cpu",
                       "CPU " + std::to_string(request.sender_cpu) +
                           " issues a hypercall but has no vCPU on the modelled host (its VP index is VP_INVAL or "
                           ">= 4096): the host cannot run it; force the result instead (--hypercall-status)");
    }
    out.outcomes.push_back(partition.execute(*sender_vcpu, regs, memory));
    const HypercallOutcome& o = out.outcomes.back();
    const std::uint64_t host_rax = o.inject_ud ? ~0ull : o.rax;
    const std::uint64_t rax = forced_rax ? *forced_rax : host_rax;
    counts.push_back(!forced_rax || (*forced_rax & 0xFFFF) == 0);
    return rax;
  };
  out.send = guest.send(request, hv);

  std::vector<unsigned> cpus;
  std::vector<std::uint32_t> unmapped;
  for (std::size_t i = 0; i < out.outcomes.size(); ++i) {
    if (!counts[i]) continue;
    for (const Delivery& d : out.outcomes[i].delivered) {
      const unsigned cpu = d.vcpu < host.cpu_of_vcpu.size() ? host.cpu_of_vcpu[d.vcpu] : kNoCpu;
      if (cpu == kNoCpu)
        unmapped.push_back(d.vp_index);
      else
        cpus.push_back(cpu);
    }
  }
  out.oracle = judge(out.send, std::move(cpus), std::move(unmapped));
  return out;
}

}  // namespace ipilab::hv
