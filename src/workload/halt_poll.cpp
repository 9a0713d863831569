#include "workload/halt_poll.h"

namespace ipilab::workload {

void HostHaltPoll::after_halt(const HostHaltPollConfig& c, std::uint64_t halt_ns) {
  if (!c.enabled()) {
    window_ns = 0;
    return;
  }
  if (halt_ns <= window_ns) return;  // the poll caught it
  if (window_ns != 0 && halt_ns > c.max_ns) {
    // shrink_halt_poll_ns
    std::uint64_t v = c.shrink == 0 ? 0 : window_ns / c.shrink;
    if (v < c.grow_start) v = 0;
    window_ns = v;
  } else if (window_ns < c.max_ns && halt_ns < c.max_ns) {
    // grow_halt_poll_ns (no-op with grow = 0)
    if (c.grow == 0) return;
    std::uint64_t v = window_ns * c.grow;
    if (v < c.grow_start) v = c.grow_start;
    window_ns = v;
  }
}

void GuestHaltPoll::after_idle(const GuestHaltPollConfig& c, std::uint64_t block_ns) {
  if (!c.enabled()) {
    limit_ns = 0;
    return;
  }
  if (block_ns > limit_ns && block_ns <= c.max_ns) {
    std::uint64_t v = limit_ns * c.grow;
    if (v < c.grow_start) v = c.grow_start;
    if (v > c.max_ns) v = c.max_ns;
    limit_ns = v;
  } else if (block_ns > c.max_ns && c.allow_shrink) {
    std::uint64_t v = c.shrink == 0 ? 0 : limit_ns / c.shrink;
    if (v < c.grow_start) v = 0;
    limit_ns = v;
  }
}

}  // namespace ipilab::workload
