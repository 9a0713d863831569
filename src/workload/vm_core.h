// ipilab/workload/vm_core.h — the whole-VM core's inside (vm_run.h is its contract to the rest of
// ipilab; this header is the contract between the core's own files, nothing else includes it).
//
// One Core runs one VM (run_vm). Its state: the vCPUs (Agent, each with its VcpuState, vcpu_state.h,
// and its program's Phase), the IPIs in flight between a send and their arrival (InFlight), the
// shared resources (pcpu<N>.hypervisor, its<N>.sgir), the cached send plans, the statistics. Its
// member functions are grouped in one file per section, each the event handlers and helpers of one
// part of the model (vm_run.h describes the model):
//   vm_run.cpp        run_vm, the Core's set-up, the run and its report, the measured window, marks
//   vm_program.cpp    the program: scheduling a vCPU's next step, its ops from start to finish
//   vm_send.cpp       sends: plans (cached), the send hook's steps, IPIs launched, their path (ITS
//                     ports), their landing (the acks and handler entries the sender sees,
//                     notify_ack and notify_entry, are inline at the end of this header)
//   vm_csd_queue.cpp  the call_single_queue: llist_add of a CSD or wake entry, CSDs withdrawn
//                     behind a lost IPI, the queue run (llist_del_all) by a handler or the idle loop
//   vm_interrupt.cpp  interrupts: arrival and merging, taking one, the handler's end
//   vm_idle.cpp       idle states: going idle, the polling policy's need_resched instead of an IPI
//                     and the idle-loop flush, leaving idle for a woken task, WaitIdle's waiters
//   vm_target_path.cpp the path an interrupt takes into its target by the target's state
//                     (target_path.h), entering HLT, the host and guest halt-polling windows
// Events capture a vCPU's index (or an InFlight slot), never a pointer: agents_ does not move.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "sim/engine.h"
#include "sim/resource.h"
#include "workload/halt_poll.h"
#include "workload/target_path.h"
#include "workload/vcpu_state.h"
#include "workload/vm_run.h"

namespace ipilab::workload::vm_core {

using sim::Ps;
// do_idle's schedule_idle() after an idle-loop flush (catalog.cpp describes it; read only here).
inline constexpr cost::CostKey guest_schedule_idle{"guest.schedule_idle"};
constexpr std::uint16_t kFlushBody = 0xFFFF;  // the interrupt runs the call_single_queue
constexpr std::uint16_t kStrayBody = 0xFFFE;  // nothing for this CPU (a raw IPI it was not meant to get)
constexpr std::uint64_t kNoIpi = 0;
// Cached plans hold at most this many steps (sender steps, deliveries and their path steps), a few
// MB. Storms over hundreds of vCPUs send to a different set of idle queues nearly every time (hit
// rate ~1 % at 256 vCPUs), where a larger cache only holds cold memory (2^18 was 10 % slower);
// unicast storms reuse a few hundred small plans, which fit many times over.
constexpr std::size_t kPlanCacheSteps = std::size_t{1} << 15;
// Resource wait percentiles are binned at 1 ns (means and Little's law stay exact in ps).
constexpr Ps kWaitResolution{1000};

// The program's phase: which op the vCPU's program is in and how far (the vCPU's VcpuState is
// Running in every phase but Sleep, Blocked and Done, where it rests in its idle state).
enum class Phase : std::uint8_t {
  Start,      // ask the program for the next op
  Compute,    // interruptible work until base_due + stolen
  CallQueue,  // Call: the CSD queueing loop, then the llist_add instant
  WakeQueue,  // Wake: ttwu_queue, then the llist_add instant
  Waiting,    // Call/Ipi with wait: until every ack is seen
  SendDone,   // Call/Ipi without wait: until the send hook returns
  Sleep,      // SleepUntil: resting until op.time
  Blocked,    // Block: resting until a wake entry is run
  WaitIdle,   // until the target is idle again
  Done,       // the program stopped
};

struct Csd {
  std::uint32_t sender = 0;
  std::uint32_t serial = 0;   // the sender's op serial (its current op, to match acks)
  std::uint16_t func = 0;
  bool wait = false;
  bool wake = false;          // a ttwu wake entry, not a CSD
  Ps queued{};                // llist_add time
  Ps origin{};                // wake entries: the Wake op's start
};

struct PendingIrq {
  std::uint32_t vector = 0;
  std::uint32_t sender = 0;
  std::uint32_t serial = 0;
  std::uint16_t body = kFlushBody;
  std::uint16_t tag = 0;
  bool intended = true;
  bool merged = false;
  bool measured = false;      // the op that sent it started in the measured window
  bool in_host = false;       // it reached the target during an exit (a host-side Compute)
  Ps arrived{};
  Ps send_start{};
  std::uint64_t ipi = kNoIpi;
};

// An IPI between its launch and its arrival: the events in between carry its index in
// Core::flight_ (a closure holding the whole PendingIrq would exceed the engine's inline size).
struct InFlight {
  PendingIrq irq;
  std::shared_ptr<const SendPlan> plan;  // only while it crosses an ITS port (path_continue)
  std::uint32_t d = 0, k = 0;            // its delivery in the plan, the path step to continue at
  unsigned target = 0;
};

struct Agent {
  unsigned cpu = 0;
  int pcpu = 0;
  std::uint32_t hv = 0;  // index of its pCPU's hypervisor resource (Core::pcpu_hv_)
  int node = 0;
  int core = 0;
  // The idle state it rests in when it has nothing to do (the VM's initial_state): Halted, Polling
  // or IdleSpin.
  VcpuState rest = VcpuState::IdleSpin;
  // Rests preempted (vm.preempted): Halted in the core, its pCPU given to another host thread
  // (vm_target_path.cpp); KVM's steal-time record says so (KVM_VCPU_PREEMPTED).
  bool preempted = false;
  Program* prog = nullptr;

  // What it is doing (vcpu_state.h); every change goes through Core::move.
  VcpuState state = VcpuState::Running;
  VcpuState resume = VcpuState::Running;  // Interrupt: the state its handler returns to
  bool in_handler() const { return state == VcpuState::Interrupt; }
  bool idle() const { return is_idle(state) || (state == VcpuState::Interrupt && is_idle(resume)); }

  // Program.
  Op op;
  Phase phase = Phase::Start;
  Ps base_due{}, stolen{};
  std::uint32_t serial = 0;
  std::uint32_t pending_acks = 0;
  Ps ack_max{}, op_start{}, send_start{}, send_end{}, last_entry{};
  /// A handler taken now steals its time from the op: guest work that an interrupt delays (a Compute
  /// in the guest, the CSD queueing loop, ttwu_queue). The phase does not change while a handler
  /// runs (a step that comes meanwhile is deferred), and the idle phases are none of these.
  bool interruptible() const {
    return (phase == Phase::Compute && !op.host) || phase == Phase::CallQueue || phase == Phase::WakeQueue;
  }

  // Events it has scheduled (bookkeeping, not state): its next program step (step_at; kNever: none;
  // step_gen tells a superseded one), a step that came during a handler (deferred), an interrupt to
  // take when its interrupts are on again, an idle-loop flush (scheduled / waiting for a handler).
  Ps step_at = sim::kNever;
  std::uint32_t step_gen = 0;
  bool deferred = false, take_scheduled = false, idle_flush_scheduled = false, idle_flush_deferred = false;

  // Measurement of the current op and iteration (bookkeeping): the op started in the window, lost
  // an IPI, sent one; the iteration lost one; the last mark (kNever: none yet) and its window.
  bool op_measured = false, op_lost = false, op_sent = false;
  bool iteration_lost = false, mark_measured = false;
  Ps mark_at = sim::kNever;

  // Interrupts.
  Ps irq_off_until{};
  Ps handler_start{};
  Ps svc_entry{};  // the interrupt in service (its flush is an event): first handler instruction
  std::uint64_t svc_ipi = 0;
  std::vector<PendingIrq> pending;
  std::size_t pending_head = 0;
  std::uint32_t inbound = 0;  // intended IPIs in flight to this vCPU or pending here

  // Idle. TIF_POLLING_NRFLAG of the idle task is set exactly while idle() in Polling (set_nr_if_polling
  // sees it from idle_from on, and during a handler taken from the poll loop).
  Ps idle_from = sim::kNever;  // Halted: in HLT from; Polling: polling from
  bool need_resched = false;   // orthogonal: set by a sender under skip-if-polling
  std::vector<unsigned> idle_waiters;
  // Halt-polling (vm_target_path.cpp): when the current idle period in Halted began (its guest poll
  // window first, with cpuidle-haltpoll), the event that ends that window (halt_gen), each window.
  Ps halt_start = sim::kNever;
  std::uint32_t halt_gen = 0;
  HostHaltPoll host_poll;
  GuestHaltPoll guest_poll;

  // call_single_queue.
  std::vector<Csd> queue;
  std::uint64_t queue_ipi = kNoIpi;  // the IPI that will run the queue (kNoIpi: the idle loop will)

  // Its last send's plan (Core::plan_for): the key and the cache entry, valid while last_plan_gen is
  // the cache's generation.
  std::vector<std::uint32_t> last_plan_key;
  const std::shared_ptr<const SendPlan>* last_plan = nullptr;
  std::uint64_t last_plan_gen = 0;

  // The task on this vCPU (wakeup workload).
  TaskState task = TaskState::Runnable;
  Ps wake_origin{};

  sim::Occupancy csdq;
  sim::Resource irq;
  double call_sum = 0;
  std::uint64_t calls = 0;
};

struct VecHash {
  std::size_t operator()(const std::vector<std::uint32_t>& v) const noexcept {
    std::uint64_t h = 1469598103934665603ull;
    for (std::uint32_t x : v) h = (h ^ x) * 1099511628211ull;
    return static_cast<std::size_t>(h);
  }
};

class Core {
 public:
  Core(RunConfig& cfg, Pricer& pricer);
  RunOutput run();

 private:
  // Events.
  void step(unsigned a);
  void arrive(unsigned a, const PendingIrq& irq);
  void take(unsigned a);
  void flush(unsigned a);
  void idle_flush(unsigned a);
  void remove_served(Agent& g);
  Ps run_queue(Agent& g, Ps t, Ps taken_at, Ps entry, bool* woke);
  void path_continue(std::uint32_t slot);
  void land(std::uint32_t slot);
  std::uint32_t fly(const PendingIrq& irq, unsigned target);

  // Helpers.
  void schedule_step(Agent& g, Ps t);
  void next_op(Agent& g, Ps now);
  void begin_op(Agent& g, Ps now);
  void finish_op(Agent& g, Ps now);
  void do_call(Agent& g, Ps now);
  void do_wake(Agent& g, Ps now);
  void do_ipi(Agent& g, Ps now);
  void enqueue(Agent& g, unsigned target, const Csd& e, Ps now, std::vector<unsigned>& need);
  bool skip_polling(Agent& g, unsigned target, Ps now);
  Ps execute_send(Agent& g, Ps t, const std::shared_ptr<const SendPlan>& plan, bool call, const Op& op,
                  std::uint32_t vector, std::span<const unsigned> asked);
  // The send, instantiated without and with the observer's step hooks (an unobserved run's loop is
  // the same machine code as before the hooks).
  template <bool kObserved>
  Ps send_steps(Agent& g, Ps t, const std::shared_ptr<const SendPlan>& plan, bool call, const Op& op,
                std::uint32_t vector, std::span<const unsigned> asked);
  void launch(const std::shared_ptr<const SendPlan>& plan, std::uint32_t d, Ps t, PendingIrq irq);
  /// The plan of a send (cached: plans are pure). The reference is into the cache: valid until the
  /// next plan_for (which may clear it), so a caller uses it for one send and keeps a copy (InFlight)
  /// only for what outlives that.
  const std::shared_ptr<const SendPlan>& plan_for(unsigned sender, std::span<const unsigned> targets, Addressing a,
                                           std::uint32_t vector);
  void withdraw(Agent& target, unsigned sender, std::uint32_t serial, Ps now, const std::string& reason);
  // Inline (below): a queue run calls both once per CSD it serves.
  inline void notify_entry(unsigned sender, std::uint32_t serial, Ps entry);
  inline void notify_ack(unsigned sender, std::uint32_t serial, Ps visible);
  void handler_done(Agent& g, Ps end, Ps start_for_steal);
  void go_idle(Agent& g, Ps t);
  /// HLT at once: vcpu.halt_exit on its pCPU, interrupts off until it ends, in HLT from its end.
  void enter_hlt(Agent& g, Ps t);
  void leave_idle_for_task(Agent& g, Ps t);
  void check_waiters(Agent& g);
  // Target paths (vm_target_path.cpp).
  const std::vector<PlanStep>& arrival_path(Agent& g, const PendingIrq& irq, bool halted);
  /// AVIC's IsRunning is clear for `g` at `t`: preempted, or in HLT with its thread blocked (past
  /// KVM's halt-polling window: avic_vcpu_blocking runs only when KVM blocks the thread).
  bool not_running(const Agent& g, Ps t) const;
  /// `g`'s vCPU thread sleeps in kvm_vcpu_block at `t`: in HLT past KVM's halt-polling window (or
  /// with no window), not preempted (a preempted thread is runnable, not asleep).
  bool thread_blocked(const Agent& g, Ps t) const;
  /// Sender step `s` happens at `t`: it is unconditional, or its target's thread is asleep.
  bool taken(const PlanStep& s, Ps t) const {
    return s.if_blocked < 0 || thread_blocked(agents_[static_cast<std::size_t>(s.if_blocked)], t);
  }
  /// exit_run_'s mark for a sender step skipped (PlanStep::if_blocked): no duration is negative.
  static constexpr Ps kSkipped{-1};
  /// The VM has preempted vCPUs: the mechanism must model them; their path's counter, PV TLB flush.
  void init_preempted();
  /// kvm_flush_tlb_multi: `targets` without the preempted vCPUs (each counted in
  /// pv_tlb_flush_skips: KVM_VCPU_FLUSH_TLB set in its steal-time record, flushed at its next entry).
  std::span<const unsigned> skip_preempted(std::span<const unsigned> targets);
  /// SendPlan::not_running after sender step `k` when a delivery of that step [from `next`] finds its
  /// target not running: the sender's exit, on its pCPU; returns when the sender continues.
  Ps not_running_exit(Agent& g, const SendPlan& p, std::size_t next, std::size_t k, Ps t);
  void enter_halt(Agent& g, Ps t);
  void count_path(TargetPath p) {
    if (measuring_) counters_.add(c_path_[static_cast<std::size_t>(p)], 1);
  }
  void move(Agent& g, VcpuState to) { move_vcpu(g.cpu, g.state, to); }
  bool idle_now(const Agent& g) const {
    return is_idle(g.state) && g.inbound == 0 && g.pending_head == g.pending.size() && !g.need_resched;
  }
  bool polling_at(const Agent& g, Ps t) const {
    return g.state == VcpuState::Polling ? t >= g.idle_from
                                         : g.state == VcpuState::Interrupt && g.resume == VcpuState::Polling;
  }
  /// One-way cache-line transfer between two vCPUs' pCPUs (Host::c2c), from a table built once when
  /// the host has no per-pair overrides.
  Ps c2c(const Agent& from, const Agent& to) const {
    if (from.pcpu == to.pcpu) return Ps{};
    if (!c2c_fast_) return spec_.host->c2c(from.pcpu, to.pcpu);
    if (smt_ && from.core == to.core) return *smt_;
    return node_c2c_[static_cast<std::size_t>(from.node) * nodes_ + static_cast<std::size_t>(to.node)];
  }
  inline Ps run_steps(const std::vector<PlanStep>& steps, Ps t, std::uint32_t hv);
  // Step and resource hooks of the observer, out of line so that an unobserved run pays one test:
  // a step of `cpu`'s send hook (cpu != kNoCpu) and/or a step on resource `r` (r != nullptr).
  static constexpr unsigned kNoCpu = ~0u;
  [[gnu::cold, gnu::noinline]] void observe_step(unsigned cpu, const sim::Resource* r, Ps asked, Ps start, Ps end,
                                                 sim::Breakdown::StepId id);
  [[gnu::cold, gnu::noinline]] void observe_queue(Ps t, unsigned sender, std::span<const unsigned> targets, bool wake) {
    for (unsigned target : targets) obs_->on_queue(t, sender, target, wake);
  }
  /// r.request(t, d).end, reported to the observer.
  [[gnu::cold, gnu::noinline]] Ps observed_request(sim::Resource& r, Ps t, Ps d, sim::Breakdown::StepId id) {
    const sim::Grant gr = r.request(t, d);
    observe_step(kNoCpu, &r, t, gr.start, gr.end, id);
    return gr.end;
  }
  /// on_merge: `irq` merges into the first pending interrupt of its vector and body (arrive()'s rule).
  [[gnu::cold, gnu::noinline]] void observe_merge(Ps t, const Agent& g, const PendingIrq& irq) {
    for (std::size_t i = g.pending_head; i < g.pending.size(); ++i)
      if (g.pending[i].vector == irq.vector && g.pending[i].body == irq.body) {
        obs_->on_merge(t, g.cpu, irq.ipi, g.pending[i].ipi);
        return;
      }
  }
  [[gnu::cold, gnu::noinline]] void observe_mark(Ps t, unsigned cpu) { obs_->on_mark(t, cpu, marks_); }
  void mark(Agent& g, Ps now);
  void begin_window(Ps now);
  void boundary(Conservation& c) const;  // c's in-flight IPIs and pending requests, now

  RunConfig& cfg_;
  Observer* const obs_;  // cfg_.observer: the hooks added for timelines test this copy
  Pricer& pricer_;
  const RunSpec& spec_;
  Mechanism& mech_;
  sim::Simulator sim_;
  sim::Rng rng_;
  std::vector<Agent> agents_;
  std::vector<sim::Resource> pcpu_hv_;  // by index into hv_index_
  std::unordered_map<int, std::size_t> hv_index_;
  std::vector<sim::Resource> its_;
  bool c2c_fast_ = false;
  std::optional<Ps> smt_;
  std::vector<Ps> node_c2c_;
  std::size_t nodes_ = 0;
  sim::Breakdown& bd_;
  Counters& counters_;
  std::array<CounterId, kTargetPaths> c_path_{};
  CounterId c_sends_, c_coalesced_, c_polling_, c_misdelivered_, c_lost_, c_ipis_, c_deliveries_;
  // KVM PV TLB flush (Mechanism::pv_tlb_flush) with preempted vCPUs in the VM: on, its counter and
  // the targets a flush call keeps (vm_target_path.cpp, skip_preempted).
  bool pv_flush_ = false;
  CounterId c_pv_flush_ = 0;
  std::vector<unsigned> flush_targets_;

  // Priced by the core.
  PlanStep irq_entry_, eoi_, irq_exit_, csd_queue_, csd_unlock_, halt_exit_, ttwu_queue_, ttwu_pending_,
      context_switch_, poll_exit_, schedule_idle_;
  std::vector<PlanStep> halt_steps_;

  std::unordered_map<std::vector<std::uint32_t>, std::shared_ptr<const SendPlan>, VecHash> plans_;
  std::uint64_t plan_gen_ = 0;  // counts plans_.clear(): a vCPU's last_plan from an older one is gone
  const std::shared_ptr<const SendPlan>& remember_plan(Agent& g, const std::shared_ptr<const SendPlan>& p) {
    g.last_plan_key = key_;
    g.last_plan = &p;  // unordered_map nodes do not move on insert or rehash
    g.last_plan_gen = plan_gen_;
    return p;
  }
  std::size_t plan_cache_steps_ = 0;  // sender steps + deliveries + path steps of the cached plans
  std::vector<InFlight> flight_;
  std::vector<std::uint32_t> flight_free_;
  std::vector<std::uint32_t> key_;
  std::vector<unsigned> need_, call_targets_;
  std::vector<std::size_t> served_;
  std::vector<PlanStep> tail_;
  std::vector<Csd> flushing_;
  std::vector<Ps> exit_run_;
  std::vector<std::string> notes_;

  std::uint64_t marks_ = 0, ipi_serial_ = 0;
  bool measuring_ = false;
  Ps window_start_{}, window_end_{};
  bool stopped_ = false;
  std::uint64_t ipis_taken_window_ = 0, ops_done_window_ = 0, lost_iterations_ = 0, measured_iterations_ = 0;
  std::uint64_t raw_outstanding_ = 0;
  Conservation cons_;
  Conservation at_start_;  // cons_ and the boundary when the window began
  RunOutput out_;
};

inline Ps Core::run_steps(const std::vector<PlanStep>& steps, Ps t, std::uint32_t hv) {
  for (const PlanStep& s : steps) {
    const Ps d = s.sample(rng_);
    if (s.lane == Lane::TargetHv || s.lane == Lane::Exit) {
      sim::Resource& r = pcpu_hv_[hv];
      if (obs_) [[unlikely]]
        t = observed_request(r, t, d, s.id);
      else
        t = r.request(t, d).end;
    } else {
      t += d;
    }
    bd_.add(s.id, d);
  }
  return t;
}

inline void Core::notify_entry(unsigned sender, std::uint32_t serial, Ps entry) {
  Agent& s = agents_[sender];
  if (s.serial == serial) s.last_entry = std::max(s.last_entry, entry);
}

inline void Core::notify_ack(unsigned sender, std::uint32_t serial, Ps visible) {
  Agent& s = agents_[sender];
  if (s.serial != serial || s.pending_acks == 0) return;
  s.ack_max = std::max(s.ack_max, visible);
  if (--s.pending_acks == 0 && s.phase == Phase::Waiting) schedule_step(s, std::max(s.ack_max, s.send_end));
}

}  // namespace ipilab::workload::vm_core
