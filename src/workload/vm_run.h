// ipilab/workload/vm_run.h — the simulation core: the whole VM at once.
//
// Every vCPU is an agent running a Program (program.h); every shared thing is a resource with a
// queue and its own statistics (sim/resource.h). One driver runs every workload and every replay.
//
// Agents. A vCPU is, at any time, running its program (computing, inside a send hook, spinning in
// csd_lock_wait), taking an interrupt, or resting in its idle state when it has nothing to do — the
// VM's per-vCPU state (topology/vm.h): `running` (spinning in guest code, like micro-bench's CPU1),
// `halted` (idle in HLT/WFI: an interrupt wakes it, paying the mechanism's wake-up; after the
// handler it goes back to HLT, paying vcpu.halt_exit on its physical CPU) or `polling` (idle polling
// with TIF_POLLING_NRFLAG set: see the policy below).
//
// Interrupts. An interrupt that reaches a vCPU is pending until the vCPU can take it: not while its
// interrupts are off (inside a send hook, during a VM exit, inside another handler, going back to
// HLT). Taking it costs the mechanism's arrival steps (running: e.g. posted-interrupt injection;
// halted: the wake-up), then guest.irq_entry, the mechanism's prologue (arm64: ICC_IAR1_EL1), the
// body, guest.eoi and guest.irq_exit. An interrupt of a vector already pending merges into it (the
// IRR bit / the SGI pending bit is set once). A handler interrupting guest work steals its time.
//
// Call-function IPIs (Op::Call, Op::Wake). Each target has a call_single_queue. The sender queues
// its CSD (guest.csd_queue per target) and llist_add()s it; only when the queue was empty does the
// target need an IPI (Linux __smp_call_single_queue); otherwise the CSD is served by the IPI already
// on its way (counted as coalesced, with that IPI's id). The CSDs of one call are added at one
// instant, the end of the queueing loop (the error is bounded by that loop). The handler takes the
// whole queue at one instant (llist_del_all, after guest.irq_entry), runs each entry in order — for
// a CSD: read its line from the sender (host latency matrix), the function, csd_unlock, whose line
// reaches a waiting sender one more transfer later; for a wake entry: guest.ttwu_pending — so entries
// queued after that instant need a new IPI.
//
// Polling policy (send_call_function_single_ipi, Linux b2a02fc43a1f; remote wake-ups have skipped
// IPIs to polling CPUs since e3baac47f0e8): `always-ipi` sends the IPI to a polling target;
// `skip-if-polling` sets need_resched instead (set_nr_if_polling) when the single target polls,
// and the target sees it one cache-line transfer later, leaves the poll loop (guest.idle_poll_exit)
// and runs its queue from the idle loop (flush_smp_call_function_queue), no interrupt at all.
// Multi-target calls always send IPIs (smp_call_function_many_cond sends to the mask).
//
// Lost IPIs. When the mechanism loses an intended target's IPI (the model's oracle: e.g. seed v2
// misroutes VP 70 to VP 6), the sender withdraws the CSD and every CSD queued behind it, each
// counted lost with the reason (a real kernel would spin in csd_lock_wait until the CSD-lock
// timeout); the call completes without them and its iteration is left out of the latency figures.
//
// Counters (RunOutput::counters, measured window): sends (send-hook invocations), ipis_delivered
// (interrupts taken), deliveries (requests served: a CSD or wake entry run on its target, or a raw
// IPI's handler — by its own interrupt, coalesced behind another, or from the idle loop), coalesced,
// polling_skips (sched_wake_idle_without_ipi), lost, misdelivered, and the mechanism's own
// (hypercalls, icr_writes, vm_exits, its_local ...). The window's boundary, so that both balances
// hold exactly in every run (IPIs and requests in flight when it begins or ends are on one side only):
//   ipis_sent + ipis_in_flight_at_start == ipis_delivered + lost + ipis_in_flight_at_end
//   requests + requests_pending_at_start == deliveries + requests_lost + requests_pending_at_end
// ipis_sent: intended IPIs the mechanism sent (lost ones included; not misdelivered copies); in
// flight: sent, not yet taken (ipis_delivered counts one merged into a pending interrupt too).
// requests: CSDs, wake entries and raw IPIs' targets, whether they got an IPI of their own,
// coalesced behind one, were served by a polling flush or were lost; requests_lost: lost ones,
// including CSDs withdrawn behind a lost IPI; pending: queued (CSDs) or in flight (raw IPIs).
//
// Resources (RunOutput::resources, per-kind sections in the report):
//   vcpu<N>.call_single_queue  kind call_single_queue: a CSD or wake entry from llist_add until the
//                              handler's llist_del_all takes it (utilisation = time non-empty)
//   vcpu<N>.interrupts         kind interrupts: an interrupt from pending until its handler ends;
//                              wait = pending -> taken (the interrupt window and the wake-up)
//   pcpu<N>.hypervisor         kind hypervisor: exit handling on a physical CPU (Lane::Exit of its
//                              vCPU's sends, Lane::TargetHv of wake-ups, kicks, HLT exits)
//   its<N>.sgir                kind its_sgir: GITS_SGIR writes, one at a time per ITS
//   and the mechanism's own (Mechanism::resources, restarted by Mechanism::begin_window where the
//   core resets its statistics): its<N>.command_queue and its<N>.lock of the timed ITS commands
//   (mechanisms/gicv4_1_its_commands.h). The list is sorted by kind (within a kind: as above).
// Per-VM serialisation: none. KVM's send paths for these mechanisms take no VM-wide lock:
// kvm_irq_delivery_to_apic_fast and kvm_pv_send_ipi read kvm->arch.apic_map under rcu_read_lock(),
// kvm_hv_send_ipi walks vcpus with kvm_for_each_vcpu, vgic_v3_dispatch_sgi takes the per-IRQ
// irq_lock and the target's ap_list_lock (per target: the target's interrupts resource), and
// its_sgi_set_irqchip_state only writes GITS_SGIR (Linux 6.x). Time-sharing one physical CPU between
// vCPUs is not modelled: a VM with two vCPUs on one host CPU is an input error.
//
// Measurement. Op::Mark counts iterations over all agents. The first `warmup` marks are discarded:
// at the next one every statistic is reset (breakdown, counters, resources); the run stops at mark
// warmup + iterations + 1. With iterations == 0 it runs until every program stops (replay).
// Throughput and utilisation are over that window of simulated time.
//
// vCPU state (vcpu_state.h): each vCPU is running, taking an interrupt, or in its idle state
// (halted, polling idle, idle spinning), with checked moves. The core's own files: vm_core.h.
//
// Determinism: one sim::Simulator and one sim::Rng per run; events at equal times run in the order
// scheduled; plans are pure functions of their request (cached); nothing here is global, so runs
// can go in parallel threads. Memory: O(vCPUs + pending events + cached plans (bounded)).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sim/histogram.h"
#include "sim/time.h"
#include "workload/mechanism.h"
#include "workload/plan.h"
#include "workload/program.h"
#include "workload/workload.h"

namespace ipilab::workload {

/// What send_call_function_single_ipi does for a target in polling idle (TIF_POLLING_NRFLAG):
/// "always-ipi" (Linux before b2a02fc43a1f) or "skip-if-polling" (set need_resched, no IPI; 5.8+).
enum class PollingPolicy : std::uint8_t { AlwaysIpi, SkipIfPolling };
inline constexpr EnumName<PollingPolicy> kPollingPolicyNames[] = {{PollingPolicy::AlwaysIpi, "always-ipi"},
                                                                  {PollingPolicy::SkipIfPolling, "skip-if-polling"}};
/// The polling-policy parameter (`polling`).
extern const EnumParam<PollingPolicy> kPollingParam;

/// How one request (a CSD, a wake entry or a raw IPI to one target) was served.
enum class Served : std::uint8_t { OwnIpi, Coalesced, Polling, Lost };
std::string_view served_name(Served s);

/// Sees what the core does, for timelines (e.g. a Perfetto writer) and checks. Every callback has a
/// default that does nothing; calls come in simulated-time order of the decision, not of the times
/// they carry (a handler's end is known when it starts).
class Observer {
 public:
  virtual ~Observer() = default;
  /// A send hook ran from `start` to `end` on `sender`, interrupting `targets` (intended ones).
  virtual void on_send(sim::Ps /*start*/, sim::Ps /*end*/, unsigned /*sender*/, std::uint32_t /*vector*/,
                       std::span<const unsigned> /*targets*/) {}
  /// A request to `target` was decided: served by its own IPI (`ipi`), coalesced behind IPI `ipi`,
  /// served from the polling idle loop, or lost (`reason`).
  virtual void on_request(sim::Ps /*t*/, unsigned /*sender*/, unsigned /*target*/, Served /*how*/,
                          std::uint64_t /*ipi*/, std::string_view /*reason*/) {}
  /// IPI `ipi` became pending at `target` (merged: into an interrupt of its vector already pending).
  virtual void on_arrival(sim::Ps /*t*/, unsigned /*target*/, std::uint64_t /*ipi*/, bool /*merged*/) {}
  /// A handler (or an idle-loop flush when `ipi` == 0) ran on `cpu`: taken at `start`, first handler
  /// instruction at `entry`, done at `end`.
  virtual void on_handler(unsigned /*cpu*/, std::uint64_t /*ipi*/, sim::Ps /*start*/, sim::Ps /*entry*/,
                          sim::Ps /*end*/) {}
  /// Iteration mark number `n` (1-based, counted over every vCPU as the warm-up and the end are) on `cpu`.
  virtual void on_mark(sim::Ps /*t*/, unsigned /*cpu*/, std::uint64_t /*n*/) {}
  /// `sender` adds a CSD (`wake`: a ttwu wake entry) to `target`'s call_single_queue: once per target
  /// of a call, before any on_request of that call, each of which says how one of them is served.
  /// (Raw IPIs, Op::Ipi, have no on_queue.)
  virtual void on_queue(sim::Ps /*t*/, unsigned /*sender*/, unsigned /*target*/, bool /*wake*/) {}
  /// IPI `ipi` (0: a misdelivered one) merged at `target` into the pending interrupt of IPI `into`
  /// (0: a misdelivered one): `into`'s handler serves it. Comes right after its on_arrival.
  virtual void on_merge(sim::Ps /*t*/, unsigned /*target*/, std::uint64_t /*ipi*/, std::uint64_t /*into*/) {}
  /// A step of `cpu`'s send hook ran from `start` to `end` (`label`: its breakdown row), exit-handling
  /// steps included. Comes before the send's on_send.
  virtual void on_send_step(unsigned /*cpu*/, sim::Ps /*start*/, sim::Ps /*end*/, std::string_view /*label*/) {}
  /// Shared resource `resource` ("pcpu<N>.hypervisor", "its<N>.sgir") ran step `label` from `start` to
  /// `end`, asked for at `asked` (it queued until `start`).
  virtual void on_resource(std::string_view /*resource*/, sim::Ps /*asked*/, sim::Ps /*start*/, sim::Ps /*end*/,
                           std::string_view /*label*/) {}
};

/// A handler body: what a target runs for one CSD (Call's `func`) or for an Ipi op (`func`).
struct HandlerBody {
  std::vector<PlanStep> steps;
  /// Ipi bodies: the handler stores the flag the sender spins on (irq_received): the store first
  /// takes the line from the sender (one transfer), and the sender sees it one transfer later.
  bool sets_flag = false;
  /// Call functions: a TLB flush (flush_tlb_func), which KVM PV TLB flush may skip on preempted
  /// targets (Mechanism::pv_tlb_flush).
  bool tlb_flush = false;
};

struct RunConfig {
  const RunSpec* spec = nullptr;
  Mechanism* mechanism = nullptr;
  /// One per vCPU (nullptr: the vCPU only rests in its idle state and takes interrupts).
  std::vector<std::unique_ptr<Program>> programs;
  std::vector<HandlerBody> csd_functions;  ///< Op::Call func index
  std::vector<HandlerBody> ipi_bodies;     ///< Op::Ipi func index
  std::vector<PlanStep> compute_steps;     ///< Op::Compute step index
  std::uint64_t warmup = 0;
  std::uint64_t iterations = 0;            ///< 0: until every program stops
  PollingPolicy polling = PollingPolicy::AlwaysIpi;
  /// The vector smp_call_function_many uses when only one CPU of its mask needs an IPI
  /// (send_call_function_single_ipi): vector_of(arch, IpiKind::CallFunctionSingle).
  std::uint32_t call_single_vector = 0xFB;
  bool uses_calls = false;                 ///< programs issue Op::Call (prices the CSD keys)
  bool uses_wakeups = false;               ///< programs issue Op::Wake / Op::Block
  std::size_t delivery_tags = 0;           ///< per-tag send -> handler entry histograms (Op::Ipi tag)
  Observer* observer = nullptr;            ///< none: RunSpec::observer (none there either: no cost)
};

/// Request/IPI accounting over the whole run (warm-up included): every request is served by its own
/// IPI, coalesced, served by a polling flush, or lost; every IPI sent is delivered, merged into a
/// pending one, lost, or still in flight when the run stops.
struct Conservation {
  std::uint64_t requests = 0, own_ipi = 0, coalesced = 0, polling = 0, lost_requests = 0;
  std::uint64_t served = 0, queued_at_end = 0;
  std::uint64_t ipis_sent = 0, ipis_delivered = 0, ipis_merged = 0, ipis_lost = 0, ipis_in_flight = 0;
  std::uint64_t misdelivered = 0;  ///< extra deliveries to CPUs nobody asked for (stray handlers)
  bool holds() const {
    return requests == own_ipi + coalesced + polling + lost_requests &&
           requests == served + lost_requests + queued_at_end &&
           ipis_sent == ipis_delivered + ipis_merged + ipis_lost + ipis_in_flight;
  }
};

struct RunOutput {
  // Histograms in ps, measured window only.
  sim::Histogram iteration;   ///< mark to mark of one agent (iterations with a lost call left out)
  sim::Histogram send_cost;   ///< inside the send hook
  sim::Histogram delivery;    ///< Call/Ipi op: send start -> first handler instruction of its last target
  sim::Histogram call;        ///< Call/Ipi op with wait: op start -> every callback seen
  sim::Histogram wake;        ///< Wake op start -> the woken task runs
  std::vector<sim::Histogram> delivery_by_tag;  ///< Ipi ops: send start -> handler entry, per target
  std::map<std::string, std::uint64_t> counters;
  std::vector<ResourceReport> resources;
  Throughput throughput;
  Conservation conservation;
  std::vector<std::string> notes;
  std::uint64_t events = 0;
  /// Event slots the engine allocated (its high-water mark of pending events, rounded up to a chunk):
  /// with plans bounded, the run's memory follows this and the vCPU count, not the iterations.
  std::size_t event_slots = 0;
  std::uint64_t measured_iterations = 0;
  std::uint64_t lost_iterations = 0;
  /// Per vCPU: mean call latency (ps) and calls, for per-sender figures (0 calls: not a sender).
  std::vector<std::pair<double, std::uint64_t>> per_sender_call;
};

/// Runs the VM. `breakdown` and `counters` are the ones the mechanism's Pricer uses (steps and
/// counters registered while planning land there). Throws InputError for a missing cost or a VM the
/// core cannot represent (vCPUs sharing a host CPU), naming the place.
RunOutput run_vm(RunConfig& config, Pricer& pricer);

/// The core's own cost keys (the handler tail, CSDs, idle states, wake-ups) for the catalog test.
std::vector<cost::CostKey> core_cost_keys();

}  // namespace ipilab::workload
