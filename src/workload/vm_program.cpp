// ipilab/workload/vm_program.cpp — a vCPU's program: its next step, its ops from start to finish (vm_core.h lists the core's files).
#include "workload/vm_core.h"

#include <stdexcept>

namespace ipilab::workload::vm_core {

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
    if (!g.op_lost) ++ops_done_window_;  // a call whose IPI was lost returned, but was not done
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


}  // namespace ipilab::workload::vm_core
