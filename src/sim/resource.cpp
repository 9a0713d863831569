#include "sim/resource.h"

#include <stdexcept>

namespace ipilab::sim {

void Resource::negative_duration() {
  throw std::invalid_argument("sim::Resource::request: negative duration");
}

void Resource::no_item_waiting() {
  throw std::logic_error("sim::Resource::serve: no item waiting");
}

void Resource::reset_stats(Ps now) noexcept {
  requests_ = 0;
  waited_ = 0;
  total_wait_ = Ps{};
  max_wait_ = Ps{};
  busy_time_ = Ps{};
  waits_.reset();
  pop_departed(now);
  area_.reset(now);
  window_start_ = now;
  sojourn_ = 0;
  carried_ = 0;
}

ResourceStats Resource::stats(Ps now) const {
  ResourceStats s;
  // Close the books at `now` on copies: items still inside count up to `now`.
  Area a = area_;
  bool exact = exact_;
  double sojourn = sojourn_, carried = carried_;
  for (const Item& it : items_) {
    const Ps e = std::min(it.end, now);  // unserved items (end == kNever) are still inside
    if (it.end <= now) {
      if (!a.advance(it.end)) exact = false;
      a.add(-1);
    }
    if (it.arrival >= window_start_) sojourn += static_cast<double>((std::max(e, it.arrival) - it.arrival).v);
    else carried += static_cast<double>((std::max(e, window_start_) - window_start_).v);
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
  s.wait_mean_ps = waits_.count() ? static_cast<double>(total_wait_.v) / static_cast<double>(waits_.count()) : 0.0;
  s.wait_p99_ps = waits_.percentile_ps(99);
  s.wait_max_ps = static_cast<double>(max_wait_.v);
  s.l_time_average = a.area() / s.elapsed_ps;
  s.lambda_per_ps = static_cast<double>(requests_) / s.elapsed_ps;
  s.w_mean_ps = requests_ ? sojourn / static_cast<double>(requests_) : 0.0;
  s.carried = carried / s.elapsed_ps;
  return s;
}

void Occupancy::reset_stats(Ps now) noexcept {
  area_.reset(now);
  window_start_ = now;
  arrivals_ = 0;
  sojourn_ = 0;
  carried_ = 0;
  waited_sum_ = 0;
  max_wait_ = 0;
  carried_n_ = area_.in_system();
  open_ = 0;
  open_n_ = 0;
  waits_.reset();
}

ResourceStats Occupancy::stats(Ps now) const {
  ResourceStats s;
  Area a = area_;
  s.little_exact = a.advance(now);
  s.elapsed_ps = static_cast<double>((now - window_start_).v);
  s.arrivals = arrivals_;
  if (s.elapsed_ps <= 0) return s;
  // Items still inside: the window's count up to `now`, the carried ones from the window start.
  const double sojourn = sojourn_ + static_cast<double>(open_n_) * static_cast<double>(now.v) - open_;
  const double carried = carried_ + static_cast<double>(carried_n_) * s.elapsed_ps;
  s.utilisation = static_cast<double>(a.nonempty_ps()) / s.elapsed_ps;
  s.wait_mean_ps = waits_.count() ? waited_sum_ / static_cast<double>(waits_.count()) : 0.0;
  s.wait_p99_ps = waits_.percentile_ps(99);
  s.wait_max_ps = static_cast<double>(max_wait_);
  s.l_time_average = a.area() / s.elapsed_ps;
  s.lambda_per_ps = static_cast<double>(arrivals_) / s.elapsed_ps;
  s.w_mean_ps = arrivals_ ? sojourn / static_cast<double>(arrivals_) : 0.0;
  s.carried = carried / s.elapsed_ps;
  return s;
}

}  // namespace ipilab::sim
