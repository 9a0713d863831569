// bench/sim/candidate_queues.h — event queues that were measured against the engine's radix queue
// and not chosen (the reasons are in src/sim/engine.h). They keep the queue interface of
// src/sim/event_queue.h (push, pop, min_time, size, empty, for_each, clear) and the exact (t, seq)
// order, so they run inside the same engine (sim::BasicSimulator) and the bench compares queues,
// nothing else. tests are not run on them beyond bench_sim's own order check.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "sim/event_queue.h"

namespace ipilab::bench {

using sim::EventKey;
using sim::runs_after;

inline bool runs_before(const EventKey& a, const EventKey& b) noexcept { return runs_after(b, a); }

/// 4-ary heap of EventKeys: half the depth of the binary heap, four children in one or two cache
/// lines. O(log4 n) push, O(4 log4 n) pop.
class QuaternaryHeapEventQueue {
 public:
  bool empty() const noexcept { return h_.empty(); }
  std::size_t size() const noexcept { return h_.size(); }

  void push(EventKey k) {
    std::size_t i = h_.size();
    h_.push_back(k);
    EventKey* h = h_.data();
    while (i > 0) {
      const std::size_t parent = (i - 1) / 4;
      if (!runs_after(h[parent], k)) break;
      h[i] = h[parent];
      i = parent;
    }
    h[i] = k;
  }

  std::int64_t min_time() const noexcept { return h_.front().t; }

  EventKey pop() noexcept {
    EventKey* h = h_.data();
    const EventKey top = h[0];
    const EventKey last = h[h_.size() - 1];
    h_.pop_back();
    const std::size_t n = h_.size();
    if (n > 0) {
      std::size_t i = 0;
      for (;;) {
        const std::size_t first = 4 * i + 1;
        if (first >= n) break;
        std::size_t c = first;
        const std::size_t end = std::min(first + 4, n);
        for (std::size_t j = first + 1; j < end; ++j)
          if (runs_after(h[c], h[j])) c = j;
        if (!runs_after(last, h[c])) break;
        h[i] = h[c];
        i = c;
      }
      h[i] = last;
    }
    return top;
  }

  template <class F>
  void for_each(F&& f) const {
    for (const EventKey& k : h_) f(k);
  }
  void clear() noexcept { h_.clear(); }

 private:
  std::vector<EventKey> h_;
};

/// Calendar queue (R. Brown, "Calendar queues: a fast O(1) priority queue implementation for the
/// simulation event set problem", CACM 31(10), 1988): nb buckets ("days") of width w; a key of time
/// t goes to day (t / w) mod nb, each day kept sorted. Dequeue walks the days of the current "year"
/// and takes the first key that falls inside it; a whole year without one falls back to a direct
/// search. The calendar is rebuilt with twice / half the days when the size passes 2 nb / nb / 2,
/// with w = 3 x the mean gap between the earliest keys (Brown's rule, from up to 25 of them).
class CalendarEventQueue {
 public:
  CalendarEventQueue() { rebuild(2, 1); }

  bool empty() const noexcept { return size_ == 0; }
  std::size_t size() const noexcept { return size_; }

  void push(EventKey k) {
    insert(k);
    ++size_;
    if (size_ > 2 * days_.size()) resize(days_.size() * 2);
  }

  std::int64_t min_time() const {
    const Day& d = days_[peek_day()];
    return d.keys[d.head].t;
  }

  EventKey pop() {
    cur_ = peek_day();
    Day& d = days_[cur_];
    const EventKey k = d.keys[d.head];
    last_t_ = k.t;
    ++d.head;
    if (d.head == d.keys.size()) {
      d.keys.clear();
      d.head = 0;
    }
    --size_;
    if (days_.size() > 2 && size_ < days_.size() / 2) resize(days_.size() / 2);
    return k;
  }

  template <class F>
  void for_each(F&& f) const {
    for (const Day& d : days_)
      for (std::size_t i = d.head; i < d.keys.size(); ++i) f(d.keys[i]);
  }
  void clear() noexcept {
    for (Day& d : days_) {
      d.keys.clear();
      d.head = 0;
    }
    size_ = 0;
  }

 private:
  struct Day {
    std::vector<EventKey> keys;  // sorted by (t, seq); keys[head..] are live
    std::size_t head = 0;
  };

  std::size_t day_of(std::int64_t t) const noexcept {
    return static_cast<std::size_t>(static_cast<std::uint64_t>(t) / width_) & (days_.size() - 1);
  }
  void insert(const EventKey& k) {
    Day& d = days_[day_of(k.t)];
    auto it = std::upper_bound(d.keys.begin() + static_cast<std::ptrdiff_t>(d.head), d.keys.end(), k, runs_before);
    d.keys.insert(it, k);
  }

  // The day holding the earliest key (size_ > 0). Walks the current year from the day of the
  // last key popped (every queued key is at or after it), then searches directly.
  std::size_t peek_day() const {
    std::uint64_t top = (static_cast<std::uint64_t>(last_t_) / width_ + 1) * width_;  // end of cur_'s day
    std::size_t i = cur_;
    for (std::size_t n = 0; n < days_.size(); ++n) {
      const Day& d = days_[i];
      if (d.head < d.keys.size() && static_cast<std::uint64_t>(d.keys[d.head].t) < top) return i;
      i = (i + 1) & (days_.size() - 1);
      top += width_;
    }
    std::size_t best = days_.size();
    for (std::size_t j = 0; j < days_.size(); ++j) {
      const Day& d = days_[j];
      if (d.head < d.keys.size() && (best == days_.size() || runs_before(d.keys[d.head], days_[best].keys[days_[best].head])))
        best = j;
    }
    return best;
  }

  void resize(std::size_t nb) {
    std::vector<EventKey> all;
    all.reserve(size_);
    for_each([&](const EventKey& k) { all.push_back(k); });
    const std::size_t sample = std::min<std::size_t>(all.size(), 25);
    std::partial_sort(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(sample), all.end(), runs_before);
    std::uint64_t w = width_;
    if (sample >= 2) {
      const double mean_gap = static_cast<double>(all[sample - 1].t - all[0].t) / static_cast<double>(sample - 1);
      double sum = 0;  // Brown: average again without the gaps above twice the mean
      std::size_t n = 0;
      for (std::size_t i = 1; i < sample; ++i) {
        const double g = static_cast<double>(all[i].t - all[i - 1].t);
        if (g <= 2 * mean_gap) { sum += g; ++n; }
      }
      const double gap = n ? sum / static_cast<double>(n) : mean_gap;
      w = std::max<std::uint64_t>(1, static_cast<std::uint64_t>(3.0 * gap));
    }
    rebuild(nb, w);
    for (const EventKey& k : all) insert(k);
    cur_ = day_of(last_t_);
  }
  void rebuild(std::size_t nb, std::uint64_t w) {
    days_.assign(nb, Day{});
    width_ = w;
  }

  std::vector<Day> days_;
  std::uint64_t width_ = 1;
  std::size_t cur_ = 0;
  std::int64_t last_t_ = 0;
  std::size_t size_ = 0;
};

/// Ladder queue (W. T. Tang, R. S. M. Goh, I. L.-J. Thng, "Ladder queue: an O(1) priority queue
/// structure for large-scale discrete event simulation", ACM TOMACS 15(3), 2005): an unsorted Top
/// for far-future keys, rungs of buckets refined on demand (a bucket with more than kThres keys
/// spawns a finer rung, up to kMaxRungs), and a small sorted Bottom consumed in order.
class LadderEventQueue {
 public:
  bool empty() const noexcept { return size_ == 0; }
  std::size_t size() const noexcept { return size_; }

  void push(EventKey k) {
    ++size_;
    const std::uint64_t t = static_cast<std::uint64_t>(k.t);
    if (t >= top_start_) {
      if (top_.empty()) top_min_ = top_max_ = t;
      top_min_ = std::min(top_min_, t);
      top_max_ = std::max(top_max_, t);
      top_.push_back(k);
      return;
    }
    for (std::size_t r = 0; r < nrungs_; ++r) {
      Rung& g = rungs_[r];
      if (t >= g.start + g.cur * g.width) {
        g.buckets[(t - g.start) / g.width].push_back(k);
        ++g.count;
        return;
      }
    }
    auto it = std::upper_bound(bottom_.begin() + static_cast<std::ptrdiff_t>(bhead_), bottom_.end(), k, runs_before);
    bottom_.insert(it, k);
  }

  std::int64_t min_time() {
    if (bhead_ == bottom_.size()) fill_bottom();
    return bottom_[bhead_].t;
  }

  EventKey pop() {
    if (bhead_ == bottom_.size()) fill_bottom();
    --size_;
    return bottom_[bhead_++];
  }

  template <class F>
  void for_each(F&& f) const {
    for (std::size_t i = bhead_; i < bottom_.size(); ++i) f(bottom_[i]);
    for (std::size_t r = 0; r < nrungs_; ++r)
      for (std::size_t b = rungs_[r].cur; b < rungs_[r].buckets.size(); ++b)
        for (const EventKey& k : rungs_[r].buckets[b]) f(k);
    for (const EventKey& k : top_) f(k);
  }
  void clear() noexcept {
    top_.clear();
    nrungs_ = 0;
    bottom_.clear();
    bhead_ = 0;
    size_ = 0;
    top_start_ = 0;
  }

 private:
  static constexpr std::size_t kThres = 50;
  static constexpr std::size_t kMaxRungs = 8;
  struct Rung {
    std::uint64_t start = 0, width = 1;
    std::size_t cur = 0;    // first bucket not yet consumed
    std::size_t count = 0;  // keys in buckets[cur..]
    std::vector<std::vector<EventKey>> buckets;
  };

  // Sets up rung `r` over [start, start + n * width) and distributes `keys` into it.
  void spawn(std::size_t r, std::uint64_t start, std::uint64_t width, std::size_t n, std::vector<EventKey>& keys) {
    if (rungs_.size() <= r) rungs_.resize(r + 1);
    Rung& g = rungs_[r];
    g.start = start;
    g.width = width;
    g.cur = 0;
    g.count = keys.size();
    if (g.buckets.size() < n) g.buckets.resize(n);
    for (std::size_t b = 0; b < n; ++b) g.buckets[b].clear();
    g.buckets.resize(n);
    for (const EventKey& k : keys) g.buckets[(static_cast<std::uint64_t>(k.t) - start) / width].push_back(k);
    keys.clear();
    nrungs_ = r + 1;
  }

  void fill_bottom() {
    bottom_.clear();
    bhead_ = 0;
    for (;;) {
      if (nrungs_ == 0) {
        // Move Top into the first rung: one bucket per key over [min, max].
        const std::size_t n = top_.size();
        const std::uint64_t width = std::max<std::uint64_t>(1, (top_max_ - top_min_) / n + 1);
        const std::size_t nb = static_cast<std::size_t>((top_max_ - top_min_) / width) + 1;
        const std::uint64_t start = top_min_;
        top_start_ = start + nb * width;
        if (n <= kThres) {
          bottom_.swap(top_);
          top_.clear();
          std::sort(bottom_.begin(), bottom_.end(), runs_before);
          return;
        }
        spawn(0, start, width, nb, top_);
      }
      Rung& g = rungs_[nrungs_ - 1];
      while (g.cur < g.buckets.size() && g.buckets[g.cur].empty()) ++g.cur;
      if (g.cur == g.buckets.size()) {  // rung exhausted
        --nrungs_;
        continue;
      }
      std::vector<EventKey>& b = g.buckets[g.cur];
      const std::uint64_t bstart = g.start + g.cur * g.width;
      ++g.cur;
      g.count -= b.size();
      if (b.size() > kThres && g.width > 1 && nrungs_ < kMaxRungs) {
        const std::size_t n = b.size();
        const std::uint64_t width = std::max<std::uint64_t>(1, g.width / n + (g.width % n ? 1 : 0));
        const std::size_t nb = static_cast<std::size_t>((g.width + width - 1) / width);
        scratch_.swap(b);
        spawn(nrungs_, bstart, width, nb, scratch_);
        continue;
      }
      bottom_.swap(b);
      b.clear();
      std::sort(bottom_.begin(), bottom_.end(), runs_before);
      if (g.count == 0 && g.cur == g.buckets.size()) --nrungs_;
      return;
    }
  }

  std::vector<EventKey> top_;
  std::uint64_t top_start_ = 0, top_min_ = 0, top_max_ = 0;
  std::vector<Rung> rungs_;
  std::size_t nrungs_ = 0;
  std::vector<EventKey> bottom_;
  std::size_t bhead_ = 0;
  std::vector<EventKey> scratch_;
  std::size_t size_ = 0;
};

/// The textbook radix heap on the time (Ahuja et al. 1990; one bucket per bit), made FIFO among
/// equal times: the first version of the engine's radix queue, which now uses 64-way digits.
///
/// The queue keeps `base_`, the time of the last key it handed out (initially 0). A key of time t
/// lives in bucket 0 if t == base_, else in bucket b = 1 + (index of the highest bit in which t
/// and base_ differ), b in 1..64. Push is O(1): one XOR, one count-leading-zeros, one append.
/// Pop takes from bucket 0; when it is empty, the lowest non-empty bucket b is emptied: its
/// smallest time becomes the new base_ and each of its keys moves to a bucket < b (a key's bucket
/// only ever decreases, so a key moves at most 64 times and in practice about log2 of how far
/// ahead it was scheduled, in ps, divided by the spacing of events). The keys that land in
/// bucket 0 all have time base_; they are sorted by seq there (they may arrive from bucket b in
/// any seq order), and keys pushed later at that time have larger seqs, so appending keeps bucket
/// 0 in seq order and it is consumed front to back: exact (t, seq) FIFO order.
///
/// Requires monotone use (see the top of this file) and t >= 0: times are ps since the start.
class BinaryRadixEventQueue {
 public:
  bool empty() const noexcept { return size_ == 0; }
  std::size_t size() const noexcept { return size_; }

  void push(EventKey k) {
    place(k);
    ++size_;
  }

  /// Time of the next key. Precondition: !empty(). (Not const: it may redistribute a bucket.)
  std::int64_t min_time() {
    if (head0_ == buckets_[0].size()) refill();
    return static_cast<std::int64_t>(base_);
  }

  EventKey pop() {
    if (head0_ == buckets_[0].size()) refill();
    --size_;
    return buckets_[0][head0_++];
  }

  template <class F>
  void for_each(F&& f) const {
    for (std::size_t i = head0_; i < buckets_[0].size(); ++i) f(buckets_[0][i]);
    for (std::size_t b = 1; b < kBuckets; ++b)
      for (const EventKey& k : buckets_[b]) f(k);
  }

  /// Drops every key (keeps base_: later pushes must still be monotone, which the engine ensures).
  void clear() noexcept {
    for (auto& v : buckets_) v.clear();
    head0_ = 0;
    occupied_ = 0;
    size_ = 0;
  }

 private:
  static constexpr std::size_t kBuckets = 65;

  void place(const EventKey& k) {
    const std::uint64_t diff = static_cast<std::uint64_t>(k.t) ^ base_;
    if (diff == 0) {
      buckets_[0].push_back(k);
      return;
    }
    const unsigned b = 64u - static_cast<unsigned>(std::countl_zero(diff));  // 1..64
    buckets_[b].push_back(k);
    occupied_ |= std::uint64_t{1} << (b - 1);
  }

  // Bucket 0 is exhausted and size_ > 0: empty the lowest occupied bucket into the lower ones.
  void refill();

  std::array<std::vector<EventKey>, kBuckets> buckets_;
  std::size_t head0_ = 0;         // next key of bucket 0 to hand out
  std::uint64_t occupied_ = 0;    // bit b-1 set iff bucket b (1..64) is non-empty
  std::uint64_t base_ = 0;        // time of the last refill's minimum (<= every queued time)
  std::size_t size_ = 0;
};

inline void BinaryRadixEventQueue::refill() {
  buckets_[0].clear();
  head0_ = 0;
  const unsigned b = 1u + static_cast<unsigned>(std::countr_zero(occupied_));
  std::vector<EventKey>& from = buckets_[b];
  std::uint64_t m = UINT64_MAX;
  for (const EventKey& k : from) m = std::min(m, static_cast<std::uint64_t>(k.t));
  base_ = m;
  occupied_ &= ~(std::uint64_t{1} << (b - 1));
  for (const EventKey& k : from) place(k);
  from.clear();
  std::vector<EventKey>& now = buckets_[0];
  if (now.size() > 1)
    std::sort(now.begin(), now.end(), [](const EventKey& a, const EventKey& c) { return a.seq < c.seq; });
}

}  // namespace ipilab::bench
