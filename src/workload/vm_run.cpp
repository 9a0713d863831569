#include "workload/vm_run.h"

#include <algorithm>
#include <array>
#include <optional>
#include <unordered_map>

#include <fmt/format.h>

#include "common/error.h"
#include "sim/engine.h"
#include "sim/resource.h"
#include "workload/vcpu_state.h"

namespace ipilab::workload {

namespace {
constexpr std::string_view kPollingChoices[] = {"always-ipi", "skip-if-polling"};
}  // namespace

const ChoiceParam kPollingParam{
    "polling", "always-ipi", kPollingChoices,
    "what send_call_function_single_ipi does for a target idling in polling idle (TIF_POLLING_NRFLAG): "
    "always-ipi (Linux before b2a02fc43a1f) or skip-if-polling (set need_resched, no IPI; Linux 5.8+)"};

std::string_view served_name(Served s) {
  switch (s) {
    case Served::OwnIpi: return "own IPI";
    case Served::Coalesced: return "coalesced";
    case Served::Polling: return "polling idle";
    case Served::Lost: return "lost";
  }
  return "?";
}

std::vector<cost::CostKey> core_cost_keys() {
  using namespace cost::keys;
  return {guest_irq_entry,  guest_eoi,          guest_irq_exit,      guest_csd_queue,       guest_csd_unlock,
          vcpu_halt_exit,   guest_ttwu_queue,   guest_ttwu_pending,  guest_context_switch, guest_idle_poll_exit};
}

namespace {

using sim::Ps;
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

  // call_single_queue.
  std::vector<Csd> queue;
  std::uint64_t queue_ipi = kNoIpi;  // the IPI that will run the queue (kNoIpi: the idle loop will)

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
                  std::uint32_t vector, std::span<const unsigned> asked) {
    return obs_ ? send_steps<true>(g, t, plan, call, op, vector, asked) : send_steps<false>(g, t, plan, call, op, vector, asked);
  }
  // The send, instantiated without and with the observer's step hooks (an unobserved run's loop is
  // the same machine code as before the hooks).
  template <bool kObserved>
  Ps send_steps(Agent& g, Ps t, const std::shared_ptr<const SendPlan>& plan, bool call, const Op& op,
                std::uint32_t vector, std::span<const unsigned> asked);
  void launch(const std::shared_ptr<const SendPlan>& plan, std::uint32_t d, Ps t, PendingIrq irq);
  std::shared_ptr<const SendPlan> plan_for(unsigned sender, std::span<const unsigned> targets, Addressing a,
                                           std::uint32_t vector);
  void withdraw(Agent& target, unsigned sender, std::uint32_t serial, Ps now, const std::string& reason);
  void notify_entry(unsigned sender, std::uint32_t serial, Ps entry);
  void notify_ack(unsigned sender, std::uint32_t serial, Ps visible);
  void handler_done(Agent& g, Ps end, Ps start_for_steal);
  void go_idle(Agent& g, Ps t);
  void leave_idle_for_task(Agent& g, Ps t);
  void check_waiters(Agent& g);
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
  CounterId c_sends_, c_coalesced_, c_polling_, c_misdelivered_, c_lost_, c_ipis_, c_deliveries_;

  // Priced by the core.
  PlanStep irq_entry_, eoi_, irq_exit_, csd_queue_, csd_unlock_, halt_exit_, ttwu_queue_, ttwu_pending_,
      context_switch_, poll_exit_;
  std::vector<PlanStep> halt_steps_;

  std::unordered_map<std::vector<std::uint32_t>, std::shared_ptr<const SendPlan>, VecHash> plans_;
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

Core::Core(RunConfig& cfg, Pricer& pricer)
    : cfg_(cfg),
      obs_(cfg.observer),
      pricer_(pricer),
      spec_(*cfg.spec),
      mech_(*cfg.mechanism),
      rng_(cfg.spec->seed),
      bd_(pricer.breakdown()),
      counters_(pricer.counters()) {
  using namespace cost::keys;
  const topology::Vm& vm = spec_.vm;
  const topology::Host& host = *spec_.host;
  // One vCPU per host CPU: time-sharing a pCPU is not modelled.
  {
    std::unordered_map<int, int> seen;
    for (const auto& v : vm.vcpus) {
      auto [it, fresh] = seen.try_emplace(v.pcpu, v.cpu);
      if (!fresh)
        throw InputError(spec_.params.file().empty() ? std::string("vm.pin") : spec_.params.file() + ": vm.pin",
                         fmt::format("vCPUs {} and {} are both pinned to host CPU {}: the simulator does not model "
                                     "vCPUs time-sharing one physical CPU; pin each vCPU to its own CPU",
                                     it->second, v.cpu, v.pcpu));
    }
  }
  c_sends_ = counters_.id("sends");
  c_coalesced_ = counters_.id("coalesced");
  c_polling_ = counters_.id("polling_skips");
  c_misdelivered_ = counters_.id("misdelivered");
  c_lost_ = counters_.id("lost");
  c_ipis_ = counters_.id("ipis_delivered");
  c_deliveries_ = counters_.id("deliveries");
  for (const char* k : {"native_fallbacks", "hypercalls"}) counters_.id(k);

  irq_entry_ = pricer_.step("target", "interrupt entry", guest_irq_entry, 1, Lane::Guest);
  eoi_ = pricer_.step("target", "EOI", guest_eoi, 1, Lane::Guest);
  irq_exit_ = pricer_.step("target", "interrupt exit", guest_irq_exit, 1, Lane::Guest);
  if (cfg_.uses_calls || cfg_.uses_wakeups) {
    csd_unlock_ = pricer_.step("target", "csd_unlock", guest_csd_unlock, 1, Lane::Guest);
  }
  if (cfg_.uses_calls) csd_queue_ = pricer_.step("sender", "lock and queue the CSD (llist_add)", guest_csd_queue);
  if (cfg_.uses_wakeups) {
    ttwu_queue_ = pricer_.step("waker", "try_to_wake_up: queue the wake entry (ttwu_queue_wakelist)", guest_ttwu_queue);
    ttwu_pending_ = pricer_.step("target", "sched_ttwu_pending: activate the woken task", guest_ttwu_pending);
    context_switch_ = pricer_.step("cpu", "schedule(): context switch", guest_context_switch);
  }
  bool any_halt = false, any_poll = false;
  agents_.resize(static_cast<std::size_t>(vm.size()));
  for (const auto& v : vm.vcpus) {
    Agent& g = agents_[static_cast<std::size_t>(v.cpu)];
    g.cpu = static_cast<unsigned>(v.cpu);
    g.pcpu = v.pcpu;
    g.node = host.cpu(v.pcpu).node;
    g.core = host.cpu(v.pcpu).core;
    g.rest = v.initial_state == topology::VcpuState::Halted    ? VcpuState::Halted
             : v.initial_state == topology::VcpuState::Polling ? VcpuState::Polling
                                                                : VcpuState::IdleSpin;
    any_halt |= g.rest == VcpuState::Halted;
    any_poll |= g.rest == VcpuState::Polling;
    g.csdq = sim::Occupancy(fmt::format("vcpu{}.call_single_queue", v.cpu), kWaitResolution);
    g.irq = sim::Resource(fmt::format("vcpu{}.interrupts", v.cpu), kWaitResolution);
    g.pending.reserve(4);
    if (!hv_index_.count(v.pcpu)) {
      hv_index_[v.pcpu] = pcpu_hv_.size();
      pcpu_hv_.emplace_back(fmt::format("pcpu{}.hypervisor", v.pcpu), kWaitResolution);
    }
    g.hv = static_cast<std::uint32_t>(hv_index_[v.pcpu]);
    if (static_cast<std::size_t>(v.cpu) < cfg_.programs.size()) g.prog = cfg_.programs[static_cast<std::size_t>(v.cpu)].get();
  }
  if (any_halt) {
    halt_exit_ = pricer_.step("target", "idle: HLT/WFI exit, the vCPU blocks", vcpu_halt_exit, 1, Lane::TargetHv);
    halt_steps_ = {halt_exit_};
  }
  tail_ = {eoi_, irq_exit_};
  if (any_poll && (cfg_.polling == PollingPolicy::SkipIfPolling || cfg_.uses_wakeups))
    poll_exit_ = pricer_.step("target", "polling idle: need_resched seen, leave the poll loop", guest_idle_poll_exit);
  for (std::size_t i = 0; i < host.its.size(); ++i) its_.emplace_back(fmt::format("its{}.sgir", i), kWaitResolution);
  if (host.latency.pairs.empty()) {
    c2c_fast_ = true;
    nodes_ = static_cast<std::size_t>(host.nodes);
    node_c2c_.resize(nodes_ * nodes_);
    for (int a = 0; a < host.nodes; ++a)
      for (int b = 0; b < host.nodes; ++b)
        node_c2c_[static_cast<std::size_t>(a) * nodes_ + static_cast<std::size_t>(b)] = sim::from_ns(host.node_latency_ns(a, b));
    if (host.latency.smt_ns) smt_ = sim::from_ns(*host.latency.smt_ns);
  }
  out_.delivery_by_tag.resize(cfg_.delivery_tags);
  out_.per_sender_call.resize(agents_.size());
}

RunOutput Core::run() {
  for (Agent& g : agents_) {
    if (g.prog) {
      schedule_step(g, Ps{0});
    } else {
      g.phase = Phase::Done;
      go_idle(g, Ps{0});
    }
  }
  if (cfg_.warmup == 0) begin_window(Ps{0});
  sim_.run();
  if (!stopped_) window_end_ = std::max(sim_.now(), window_start_);
  const Ps end = window_end_;

  // Conservation at the end: requests still queued (CSDs) or in flight (raw IPIs), IPIs in flight.
  boundary(cons_);
  out_.conservation = cons_;
  // The window's own balance (vm_run.h, Counters): what crossed its start and end.
  for (const auto& [name, n] : {std::pair<const char*, std::uint64_t>{"ipis_sent", cons_.ipis_sent - at_start_.ipis_sent},
                                {"ipis_in_flight_at_start", at_start_.ipis_in_flight},
                                {"ipis_in_flight_at_end", cons_.ipis_in_flight},
                                {"requests", cons_.requests - at_start_.requests},
                                {"requests_lost", cons_.lost_requests - at_start_.lost_requests},
                                {"requests_pending_at_start", at_start_.queued_at_end},
                                {"requests_pending_at_end", cons_.queued_at_end}})
    counters_.add(counters_.id(name), n);

  // Resources.
  auto report = [&](const std::string& name, std::string_view kind, const sim::ResourceStats& s) {
    ResourceReport r;
    r.name = name;
    r.kind = kind;
    r.utilisation = s.utilisation;
    r.wait_mean = s.wait_mean_ps / 1000.0;
    r.wait_p99 = s.wait_p99_ps / 1000.0;
    r.arrivals = s.arrivals;
    r.little_l = s.l_time_average;
    r.little_lambda_w = s.lambda_per_ps * s.w_mean_ps;
    r.little_carried = s.carried;
    r.little_exact = s.little_exact;
    out_.resources.push_back(std::move(r));
  };
  for (const Agent& g : agents_) {
    const auto q = g.csdq.stats(end);
    if (q.arrivals) report(g.csdq.name(), "call_single_queue", q);
  }
  for (const Agent& g : agents_) {
    const auto s = g.irq.stats(end);
    if (s.arrivals) report(g.irq.name(), "interrupts", s);
  }
  {
    std::vector<std::pair<int, std::size_t>> order(hv_index_.begin(), hv_index_.end());
    std::sort(order.begin(), order.end());
    for (const auto& [pcpu, i] : order) {
      const auto s = pcpu_hv_[i].stats(end);
      if (s.arrivals) report(pcpu_hv_[i].name(), "hypervisor", s);
    }
  }
  for (const auto& r : its_) {
    const auto s = r.stats(end);
    if (s.arrivals) report(r.name(), "its_sgir", s);
  }
  // The mechanism's own (an ITS's command queue and its->lock), each kind after the core's kinds
  // that sort before it: the list stays sorted by kind, in each kind in the order reported.
  for (const MechanismResource& m : mech_.resources(end))
    if (m.stats.arrivals) report(m.name, m.kind, m.stats);
  std::stable_sort(out_.resources.begin(), out_.resources.end(),
                   [](const ResourceReport& a, const ResourceReport& b) { return a.kind < b.kind; });

  const double window_ps = static_cast<double>((end - window_start_).v);
  out_.throughput.window_ns = window_ps / 1000.0;
  if (window_ps > 0) {
    out_.throughput.ipis_per_second = static_cast<double>(ipis_taken_window_) / window_ps * 1e12;
    out_.throughput.calls_per_second = static_cast<double>(ops_done_window_) / window_ps * 1e12;
  }
  out_.counters = counters_.to_map();
  out_.notes = notes_;
  out_.events = sim_.events_run();
  out_.event_slots = sim_.slot_capacity();
  out_.measured_iterations = measured_iterations_;
  out_.lost_iterations = lost_iterations_;
  for (std::size_t i = 0; i < agents_.size(); ++i)
    out_.per_sender_call[i] = {agents_[i].calls ? agents_[i].call_sum / static_cast<double>(agents_[i].calls) : 0.0,
                               agents_[i].calls};
  return std::move(out_);
}

void Core::boundary(Conservation& c) const {
  c.queued_at_end = raw_outstanding_;
  c.ipis_in_flight = 0;
  for (const Agent& g : agents_) {
    c.queued_at_end += g.queue.size();
    c.ipis_in_flight += g.inbound;
  }
}

void Core::begin_window(Ps now) {
  measuring_ = true;
  at_start_ = cons_;
  boundary(at_start_);
  window_start_ = now;
  bd_.reset();
  counters_.reset();
  for (Agent& g : agents_) {
    g.csdq.reset_stats(now);
    g.irq.reset_stats(now);
  }
  for (auto& r : pcpu_hv_) r.reset_stats(now);
  for (auto& r : its_) r.reset_stats(now);
  mech_.begin_window(now);
  ipis_taken_window_ = 0;
  ops_done_window_ = 0;
}

void Core::mark(Agent& g, Ps now) {
  ++marks_;
  if (obs_) [[unlikely]] observe_mark(now, g.cpu);
  if (cfg_.iterations > 0 && marks_ == cfg_.warmup + 1 && !measuring_) begin_window(now);
  if (g.mark_at != sim::kNever && g.mark_measured) {
    if (g.iteration_lost) ++lost_iterations_;
    else out_.iteration.record(now - g.mark_at);
    ++measured_iterations_;
  }
  g.mark_at = now;
  g.mark_measured = measuring_;
  g.iteration_lost = false;
  if (cfg_.iterations > 0 && marks_ == cfg_.warmup + cfg_.iterations + 1) {
    window_end_ = now;
    stopped_ = true;
    sim_.stop();
  }
}

void Core::schedule_step(Agent& g, Ps t) {
  if (g.step_at <= t) return;  // the earlier step re-evaluates and reschedules (kNever: none scheduled)
  g.step_at = t;
  const std::uint32_t gen = ++g.step_gen;
  const unsigned a = g.cpu;
  sim_.at(t, [this, a, gen](sim::Simulator&) {
    Agent& ag = agents_[a];
    if (ag.step_gen != gen) return;  // superseded by an earlier reschedule
    ag.step_at = sim::kNever;
    step(a);
  });
}

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

void Core::observe_step(unsigned cpu, const sim::Resource* r, Ps asked, Ps start, Ps end, sim::Breakdown::StepId id) {
  const std::string_view label = bd_.name(id);
  if (r) obs_->on_resource(r->name(), asked, start, end, label);
  if (cpu != kNoCpu) obs_->on_send_step(cpu, start, end, label);
}

// ------------------------------------------------------------------------------------------------
// The program.

void Core::step(unsigned a) {
  Agent& g = agents_[a];
  const Ps now = sim_.now();
  if (g.in_handler()) {
    g.deferred = true;
    return;
  }
  if (now < g.irq_off_until) {
    schedule_step(g, g.irq_off_until);
    return;
  }
  switch (g.phase) {
    case Phase::Start:
      next_op(g, now);
      return;
    case Phase::Compute:
    case Phase::CallQueue:
    case Phase::WakeQueue: {
      const Ps due = g.base_due + g.stolen;
      if (now < due) {
        schedule_step(g, due);
        return;
      }
      if (g.phase == Phase::Compute) finish_op(g, now);
      else if (g.phase == Phase::CallQueue) do_call(g, now);
      else do_wake(g, now);
      return;
    }
    case Phase::Waiting: {
      if (g.pending_acks > 0) return;  // notify_ack schedules us when the last ack is seen
      const Ps due = std::max(g.ack_max, g.send_end);
      if (now < due) {
        schedule_step(g, due);
        return;
      }
      finish_op(g, now);
      return;
    }
    case Phase::SendDone:
      if (now < g.send_end) {
        schedule_step(g, g.send_end);
        return;
      }
      finish_op(g, now);
      return;
    case Phase::Sleep:
      if (now < g.op.time) {
        schedule_step(g, g.op.time);
        return;
      }
      move(g, VcpuState::Running);
      g.idle_from = sim::kNever;
      finish_op(g, now);
      return;
    case Phase::Blocked:
      if (g.task != TaskState::Woken) return;  // resumed by the wake entry
      g.task = TaskState::Runnable;
      finish_op(g, now);
      return;
    case Phase::WaitIdle: {
      Agent& t = agents_[static_cast<std::size_t>(g.op.target)];
      if (!idle_now(t)) {
        if (std::find(t.idle_waiters.begin(), t.idle_waiters.end(), g.cpu) == t.idle_waiters.end())
          t.idle_waiters.push_back(g.cpu);
        return;
      }
      const Ps ready = std::max(now, t.idle_from == sim::kNever ? now : t.idle_from);
      if (now < ready) {
        schedule_step(g, ready);
        return;
      }
      finish_op(g, now);
      return;
    }
    case Phase::Done:
      return;
  }
}

void Core::next_op(Agent& g, Ps now) {
  for (;;) {
    if (stopped_) return;
    ProgramCtx ctx{g.cpu, now, &rng_};
    g.op = g.prog->next(ctx);
    if (g.op.code == Op::Code::Mark) {
      mark(g, now);
      continue;
    }
    begin_op(g, now);
    return;
  }
}

void Core::begin_op(Agent& g, Ps now) {
  g.op_start = now;
  g.op_measured = measuring_;
  g.stolen = Ps{};
  switch (g.op.code) {
    case Op::Code::Compute: {
      Ps d = g.op.time;
      if (g.op.step >= 0) {
        const PlanStep& s = cfg_.compute_steps.at(static_cast<std::size_t>(g.op.step));
        d = s.sample(rng_);
        bd_.add(s.id, d);
      }
      g.phase = Phase::Compute;
      g.base_due = now + d;
      if (g.op.host) g.irq_off_until = std::max(g.irq_off_until, g.base_due);  // out of the guest: interrupts wait
      schedule_step(g, g.base_due);
      return;
    }
    case Op::Code::Call: {
      if (!cfg_.uses_calls) throw std::logic_error("vm_run: Op::Call without RunConfig::uses_calls");
      ++g.serial;
      const auto n = static_cast<std::uint32_t>(g.op.targets.size());
      Ps d{};
      if (n) {
        d = csd_queue_.sample(rng_) * n;
        bd_.add(csd_queue_.id, d);
      }
      g.phase = Phase::CallQueue;
      g.base_due = now + d;
      schedule_step(g, g.base_due);
      return;
    }
    case Op::Code::Ipi:
      ++g.serial;
      do_ipi(g, now);
      return;
    case Op::Code::Wake: {
      if (!cfg_.uses_wakeups) throw std::logic_error("vm_run: Op::Wake without RunConfig::uses_wakeups");
      const Ps d = ttwu_queue_.sample(rng_);
      bd_.add(ttwu_queue_.id, d);
      g.phase = Phase::WakeQueue;
      g.base_due = now + d;
      schedule_step(g, g.base_due);
      return;
    }
    case Op::Code::Block: {
      if (!cfg_.uses_wakeups) throw std::logic_error("vm_run: Op::Block without RunConfig::uses_wakeups");
      if (g.task == TaskState::WokenEarly) {  // woken before it slept: the task does not block
        g.task = TaskState::Runnable;
        finish_op(g, now);
        return;
      }
      g.task = TaskState::Blocked;
      g.phase = Phase::Blocked;
      const Ps d = context_switch_.sample(rng_);
      bd_.add(context_switch_.id, d);
      go_idle(g, now + d);
      return;
    }
    case Op::Code::WaitIdle:
      g.phase = Phase::WaitIdle;
      step(g.cpu);
      return;
    case Op::Code::SleepUntil:
      g.phase = Phase::Sleep;
      if (g.op.time > now) {
        go_idle(g, now);
        schedule_step(g, g.op.time);
      } else {
        finish_op(g, now);
      }
      return;
    case Op::Code::Stop:
      g.phase = Phase::Done;
      go_idle(g, now);
      return;
    case Op::Code::Mark:
      return;
  }
}

void Core::finish_op(Agent& g, Ps now) {
  const Op::Code c = g.op.code;
  if ((c == Op::Code::Call || c == Op::Code::Ipi || c == Op::Code::Wake) && g.op_measured && measuring_) {
    ++ops_done_window_;
    if (g.op.wait && !g.op_lost) {
      const Ps span = now - g.op_start;
      out_.call.record(span);
      g.call_sum += static_cast<double>(span.v);
      ++g.calls;
      if (g.op_sent) out_.delivery.record(g.last_entry - g.send_start);
    }
  }
  if (g.op_lost) g.iteration_lost = true;
  g.op_lost = false;
  g.op_sent = false;
  g.phase = Phase::Start;
  next_op(g, now);
}

// ------------------------------------------------------------------------------------------------
// Sends.

std::shared_ptr<const SendPlan> Core::plan_for(unsigned sender, std::span<const unsigned> targets, Addressing a,
                                               std::uint32_t vector) {
  key_.clear();
  key_.push_back(sender);
  key_.push_back(vector);
  key_.push_back(static_cast<std::uint32_t>(a));
  for (unsigned t : targets) key_.push_back(t);
  auto it = plans_.find(key_);
  if (it != plans_.end()) return it->second;
  // Bounded memory (plans are pure, so forgetting them changes no result): at most 8192 plans and
  // kPlanCacheSteps steps in all, so a storm over thousands of vCPUs with large varying target sets
  // keeps its cache to a few tens of MB.
  if (plans_.size() >= 8192 || plan_cache_steps_ >= kPlanCacheSteps) {
    plans_.clear();
    plan_cache_steps_ = 0;
  }
  SendRequest req;
  req.sender = sender;
  req.targets = targets;
  req.addressing = a;
  req.vector = vector;
  auto plan = std::make_shared<const SendPlan>(mech_.plan(req));
  plan_cache_steps_ += plan->sender.size() + plan->deliveries.size();
  for (const PlannedDelivery& d : plan->deliveries) plan_cache_steps_ += d.path.size();
  for (const auto& n : plan->notes)
    if (notes_.size() < 8 && std::find(notes_.begin(), notes_.end(), n) == notes_.end()) notes_.push_back(n);
  return plans_.emplace(key_, std::move(plan)).first->second;
}

void Core::enqueue(Agent& g, unsigned target, const Csd& e, Ps now, std::vector<unsigned>& need) {
  Agent& t = agents_[target];
  ++cons_.requests;
  const bool empty = t.queue.empty();
  t.queue.push_back(e);
  t.csdq.enter(now);
  if (!empty) {
    ++cons_.coalesced;
    counters_.add(c_coalesced_, 1);
    if (cfg_.observer) cfg_.observer->on_request(now, g.cpu, target, Served::Coalesced, t.queue_ipi, {});
    return;
  }
  ++cons_.own_ipi;
  need.push_back(target);
}

bool Core::skip_polling(Agent& g, unsigned target, Ps now) {
  // send_call_function_single_ipi under skip-if-polling: set_nr_if_polling() instead of an IPI.
  Agent& t = agents_[target];
  if (cfg_.polling != PollingPolicy::SkipIfPolling || !polling_at(t, now)) return false;
  --cons_.own_ipi;
  ++cons_.polling;
  counters_.add(c_polling_, 1);
  t.queue_ipi = kNoIpi;
  if (cfg_.observer) cfg_.observer->on_request(now, g.cpu, target, Served::Polling, kNoIpi, {});
  if (!t.need_resched) {
    t.need_resched = true;
    const Ps d = poll_exit_.sample(rng_);
    bd_.add(poll_exit_.id, d);
    const Ps seen = now + c2c(g, t) + d;  // the thread-flags line, then leaving the poll loop
    t.idle_flush_scheduled = true;
    sim_.at(seen, [this, target](sim::Simulator&) { idle_flush(target); });
  }
  return true;
}

void Core::do_call(Agent& g, Ps now) {
  need_.clear();
  Csd e;
  e.sender = g.cpu;
  e.serial = g.serial;
  e.func = g.op.func;
  e.wait = g.op.wait;
  e.queued = now;
  if (obs_) [[unlikely]] observe_queue(now, g.cpu, g.op.targets, false);
  for (unsigned t : g.op.targets) enqueue(g, t, e, now, need_);
  g.pending_acks = g.op.wait ? static_cast<std::uint32_t>(g.op.targets.size()) : 0;
  g.ack_max = g.last_entry = g.send_start = g.send_end = now;
  // smp_call_function_many_cond: one CPU to interrupt -> send_call_function_single_ipi (which may
  // skip a polling target), several -> the mask.
  if (need_.size() == 1 && skip_polling(g, need_[0], now)) need_.clear();
  if (!need_.empty()) {
    const bool one = need_.size() == 1;
    const Addressing a = one ? Addressing::One : g.op.addressing;
    const std::uint32_t vector = one && g.op.targets.size() > 1 ? cfg_.call_single_vector : g.op.vector;
    call_targets_.assign(need_.begin(), need_.end());
    auto plan = plan_for(g.cpu, call_targets_, a, vector);
    execute_send(g, now, plan, true, g.op, vector, call_targets_);
  }
  g.phase = g.op.wait ? Phase::Waiting : Phase::SendDone;
  if (g.op.wait && g.pending_acks > 0) return;
  step(g.cpu);
}

void Core::do_wake(Agent& g, Ps now) {
  Agent& t = agents_[static_cast<std::size_t>(g.op.target)];
  g.send_start = g.send_end = now;
  if (t.task != TaskState::Blocked) {
    // The task has not slept yet (or a wake entry is already queued, or has run): ttwu finds it
    // runnable.
    if (t.task == TaskState::Runnable) t.task = TaskState::WokenEarly;
  } else {
    Csd e;
    e.sender = g.cpu;
    e.serial = g.serial;
    e.wake = true;
    e.queued = now;
    e.origin = g.op_start;
    need_.clear();
    t.task = TaskState::WakeQueued;  // one wake entry per sleep
    if (obs_) [[unlikely]] observe_queue(now, g.cpu, std::span<const unsigned>(&t.cpu, 1), true);
    enqueue(g, t.cpu, e, now, need_);
    if (need_.size() == 1 && skip_polling(g, need_[0], now)) need_.clear();
    if (!need_.empty()) {
      call_targets_.assign(need_.begin(), need_.end());
      auto plan = plan_for(g.cpu, call_targets_, Addressing::One, g.op.vector);
      execute_send(g, now, plan, true, g.op, g.op.vector, call_targets_);
    }
  }
  g.phase = Phase::SendDone;
  step(g.cpu);
}

void Core::do_ipi(Agent& g, Ps now) {
  g.send_start = g.send_end = g.ack_max = g.last_entry = now;
  std::span<const unsigned> ts = g.op.targets;
  g.pending_acks = g.op.wait ? static_cast<std::uint32_t>(ts.size()) : 0;
  cons_.requests += ts.size();
  cons_.own_ipi += ts.size();
  auto plan = plan_for(g.cpu, ts, g.op.addressing, g.op.vector);
  execute_send(g, now, plan, false, g.op, g.op.vector, ts);
  g.phase = g.op.wait ? Phase::Waiting : Phase::SendDone;
  if (g.op.wait && g.pending_acks > 0) return;
  step(g.cpu);
}

template <bool kObserved>
Ps Core::send_steps(Agent& g, Ps t, const std::shared_ptr<const SendPlan>& plan, bool call, const Op& op,
                    std::uint32_t vector, std::span<const unsigned> asked) {
  const SendPlan& p = *plan;
  g.send_start = t;
  g.op_sent = true;
  counters_.add(c_sends_, 1);
  for (const auto& [id, n] : p.counters) counters_.add(id, n);
  PendingIrq base;
  base.vector = vector;
  base.sender = g.cpu;
  base.serial = g.serial;
  base.body = call ? kFlushBody : op.func;
  base.tag = op.tag;
  base.measured = g.op_measured;
  base.send_start = t;
  auto& hv = pcpu_hv_[g.hv];
  std::size_t next = 0;
  const std::size_t n = p.sender.size();
  for (std::size_t k = 0; k < n;) {
    if (p.sender[k].lane == Lane::Exit) {
      // A run of exit-handling steps: one request on the pCPU's hypervisor.
      std::size_t e = k;
      exit_run_.clear();
      Ps sum{};
      while (e < n && p.sender[e].lane == Lane::Exit) {
        const Ps d = p.sender[e].sample(rng_);
        exit_run_.push_back(d);
        sum += d;
        bd_.add(p.sender[e].id, d);
        ++e;
      }
      Ps tt = hv.request(t, sum).start;
      for (std::size_t j = k; j < e; ++j) {
        tt += exit_run_[j - k];
        if constexpr (kObserved)
          observe_step(g.cpu, &hv, j == k ? t : tt - exit_run_[j - k], tt - exit_run_[j - k], tt, p.sender[j].id);
        while (next < p.deliveries.size() && p.deliveries[next].after_sender_step <= j) {
          PendingIrq irq = base;
          launch(plan, static_cast<std::uint32_t>(next), tt, irq);
          ++next;
        }
      }
      t = tt;
      k = e;
      continue;
    }
    const Ps d = p.sender[k].sample(rng_);
    t += d;
    bd_.add(p.sender[k].id, d);
    if constexpr (kObserved) observe_step(g.cpu, nullptr, t - d, t - d, t, p.sender[k].id);
    while (next < p.deliveries.size() && p.deliveries[next].after_sender_step <= k) {
      launch(plan, static_cast<std::uint32_t>(next), t, base);
      ++next;
    }
    ++k;
  }
  while (next < p.deliveries.size()) launch(plan, static_cast<std::uint32_t>(next++), t, base);
  g.send_end = t;
  g.irq_off_until = std::max(g.irq_off_until, t);
  if (g.op_measured && measuring_) out_.send_cost.record(t - g.send_start);
  if (cfg_.observer) cfg_.observer->on_send(g.send_start, t, g.cpu, vector, asked);
  // Intended targets the mechanism lost.
  for (const LostTarget& l : p.lost) {
    counters_.add(c_lost_, 1);
    ++cons_.ipis_lost;
    ++cons_.ipis_sent;
    g.op_lost = true;
    if (l.cpu >= 0 && static_cast<std::size_t>(l.cpu) < agents_.size()) {
      if (call) {
        withdraw(agents_[static_cast<std::size_t>(l.cpu)], g.cpu, g.serial, g.send_start, l.reason);
      } else {
        // The raw IPI's request had its own IPI, which was lost: the request is lost, not served.
        ++cons_.lost_requests;
        --cons_.own_ipi;
        if (cfg_.observer) cfg_.observer->on_request(g.send_start, g.cpu, static_cast<unsigned>(l.cpu), Served::Lost, kNoIpi, l.reason);
      }
      if (op.wait && g.pending_acks > 0) --g.pending_acks;
    }
  }
  return t;
}

void Core::withdraw(Agent& target, unsigned sender, std::uint32_t serial, Ps now, const std::string& reason) {
  // The sender's CSD (and anything queued behind it: nobody will send that queue an IPI) is lost.
  auto& q = target.queue;
  auto it = std::find_if(q.begin(), q.end(), [&](const Csd& c) { return c.sender == sender && c.serial == serial; });
  if (it == q.end()) return;
  const std::size_t from = static_cast<std::size_t>(it - q.begin());
  for (std::size_t i = from; i < q.size(); ++i) {
    const Csd& c = q[i];
    target.csdq.withdraw(now, c.queued);
    ++cons_.lost_requests;
    // The request was counted as own_ipi (ours) or coalesced (behind ours): it is lost instead.
    if (i == from) --cons_.own_ipi;
    else --cons_.coalesced;
    if (cfg_.observer)
      cfg_.observer->on_request(now, c.sender, target.cpu, Served::Lost, kNoIpi,
                                i == from ? std::string_view(reason) : std::string_view("queued behind a lost IPI"));
    if (c.sender != sender && c.wait) {
      Agent& s = agents_[c.sender];
      if (s.serial == c.serial && s.pending_acks > 0) {
        s.op_lost = true;
        notify_ack(c.sender, c.serial, now);
      }
    }
    if (c.wake) {
      agents_[target.cpu].task = TaskState::Blocked;
    }
  }
  q.resize(from);
}

void Core::launch(const std::shared_ptr<const SendPlan>& plan, std::uint32_t d, Ps t, PendingIrq irq) {
  const PlannedDelivery& pd = plan->deliveries[d];
  irq.intended = pd.intended;
  if (pd.intended) {
    irq.ipi = ++ipi_serial_;
    ++cons_.ipis_sent;
    ++agents_[static_cast<std::size_t>(pd.target_cpu)].inbound;
    if (irq.body != kFlushBody) ++raw_outstanding_;
    if (cfg_.observer)
      cfg_.observer->on_request(t, irq.sender, static_cast<unsigned>(pd.target_cpu), Served::OwnIpi, irq.ipi, {});
    if (irq.body == kFlushBody) agents_[static_cast<std::size_t>(pd.target_cpu)].queue_ipi = irq.ipi;
  } else {
    ++cons_.misdelivered;
    counters_.add(c_misdelivered_, 1);
    if (irq.body != kFlushBody) irq.body = kStrayBody;
  }
  const auto target = static_cast<unsigned>(pd.target_cpu);
  for (std::uint32_t k = 0; k < pd.path.size(); ++k) {
    const PlanStep& s = pd.path[k];
    if (s.lane == Lane::ItsPort && s.its >= 0 && static_cast<std::size_t>(s.its) < its_.size()) {
      const std::uint32_t slot = fly(irq, target);
      InFlight& f = flight_[slot];
      f.plan = plan;
      f.d = d;
      f.k = k;
      sim_.at(t, [this, slot](sim::Simulator&) { path_continue(slot); });
      return;
    }
    const Ps dd = s.sample(rng_);
    t += dd;
    bd_.add(s.id, dd);
  }
  const std::uint32_t slot = fly(irq, target);
  sim_.at(t, [this, slot](sim::Simulator&) { land(slot); });
}

std::uint32_t Core::fly(const PendingIrq& irq, unsigned target) {
  std::uint32_t slot;
  if (flight_free_.empty()) {
    slot = static_cast<std::uint32_t>(flight_.size());
    flight_.emplace_back();
  } else {
    slot = flight_free_.back();
    flight_free_.pop_back();
  }
  flight_[slot].irq = irq;
  flight_[slot].target = target;
  return slot;
}

void Core::land(std::uint32_t slot) {
  const PendingIrq irq = flight_[slot].irq;
  const unsigned target = flight_[slot].target;
  flight_free_.push_back(slot);
  arrive(target, irq);
}

void Core::path_continue(std::uint32_t slot) {
  InFlight& f = flight_[slot];
  const PlannedDelivery& pd = f.plan->deliveries[f.d];
  Ps t = sim_.now();
  {
    const PlanStep& s = pd.path[f.k];
    const Ps dd = s.sample(rng_);
    sim::Resource& its = its_[static_cast<std::size_t>(s.its)];
    t = obs_ ? observed_request(its, t, dd, s.id) : its.request(t, dd).end;
    bd_.add(s.id, dd);
  }
  for (std::uint32_t j = f.k + 1; j < pd.path.size(); ++j) {
    const PlanStep& s = pd.path[j];
    if (s.lane == Lane::ItsPort && s.its >= 0 && static_cast<std::size_t>(s.its) < its_.size()) {
      f.k = j;
      sim_.at(t, [this, slot](sim::Simulator&) { path_continue(slot); });
      return;
    }
    const Ps dd = s.sample(rng_);
    t += dd;
    bd_.add(s.id, dd);
  }
  f.plan.reset();
  sim_.at(t, [this, slot](sim::Simulator&) { land(slot); });
}

void Core::notify_entry(unsigned sender, std::uint32_t serial, Ps entry) {
  Agent& s = agents_[sender];
  if (s.serial == serial) s.last_entry = std::max(s.last_entry, entry);
}

void Core::notify_ack(unsigned sender, std::uint32_t serial, Ps visible) {
  Agent& s = agents_[sender];
  if (s.serial != serial || s.pending_acks == 0) return;
  s.ack_max = std::max(s.ack_max, visible);
  if (--s.pending_acks == 0 && s.phase == Phase::Waiting) schedule_step(s, std::max(s.ack_max, s.send_end));
}

// ------------------------------------------------------------------------------------------------
// Interrupts.

void Core::arrive(unsigned a, const PendingIrq& in) {
  Agent& g = agents_[a];
  const Ps now = sim_.now();
  PendingIrq irq = in;
  irq.arrived = now;
  // The same vector already pending (not yet taken) -> one interrupt (the IRR / SGI pending bit).
  for (std::size_t i = g.pending_head; i < g.pending.size(); ++i)
    if (g.pending[i].vector == irq.vector && g.pending[i].body == irq.body) {
      irq.merged = true;
      break;
    }
  if (cfg_.observer) cfg_.observer->on_arrival(now, a, irq.ipi, irq.merged);
  if (obs_ && irq.merged) [[unlikely]] observe_merge(now, g, irq);
  if (!irq.merged) g.irq.arrive(now);
  g.pending.push_back(irq);
  if (g.in_handler() || g.take_scheduled) return;
  if (now >= g.irq_off_until) {
    take(a);
    return;
  }
  g.take_scheduled = true;
  sim_.at(g.irq_off_until, [this, a](sim::Simulator&) {
    agents_[a].take_scheduled = false;
    take(a);
  });
}

void Core::take(unsigned a) {
  Agent& g = agents_[a];
  const Ps now = sim_.now();
  if (g.in_handler() || g.take_scheduled || g.pending_head == g.pending.size()) return;
  if (now < g.irq_off_until) {
    g.take_scheduled = true;
    sim_.at(g.irq_off_until, [this, a](sim::Simulator&) {
      agents_[a].take_scheduled = false;
      take(a);
    });
    return;
  }
  const PendingIrq irq = g.pending[g.pending_head++];
  // Copies of it (same vector and body) that merged while it was pending are served with it.
  served_.clear();
  for (std::size_t i = g.pending_head; i < g.pending.size(); ++i)
    if (g.pending[i].vector == irq.vector && g.pending[i].body == irq.body) served_.push_back(i);
  const bool halted = g.state == VcpuState::Halted && irq.arrived >= g.idle_from;
  const ArrivalSteps& arr = mech_.arrival();
  const Ps start = run_steps(halted ? arr.halted : arr.running, now, g.hv);
  if (halted) g.idle_from = sim::kNever;
  g.resume = g.state;
  move(g, VcpuState::Interrupt);
  g.handler_start = start;
  const Ps d_entry = irq_entry_.sample(rng_);
  bd_.add(irq_entry_.id, d_entry);
  const Ps entry = start + d_entry;
  const Ps t0 = run_steps(arr.prologue, entry, g.hv);

  auto account = [&](const PendingIrq& r, bool merged) {
    if (!r.intended) return;
    if (g.inbound) --g.inbound;
    if (merged) ++cons_.ipis_merged;
    else ++cons_.ipis_delivered;
    if (measuring_) {
      ++ipis_taken_window_;
      counters_.add(c_ipis_, 1);
    }
    if (r.body != kFlushBody) {
      if (raw_outstanding_) --raw_outstanding_;
      ++cons_.served;
      if (measuring_) counters_.add(c_deliveries_, 1);
      if (r.measured && measuring_ && r.tag < out_.delivery_by_tag.size())
        out_.delivery_by_tag[r.tag].record(entry - r.send_start);
      notify_entry(r.sender, r.serial, entry);
    }
  };
  account(irq, false);
  for (std::size_t i : served_) account(g.pending[i], true);

  if (irq.body == kFlushBody) {
    // llist_del_all at t0: an event, so CSDs queued until then are taken too.
    g.svc_entry = entry;
    g.svc_ipi = irq.ipi;
    remove_served(g);
    sim_.at(t0, [this, a](sim::Simulator&) { flush(a); });
    return;
  }
  // A raw interrupt: its body runs inline.
  Ps t = t0;
  if (irq.body != kStrayBody) {
    const HandlerBody& body = cfg_.ipi_bodies.at(irq.body);
    if (body.sets_flag) t += c2c(agents_[irq.sender], g);  // the flag's line comes from the sender first
    t = run_steps(body.steps, t, g.hv);
    if (body.sets_flag) {
      if (irq.intended) notify_ack(irq.sender, irq.serial, t + c2c(g, agents_[irq.sender]));
      for (std::size_t i : served_) {
        const PendingIrq& r = g.pending[i];
        if (r.intended) notify_ack(r.sender, r.serial, t + c2c(g, agents_[r.sender]));
      }
    }
  }
  remove_served(g);
  t = run_steps(tail_, t, g.hv);
  g.irq.serve(start, t);
  if (cfg_.observer) cfg_.observer->on_handler(a, irq.ipi, start, entry, t);
  handler_done(g, t, start);
}

void Core::remove_served(Agent& g) {
  if (served_.empty()) return;
  std::size_t w = g.pending_head, k = 0;
  for (std::size_t i = g.pending_head; i < g.pending.size(); ++i) {
    if (k < served_.size() && served_[k] == i) {
      ++k;
      continue;
    }
    g.pending[w++] = g.pending[i];
  }
  g.pending.resize(w);
  served_.clear();
}

Ps Core::run_queue(Agent& g, Ps t, Ps taken_at, Ps entry, bool* woke) {
  flushing_.clear();
  flushing_.swap(g.queue);
  g.queue_ipi = kNoIpi;
  if (measuring_) counters_.add(c_deliveries_, flushing_.size());
  g.csdq.leave_all(taken_at, flushing_.begin(), flushing_.end(), [](const Csd& e) { return e.queued; });
  cons_.served += flushing_.size();
  for (const Csd& e : flushing_) {
    Agent& s = agents_[e.sender];
    if (e.wake) {
      const Ps d = ttwu_pending_.sample(rng_);
      bd_.add(ttwu_pending_.id, d);
      t += d;
      *woke = true;
      g.wake_origin = e.origin;
      continue;
    }
    notify_entry(e.sender, e.serial, entry);
    t += c2c(s, g);  // the CSD's line, written by the sender
    t = run_steps(cfg_.csd_functions.at(e.func).steps, t, g.hv);
    const Ps d = csd_unlock_.sample(rng_);
    bd_.add(csd_unlock_.id, d);
    t += d;
    if (e.wait) notify_ack(e.sender, e.serial, t + c2c(g, s));
  }
  flushing_.clear();
  return t;
}

void Core::flush(unsigned a) {
  Agent& g = agents_[a];
  const Ps f = sim_.now();
  bool woke = false;
  Ps t = run_queue(g, f, f, g.svc_entry, &woke);
  t = run_steps(tail_, t, g.hv);
  g.irq.serve(g.handler_start, t);
  if (cfg_.observer) cfg_.observer->on_handler(a, g.svc_ipi, g.handler_start, g.svc_entry, t);
  if (woke) g.task = TaskState::Woken;
  handler_done(g, t, g.handler_start);
}

void Core::idle_flush(unsigned a) {
  Agent& g = agents_[a];
  const Ps now = sim_.now();
  g.idle_flush_scheduled = false;
  if (g.in_handler()) {  // seen when the handler returns to the idle loop
    g.idle_flush_deferred = true;
    return;
  }
  if (now < g.irq_off_until) {
    g.idle_flush_scheduled = true;
    sim_.at(g.irq_off_until, [this, a](sim::Simulator&) { idle_flush(a); });
    return;
  }
  g.need_resched = false;
  // flush_smp_call_function_queue() from the idle loop (interrupts off), no interrupt entry/exit.
  bool woke = false;
  const Ps t = run_queue(g, now, now, now, &woke);
  if (cfg_.observer) cfg_.observer->on_handler(a, kNoIpi, now, now, t);
  g.irq_off_until = std::max(g.irq_off_until, t);
  if (woke && g.phase == Phase::Blocked) {
    g.task = TaskState::Woken;
    leave_idle_for_task(g, t);
  } else if (g.idle()) {
    g.idle_from = t;  // back to polling
  }
  if (g.pending_head < g.pending.size() && !g.take_scheduled) {
    g.take_scheduled = true;
    sim_.at(g.irq_off_until, [this, a](sim::Simulator&) {
      agents_[a].take_scheduled = false;
      take(a);
    });
  }
  check_waiters(g);
}

void Core::handler_done(Agent& g, Ps end, Ps start) {
  const bool stealing = g.interruptible();  // as when it was taken: the phase has not changed
  move(g, g.resume);
  if (stealing && end > start) g.stolen += end - start;
  g.irq_off_until = std::max(g.irq_off_until, end);
  if (g.task == TaskState::Woken && g.phase == Phase::Blocked && is_idle(g.state)) {
    leave_idle_for_task(g, end);
  } else if (is_idle(g.state)) {
    switch (g.state) {
      case VcpuState::Halted: {
        // Back to HLT: the exit and the host descheduling the vCPU.
        const Ps e = run_steps(halt_steps_, end, g.hv);
        g.idle_from = e;
        g.irq_off_until = std::max(g.irq_off_until, e);
        break;
      }
      default:  // Polling, IdleSpin
        g.idle_from = end;
        break;
    }
  }
  if (g.idle_flush_deferred) {
    g.idle_flush_deferred = false;
    g.idle_flush_scheduled = true;
    const unsigned a = g.cpu;
    sim_.at(end, [this, a](sim::Simulator&) { idle_flush(a); });
  }
  if (g.pending_head < g.pending.size() && !g.take_scheduled) {
    g.take_scheduled = true;
    const unsigned a = g.cpu;
    sim_.at(g.irq_off_until, [this, a](sim::Simulator&) {
      agents_[a].take_scheduled = false;
      take(a);
    });
  } else if (g.pending_head == g.pending.size()) {
    g.pending.clear();
    g.pending_head = 0;
  }
  if (g.deferred) {
    g.deferred = false;
    schedule_step(g, end);
  }
  check_waiters(g);
}

void Core::go_idle(Agent& g, Ps t) {
  move(g, g.rest);
  switch (g.rest) {
    case VcpuState::Halted: {
      if (t == Ps{0}) {  // the vCPU starts in HLT
        g.idle_from = t;
        break;
      }
      const Ps e = run_steps(halt_steps_, t, g.hv);
      g.idle_from = e;
      g.irq_off_until = std::max(g.irq_off_until, e);
      break;
    }
    default:  // Polling, IdleSpin
      g.idle_from = t;
      g.irq_off_until = std::max(g.irq_off_until, t);
      break;
  }
  check_waiters(g);
}

void Core::leave_idle_for_task(Agent& g, Ps t) {
  // The idle task schedules the woken task in.
  const Ps d = context_switch_.sample(rng_);
  bd_.add(context_switch_.id, d);
  const Ps run = t + d;
  move(g, VcpuState::Running);
  g.idle_from = sim::kNever;
  g.task = TaskState::Woken;
  g.irq_off_until = std::max(g.irq_off_until, run);
  if (measuring_) out_.wake.record(run - g.wake_origin);
  schedule_step(g, run);
}

void Core::check_waiters(Agent& g) {
  if (g.idle_waiters.empty() || !idle_now(g)) return;
  std::vector<unsigned> w;
  w.swap(g.idle_waiters);
  const Ps at = std::max(sim_.now(), g.idle_from == sim::kNever ? sim_.now() : g.idle_from);
  for (unsigned s : w) schedule_step(agents_[s], at);
}

}  // namespace

RunOutput run_vm(RunConfig& config, Pricer& pricer) {
  if (!config.spec || !config.spec->host || !config.mechanism) throw std::logic_error("run_vm: incomplete RunConfig");
  if (!config.observer) config.observer = config.spec->observer;
  Core core(config, pricer);
  return core.run();
}

}  // namespace ipilab::workload
