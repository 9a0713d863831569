// One Linux guest send against the modelled KVM host (see send_case.h).
#include "hv/send_case.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/error.h"
#include "hv/cpulist.h"
#include "hv/hv_cpuid.h"
#include "hv/guest_send.h"

namespace ipilab::hv {
namespace {

void check_cpus(const std::vector<unsigned>& cpus, unsigned nr_cpu_ids, const char* field) {
  for (unsigned cpu : cpus)
    if (cpu >= nr_cpu_ids)
      throw InputError(field, fmt::format("CPU {} does not exist (nr_cpu_ids {})", cpu, nr_cpu_ids));
}

std::vector<unsigned> sorted_unique(std::vector<unsigned> v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

// The VP indices Linux could hold (an int each) and hv_max_vp_index above them all.
void check_vp_indices(const SendCase& c, unsigned n) {
  std::uint32_t max_vp = 0;
  bool any_vp = false;
  for (unsigned cpu = 0; cpu < n; ++cpu) {
    const std::uint32_t vp = c.cpu_vp[cpu];
    if (vp == VP_INVAL) continue;
    if (vp > 0x7FFFFFFFu)
      throw InputError(fmt::format("cpu_vp[{}]", cpu),
                       fmt::format("VP index {} reads as a negative int in Linux (hv_cpu_number_to_vp_number returns "
                                   "int): __set_bit with it is out of bounds, undefined; not modelled. Use < 2^31 or inval",
                                   vp));
    max_vp = std::max(max_vp, vp);
    any_vp = true;
  }
  if (c.max_vp_index && any_vp && *c.max_vp_index < max_vp)
    throw InputError("max_vp_index", fmt::format("{} is below CPU VP index {}: hv_common_cpu_init raises "
                                                 "hv_max_vp_index to every VP index it reads",
                                                 *c.max_vp_index, max_vp));
}

// The guest's configuration: CPU masks, VP indices, the CPUID it sees.
void build_guest(const SendCase& c, unsigned n, GuestConfig& g) {
  g.nr_cpus = c.nr_cpus;
  g.cpumask_offstack = c.nr_cpus > 512;  // x86_64 Kconfig: NR_CPUS > 512 needs CPUMASK_OFFSTACK
  g.bits_rule = c.linux_version == LinuxVersion::kMainline ? CpumaskBitsRule::kSmallLarge : CpumaskBitsRule::kNrCpumaskBits;
  g.nr_cpu_ids = n;
  g.hv_vp_index = c.cpu_vp;
  g.hv_max_vp_index = c.max_vp_index;
  if (c.present) {
    check_cpus(*c.present, n, "present");
    g.present = sorted_unique(*c.present);
  } else {
    for (unsigned cpu = 0; cpu < n; ++cpu) g.present.push_back(cpu);
  }
  if (c.online) {
    check_cpus(*c.online, n, "online");
    g.online = sorted_unique(*c.online);
    for (unsigned cpu : g.online)
      if (!std::binary_search(g.present.begin(), g.present.end(), cpu))
        throw InputError("online", fmt::format("CPU {} is online but not present (cpu_online_mask is a subset of "
                                               "cpu_present_mask)",
                                               cpu));
  } else {
    g.online = g.present;
  }
  if (!c.lapic_in_kernel && !kvm_behaviour(c.kvm_version).lapic_in_kernel_checked)
    throw InputError("lapic_in_kernel",
                     fmt::format("KVM {} has no in-kernel-LAPIC check: the guest's Hyper-V IPI hypercall would "
                                 "dereference a NULL APIC in the host (not modelled; the check came with v6.14)",
                                 kvm_version_name(c.kvm_version)));
  // The guest's CPUID 0x40000004 is what KVM reports for its vCPU (hv_cpuid.h), minus what the
  // case removes.
  g.cluster_ipi_recommended =
      c.cluster_ipi && kvm_hv_enlightenment_info(c.kvm_version, true, c.lapic_in_kernel).cluster_ipi_recommended();
  g.ex_processor_masks_recommended = c.ex_processor_masks;
  g.hypercall_page = c.hypercall_page;
  g.validate();
}

// The send the case asks for, from an online CPU.
SendRequest send_request(const SendCase& c, unsigned n, const GuestConfig& g) {
  if (c.self >= n) throw InputError("self", fmt::format("CPU {} does not exist (nr_cpu_ids {})", c.self, n));
  if (!std::binary_search(g.online.begin(), g.online.end(), c.self))
    throw InputError("self", fmt::format("CPU {} is not online: only an online CPU runs the send", c.self));
  SendRequest req;
  req.hook = c.hook;
  req.sender_cpu = c.self;
  req.vector = c.vector;
  if (c.hook == SendHook::kSendIpi) {
    if (c.target_cpu >= n)
      throw InputError("target_cpu", fmt::format("CPU {} does not exist (nr_cpu_ids {})", c.target_cpu, n));
    req.target_cpu = c.target_cpu;
  }
  if (c.hook == SendHook::kSendIpiMask || c.hook == SendHook::kSendIpiMaskAllButSelf) {
    check_cpus(c.mask, n, "mask");
    req.mask = Cpumask::of(c.nr_cpus, c.mask);
  }
  return req;
}

// The guest's send on the modelled KVM host; without a vCPU for the sender, on no host.
void run_on_modelled_host(const SendCase& c, const GuestConfig& g, const SendRequest& req, SendCaseRun& run) {
  run.host_map = guest_host_for(g, c.kvm_version);
  run.host_map.config.lapic_in_kernel = c.lapic_in_kernel;
  std::optional<Partition> partition;
  if (!run.host_map.config.vp_index_of_vcpu.empty()) partition.emplace(run.host_map.config);
  const auto sender_vcpu = run.host_map.vcpu_of_cpu(c.self);

  LinuxHvGuest guest(g, run.policy);
  if (partition && sender_vcpu) {
    GuestHostSend s = run_on_host(guest, *partition, run.host_map, req, c.hypercall_status);
    run.send = std::move(s.send);
    for (auto& o : s.outcomes) run.host.emplace_back(std::move(o));
    run.oracle = std::move(s.oracle);
  } else {
    const HypervisorCall hv = [&](unsigned, const HypercallRegs&, const GuestMemory&) -> std::uint64_t {
      if (c.hypercall_status) return *c.hypercall_status;
      throw InputError("self", fmt::format("CPU {} issues a hypercall, but its VP index ({}) gives it no vCPU on the "
                                           "modelled KVM host, which therefore cannot answer; force the answer with "
                                           "a hypercall status",
                                           c.self, c.cpu_vp[c.self] == VP_INVAL ? std::string("inval")
                                                                                : std::to_string(c.cpu_vp[c.self])));
    };
    run.send = guest.send(req, hv);
    run.host.assign(run.send.hypercalls.size(), std::nullopt);
    if (run.send.hypercalls.empty()) {
      run.oracle = judge_send_cpus(run.send, {}, {});
    } else {
      run.oracle_reason = fmt::format("not run: CPU {} (the sender) has no vCPU on the modelled host, so its "
                                      "hypercalls went to no host",
                                      c.self);
    }
  }
}

// What the reader must know to read the run right.
void add_notes(const SendCase& c, SendCaseRun& run) {
  if (!c.lapic_in_kernel && c.cluster_ipi)
    run.notes.push_back("no in-kernel LAPIC: KVM's per-vCPU Hyper-V CPUID (KVM_GET_SUPPORTED_HV_CPUID) leaves "
                        "HV_X64_CLUSTER_IPI_RECOMMENDED out, so the guest installs no hooks and uses the APIC");
  if (!run.host_map.inval_cpus.empty())
    run.notes.push_back(fmt::format("CPU {} {} VP_INVAL: the modelled host has no vCPU for {} (a hypercall cannot "
                                    "name {}; Linux falls back to the native APIC for it)",
                                    format_cpulist(run.host_map.inval_cpus),
                                    run.host_map.inval_cpus.size() == 1 ? "has" : "have",
                                    run.host_map.inval_cpus.size() == 1 ? "it" : "them",
                                    run.host_map.inval_cpus.size() == 1 ? "it" : "them"));
  if (!run.host_map.beyond_cpus.empty())
    run.notes.push_back(fmt::format("CPU {}: VP index >= 4096, which no KVM vCPU can have (a host write of "
                                    "HV_X64_MSR_VP_INDEX must be below KVM_MAX_VCPUS = 4096): the modelled host has "
                                    "no vCPU for it, so a hypercall cannot reach it (a 'lost' verdict for it is the "
                                    "KVM host's limit, not the guest's doing)",
                                    format_cpulist(run.host_map.beyond_cpus)));
  if (c.hypercall_status && !run.send.hypercalls.empty()) {
    const bool ok = (*c.hypercall_status & 0xFFFF) == 0;
    run.notes.push_back(fmt::format("every hypercall returned the forced RAX {:#x} (status {}) to the guest; {}",
                                    *c.hypercall_status, status_name(static_cast<std::uint16_t>(*c.hypercall_status)),
                                    ok ? "the host's deliveries count (the status is SUCCESS)"
                                       : "its deliveries do not count: KVM delivers only on its SUCCESS path, so a "
                                         "failing status stands for a call that delivered nothing"));
  }
}

}  // namespace

SendCaseRun run_send_case(const SendCase& c) {
  SendCaseRun run;
  if (c.nr_cpus == 0 || c.nr_cpus > kMaxNrCpus)
    throw InputError("nr_cpus", fmt::format("NR_CPUS must be 1..{}, got {}", kMaxNrCpus, c.nr_cpus));
  const auto n = static_cast<unsigned>(c.cpu_vp.size());
  if (n == 0) throw InputError("cpu_vp", "give one VP index per CPU");
  if (n > c.nr_cpus)
    throw InputError("cpu_vp", fmt::format("{} CPUs, but NR_CPUS is {} (nr_cpu_ids <= NR_CPUS)", n, c.nr_cpus));
  check_vp_indices(c, n);
  build_guest(c, n, run.guest);
  run.policy = linux_version_info(c.linux_version).policy;
  const SendRequest req = send_request(c, n, run.guest);
  run_on_modelled_host(c, run.guest, req, run);
  add_notes(c, run);
  return run;
}

}  // namespace ipilab::hv
