// ipilab/workload/target_path.h — the paths an interrupt takes into its target vCPU, by the state the
// target is in when the interrupt reaches it. The core (vm_target_path.cpp) picks one per interrupt
// taken, prices it with the mechanism's ArrivalSteps (mechanism.h) and counts it as
// `target_path.<name>` over the measured window:
//   running_guest_posted  running guest code (computing, spinning, in csd_lock_wait) with posted
//                         interrupts (APICv/AVIC): the PIR is set and the notification vector
//                         delivered with no exit on the target (ArrivalSteps::running)
//   running_guest_exit    the same without posted interrupts: the kick forces an exit, KVM injects
//                         the vector on the next entry (ArrivalSteps::running, posted = false)
//   running_host          in an exit (a host-side Compute): the interrupt waits for the exit's end,
//                         then is injected at the entry (vcpu->mode != IN_GUEST_MODE: no
//                         notification; the wait is the exit's own time)
//   polling_idle          idle in a polling loop (idle=poll, or the poll state with
//                         TIF_POLLING_NRFLAG): still guest code, as running_guest_*
//   halted_guest_poll     idle in cpuidle-haltpoll's poll window before HLT: still guest code
//   halt_entry            on its way into HLT (the HLT exit and the host's halt handling not yet
//                         finished): KVM sees the interrupt pending before blocking the thread
//   halted_host_poll      in HLT, found by KVM's halt-polling loop before the thread blocked
//                         (ArrivalSteps::host_polled)
//   halted_blocked        in HLT with its thread blocked: the host scheduler wakes it
//                         (ArrivalSteps::halted; the notification's cross-socket hop is the
//                         delivery's interconnect step, from the host latency matrix)
//   running_native        bare metal (no hypervisor), the CPU runs code: the interrupt is taken as is
//   halted_native         bare metal, the CPU idles in HLT/MWAIT: its C-state's exit latency
//   preempted             overcommit (vm.preempted): the vCPU thread is scheduled out, its pCPU runs
//                         another thread; the interrupt waits for the host to run it again, then
//                         is injected at the entry (ArrivalSteps::preempted). Reported only by runs
//                         with preempted vCPUs
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

namespace ipilab::workload {

enum class TargetPath : std::uint8_t {
  RunningGuestPosted,
  RunningGuestExit,
  RunningHost,
  PollingIdle,
  HaltedGuestPoll,
  HaltEntry,
  HaltedHostPoll,
  HaltedBlocked,
  RunningNative,
  HaltedNative,
  Preempted,
  kCount
};
inline constexpr std::size_t kTargetPaths = static_cast<std::size_t>(TargetPath::kCount);

/// The counter name of `p` ("target_path.halted_blocked").
constexpr std::string_view target_path_counter(TargetPath p) {
  switch (p) {
    case TargetPath::RunningGuestPosted: return "target_path.running_guest_posted";
    case TargetPath::RunningGuestExit: return "target_path.running_guest_exit";
    case TargetPath::RunningHost: return "target_path.running_host";
    case TargetPath::PollingIdle: return "target_path.polling_idle";
    case TargetPath::HaltedGuestPoll: return "target_path.halted_guest_poll";
    case TargetPath::HaltEntry: return "target_path.halt_entry";
    case TargetPath::HaltedHostPoll: return "target_path.halted_host_poll";
    case TargetPath::HaltedBlocked: return "target_path.halted_blocked";
    case TargetPath::RunningNative: return "target_path.running_native";
    case TargetPath::HaltedNative: return "target_path.halted_native";
    case TargetPath::Preempted: return "target_path.preempted";
    case TargetPath::kCount: break;
  }
  return "target_path.?";
}

}  // namespace ipilab::workload
