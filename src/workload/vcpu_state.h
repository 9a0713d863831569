// ipilab/workload/vcpu_state.h — what one vCPU of the whole-VM core (vm_run.h) is doing, as one
// explicit state with checked transitions, and the state of the task it runs (the wakeup workload).
//
// A vCPU is in exactly one VcpuState at a time:
//   Running    running its program in the guest: computing, queueing CSDs, inside a send hook (its
//              interrupts off until the hook returns), spinning in csd_lock_wait, waiting for a
//              target to go idle (the program's Phase, vm_core.h, says which), or inside a host-side
//              Compute (a VM exit: interrupts wait for its end)
//   Interrupt  taking an interrupt: from the arrival steps (posted-interrupt injection, or the
//              wake-up from HLT) through the handler's guest.irq_exit; Vcpu::resume says where the
//              handler returns to (Running, or the idle state it interrupted)
//   Halted     idle in HLT/WFI (the VM's `halted` vCPUs). From Vcpu::idle_from on it is in HLT: an
//              interrupt wakes it through the mechanism's halted arrival steps. Before idle_from it
//              is still going back to HLT (vcpu.halt_exit on its physical CPU, interrupts off)
//   Polling    idle, polling with TIF_POLLING_NRFLAG set (the VM's `polling` vCPUs; from idle_from
//              on: before it the idle loop is still being entered)
//   IdleSpin   idle, spinning in guest code (the VM's `running` vCPUs with nothing to do, like
//              kvm-unit-tests' CPU1 waiting for the next IPI)
//
// Legal moves (vcpu_move_legal): Running -> Interrupt, Halted, Polling, IdleSpin (the program
// blocks, sleeps or stops: only into the vCPU's own idle state, Vcpu::rest); an idle state ->
// Interrupt (an interrupt is taken) or Running (a SleepUntil ends, or a wake entry run from the
// polling idle loop schedules the woken task in); Interrupt -> Running or the state it interrupted
// (the handler returns; from an idle state to Running when its wake entry woke the task). Nothing
// moves to the state it is in. A move outside these is a bug of the core: move_vcpu throws
// std::logic_error naming the vCPU and both states (always on: one table load per move).
//
// Orthogonal to the state, kept as flags of their own (vm_core.h): need_resched (set by a sender
// instead of an IPI, seen by a polling target), the events a vCPU has scheduled (its next program
// step, an interrupt to take when its interrupts come back on, an idle-loop flush), and the
// measurement of its current op and iteration.
//
// Adding a state (e.g. a preempted vCPU, a halt-polling one): add it to VcpuState before kCount,
// give it a name in vcpu_state_name, add its row (and its column in the rows that move to it) in
// kVcpuMoves, and call move_vcpu where the core enters and leaves it; vcpu_state_test checks that
// every state has a name and that the table is what this comment says.
#pragma once

#include <array>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

namespace ipilab::workload {

enum class VcpuState : std::uint8_t { Running, Interrupt, Halted, Polling, IdleSpin, kCount };
inline constexpr std::size_t kVcpuStates = static_cast<std::size_t>(VcpuState::kCount);

constexpr std::string_view vcpu_state_name(VcpuState s) {
  switch (s) {
    case VcpuState::Running: return "running";
    case VcpuState::Interrupt: return "taking an interrupt";
    case VcpuState::Halted: return "halted (HLT/WFI)";
    case VcpuState::Polling: return "polling idle";
    case VcpuState::IdleSpin: return "idle, spinning";
    case VcpuState::kCount: break;
  }
  return "?";
}

constexpr bool is_idle(VcpuState s) {
  return s == VcpuState::Halted || s == VcpuState::Polling || s == VcpuState::IdleSpin;
}

namespace detail {
// kVcpuMoves[from][to]: the legal moves (the header comment's list).
constexpr std::array<std::array<bool, kVcpuStates>, kVcpuStates> make_vcpu_moves() {
  std::array<std::array<bool, kVcpuStates>, kVcpuStates> m{};
  auto allow = [&m](VcpuState a, VcpuState b) { m[static_cast<std::size_t>(a)][static_cast<std::size_t>(b)] = true; };
  for (VcpuState idle : {VcpuState::Halted, VcpuState::Polling, VcpuState::IdleSpin}) {
    allow(VcpuState::Running, idle);
    allow(idle, VcpuState::Interrupt);
    allow(idle, VcpuState::Running);
    allow(VcpuState::Interrupt, idle);
  }
  allow(VcpuState::Running, VcpuState::Interrupt);
  allow(VcpuState::Interrupt, VcpuState::Running);
  return m;
}
inline constexpr auto kVcpuMoves = make_vcpu_moves();
}  // namespace detail

constexpr bool vcpu_move_legal(VcpuState from, VcpuState to) {
  return from < VcpuState::kCount && to < VcpuState::kCount &&
         detail::kVcpuMoves[static_cast<std::size_t>(from)][static_cast<std::size_t>(to)];
}

[[noreturn, gnu::cold, gnu::noinline]] inline void illegal_vcpu_move(unsigned cpu, VcpuState from, VcpuState to) {
  throw std::logic_error("vm_run: vCPU " + std::to_string(cpu) + " cannot move from '" +
                         std::string(vcpu_state_name(from)) + "' to '" + std::string(vcpu_state_name(to)) + "'");
}

/// Moves `state` (vCPU `cpu`'s) to `to`, checking the move is legal.
inline void move_vcpu(unsigned cpu, VcpuState& state, VcpuState to) {
  if (!vcpu_move_legal(state, to)) [[unlikely]] illegal_vcpu_move(cpu, state, to);
  state = to;
}

/// The task on a vCPU, for Op::Block / Op::Wake (try_to_wake_up and its wake list):
///   Runnable     not asleep, no wake-up outstanding
///   WokenEarly   a waker found it runnable (ttwu on a task that has not slept yet): its next Block
///                returns at once
///   Blocked      asleep (Op::Block), no wake entry queued: the next Wake queues one
///   WakeQueued   asleep, its wake entry queued on the vCPU's call_single_queue (a withdrawn entry,
///                behind a lost IPI, moves it back to Blocked)
///   Woken        the wake entry ran (sched_ttwu_pending): the task resumes at its next step
enum class TaskState : std::uint8_t { Runnable, WokenEarly, Blocked, WakeQueued, Woken };

}  // namespace ipilab::workload
