// ipilab/workload/halt_poll.h — the two adaptive halt-polling windows of an x86 KVM guest, as pure
// state machines (no time base of their own: every duration in ns).
//
// Host halt-polling (virt/kvm/kvm_main.c kvm_vcpu_halt, grow_halt_poll_ns, shrink_halt_poll_ns;
// Documentation/virt/kvm/halt-polling.rst): after a HLT exit KVM polls for a pending interrupt for
// the vCPU's current window vcpu->halt_poll_ns before blocking the vCPU thread. The window starts at
// 0 and adapts after every halt of length halt_ns (HLT exit to wake-up):
//   - it is first capped at the VM's maximum (module parameter halt_poll_ns, per VM with
//     KVM_CAP_HALT_POLL since Linux 5.16);
//   - halt_ns <= window: the poll caught it, the window stays;
//   - window != 0 and halt_ns > max: a long block, shrink: window /= halt_poll_ns_shrink (0: to 0),
//     and below halt_poll_ns_grow_start it becomes 0;
//   - window < max and halt_ns < max: a short halt the window missed, grow: window *=
//     halt_poll_ns_grow, at least halt_poll_ns_grow_start.
// x86 defaults: halt_poll_ns 200000 (KVM_HALT_POLL_NS_DEFAULT), grow 2, grow_start 10000, shrink 0.
// A guest that loads cpuidle-haltpoll disables the host's polling (MSR_KVM_POLL_CONTROL = 0, read
// by kvm_arch_no_poll).
//
// Guest halt-polling (drivers/cpuidle/governors/haltpoll.c adjust_poll_limit, cpuidle-haltpoll):
// before HLT the guest's poll state spins for dev->poll_limit_ns with TIF_POLLING_NRFLAG set; an
// interrupt in that window reaches a vCPU still in guest mode (no HLT exit, no wake-up). After an
// idle period of block_ns:
//   - poll_limit < block_ns <= guest_halt_poll_ns: grow: limit *= guest_halt_poll_grow, at least
//     guest_halt_poll_grow_start, at most guest_halt_poll_ns;
//   - block_ns > guest_halt_poll_ns and guest_halt_poll_allow_shrink: shrink: limit /=
//     guest_halt_poll_shrink (0: to 0), below grow_start to 0.
// Defaults: guest_halt_poll_ns 200000, grow 2, grow_start 50000, shrink 2, allow_shrink on.
#pragma once

#include <cstdint>

namespace ipilab::workload {

struct HostHaltPollConfig {
  std::uint64_t max_ns = 0;          ///< halt_poll_ns (0: KVM does not poll)
  std::uint64_t grow = 2;            ///< halt_poll_ns_grow
  std::uint64_t grow_start = 10000;  ///< halt_poll_ns_grow_start
  std::uint64_t shrink = 0;          ///< halt_poll_ns_shrink
  bool enabled() const { return max_ns > 0; }
};

/// One vCPU's host polling window (vcpu->halt_poll_ns).
struct HostHaltPoll {
  std::uint64_t window_ns = 0;
  /// The window the next halt polls for (kvm_vcpu_halt's cap at its start).
  std::uint64_t poll_for(const HostHaltPollConfig& c) {
    if (window_ns > c.max_ns) window_ns = c.max_ns;
    return window_ns;
  }
  /// After a halt of `halt_ns` (the poll caught it when halt_ns <= the window it polled for).
  void after_halt(const HostHaltPollConfig& c, std::uint64_t halt_ns);
};

struct GuestHaltPollConfig {
  std::uint64_t max_ns = 0;          ///< guest_halt_poll_ns (0: cpuidle-haltpoll not in use)
  std::uint64_t grow = 2;            ///< guest_halt_poll_grow
  std::uint64_t grow_start = 50000;  ///< guest_halt_poll_grow_start
  std::uint64_t shrink = 2;          ///< guest_halt_poll_shrink
  bool allow_shrink = true;          ///< guest_halt_poll_allow_shrink
  bool enabled() const { return max_ns > 0; }
};

/// One vCPU's guest polling limit (cpuidle_device::poll_limit_ns).
struct GuestHaltPoll {
  std::uint64_t limit_ns = 0;
  /// After an idle period of `block_ns` (adjust_poll_limit).
  void after_idle(const GuestHaltPollConfig& c, std::uint64_t block_ns);
};

}  // namespace ipilab::workload
