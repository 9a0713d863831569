// ipilab/workload/mechanism.h — IPI delivery mechanisms: an interface, one file per implementation
// (src/workload/mechanisms/), chosen by name with the `mechanism` workload parameter (the Ramulator
// 2.0 pattern). Each mechanism declares its parameters and the cost keys it reads once (SST ELI);
// `ipilab list --mechanisms` prints them.
//
// A mechanism is the whole path of one send, both sides: the Linux guest's send hook (which
// hypercalls, ICR writes or ICC_SGI1R_EL1 writes it issues, and the work it does, from the models in
// src/hv, src/x86, src/gic), the host side that executes them (KVM or Hyper-V, the ITS), and what a
// target vCPU pays when the interrupt reaches it (posted-interrupt injection, a wake-up from HLT, a
// kick and list-register injection). It turns that into priced steps (plan.h); the simulation core
// (vm_run.h) executes them, queueing where lanes say a shared thing is busy.
//
// Shipped: hyperv, x2apic-physical, x2apic-cluster, kvm-pv (x86); gicv4.1-vsgi, gicv3-emulated-sgi
// (Arm). Adding a mechanism (docs/architecture.md, "Adding a mechanism"): one new file in
// src/workload/mechanisms/ with a describe_<name>() returning its MechanismInfo, its line in
// mechanisms/registry.cpp, and its cost keys in src/cost/catalog.*.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/ipi_kind.h"
#include "cost/catalog.h"
#include "sim/resource.h"
#include "sim/time.h"
#include "topology/host.h"
#include "topology/vm.h"
#include "workload/halt_poll.h"
#include "workload/params.h"
#include "workload/plan.h"
#include "workload/workload.h"

namespace ipilab::workload {

enum class Arch : std::uint8_t { X86, Arm };
std::string_view arch_name(Arch a);

/// How a send is addressed: one CPU (apic->send_IPI / smp_cross_call of one CPU), a mask
/// (send_IPI_mask) or all but self (send_IPI_mask_allbutself of the given CPUs).
enum class Addressing : std::uint8_t { One, Mask, MaskAllButSelf };

/// What an IPI is for (common/ipi_kind.h, shared with the trace readers).
using IpiKind = ipilab::IpiKind;
/// Linux's vector (x86, arch/x86/include/asm/irq_vectors.h) or SGI (arm64, arch/arm64/kernel/smp.c
/// enum ipi_msg_type) of `kind`: CallFunctionSingle 0xFB / SGI 1, CallFunction 0xFC / SGI 1,
/// Reschedule 0xFD / SGI 0, IrqWork 0xF6 / SGI 5, Platform 0xF7 / none. InputError(place) when the
/// architecture has none, and for the trace-only kinds (TimerBroadcast, Other, Unknown).
std::uint32_t vector_of(Arch arch, IpiKind kind, std::string_view place);

/// One send the core asks for. `targets` are guest CPUs, ascending, without the sender.
struct SendRequest {
  unsigned sender = 0;
  std::span<const unsigned> targets;
  Addressing addressing = Addressing::One;
  std::uint32_t vector = 0;
};

/// A shared thing a mechanism keeps itself (the core keeps the others, vm_run.h "Resources"), with
/// its figures over the measured window; the core reports it as it reports its own (workload.h
/// ResourceReport), e.g. an ITS's command queue and its->lock (mechanisms/gicv4_1_its_commands.h).
struct MechanismResource {
  std::string name;          ///< "its0.command_queue"
  std::string kind;          ///< "its_command_queue"
  sim::ResourceStats stats;  ///< in ps, over [the window's start, the end asked for]
};

/// What a target vCPU pays when an interrupt of this mechanism reaches it, by its state (the core
/// picks the path, target_path.h, and counts each delivery under it).
struct ArrivalSteps {
  std::vector<PlanStep> running;   ///< it runs guest code (spinning, computing, polling idle)
  std::vector<PlanStep> halted;    ///< it sits in HLT / WFI, its thread blocked: the wake-up
  std::vector<PlanStep> prologue;  ///< handler steps right after guest.irq_entry (arm64: ICC_IAR1_EL1)
  /// Halted, but the host's halt-polling loop sees the interrupt (kvm_vcpu_halt): used when
  /// host_poll is enabled and the halt was shorter than the vCPU's polling window.
  std::vector<PlanStep> host_polled;
  HostHaltPollConfig host_poll;    ///< KVM's halt_poll_ns and its grow/shrink (off: max_ns 0)
  GuestHaltPollConfig guest_poll;  ///< cpuidle-haltpoll in the guest (off: max_ns 0)
  /// A running target gets a posted interrupt (APICv: no exit on it); false: `running` is an exit
  /// and an event injection (the path's name says which).
  bool posted = true;
  /// Bare metal (no hypervisor): paths running_native / halted_native.
  bool native = false;
  /// A preempted target (vm.preempted, path preempted): the wait for the host to run its thread
  /// again and the injection at that entry. Only mechanisms that model it set models_preempted (a
  /// VM with preempted vCPUs and another mechanism is an input error).
  std::vector<PlanStep> preempted;
  bool models_preempted = false;
};

class Mechanism {
 public:
  virtual ~Mechanism() = default;
  /// Plans one send (deterministic for a given request; the core caches plans).
  virtual SendPlan plan(const SendRequest& request) = 0;
  virtual const ArrivalSteps& arrival() const = 0;
  /// The resolved settings to show ("mechanism", "send_ipi_one", "ITS written", ...).
  virtual std::vector<std::pair<std::string, std::string>> settings() const = 0;
  /// Remarks for the reader about the configuration (e.g. "the vPE table is shared by all CPUs").
  virtual std::vector<std::string> notes() const { return {}; }
  /// The run's sample send shown exactly (workload.h SampleHypercall); nullopt when the mechanism
  /// issues no hypercalls or planned no send.
  virtual std::optional<SampleHypercall> sample_hypercall() const { return std::nullopt; }
  /// KVM PV TLB flush (kvm_flush_tlb_multi): a TLB-flush call (HandlerBody::tlb_flush) skips the
  /// targets whose steal-time record says preempted, setting KVM_VCPU_FLUSH_TLB there instead (the
  /// host flushes at their next entry); the others get the call.
  virtual bool pv_tlb_flush() const { return false; }
  /// The measured window starts at `now`: the core calls this where it resets its own statistics
  /// (at the warm-up's end, or at 0 without one), so resources the mechanism keeps restart there.
  virtual void begin_window(sim::Ps /*now*/) {}
  /// The resources the mechanism keeps, over [the window's start, `end`] (`end` >= every time the
  /// mechanism was called at). The core leaves out those without arrivals, as it does its own.
  virtual std::vector<MechanismResource> resources(sim::Ps /*end*/) const { return {}; }
};

/// What a mechanism is built from (one per run).
struct MechanismContext {
  const topology::Host& host;
  const topology::Vm& vm;
  const Params& params;   ///< the scenario's [workload] table (the mechanism reads its own keys)
  Pricer& pricer;
};

struct MechanismInfo {
  std::string_view name;
  Arch arch;
  std::string_view description;
  std::vector<ParamInfo> params;          ///< its [workload] keys
  std::vector<cost::CostKey> cost_keys;   ///< every profile key it may read
  std::function<std::unique_ptr<Mechanism>(MechanismContext&)> make;
};

/// All mechanisms, sorted by name.
std::vector<const MechanismInfo*> list_mechanisms();
/// The mechanism by name, or InputError(place, reason listing the names).
const MechanismInfo& find_mechanism(std::string_view name, std::string_view place);
/// The mechanism the [workload] table names (`mechanism`, default `def`), restricted to `arch` when
/// given. A key that belongs to another mechanism is an error naming it ("only meaningful with
/// mechanism = ..."). Throws InputError naming the key.
const MechanismInfo& chosen_mechanism(const Params& params, std::string_view def);
/// The `mechanism` parameter's declaration (choices: every registered mechanism).
ParamInfo mechanism_param(std::string_view def);

/// A step for a posted message crossing from NUMA node `from` to node `to`, priced from the host's
/// latency matrix (Host::hop_ns); nullopt when the two are one node (nothing to add).
std::optional<PlanStep> interconnect_step(Pricer& pricer, const topology::Host& host, int from_node, int to_node,
                                          std::string_view what);

/// A delivery to guest CPU `target` that leaves after the sender's last step so far, its path the
/// interconnect crossing (named `what`) from node `sender_node` to the target pCPU's node, if any.
PlannedDelivery delivery_after_last_step(const SendPlan& plan, Pricer& pricer, const topology::Host& host,
                                         const topology::Vm& vm, int sender_node, unsigned target, std::string_view what);

}  // namespace ipilab::workload
