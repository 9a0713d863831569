// ipilab/workload/send_path.h — each delivery mechanism as a SendPlan builder: run the model of the
// mechanism (Linux guest policy + host side), then price what it did with the profile.
//
// Mechanisms (the `mechanism` workload parameter):
//   hyperv          Linux arch/x86/hyperv/hv_apic.c policies (src/hv/guest_send.h) against the
//                   partition host side (src/hv/partition.h); native fallbacks go out as x2APIC
//                   physical ICR writes (the orig_apic of a Hyper-V guest; fact sheet §3.7).
//   x2apic-physical Linux x2apic_phys.c: one ICR write (one exit) per destination (src/x86).
//   x2apic-cluster  Linux x2apic_cluster.c: one ICR write per cluster of 16 (src/x86).
//   kvm-pv          Linux arch/x86/kernel/kvm.c __send_ipi_mask: KVM_HC_SEND_IPI per 128-APIC-ID
//                   window, executed by KVM's kvm_pv_send_ipi model (src/x86/kvm_pv_ipi.h).
//   gicv4.1-vsgi    KVM trap of ICC_SGI1R_EL1 + its_sgi_set_irqchip_state: one GITS_SGIR write to
//                   find_4_1_its() of the sender's pCPU (src/gic/linux_its.h), ITS -> RD hop.
//
// Pricing (cost keys, catalog in src/cost/catalog.cpp):
//   every send        guest.ipi_path_call
//   Hyper-V guest     guest.cpumask_word per on-stack cpumask word zeroed (CPU_MASK_NONE), per cpumask
//                     word scanned, per vpset bank word cleared/built; guest.vp_index_lookup;
//                     guest.irq_save_restore (WorkRecord, src/hv/guest_record.h)
//   a hypercall       vm.exit_entry + hv.hypercall_entry_exit, then fast: hv.fast_input_decode, or
//                     slow: hv.slow_input_map + hv.slow_input_copy_per_8b per input QWORD read +
//                     hv.vpset_bank_decode per bank read (HostWork); hv.ipi_post_per_target per
//                     delivered VP — each delivery leaves after its own post step
//   an ICR write      vm.exit_entry + x2apic.icr_write_exit, then x2apic.icr_dest_per_target per
//                     destination (delivery after it)
//   a KVM PV call     vm.exit_entry + kvm.pv_send_ipi_call, then kvm.pv_send_ipi_per_dest per target
//   a vSGI            gic.sgi_trap_exit + gic.vgic_dispatch_sgi on the sender; in flight:
//                     its.sgir_write_{local,remote} (sender socket vs ITS socket), its.sgir_process
//                     (queues on the ITS port), its.rd_hop_{local,remote} (ITS socket vs the target
//                     RD's socket), gic.rd_vsgi_pending
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "gic/linux_its.h"
#include "hv/guest_policy.h"
#include "hv/guest_record.h"
#include "topology/host.h"
#include "topology/vm.h"
#include "workload/plan.h"
#include "workload/workload.h"

namespace ipilab::workload {

/// How a send is addressed: one CPU (apic->send_IPI), a mask (send_IPI_mask) or all but self
/// (send_IPI_mask_allbutself of the given CPUs).
enum class Addressing { One, Mask, MaskAllButSelf };

/// A mechanism bound to a VM, able to plan sends. Build with make_send_path().
class SendPath {
 public:
  virtual ~SendPath() = default;
  /// Plans one send from guest CPU `sender` to `targets` (guest CPUs) with `vector`.
  virtual SendPlan plan(const Pricer& pricer, unsigned sender, const std::vector<unsigned>& targets,
                        Addressing addressing, std::uint32_t vector) = 0;
  /// The resolved settings to show ("mechanism", "send_ipi_one", ...).
  virtual std::vector<std::pair<std::string, std::string>> settings() const = 0;
};

/// Mechanism names accepted by make_send_path (for parameter validation and --help).
const std::vector<std::string_view>& x86_mechanisms();

/// Builds an x86 send path from the workload parameters `mechanism`, `send_ipi_one`, `mask_path`,
/// `hypercall_page`, `ex_processor_masks` (Hyper-V) — see the workloads' ParamInfo. `vm` gives the
/// guest CPUs, VP indices and NR_CPUS. Throws InputError naming the parameter.
std::unique_ptr<SendPath> make_x86_send_path(const Params& params, const topology::Vm& vm);
/// The x86 workload parameters make_x86_send_path reads (appended to each x86 workload's list).
std::vector<ParamInfo> x86_send_params();

/// GICv4.1 vSGI: the ITS driver model of `host` (its ITSs, one per socket as the host lists them;
/// vPE table scope from host.gic_common_lpi_aff) with every vCPU's vPE mapped and resident on its pCPU.
class VsgiPath {
 public:
  /// Throws InputError when the host has no ITS or a vCPU's pCPU is not in the GIC model.
  VsgiPath(const topology::Host& host, const topology::Vm& vm, gic::Find41Policy policy);
  /// Plans one vSGI (SGI `vintid`) from guest CPU `sender` to guest CPU `target`; `pcpu_of_sender`
  /// overrides the pCPU the sender runs on (default: its pinning).
  SendPlan plan(const Pricer& pricer, unsigned sender, unsigned target, std::uint8_t vintid);
  gic::Find41Policy policy() const { return policy_; }
  /// Which ITS a sender pCPU writes (for settings and notes).
  gic::ItsChoice choice(unsigned sender) const;
  int its_count() const;

 private:
  const topology::Host* host_;
  const topology::Vm* vm_;
  gic::Find41Policy policy_;
  std::unique_ptr<gic::GicSystem> system_;
  std::unique_ptr<gic::LinuxItsDriver> driver_;
};

}  // namespace ipilab::workload
