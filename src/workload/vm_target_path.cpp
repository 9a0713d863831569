// ipilab/workload/vm_target_path.cpp — the path an interrupt takes into its target vCPU (target_path.h),
// entering HLT, and the two halt-polling windows (halt_poll.h) (vm_core.h lists the core's files).
#include "workload/vm_core.h"

#include "common/error.h"
#include "workload/counters.h"

namespace ipilab::workload::vm_core {

namespace {
std::uint64_t ns_between(Ps from, Ps to) {
  return to > from ? static_cast<std::uint64_t>((to - from).v / 1000) : 0;
}
}  // namespace

// Where the vCPU goes back to HLT at `t`. Without cpuidle-haltpoll: HLT at once (vcpu.halt_exit on
// its pCPU, interrupts off until it ends), in HLT from its end. With it: the guest first polls for
// its poll_limit_ns with interrupts on (an interrupt meanwhile is taken as by a running vCPU), and
// executes HLT at the window's end if nothing came (an event; halt_gen drops a stale one).
void Core::enter_halt(Agent& g, Ps t) {
  if (g.preempted) {  // back to being scheduled out: no HLT, nothing on the critical path
    g.idle_from = t;
    g.irq_off_until = std::max(g.irq_off_until, t);
    return;
  }
  g.halt_start = t;
  const ArrivalSteps& arr = mech_.arrival();
  const std::uint64_t limit = arr.guest_poll.enabled() ? g.guest_poll.limit_ns : 0;
  if (limit == 0) {
    enter_hlt(g, t);
    return;
  }
  g.idle_from = sim::kNever;  // not in HLT yet
  g.irq_off_until = std::max(g.irq_off_until, t);
  const std::uint32_t gen = ++g.halt_gen;
  const unsigned a = g.cpu;
  sim_.at(t + Ps{static_cast<std::int64_t>(limit) * 1000}, [this, a, gen](sim::Simulator&) {
    Agent& h = agents_[a];
    if (h.halt_gen != gen || h.state != VcpuState::Halted) return;  // the window ended otherwise
    enter_hlt(h, sim_.now());
    check_waiters(h);
  });
}

void Core::init_preempted() {
  if (!mech_.arrival().models_preempted)
    throw InputError(spec_.params.file().empty() ? std::string("vm.preempted") : spec_.params.file() + ": vm.preempted",
                     "this mechanism does not model a preempted target (the hosted x86 mechanisms do): leave "
                     "vm.preempted out or choose one of them");
  c_path_[static_cast<std::size_t>(TargetPath::Preempted)] = counters_.id(target_path_counter(TargetPath::Preempted));
  c_pv_flush_ = counters_.id(counters::pv_tlb_flush_skips);
  pv_flush_ = mech_.pv_tlb_flush();
}

bool Core::thread_blocked(const Agent& g, Ps t) const {
  if (g.preempted || g.state != VcpuState::Halted || g.idle_from == sim::kNever || t < g.idle_from) return false;
  const ArrivalSteps& arr = mech_.arrival();
  if (!arr.host_poll.enabled() || arr.guest_poll.enabled()) return true;
  return ns_between(g.idle_from, t) > std::min(g.host_poll.window_ns, arr.host_poll.max_ns);
}

bool Core::not_running(const Agent& g, Ps t) const { return g.preempted || thread_blocked(g, t); }

std::span<const unsigned> Core::skip_preempted(std::span<const unsigned> targets) {
  flush_targets_.clear();
  for (unsigned t : targets)
    if (agents_[t].preempted) counters_.add(c_pv_flush_, 1);
    else flush_targets_.push_back(t);
  return flush_targets_;
}

Ps Core::not_running_exit(Agent& g, const SendPlan& p, std::size_t next, std::size_t k, Ps t) {
  for (std::size_t i = next; i < p.deliveries.size() && p.deliveries[i].after_sender_step <= k; ++i) {
    if (!not_running(agents_[static_cast<std::size_t>(p.deliveries[i].target_cpu)], t)) continue;
    for (const auto& [id, n] : p.not_running_counters) counters_.add(id, n);
    return run_steps(p.not_running, t, g.hv);
  }
  return t;
}

// The steps the target pays before its handler, by its state when the interrupt is taken (`halted`:
// it is in HLT, the interrupt came after it got there); counts the path and steps the windows.
const std::vector<PlanStep>& Core::arrival_path(Agent& g, const PendingIrq& irq, bool halted) {
  const ArrivalSteps& arr = mech_.arrival();
  const TargetPath running = arr.native ? TargetPath::RunningNative
                             : arr.posted ? TargetPath::RunningGuestPosted
                                          : TargetPath::RunningGuestExit;
  if (arr.native && g.state == VcpuState::Halted) {
    g.halt_start = sim::kNever;
    count_path(halted ? TargetPath::HaltedNative : TargetPath::HaltEntry);
    return halted ? arr.halted : arr.running;
  }
  switch (g.state) {
    case VcpuState::Polling:
      count_path(TargetPath::PollingIdle);
      return arr.running;
    case VcpuState::Halted: {
      if (g.preempted) {
        count_path(TargetPath::Preempted);
        return arr.preempted;
      }
      const std::uint64_t idle_ns = g.halt_start == sim::kNever ? 0 : ns_between(g.halt_start, irq.arrived);
      if (arr.guest_poll.enabled() && g.halt_start != sim::kNever) g.guest_poll.after_idle(arr.guest_poll, idle_ns);
      ++g.halt_gen;  // the idle period ends: a pending end of the guest poll window is void
      g.halt_start = sim::kNever;
      if (!halted) {
        // In the guest's poll window (not in HLT yet), or still on its way into HLT.
        const bool guest_polling = arr.guest_poll.enabled() && g.idle_from == sim::kNever;
        count_path(guest_polling ? TargetPath::HaltedGuestPoll : TargetPath::HaltEntry);
        return arr.running;
      }
      // cpuidle-haltpoll turns the host's polling off (MSR_KVM_POLL_CONTROL, kvm_arch_no_poll).
      if (arr.host_poll.enabled() && !arr.guest_poll.enabled()) {
        const std::uint64_t halt_ns = ns_between(g.idle_from, irq.arrived);
        const std::uint64_t window = g.host_poll.poll_for(arr.host_poll);
        g.host_poll.after_halt(arr.host_poll, halt_ns);
        if (halt_ns <= window) {
          count_path(TargetPath::HaltedHostPoll);
          return arr.host_polled;
        }
      }
      count_path(TargetPath::HaltedBlocked);
      return arr.halted;
    }
    default:  // Running, IdleSpin
      if (irq.in_host) {
        count_path(TargetPath::RunningHost);
        return arr.running;
      }
      count_path(running);
      return arr.running;
  }
}

}  // namespace ipilab::workload::vm_core
