// ipilab/sim/resource.h — a server that does one piece of work at a time, first come first served.
//
// Used for anything that serializes work: a vCPU, the hypervisor running on a physical CPU, an ITS's
// GITS_SGIR port and its command queue, a redistributor. The model is analytical ("busy until"):
// request(now, d) starts at max(now, busy_until) and ends d later; the caller schedules its
// continuation at grant.end. Contention and queueing thus emerge when several senders hit one
// resource, and the wait of each request is recorded.
//
// Requests are served in the order request() is called; called from events that is simulated-time
// order, FIFO among equal times (see engine.h). Durations must be >= 0 (std::invalid_argument).
#pragma once

#include <cstdint>
#include <string>

#include "sim/time.h"

namespace ipilab::sim {

/// What a request got: when its work starts and ends, and how long it queued (start - now).
struct Grant {
  Ps start;
  Ps end;
  Ps wait;
};

class Resource {
 public:
  explicit Resource(std::string name = {}) : name_(std::move(name)) {}

  /// Queues `duration` of work arriving at `now`. O(1).
  Grant request(Ps now, Ps duration) {
    if (duration.v < 0) negative_duration();
    const Ps start = busy_until_ > now ? busy_until_ : now;
    const Ps end = start + duration;
    busy_until_ = end;
    const Ps wait = start - now;
    ++requests_;
    if (wait.v > 0) ++waited_;
    total_wait_ += wait;
    if (wait > max_wait_) max_wait_ = wait;
    busy_time_ += duration;
    return Grant{start, end, wait};
  }

  /// When the resource becomes free (all accepted work done).
  Ps busy_until() const noexcept { return busy_until_; }
  /// True if no accepted work is still running at time t.
  bool idle_at(Ps t) const noexcept { return busy_until_ <= t; }

  const std::string& name() const noexcept { return name_; }
  /// Requests served.
  std::uint64_t requests() const noexcept { return requests_; }
  /// Requests that had to wait (wait > 0).
  std::uint64_t waited() const noexcept { return waited_; }
  /// Sum and maximum of the queueing delays.
  Ps total_wait() const noexcept { return total_wait_; }
  Ps max_wait() const noexcept { return max_wait_; }
  /// Sum of the durations served (busy time).
  Ps busy_time() const noexcept { return busy_time_; }
  /// busy_time / elapsed, in [0, 1] when elapsed covers the run (0 if elapsed <= 0).
  double utilization(Ps elapsed) const noexcept {
    return elapsed.v > 0 ? static_cast<double>(busy_time_.v) / static_cast<double>(elapsed.v) : 0.0;
  }
  /// Forgets the counters (not busy_until): e.g. after a warm-up phase.
  void reset_stats() noexcept;

 private:
  [[noreturn]] static void negative_duration();
  std::string name_;
  Ps busy_until_{};
  std::uint64_t requests_ = 0;
  std::uint64_t waited_ = 0;
  Ps total_wait_{};
  Ps max_wait_{};
  Ps busy_time_{};
};

}  // namespace ipilab::sim
