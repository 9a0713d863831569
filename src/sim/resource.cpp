#include "sim/resource.h"

#include <stdexcept>

namespace ipilab::sim {

void Resource::negative_duration() {
  throw std::invalid_argument("sim::Resource::request: negative duration");
}

void Resource::track(Ps now, Ps end) {
  // Departures up to `now` leave first (they are in FIFO order), then this item enters.
  if (now < area_.last()) exact_ = false;
  while (!ends_.empty() && ends_.front() <= now) {
    area_.advance(ends_.front());
    area_.add(-1);
    ends_.pop_front();
  }
  area_.advance(now);
  area_.add(1);
  ends_.push_back(end);
}

void Resource::reset_stats(Ps now) noexcept {
  requests_ = 0;
  waited_ = 0;
  total_wait_ = Ps{};
  max_wait_ = Ps{};
  busy_time_ = Ps{};
  waits_.reset();
  sojourn_ = 0;
  while (!ends_.empty() && ends_.front() <= now) {
    area_.advance(ends_.front());
    area_.add(-1);
    ends_.pop_front();
  }
  area_.reset(now);
  window_start_ = now;
}

ResourceStats Resource::stats(Ps now) const {
  ResourceStats s;
  // Close the area at `now` on a copy (the departures still ahead of `now` stay in the system).
  Area a = area_;
  bool exact = exact_;
  for (const Ps e : ends_) {
    if (e > now) break;
    if (!a.advance(e)) exact = false;
    a.add(-1);
  }
  if (!a.advance(now)) exact = false;
  s.elapsed_ps = static_cast<double>((now - window_start_).v);
  s.arrivals = requests_;
  s.little_exact = exact;
  if (s.elapsed_ps <= 0) return s;
  // Busy time of work that lies beyond `now` is not part of the window.
  double busy = static_cast<double>(busy_time_.v);
  if (busy_until_ > now) busy -= static_cast<double>((busy_until_ - now).v);
  s.utilisation = std::max(0.0, busy) / s.elapsed_ps;
  s.wait_mean_ps = waits_.mean();
  s.wait_p99_ps = waits_.percentile(99);
  s.wait_max_ps = static_cast<double>(waits_.max());
  s.l_time_average = a.area() / s.elapsed_ps;
  s.lambda_per_ps = static_cast<double>(requests_) / s.elapsed_ps;
  s.w_mean_ps = requests_ ? sojourn_ / static_cast<double>(requests_) : 0.0;
  return s;
}

void Occupancy::reset_stats(Ps now) noexcept {
  area_.reset(now);
  window_start_ = now;
  arrivals_ = 0;
  departures_ = 0;
  sojourn_ = 0;
  waits_.reset();
}

ResourceStats Occupancy::stats(Ps now) const {
  ResourceStats s;
  Area a = area_;
  s.little_exact = a.advance(now);
  s.elapsed_ps = static_cast<double>((now - window_start_).v);
  s.arrivals = arrivals_;
  if (s.elapsed_ps <= 0) return s;
  s.utilisation = static_cast<double>(a.nonempty_ps()) / s.elapsed_ps;
  s.wait_mean_ps = waits_.mean();
  s.wait_p99_ps = waits_.percentile(99);
  s.wait_max_ps = static_cast<double>(waits_.max());
  s.l_time_average = a.area() / s.elapsed_ps;
  s.lambda_per_ps = static_cast<double>(arrivals_) / s.elapsed_ps;
  s.w_mean_ps = departures_ ? sojourn_ / static_cast<double>(departures_) : 0.0;
  return s;
}

}  // namespace ipilab::sim
