// ipilab/x86/vm.h — the small VM description the x86 send-path models need: which x2APIC ID each
// vCPU has, whether its local APIC is in KVM's APIC map, and whether it is software-enabled.
//
// Conventions: guest Linux CPU number n is vCPU n (QEMU/KVM boot vCPUs in index order, and Linux
// per_cpu(x86_cpu_to_apicid, n) is vCPU n's APIC ID). APIC IDs are x2APIC IDs (32 bits); the models
// assume the guest has not rewritten its xAPIC ID (KVM treats such VMs specially, not modelled).
// Independent of the topology/sim subsystems on purpose: the simulator adapts its VM to this.
#pragma once

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "x86/cpumask.h"

namespace ipilab::x86 {

/// One vCPU's local APIC as KVM sees it.
struct X86Vcpu {
  std::uint32_t apic_id = 0;      ///< x2APIC ID (Linux x86_cpu_to_apicid)
  bool apic_present = true;       ///< hardware-enabled in-kernel LAPIC: KVM kvm_apic_present(), so in phys_map
  bool apic_sw_enabled = true;    ///< SPIV software enable; fixed/lowest IPIs to a disabled APIC are dropped
};

/// vCPU -> APIC ID map plus the host facts the delivery models need. Immutable after construction.
class X86Vm {
 public:
  /// Validates: at least one vCPU, no APIC ID 0xFFFFFFFF (the x2APIC broadcast ID), no two vCPUs
  /// with one APIC ID. Throws InputError("vm.vcpu[i].apic_id", reason) otherwise.
  explicit X86Vm(std::vector<X86Vcpu> vcpus, bool smm_supported = true);

  /// APIC ID == vCPU index, every APIC present and enabled: the default QEMU `-smp N` (N sockets of
  /// one core and one thread) layout. Throws InputError if nr_vcpus == 0.
  static X86Vm identity(std::uint32_t nr_vcpus);
  /// The given APIC IDs in vCPU order, all present and enabled.
  static X86Vm from_apic_ids(const std::vector<std::uint32_t>& apic_ids);
  /// QEMU's topology-derived APIC IDs (include/hw/i386/topology.h, x86_apicid_from_topo_ids, one die
  /// per socket): each level gets ceil(log2(count)) bits, so e.g. 2 sockets x 20 cores x 2 threads
  /// gives socket 0 IDs 0..39 and socket 1 IDs 64..103. vCPU order is socket, core, thread.
  static X86Vm qemu_topology(std::uint32_t sockets, std::uint32_t cores, std::uint32_t threads);

  std::uint32_t nr_vcpus() const { return static_cast<std::uint32_t>(vcpus_.size()); }
  /// A guest send's cpumask must cover this VM (nr_cpu_ids bits at least) and name none of the
  /// vCPUs it lacks; std::invalid_argument otherwise.
  void check_cpumask(const Cpumask& mask) const;
  /// check_cpumask, and `this_cpu` (the sender, smp_processor_id()) is one of the VM's vCPUs.
  void check_send(std::uint32_t this_cpu, const Cpumask& mask) const;
  const X86Vcpu& vcpu(std::uint32_t index) const { return vcpus_.at(index); }
  std::uint32_t apic_id(std::uint32_t index) const { return vcpus_.at(index).apic_id; }
  const std::vector<X86Vcpu>& vcpus() const { return vcpus_; }

  /// KVM's phys_map lookup: the vCPU whose present APIC has this x2APIC ID, if any.
  std::optional<std::uint32_t> vcpu_of_apic_id(std::uint32_t apic_id) const;

  /// KVM kvm_recalculate_apic_map(): max_apic_id = max(255, largest present x2APIC ID).
  std::uint32_t kvm_max_apic_id() const { return max_apic_id_; }

  /// Whether the host can inject SMIs (KVM built with CONFIG_KVM_SMM): decides APIC_DM_SMI acceptance.
  bool smm_supported() const { return smm_supported_; }

  /// The guest's cluster_masks (arch/x86/kernel/apic/x2apic_cluster.c, filled as CPUs come up): the
  /// vCPUs sharing vCPU `cpu`'s x2APIC cluster (x2apic_cluster_id of the APIC IDs), as a mask of
  /// nr_vcpus() bits. Built with the VM (a pure function of the APIC IDs).
  const Cpumask& cluster_mask(std::uint32_t cpu) const { return clusters_[cluster_of_.at(cpu)]; }

 private:
  std::vector<X86Vcpu> vcpus_;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> by_apic_id_;  // (apic_id, vcpu), present only, sorted
  std::uint32_t max_apic_id_ = 255;
  bool smm_supported_ = true;
  std::vector<Cpumask> clusters_;          // one per cluster ID present
  std::vector<std::uint32_t> cluster_of_;  // vCPU -> index into clusters_
};

}  // namespace ipilab::x86
