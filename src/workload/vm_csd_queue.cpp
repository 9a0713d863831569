// ipilab/workload/vm_csd_queue.cpp — the call_single_queue: CSDs and wake entries queued, withdrawn, run (vm_core.h lists the core's files).
#include "workload/vm_core.h"

namespace ipilab::workload::vm_core {

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


}  // namespace ipilab::workload::vm_core
