// ipilab/workload/vm_send.cpp — sends: cached plans, the send hook, IPIs launched along their path and landing (vm_core.h lists the core's files).
#include "workload/vm_core.h"

namespace ipilab::workload::vm_core {

const std::shared_ptr<const SendPlan>& Core::plan_for(unsigned sender, std::span<const unsigned> targets, Addressing a,
                                               std::uint32_t vector) {
  // The sender's last plan first (a unicast loop asks for the same one every time), compared with
  // its key in place (no key built), then the cache.
  Agent& g = agents_[sender];
  if (g.last_plan && g.last_plan_gen == plan_gen_) {
    const std::vector<std::uint32_t>& k = g.last_plan_key;
    if (k.size() == targets.size() + 3 && k[0] == sender && k[1] == vector && k[2] == static_cast<std::uint32_t>(a) &&
        std::equal(targets.begin(), targets.end(), k.begin() + 3))
      return *g.last_plan;
  }
  key_.clear();
  key_.push_back(sender);
  key_.push_back(vector);
  key_.push_back(static_cast<std::uint32_t>(a));
  for (unsigned t : targets) key_.push_back(t);
  auto it = plans_.find(key_);
  if (it != plans_.end()) return remember_plan(g, it->second);
  // Bounded memory (plans are pure, so forgetting them changes no result): at most 8192 plans and
  // kPlanCacheSteps steps in all, so a storm over thousands of vCPUs with large varying target sets
  // keeps its cache to a few tens of MB.
  if (plans_.size() >= 8192 || plan_cache_steps_ >= kPlanCacheSteps) {
    plans_.clear();
    ++plan_gen_;  // every vCPU's last_plan pointed into the cache
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
  return remember_plan(g, plans_.emplace(key_, std::move(plan)).first->second);
}


void Core::do_call(Agent& g, Ps now) {
  need_.clear();
  std::span<const unsigned> targets = g.op.targets;
  if (pv_flush_ && cfg_.csd_functions.at(g.op.func).tlb_flush) [[unlikely]] targets = skip_preempted(targets);
  Csd e;
  e.sender = g.cpu;
  e.serial = g.serial;
  e.func = g.op.func;
  e.wait = g.op.wait;
  e.queued = now;
  if (obs_) [[unlikely]] observe_queue(now, g.cpu, targets, false);
  for (unsigned t : targets) enqueue(g, t, e, now, need_);
  g.pending_acks = g.op.wait ? static_cast<std::uint32_t>(targets.size()) : 0;
  g.ack_max = g.last_entry = g.send_start = g.send_end = now;
  // smp_call_function_many_cond: one CPU to interrupt -> send_call_function_single_ipi (which may
  // skip a polling target), several -> the mask.
  if (need_.size() == 1 && skip_polling(g, need_[0], now)) need_.clear();
  if (!need_.empty()) {
    const bool one = need_.size() == 1;
    const Addressing a = one ? Addressing::One : g.op.addressing;
    const std::uint32_t vector = one && targets.size() > 1 ? cfg_.call_single_vector : g.op.vector;
    call_targets_.assign(need_.begin(), need_.end());
    const auto& plan = plan_for(g.cpu, call_targets_, a, vector);
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
      const auto& plan = plan_for(g.cpu, call_targets_, Addressing::One, g.op.vector);
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
  const auto& plan = plan_for(g.cpu, ts, g.op.addressing, g.op.vector);
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
        const PlanStep& s = p.sender[e];
        // A step that needs the target's thread asleep (a kick) is skipped, drawing nothing, when it
        // is not; kSkipped marks it for the observer.
        const Ps d = taken(s, t) ? s.sample(rng_) : kSkipped;
        exit_run_.push_back(d);
        if (d != kSkipped) {
          sum += d;
          bd_.add(s.id, d);
        }
        ++e;
      }
      Ps tt = hv.request(t, sum).start;
      for (std::size_t j = k; j < e; ++j) {
        const bool skipped = exit_run_[j - k] == kSkipped;
        if (skipped) exit_run_[j - k] = Ps{};
        tt += exit_run_[j - k];
        if constexpr (kObserved)
          if (!skipped)
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
    const PlanStep& s = p.sender[k];
    if (taken(s, t)) {
      const Ps d = s.sample(rng_);
      t += d;
      bd_.add(s.id, d);
      if constexpr (kObserved) observe_step(g.cpu, nullptr, t - d, t - d, t, s.id);
    }
    if (!p.not_running.empty()) [[unlikely]] t = not_running_exit(g, p, next, k, t);
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

Ps Core::execute_send(Agent& g, Ps t, const std::shared_ptr<const SendPlan>& plan, bool call, const Op& op,
                      std::uint32_t vector, std::span<const unsigned> asked) {
  return obs_ ? send_steps<true>(g, t, plan, call, op, vector, asked) : send_steps<false>(g, t, plan, call, op, vector, asked);
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


void Core::observe_step(unsigned cpu, const sim::Resource* r, Ps asked, Ps start, Ps end, sim::Breakdown::StepId id) {
  const std::string_view label = bd_.name(id);
  if (r) obs_->on_resource(r->name(), asked, start, end, label);
  if (cpu != kNoCpu) obs_->on_send_step(cpu, start, end, label);
}

}  // namespace ipilab::workload::vm_core
