// ipilab/workload/vm_run.cpp — run_vm: the Core's set-up, the run and its report, the measured window
// and its marks (vm_core.h lists the core's files).
#include "workload/vm_run.h"

#include <algorithm>
#include <unordered_map>

#include <fmt/format.h>

#include "common/error.h"
#include "workload/vm_core.h"

namespace ipilab::workload {

const EnumParam<PollingPolicy> kPollingParam{
    "polling", PollingPolicy::AlwaysIpi, kPollingPolicyNames,
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
          vcpu_halt_exit,   guest_ttwu_queue,   guest_ttwu_pending,  guest_context_switch, guest_idle_poll_exit,
          vm_core::guest_schedule_idle};
}
namespace vm_core {

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
  // Every path is reported (0 when not taken), but preempted only in runs that have preempted vCPUs.
  for (std::size_t p = 0; p < kTargetPaths; ++p)
    if (static_cast<TargetPath>(p) != TargetPath::Preempted) c_path_[p] = counters_.id(target_path_counter(static_cast<TargetPath>(p)));
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
  bool any_halt = false, any_poll = false, any_preempted = false;
  agents_.resize(static_cast<std::size_t>(vm.size()));
  for (const auto& v : vm.vcpus) {
    Agent& g = agents_[static_cast<std::size_t>(v.cpu)];
    g.cpu = static_cast<unsigned>(v.cpu);
    g.pcpu = v.pcpu;
    g.node = host.cpu(v.pcpu).node;
    g.core = host.cpu(v.pcpu).core;
    g.preempted = v.initial_state == topology::VcpuState::Preempted;
    any_preempted |= g.preempted;
    g.rest = v.initial_state == topology::VcpuState::Halted || g.preempted ? VcpuState::Halted
             : v.initial_state == topology::VcpuState::Polling ? VcpuState::Polling
                                                                : VcpuState::IdleSpin;
    any_halt |= g.rest == VcpuState::Halted && !g.preempted;
    any_poll |= g.rest == VcpuState::Polling;
    // Names by concatenation, not fmt::format: a 4,096-vCPU run names 8,192 of them.
    const std::string vcpu = "vcpu" + std::to_string(v.cpu);
    g.csdq = sim::Occupancy(vcpu + ".call_single_queue", kWaitResolution);
    g.irq = sim::Resource(vcpu + ".interrupts", kWaitResolution);
    g.pending.reserve(4);
    if (!hv_index_.count(v.pcpu)) {
      hv_index_[v.pcpu] = pcpu_hv_.size();
      pcpu_hv_.emplace_back(fmt::format("pcpu{}.hypervisor", v.pcpu), kWaitResolution);
    }
    g.hv = static_cast<std::uint32_t>(hv_index_[v.pcpu]);
    if (static_cast<std::size_t>(v.cpu) < cfg_.programs.size()) g.prog = cfg_.programs[static_cast<std::size_t>(v.cpu)].get();
  }
  if (any_preempted) init_preempted();
  if (any_halt) {
    halt_exit_ = pricer_.step("target", "idle: HLT/WFI exit, the vCPU blocks", vcpu_halt_exit, 1, Lane::TargetHv);
    halt_steps_ = {halt_exit_};
  }
  tail_ = {eoi_, irq_exit_};
  if (any_poll && (cfg_.polling == PollingPolicy::SkipIfPolling || cfg_.uses_wakeups)) {
    poll_exit_ = pricer_.step("target", "polling idle: need_resched seen, leave the poll loop", guest_idle_poll_exit);
    schedule_idle_ = pricer_.step("target", "do_idle: schedule_idle() after the flush, not polling", guest_schedule_idle);
  }
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
  // The core's kinds in their sort order (call_single_queue, hypervisor, interrupts, its_sgir): the
  // sort below then finds the list sorted unless the mechanism adds a kind, and a VM of thousands of
  // vCPUs does not merge-sort thousands of reports.
  {
    std::vector<std::pair<int, std::size_t>> order(hv_index_.begin(), hv_index_.end());
    std::sort(order.begin(), order.end());
    for (const auto& [pcpu, i] : order) {
      const auto s = pcpu_hv_[i].stats(end);
      if (s.arrivals) report(pcpu_hv_[i].name(), "hypervisor", s);
    }
  }
  for (const Agent& g : agents_) {
    const auto s = g.irq.stats(end);
    if (s.arrivals) report(g.irq.name(), "interrupts", s);
  }
  for (const auto& r : its_) {
    const auto s = r.stats(end);
    if (s.arrivals) report(r.name(), "its_sgir", s);
  }
  // The mechanism's own (an ITS's command queue and its->lock), each kind after the core's kinds
  // that sort before it: the list stays sorted by kind, in each kind in the order reported.
  for (const MechanismResource& m : mech_.resources(end))
    if (m.stats.arrivals) report(m.name, m.kind, m.stats);
  const auto by_kind = [](const ResourceReport& a, const ResourceReport& b) { return a.kind < b.kind; };
  if (!std::is_sorted(out_.resources.begin(), out_.resources.end(), by_kind))
    std::stable_sort(out_.resources.begin(), out_.resources.end(), by_kind);

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

}  // namespace vm_core

RunOutput run_vm(RunConfig& config, Pricer& pricer) {
  if (!config.spec || !config.spec->host || !config.mechanism) throw std::logic_error("run_vm: incomplete RunConfig");
  if (!config.observer) config.observer = config.spec->observer;
  vm_core::Core core(config, pricer);
  return core.run();
}

}  // namespace ipilab::workload
