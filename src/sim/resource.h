// ipilab/sim/resource.h — shared things that items queue for, with their statistics.
//
// Two shapes, both measured the same way (utilisation, queueing delay with its distribution, and
// Little's-law bookkeeping: the time-average number of items in the system, the arrival rate and the
// mean time in the system, each computed independently so L = lambda * W can be checked):
//
//  * Resource — a server that does one piece of work at a time, first come first served: a vCPU's
//    interrupt handling, the hypervisor running on a physical CPU, an ITS's GITS_SGIR port. The model
//    is analytical ("busy until"): request(now, d) starts at max(now, busy_until) and ends d later;
//    the caller schedules its continuation at grant.end, so contention and queueing emerge when
//    several senders hit one resource.
//  * Occupancy — a queue whose items leave when something else takes them (a target vCPU's
//    call_single_queue: a CSD enters at llist_add and leaves when the handler's llist_del_all takes
//    it). enter(now) / leave(now, entered).
//
// Time order: requests (and enter/leave) must come with non-decreasing `now` for the Little's-law
// area to be exact; the simulator issues them from events, which run in time order (engine.h). A
// Resource that receives an earlier `now` after a later one still serves it (in call order, as
// before) but marks its area as not exact (little_exact() == false) rather than guessing.
// Durations must be >= 0 (std::invalid_argument).
//
// Windows: reset_stats(now) starts a measurement window at `now` (e.g. after a warm-up); items in
// the system at that moment keep counting towards the area but not towards arrivals or waits.
// Memory: O(items currently in the system) for the area, a histogram for the waits whose size
// grows with the log of the longest wait (sim/histogram.h). `wait_resolution` (default 1 ps) bins
// the waits for their percentiles (a simulator with thousands of resources uses 1 ns: a tenth of the
// memory); means, maxima and the Little's-law figures stay exact in ps. Waits reach the histogram
// in batches (WaitLog), which changes no figure.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>
#include <string>

#include "sim/histogram.h"
#include "sim/time.h"

namespace ipilab::sim {

/// What a request got: when its work starts and ends, and how long it queued (start - now).
struct Grant {
  Ps start;
  Ps end;
  Ps wait;
};

/// The figures of one resource over a window [from, to].
struct ResourceStats {
  double elapsed_ps = 0;       ///< window length
  std::uint64_t arrivals = 0;  ///< items that arrived in the window
  double utilisation = 0;      ///< busy time / elapsed (Resource); fraction of time non-empty (Occupancy)
  double wait_mean_ps = 0;     ///< mean queueing delay before service (Occupancy: time in the queue)
  double wait_p99_ps = 0;
  double wait_max_ps = 0;
  // Little's law, each side computed on its own: the area under n(t) (integrated as items come and
  // go), and each item's time in the system (wait + service, clipped at the window's end):
  //   l_time_average = lambda_per_ps * w_mean_ps + carried
  // where `carried` is the time-average number of items that arrived before the window started.
  double l_time_average = 0;   ///< time-average number in the system (area under n(t) / elapsed)
  double lambda_per_ps = 0;    ///< arrivals / elapsed
  double w_mean_ps = 0;        ///< mean time in the system of the window's arrivals, clipped at its end
  double carried = 0;          ///< the share of l_time_average of items that arrived before the window
  bool little_exact = true;    ///< false when requests came out of time order (see the file comment)
};

/// Time-average bookkeeping of the number of items in a system (the area under n(t)).
class Area {
 public:
  /// Moves the clock to `now` (>= the last time), adding n * elapsed. Returns false if `now` is
  /// earlier than the last time (nothing is added then).
  bool advance(Ps now) noexcept {
    if (now < last_) return false;
    area_ += static_cast<double>(n_) * static_cast<double>((now - last_).v);
    if (n_ > 0) nonempty_ += (now - last_).v;
    last_ = now;
    return true;
  }
  void add(std::int64_t dn) noexcept { n_ += dn; }
  void reset(Ps now) noexcept {
    advance(now);
    area_ = 0;
    nonempty_ = 0;
  }
  double area() const noexcept { return area_; }
  std::int64_t nonempty_ps() const noexcept { return nonempty_; }
  std::int64_t in_system() const noexcept { return n_; }
  Ps last() const noexcept { return last_; }

 private:
  Ps last_{};
  std::int64_t n_ = 0;
  double area_ = 0;
  std::int64_t nonempty_ = 0;
};

/// The queueing delays of one resource on their way into its histogram: each wait (ps) is kept in a
/// small buffer and the buffer is added to the histogram kBatch at a time, in recording order, so the
/// histogram ends up exactly as if each had been recorded at once. Why: a simulator keeps hundreds of
/// resources whose wait histograms together are larger than the cache, so recording a wait is
/// usually a cache miss; a batch of independent updates lets the processor overlap those misses
/// instead of stalling on each one in turn.
/// Waits of 0 (an idle server: most requests of a lightly loaded run) are only counted and reach the
/// histogram as one record_n when it is read. The histogram keeps no moments (Moments::Skipped), so
/// what it holds (counters, count, sum, extremes) does not depend on the order of its values.
class WaitLog {
 public:
  static constexpr std::size_t kBatch = 16;
  explicit WaitLog(std::int64_t resolution_ps) : res_(resolution_ps > 0 ? resolution_ps : 1) {}
  /// One wait in ps (>= 0), binned at the resolution (rounded to the nearest bin).
  void record(std::int64_t wait_ps) {
    if (wait_ps == 0) {
      ++zeros_;
      return;
    }
    buf_[n_++] = wait_ps;
    if (n_ == kBatch) flush();
  }
  std::uint64_t count() const noexcept { return hist_.count() + n_ + zeros_; }
  /// The waits so far, in units of the resolution.
  Histogram histogram() const {
    settle();
    return hist_;
  }
  /// The p-th percentile in ps (see Histogram::percentile), without copying the histogram.
  double percentile_ps(double q) const {
    settle();
    return hist_.percentile(q) * static_cast<double>(res_);
  }
  std::int64_t resolution() const noexcept { return res_; }
  void reset() noexcept {
    hist_.reset();
    n_ = 0;
    zeros_ = 0;
  }

 private:
  std::int64_t bin(std::int64_t w) const noexcept { return (w + res_ / 2) / res_; }
  /// The pending waits into the histogram (a reader's call: it changes no figure, only where the
  /// waits are kept, hence const; a report reads thousands of resources, and a copy per read was a
  /// heap allocation each).
  void settle() const {
    if (n_) flush();
    hist_.record_n(0, zeros_);
    zeros_ = 0;
  }
  void flush() const {
    // The core's resolution (1 ns) divides by a constant (a multiply, not a 64-bit idiv per wait).
    if (res_ == 1000)
      for (std::size_t i = 0; i < n_; ++i) buf_[i] = (buf_[i] + 500) / 1000;
    else
      for (std::size_t i = 0; i < n_; ++i) buf_[i] = bin(buf_[i]);
    hist_.record_batch(buf_, n_);
    n_ = 0;
  }
  // Mutable: settle() moves pending waits into hist_ from a const reader (see there).
  std::int64_t res_;
  mutable std::size_t n_ = 0;
  mutable std::uint64_t zeros_ = 0;  // waits of 0 not yet in hist_
  mutable std::int64_t buf_[kBatch];
  mutable Histogram hist_{Moments::Skipped};  // only its percentiles are read
};

class Resource {
 public:
  explicit Resource(std::string name = {}, Ps wait_resolution = Ps{1})
      : name_(std::move(name)), waits_(wait_resolution.v) {}

  /// Queues `duration` of work arriving at `now`. O(1) amortised.
  Grant request(Ps now, Ps duration) {
    if (duration.v < 0) negative_duration();
    const Ps start = busy_until_ > now ? busy_until_ : now;
    arrive(now);
    serve(start, start + duration);
    return Grant{start, start + duration, start - now};
  }

  /// Two-step form for servers whose start is decided elsewhere (a vCPU takes an interrupt when its
  /// interrupt window opens): an item arrives at `now`; later serve() gives the oldest waiting item
  /// its service [start, end) (start >= its arrival, start >= the previous end: one at a time).
  void arrive(Ps now);
  void serve(Ps start, Ps end);

  /// When the resource becomes free (all accepted work done).
  Ps busy_until() const noexcept { return busy_until_; }
  /// True if no accepted work is still running at time t.
  bool idle_at(Ps t) const noexcept { return busy_until_ <= t; }

  const std::string& name() const noexcept { return name_; }
  /// Requests served (since the last reset).
  std::uint64_t requests() const noexcept { return requests_; }
  /// Requests that had to wait (wait > 0).
  std::uint64_t waited() const noexcept { return waited_; }
  /// Sum and maximum of the queueing delays.
  Ps total_wait() const noexcept { return total_wait_; }
  Ps max_wait() const noexcept { return max_wait_; }
  /// Sum of the durations served (busy time).
  Ps busy_time() const noexcept { return busy_time_; }
  /// The queueing delays, in units of the wait resolution (ps by default); percentiles only (its
  /// stddev() is NaN: Moments::Skipped).
  Histogram waits() const { return waits_.histogram(); }
  Ps wait_resolution() const noexcept { return Ps{waits_.resolution()}; }
  /// busy_time / elapsed, in [0, 1] when elapsed covers the run (0 if elapsed <= 0).
  double utilization(Ps elapsed) const noexcept {
    return elapsed.v > 0 ? static_cast<double>(busy_time_.v) / static_cast<double>(elapsed.v) : 0.0;
  }
  /// Forgets the counters (not busy_until): e.g. after a warm-up phase. Without `now` the window
  /// starts at the last arrival.
  void reset_stats() noexcept { reset_stats(area_.last()); }
  void reset_stats(Ps now) noexcept;
  /// The window [last reset, now] (now >= every arrival).
  ResourceStats stats(Ps now) const;

 private:
  [[noreturn]] static void negative_duration();
  [[noreturn]] static void no_item_waiting();
  std::string name_;
  Ps busy_until_{};
  std::uint64_t requests_ = 0;
  std::uint64_t waited_ = 0;
  Ps total_wait_{};
  Ps max_wait_{};
  Ps busy_time_{};
  WaitLog waits_;
  // Little's law: (arrival, end) of the items still in the system (FIFO: ends non-decreasing), the
  // area, the sojourn of the window's arrivals that left, the in-window time of items carried in.
  struct Item {
    Ps arrival, end;  // end == kNever: not served yet
  };
  /// The items in the system, oldest first: a vector read from `head`; popped items stay behind and
  /// are dropped in bulk, so a push or a pop is a few instructions and no allocation once warm.
  class Fifo {
   public:
    std::size_t size() const noexcept { return v_.size() - head_; }
    Item& operator[](std::size_t i) noexcept { return v_[head_ + i]; }
    Item& front() noexcept { return v_[head_]; }
    void pop_front() noexcept {
      if (++head_ == v_.size()) {
        v_.clear();
        head_ = 0;
      }
    }
    void push_back(const Item& it) {
      if (head_ >= 64 && 2 * head_ >= v_.size()) {
        v_.erase(v_.begin(), v_.begin() + static_cast<std::ptrdiff_t>(head_));
        head_ = 0;
      }
      v_.push_back(it);
    }
    const Item* begin() const noexcept { return v_.data() + head_; }
    const Item* end() const noexcept { return v_.data() + v_.size(); }

   private:
    std::vector<Item> v_;
    std::size_t head_ = 0;
  };
  void depart(const Item& it);
  void pop_departed(Ps now);
  Fifo items_;
  std::size_t served_inside_ = 0;  // items at the front of items_ that have their service
  Area area_;
  Ps window_start_{};
  double sojourn_ = 0, carried_ = 0;
  bool exact_ = true;
};

// The per-request bookkeeping, inline: a whole-VM run makes several requests per IPI.
inline void Resource::depart(const Item& it) {
  area_.advance(it.end);
  area_.add(-1);
  if (it.arrival >= window_start_) sojourn_ += static_cast<double>((it.end - it.arrival).v);
  else carried_ += static_cast<double>((it.end - window_start_).v);
}

inline void Resource::pop_departed(Ps now) {
  while (served_inside_ > 0 && items_.front().end <= now) {
    depart(items_.front());
    items_.pop_front();
    --served_inside_;
  }
}

inline void Resource::arrive(Ps now) {
  if (now < area_.last()) exact_ = false;
  pop_departed(now);
  area_.advance(now);
  area_.add(1);
  items_.push_back(Item{now, kNever});
  if (now >= window_start_) ++requests_;
}

inline void Resource::serve(Ps start, Ps end) {
  if (served_inside_ >= items_.size()) [[unlikely]] no_item_waiting();
  Item& it = items_[served_inside_++];
  if (end < start || start < it.arrival) negative_duration();
  it.end = end;
  if (end > busy_until_) busy_until_ = end;
  if (it.arrival < window_start_) return;  // carried in: counts in the area only
  const Ps wait = start - it.arrival;
  if (wait.v > 0) ++waited_;
  total_wait_ += wait;
  if (wait > max_wait_) max_wait_ = wait;
  busy_time_ += end - start;
  waits_.record(wait.v);
}

/// A queue whose items are taken by someone else (see the file comment).
class Occupancy {
 public:
  explicit Occupancy(std::string name = {}, Ps wait_resolution = Ps{1})
      : name_(std::move(name)), waits_(wait_resolution.v) {}

  void enter(Ps now) noexcept {
    area_.advance(now);
    area_.add(1);
    ++arrivals_;
    open_ += static_cast<double>(now.v);
    ++open_n_;
  }
  /// An item that entered at `entered` leaves at `now` (>= entered). Items that entered before the
  /// window count towards the area and `carried`, not towards the waits.
  void leave(Ps now, Ps entered) {
    area_.advance(now);
    area_.add(-1);
    count_leave(now, entered);
  }
  /// leave(now, entered(item)) for every item of [first, last), in order: the same figures, the
  /// clock advanced once (a handler taking a whole queue at one instant).
  template <class It, class Entered>
  void leave_all(Ps now, It first, It last, Entered entered) {
    area_.advance(now);  // at `now` again it would add n * 0
    for (; first != last; ++first) {
      area_.add(-1);
      count_leave(now, entered(*first));
    }
  }
  /// An item that leaves without being served (withdrawn): like leave(), without a wait sample.
  void withdraw(Ps now, Ps entered) noexcept {
    area_.advance(now);
    area_.add(-1);
    if (entered >= window_start_) {
      sojourn_ += static_cast<double>((now - entered).v);
      open_ -= static_cast<double>(entered.v);
      --open_n_;
    } else {
      carried_ += static_cast<double>((now - window_start_).v);
      --carried_n_;
    }
  }
  std::int64_t size() const noexcept { return area_.in_system(); }
  const std::string& name() const noexcept { return name_; }
  void reset_stats(Ps now) noexcept;
  ResourceStats stats(Ps now) const;

 private:
  void count_leave(Ps now, Ps entered) {
    if (entered >= window_start_) {
      const std::int64_t w = (now - entered).v;
      waits_.record(w);
      if (w > max_wait_) max_wait_ = w;
      waited_sum_ += static_cast<double>(w);
      sojourn_ += static_cast<double>(w);
      open_ -= static_cast<double>(entered.v);
      --open_n_;
    } else {
      carried_ += static_cast<double>((now - window_start_).v);
      --carried_n_;
    }
  }
  std::string name_;
  Area area_;
  Ps window_start_{};
  std::int64_t max_wait_ = 0;
  double waited_sum_ = 0;
  std::uint64_t arrivals_ = 0;
  double sojourn_ = 0, carried_ = 0;
  double open_ = 0;              // sum of the entry times of the window's items still inside
  std::int64_t open_n_ = 0, carried_n_ = 0;
  WaitLog waits_;
};

}  // namespace ipilab::sim
