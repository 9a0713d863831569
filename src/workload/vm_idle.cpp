// ipilab/workload/vm_idle.cpp — idle states: going idle, skip-if-polling and the idle-loop flush, waking the task, WaitIdle (vm_core.h lists the core's files).
#include "workload/vm_core.h"

namespace ipilab::workload::vm_core {

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
    // do_idle() leaves its poll loop for need_resched: after flush_smp_call_function_queue it calls
    // schedule_idle() (__schedule: pick_next_task, the idle task again) with TIF_POLLING_NRFLAG clear,
    // interrupts off, then polls again. Meanwhile a sender finds it not polling and sends an IPI.
    const Ps d = schedule_idle_.sample(rng_);
    bd_.add(schedule_idle_.id, d);
    g.idle_from = t + d;
    g.irq_off_until = std::max(g.irq_off_until, t + d);
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

void Core::go_idle(Agent& g, Ps t) {
  move(g, g.rest);
  switch (g.rest) {
    case VcpuState::Halted: {
      if (t == Ps{0}) {  // the vCPU starts in HLT
        g.idle_from = t;
        g.halt_start = t;
        break;
      }
      enter_halt(g, t);
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


void Core::enter_hlt(Agent& g, Ps t) {
  // Back to HLT: the exit and the host descheduling the vCPU (vcpu.halt_exit on its pCPU); in HLT
  // from its end, interrupts off until then.
  const Ps e = run_steps(halt_steps_, t, g.hv);
  g.idle_from = e;
  g.irq_off_until = std::max(g.irq_off_until, e);
}

}  // namespace ipilab::workload::vm_core
