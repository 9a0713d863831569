// ipilab/workload/program.h — what a vCPU runs: a program of operations.
//
// Every vCPU of the simulated VM is an agent running a Program (vm_run.h executes it). A program is
// a generator: the core asks for the next operation when the previous one is done, so a program of
// a million iterations holds its loop counter, not a million operations (memory flat in iterations).
// Workload generators (smp_call_function_single, ipi_hw, multicast, kick, storm, wakeup) and recorded
// traces (replay) are program sources; one driver runs them all.
//
// Operations, in Linux's terms:
//   Mark        an iteration starts here (the core counts iterations globally for warm-up and the
//               end of the run, and times each agent's mark-to-mark span)
//   Compute     guest work for a time (or one priced step); interrupts are taken meanwhile and steal
//               their time from it. With `host` set it is host work on the vCPU's behalf instead
//               (e.g. KVM's ITS commands and their completion wait): the vCPU is out of the guest, so
//               interrupts reaching it stay pending until it ends
//   Call        smp_call_function_single / _many(targets, func, wait): queue one CSD per target
//               (guest.csd_queue each), llist_add to the target's call_single_queue — a target whose
//               queue was not empty gets no IPI of its own (Linux __smp_call_single_queue) — send
//               the IPI to the others through the mechanism (one target: send_call_function_single_ipi,
//               which skips a polling target under the skip-if-polling policy), then, with `wait`,
//               spin in csd_lock_wait until every CSD is released
//   Ipi         one IPI with a handler body of the workload's (micro-bench's SGI, a PV kick, a
//               replayed vector), optionally waiting for the handler's flag (irq_received)
//   Wake        try_to_wake_up of the task blocked on vCPU `target`: the wake entry goes through the
//               target's call_single_queue like a CSD (ttwu_queue_wakelist), so the same IPI /
//               polling rules apply; the sender does not wait
//   Block       the agent's task blocks: schedule() to idle; the program resumes after a Wake
//   WaitIdle    wait until vCPU `target` is idle again (a PV spinlock kick goes only to a waiter in
//               vcpu_halted state: pv_kick_node)
//   SleepUntil  idle until an absolute time (replay; paced storms)
//   Stop        the program is done (the agent idles from then on)
#pragma once

#include <cstdint>
#include <span>

#include "sim/rng.h"
#include "sim/time.h"
#include "workload/mechanism.h"

namespace ipilab::workload {

struct Op {
  enum class Code : std::uint8_t { Mark, Compute, Call, Ipi, Wake, Block, WaitIdle, SleepUntil, Stop };
  Code code = Code::Stop;
  Addressing addressing = Addressing::One;  ///< Call / Ipi
  bool wait = false;                        ///< Call: csd_lock_wait; Ipi: spin until the handler's flag
  bool host = false;                        ///< Compute: host work, the guest is not running (no interrupts)
  std::uint16_t func = 0;                   ///< Call: CSD function; Ipi: handler body (RunConfig tables)
  std::uint16_t tag = 0;                    ///< Ipi: which per-tag delivery histogram (replay kinds)
  std::uint32_t vector = 0;                 ///< Call / Ipi: the vector (or SGI) to send
  std::int32_t target = -1;                 ///< Wake / WaitIdle
  std::int32_t step = -1;                   ///< Compute: index into RunConfig::compute_steps, or -1
  sim::Ps time{};                           ///< Compute: duration (step == -1); SleepUntil: absolute time
  std::span<const unsigned> targets;        ///< Call / Ipi: ascending guest CPUs, without self;
                                            ///<   the storage belongs to the program and must outlive the op

  static Op of(Code c) {
    Op o;
    o.code = c;
    return o;
  }
  static Op mark() { return of(Code::Mark); }
  static Op stop() { return of(Code::Stop); }
  static Op compute(sim::Ps t) {
    Op o = of(Code::Compute);
    o.time = t;
    return o;
  }
  /// Host work for `t` on the vCPU's behalf (see Compute above).
  static Op host_work(sim::Ps t) {
    Op o = compute(t);
    o.host = true;
    return o;
  }
  static Op compute_step(int step) {
    Op o = of(Code::Compute);
    o.step = step;
    return o;
  }
  /// The fields a Call and an Ipi share: `func` is the Call's function or the Ipi's handler body.
  static Op send(Code c, std::span<const unsigned> targets, std::uint32_t vector, std::uint16_t func, bool wait,
                 Addressing addressing) {
    Op o = of(c);
    o.targets = targets;
    o.vector = vector;
    o.func = func;
    o.wait = wait;
    o.addressing = addressing;
    return o;
  }
  static Op call(std::span<const unsigned> targets, std::uint32_t vector, std::uint16_t func, bool wait,
                 Addressing addressing) {
    return send(Code::Call, targets, vector, func, wait, addressing);
  }
  static Op ipi(std::span<const unsigned> targets, std::uint32_t vector, std::uint16_t body, bool wait,
                std::uint16_t tag = 0) {
    Op o = send(Code::Ipi, targets, vector, body, wait, targets.size() == 1 ? Addressing::One : Addressing::Mask);
    o.tag = tag;
    return o;
  }
  static Op wake(int target) {
    Op o = of(Code::Wake);
    o.target = target;
    return o;
  }
  static Op block() { return of(Code::Block); }
  static Op wait_idle(int target) {
    Op o = of(Code::WaitIdle);
    o.target = target;
    return o;
  }
  static Op sleep_until(sim::Ps t) {
    Op o = of(Code::SleepUntil);
    o.time = t;
    return o;
  }
};

/// What a program may look at when asked for its next operation.
struct ProgramCtx {
  unsigned cpu = 0;
  sim::Ps now{};
  sim::Rng* rng = nullptr;  ///< the run's stream (draws here shift later samples; deterministic)
};

class Program {
 public:
  virtual ~Program() = default;
  /// The next operation; called when the previous one completed. Cheap and allocation-free in the
  /// steady state.
  virtual Op next(ProgramCtx& ctx) = 0;
};

}  // namespace ipilab::workload
