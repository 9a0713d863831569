// ipilab/workload/mechanisms/x86_common.h — what the x86 mechanisms share: the x86 model's view of
// the VM, pricing of the x2APIC ICR writes and KVM_HC_SEND_IPI calls a Linux guest send issues
// (src/x86 says which; KVM's host side says who gets what), and the target-side arrival costs.
//
// Pricing (cost keys, src/cost/catalog.h):
//   every send          guest.ipi_path_call; guest.cpumask_word per cpumask word walked/written
//   an ICR write        vm.exit_entry + x2apic.icr_write_exit, then x2apic.icr_dest_per_target per
//                       destination (the delivery leaves after it) — all on the sender's pCPU (Exit)
//   a KVM PV call       vm.exit_entry + kvm.pv_send_ipi_call, then kvm.pv_send_ipi_per_dest per target
//   a blocked target    either: + vcpu.kick_blocked on the sender (kvm_vcpu_kick wakes its thread)
//   every delivery      the interconnect from the sender's node to the target's (host latency matrix)
//   arrival             by the target's state (x86_target.cpp, target_path.h): running target:
//                       apic.interrupt_injection (posted interrupt, no exit); halted target:
//                       vcpu.halt_wakeup on the target's pCPU, or vcpu.halt_poll_wakeup when caught
//                       by KVM's halt-polling
#pragma once

#include <span>

#include "workload/mechanism.h"
#include "x86/guest_send.h"
#include "x86/linux_kvm_guest.h"
#include "x86/vm.h"

namespace ipilab::workload {

/// The x86 model's VM: vCPU n has x2APIC ID n (QEMU -smp N), every APIC present and enabled.
x86::X86Vm x86_view(const topology::Vm& vm);

/// When a delivery to a halted vCPU costs the sender a wake-up of its thread (X86SendOptions::kick).
enum class KickWhen : std::uint8_t { Never, Always, IfBlocked };

/// How the host side takes the guest's ICR writes (the mechanism's choice).
struct X86SendOptions {
  /// KVM handles an eligible x2APIC ICR write (kvm_x2apic_icr_fastpath_eligible) in the exit's
  /// IRQs-off fastpath (handle_fastpath_set_x2apic_icr_irqoff, 1e9e2622a149, Linux 5.5):
  /// vm.exit_entry + x2apic.icr_write_fastpath instead of x2apic.icr_write_exit.
  bool icr_fastpath = false;
  /// Intel IPI virtualisation: an eligible ICR write causes no exit, the CPU posts into the target's
  /// PID (ipiv.icr_write + ipiv.pid_post per target); others are APIC-write exits as without it.
  bool ipiv = false;
  /// Bare metal: each ICR write is x2apic.native_icr_write, no exit, no hypervisor work per target.
  bool native = false;
  /// The guest's writes are xAPIC MMIO pairs (GuestSend::mmio_writes, driver `xapic_driver`). With
  /// `xapic_apicv` (APIC-register virtualisation) the ICR2 write and the idle wait's ICR read cause
  /// no exit and the ICR write is an APIC-write exit (vm.exit_entry + xapic.icr_write_exit); without
  /// it all three are MMIO exits (vm.exit_entry + xapic.mmio_exit each), the last also
  /// xapic.icr_write_exit; a destination shorthand writes no ICR2, so two.
  bool xapic = false;
  x86::XapicDriver xapic_driver = x86::XapicDriver::Physflat;
  bool xapic_apicv = true;
  /// AMD AVIC / x2AVIC (AMD64 APM Vol. 2, "Advanced Virtual Interrupt Controller"): a fixed,
  /// edge-triggered ICR write (any destination form) causes no exit; the CPU sets the vector in each
  /// target's vAPIC backing page and rings the doorbell of a running target (avic.icr_write +
  /// avic.doorbell per target). A write with a target that is not running (IsRunning clear: blocked
  /// or preempted) ends in #VMEXIT(AVIC_INCOMPLETE_IPI) on the sender (SendPlan::not_running:
  /// vm.exit_entry + avic.incomplete_ipi, KVM avic_incomplete_ipi_interception ->
  /// avic_kick_target_vcpus). Other delivery modes exit and are emulated as without AVIC.
  bool avic = false;
  /// KVM inhibited APICv/AVIC for the VM (e.g. APICV_INHIBIT_REASON_PHYSICAL_ID_TOO_BIG): no posted
  /// interrupts, every ICR write exits; `inhibit_reason` says why (a note of the run).
  bool inhibited = false;
  std::string inhibit_reason = {};
  /// KVM PV TLB flush (kvm-pv's pv_tlb_flush): Mechanism::pv_tlb_flush.
  bool pv_tlb_flush = false;
  /// Per guest CPU, whether an exit that delivers to it also wakes its thread on the sender's pCPU
  /// (vcpu.kick_blocked per destination: kvm_vcpu_kick -> kvm_vcpu_wake_up finds it asleep in
  /// kvm_vcpu_block). Empty: never (Hyper-V's own host).
  std::vector<KickWhen> kick = {};
};

/// The `kick` set of X86SendOptions: a vCPU whose idle state is halted is kicked Always when neither
/// KVM's halt-polling nor the guest's cpuidle-haltpoll is on (its halts all block), IfBlocked with
/// either (the core asks, at the send, whether its thread is past the poll window and asleep:
/// PlanStep::if_blocked); every other vCPU Never.
std::vector<KickWhen> kick_vcpus(const topology::Vm& vm, const ArrivalSteps& arrival);

/// Appends the steps and deliveries of `send` (issued by `sender`) to `plan`; `intended` are the CPUs
/// the send was for (a delivery elsewhere is misdelivered; an intended CPU nobody delivered to is lost).
/// `node_of_cpu`: each guest CPU's host node (host.cpu(vm.pcpu_of(cpu)).node), when the caller keeps
/// them (node_of_cpus); empty: looked up per delivery.
void price_x86_send(SendPlan& plan, Pricer& pricer, const topology::Host& host, const topology::Vm& vm, const x86::X86Vm& xvm,
                    unsigned sender, const x86::GuestSend& send, std::span<const unsigned> intended,
                    std::span<const int> node_of_cpu = {}, const X86SendOptions& options = {});

/// host.cpu(vm.pcpu_of(cpu)).node for every guest CPU.
std::vector<int> node_of_cpus(const topology::Host& host, const topology::Vm& vm);

/// The target side by its state (x86_target.cpp): running: apic.interrupt_injection (APICv) or an exit
/// + apic.event_injection (apicv = false); halted: vcpu.halt_wakeup, or vcpu.halt_poll_wakeup when
/// KVM's halt-polling catches it (halt_poll_ns); the windows of halt_poll_ns and guest_halt_poll_ns.
/// `force_exit`: a running target is kicked and injected whatever `apicv` says (APICv inhibited).
ArrivalSteps x86_arrival(Pricer& pricer, const Params& params, bool force_exit = false);
/// The [workload] keys x86_arrival reads (every x86 mechanism declares them) and the keys it may price.
std::vector<ParamInfo> x86_target_params();
std::vector<cost::CostKey> x86_target_cost_keys();

/// The keys price_x86_send and x86_arrival read for ICR writes (every x86 mechanism), and the ones
/// KVM_HC_SEND_IPI adds (kvm-pv only).
std::vector<cost::CostKey> x86_icr_cost_keys();
std::vector<cost::CostKey> kvm_pv_cost_keys();

/// A preempted target (vm.preempted): vcpu.preempted_wait, then the injection at that entry
/// (apic.interrupt_injection posted, apic.event_injection without); filled only when `vm` has
/// preempted vCPUs (profiles without vcpu.preempted_wait run everything else).
void x86_preempted_arrival(ArrivalSteps& a, Pricer& pricer, const topology::Vm& vm);
/// Bare metal: a running CPU takes the interrupt as is; a CPU in HLT/MWAIT pays cpu.idle_exit.
ArrivalSteps x86_native_arrival(Pricer& pricer);
/// The hosted target-side keys without `apicv` (AVIC: the interrupts are always posted).
std::vector<ParamInfo> x86_target_params_posted();
/// `apic_driver` (the xAPIC guests: xapic, avic), read into options.xapic_driver for a VM of `n` vCPUs.
ParamInfo xapic_driver_param();
x86::XapicDriver read_xapic_driver(const Params& params, std::uint32_t n);
/// `shorthand` (every x86 mechanism that writes ICRs) and, with `fastpath`, `icr_fastpath`.
std::vector<ParamInfo> x86_send_params(bool fastpath);
/// What an x86 mechanism declares: x86_send_params(fastpath) followed by x86_target_params().
std::vector<ParamInfo> x86_mechanism_params(bool fastpath);
/// The same with the mechanism's `own` parameters between the two, the target side's without `apicv`
/// when `posted` (x86_target_params_posted: AVIC, x2AVIC).
std::vector<ParamInfo> x86_mechanism_params(bool fastpath, std::vector<ParamInfo> own, bool posted);
/// `keys` followed by `more`: a mechanism's cost keys on top of a shared list.
std::vector<cost::CostKey> joined(std::vector<cost::CostKey> keys, const std::vector<cost::CostKey>& more);
/// The make function of an X86NativeMechanism whose options do not depend on the [workload] table.
std::function<std::unique_ptr<Mechanism>(MechanismContext&)> x86_native_make(std::string name, x86::X2apicMode mode,
                                                                             bool pv, X86SendOptions options = {});
/// The MechanismInfo of a KVM-hosted Linux x2APIC mode (x2apic-physical, x2apic-cluster), which differ
/// only in `mode`: x86_mechanism_params(true), the ICR cost keys with x2apic.icr_write_fastpath, an
/// X86NativeMechanism in `mode` without PV. `name` and `description` must outlive the registry (literals).
MechanismInfo x2apic_mechanism_info(std::string_view name, std::string_view description, x86::X2apicMode mode);
/// Reads them into the guest's configuration and the options (icr_fastpath unless ipiv, native,
/// xapic or avic).
void read_x86_send_params(const Params& params, x86::LinuxKvmGuestConfig& cfg, X86SendOptions& options);

/// x2apic-physical, x2apic-cluster, kvm-pv, ipiv and native-x86: the Linux guest's send paths
/// (src/x86), the ICR writes taken as `options` says. Reads `shorthand` (and `icr_fastpath` unless
/// options.ipiv or options.native) from the [workload] table.
class X86NativeMechanism final : public Mechanism {
 public:
  X86NativeMechanism(MechanismContext& ctx, std::string name, x86::X2apicMode mode, bool pv, X86SendOptions options = {});
  SendPlan plan(const SendRequest& request) override;
  const ArrivalSteps& arrival() const override { return arrival_; }
  std::vector<std::pair<std::string, std::string>> settings() const override;
  bool pv_tlb_flush() const override { return options_.pv_tlb_flush; }
  std::vector<std::string> notes() const override;

 private:
  const topology::Host* host_;
  const topology::Vm* vm_;
  Pricer* pricer_;
  x86::X86Vm xvm_;
  std::string name_;
  x86::LinuxKvmGuestConfig cfg_;
  ArrivalSteps arrival_;
  std::vector<int> node_of_cpu_;  // node_of_cpus(host, vm)
  X86SendOptions options_;
};

}  // namespace ipilab::workload
