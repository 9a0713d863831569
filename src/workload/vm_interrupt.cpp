// ipilab/workload/vm_interrupt.cpp — interrupts: arrival and merging, taking one, the end of its handler (vm_core.h lists the core's files).
#include "workload/vm_core.h"

namespace ipilab::workload::vm_core {

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

void Core::handler_done(Agent& g, Ps end, Ps start) {
  const bool stealing = g.interruptible();  // as when it was taken: the phase has not changed
  move(g, g.resume);
  if (stealing && end > start) g.stolen += end - start;
  g.irq_off_until = std::max(g.irq_off_until, end);
  if (g.task == TaskState::Woken && g.phase == Phase::Blocked && is_idle(g.state)) {
    leave_idle_for_task(g, end);
  } else if (is_idle(g.state)) {
    switch (g.state) {
      case VcpuState::Halted:
        enter_hlt(g, end);
        break;
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


}  // namespace ipilab::workload::vm_core
