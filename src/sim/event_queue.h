// ipilab/sim/event_queue.h — the pending-event queues the engine (engine.h) can be built on.
//
// Every queue here holds EventKeys and pops them in (t, seq) order: earliest time first, and among
// equal times the smallest sequence number (the first scheduled) first. The engine hands out
// sequence numbers in scheduling order, so pop order is a total order that does not depend on
// addresses or on the queue's internal layout: two queues given the same pushes and pops return
// the same keys (tests/sim/engine_test.cpp checks this against BinaryHeapEventQueue).
//
// Precondition shared by all: the queue is MONOTONE — a pushed key's t is >= the t of every key
// popped so far (the engine enforces it: events are never scheduled in the past). The radix queue
// relies on it; the heaps do not need it.
//
//   RadixEventQueue       the engine's queue (why: engine.h): a radix heap with 64-way digits on
//                         the integer ps time.
//   BinaryHeapEventQueue  the previous queue, a binary heap of (t, seq) keys; kept as the reference
//                         for tests and for bench/sim, which measures both side by side.
// The other candidates measured (4-ary heap, calendar queue, ladder queue, one-bucket-per-bit radix
// heap) are in bench/sim/candidate_queues.h.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace ipilab::sim {

/// One pending event: its time (ps), its sequence number (scheduling order) and the engine's slot.
struct EventKey {
  std::int64_t t;
  std::uint64_t seq;
  std::uint32_t slot;
};

/// (t, seq) order: true if a runs strictly after b.
inline bool runs_after(const EventKey& a, const EventKey& b) noexcept {
  return a.t > b.t || (a.t == b.t && a.seq > b.seq);
}

/// Binary heap of EventKeys (the engine's queue before the radix queue): O(log n) push and pop.
class BinaryHeapEventQueue {
 public:
  bool empty() const noexcept { return h_.empty(); }
  std::size_t size() const noexcept { return h_.size(); }

  [[gnu::always_inline]] void push(EventKey k) {
    std::size_t i = h_.size();
    h_.push_back(k);
    EventKey* h = h_.data();
    while (i > 0) {  // sift up with a hole
      const std::size_t parent = (i - 1) / 2;
      if (!runs_after(h[parent], k)) break;
      h[i] = h[parent];
      i = parent;
    }
    h[i] = k;
  }

  /// Time of the next key. Precondition: !empty().
  std::int64_t min_time() const noexcept { return h_.front().t; }

  /// Removes and returns the next key. Precondition: !empty().
  [[gnu::always_inline]] EventKey pop() noexcept {
    EventKey* h = h_.data();
    const EventKey top = h[0];
    const EventKey last = h[h_.size() - 1];
    h_.pop_back();
    const std::size_t n = h_.size();
    if (n > 0) {  // sift the former last key down from the root
      std::size_t i = 0;
      for (;;) {
        std::size_t c = 2 * i + 1;
        if (c >= n) break;
        if (c + 1 < n && runs_after(h[c], h[c + 1])) ++c;
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
  std::size_t memory_bytes() const noexcept { return h_.capacity() * sizeof(EventKey); }

 private:
  std::vector<EventKey> h_;
};

/// Radix queue on the time: a radix heap (Ahuja, Mehlhorn, Orlin & Tarjan, JACM 1990) with 64-way
/// digits instead of one bucket per bit (multi-level buckets: Denardo & Fox, "Shortest-route
/// methods: 1. Reaching, pruning, and buckets", Operations Research 27(1), 1979), exactly FIFO
/// among equal times, and a binary heap while few events are pending.
///
/// Small mode. While at most kSmallMax keys are queued they live in a BinaryHeapEventQueue (with 2
/// or 16 pending a tiny heap is cheaper than any bucket scheme). Past kSmallMax the keys move to the
/// radix layout; when fewer than kSmallMin remain they move back (the gap makes a size hovering at
/// a boundary switch at most once per kSmallMax - kSmallMin operations).
///
/// Radix layout. The time t (ps, >= 0) is read as eleven 6-bit digits. The queue keeps `base_`, a
/// time <= every queued time and <= the time of every later push (it is the time of the last key
/// handed out, or earlier). A key lives at level L = (highest bit in which t and base_ differ) / 6,
/// or 0 if t == base_, in the bucket of its digit L: at level L all keys agree with base_ above
/// digit L, and a level-0 bucket holds keys of ONE time. A 64-bit mask per level says which
/// buckets are non-empty, a mask of levels which levels are.
///
/// Push: one XOR, one count-leading-zeros, one append, two mask bits: O(1).
/// Pop: from the level-0 bucket of base_'s low digit, front to back. When it is used up, base_
/// moves to the next non-empty level-0 bucket (lowest set bit of the mask); when level 0 is empty,
/// the lowest non-empty bucket of the lowest non-empty level is emptied: its smallest time becomes
/// base_ and each of its keys moves to a lower level. A key moves at most once per level it
/// passes, in practice once or twice (a delay of 1 us is 2^20 ps, digit 3 of 11; 4096 events
/// spread over 1 us are ~256 ps apart and meet at level 1), each move a sequential 24-byte copy.
/// Two shortcuts: a bucket of at most kFrontSort keys becomes the "front", sorted by (t, seq) and
/// handed out in order (a push before its last time is inserted into it; a front grown past
/// kFrontMax goes back to the buckets), so sparse times do not pay one move-down per pop; and a
/// bucket whose keys all have one time becomes the current bucket without a copy.
///
/// FIFO among equal times. A level-0 bucket receives keys either by push (each with a larger seq
/// than every key already queued) or, while level 0 is empty, from the one bucket being moved down,
/// in that bucket's order, which need not be seq order. So after a move-down (and after the move
/// from small mode) every level-0 bucket holding several keys is sorted by seq; later pushes append
/// larger seqs. Each time is therefore handed out in seq order and times in increasing order:
/// exactly (t, seq), as the heap.
///
/// min_time() does not move keys (a move would advance base_ past the time of the last key handed
/// out, and the engine may still schedule there, e.g. after run_until stopped short); it scans the
/// bucket that would be moved and caches the answer until the next pop.
///
/// Requires monotone use (the top of this file) and t >= 0 (times are ps since the start).
/// Memory: 704 bucket headers (16 bytes each), the keys, and storage reused between buckets: an
/// emptied bucket keeps at most kKeep (8) entries (704 x 8 x 24 B = 132 KiB at most), larger
/// arrays become spares that the next growing bucket takes. Storage follows the high-water mark of
/// pending keys, never the number of events run (memory_bytes(); tests/sim/engine_test.cpp).
class RadixEventQueue {
 public:
  /// Mode thresholds (keys queued): to the radix layout above kSmallMax, back below kSmallMin.
  static constexpr std::size_t kSmallMax = 32;
  static constexpr std::size_t kSmallMin = 8;

  bool empty() const noexcept { return size_ == 0; }
  std::size_t size() const noexcept { return size_; }

  [[gnu::always_inline]] void push(EventKey k) {
    if (small_) {
      if (size_ < kSmallMax) {
        heap_.push(k);
        ++size_;
        return;
      }
      to_radix();
    }
    if (k.t < front_last_) push_front(k);
    else place(k);
    ++size_;
    if (peek_ != kNoPeek && k.t < peek_) peek_ = k.t;
  }

  /// Time of the next key. Precondition: !empty().
  std::int64_t min_time() {
    if (small_) return heap_.min_time();
    if (peek_ == kNoPeek) peek_ = peek();
    return peek_;
  }

  /// Removes and returns the next key. Precondition: !empty().
  [[gnu::always_inline]] EventKey pop() {
    if (small_) {
      --size_;
      const EventKey k = heap_.pop();
      base_ = static_cast<std::uint64_t>(k.t);
      return k;
    }
    if (fhead_ == front_.size) {
      if (head_ == current().size) advance();
      if (fhead_ == front_.size) {
        const Entry e = current().data[head_++];
        --size_;
        peek_ = kNoPeek;
        if (size_ < kSmallMin) to_small();
        return e;
      }
    }
    const Entry e = front_.data[fhead_++];
    if (fhead_ == front_.size) front_last_ = INT64_MIN;
    --size_;
    peek_ = kNoPeek;
    if (size_ < kSmallMin) to_small();
    return e;
  }

  template <class F>
  void for_each(F&& f) const {
    if (small_) return heap_.for_each(f);
    visit(f);
  }

  /// Drops every key.
  void clear() noexcept;

  /// Bytes of key storage held (buckets, front, spares, small-mode heap), for memory checks.
  std::size_t memory_bytes() const noexcept;

 private:
  using Entry = EventKey;
  // A bucket: a growable array of entries (16 bytes of header). Storage comes from and returns to
  // the queue's spare arrays (append(), grow(), trim()).
  struct Bucket {
    std::unique_ptr<Entry[]> data;
    std::uint32_t size = 0, cap = 0;
    void clear() noexcept { size = 0; }
    const Entry* begin() const noexcept { return data.get(); }
    const Entry* end() const noexcept { return data.get() + size; }
    Entry* begin() noexcept { return data.get(); }
    Entry* end() noexcept { return data.get() + size; }
  };
  [[gnu::always_inline]] void append(Bucket& b, const Entry& e) {
    if (b.size == b.cap) grow(b);
    b.data[b.size++] = e;
  }
  void grow(Bucket& b);  // larger storage: a spare array if one fits, else a new one
  // Back to small mode with no level occupied and nothing in front (to_small(), clear()).
  void reset_to_small() noexcept;
  // An emptied bucket keeps at most kKeep entries of storage; a larger array becomes a spare, so
  // the storage follows the pending events, not the largest bucket each of the 704 ever held.
  void trim(Bucket& b) {
    if (b.cap > kKeep) {
      const unsigned c = static_cast<unsigned>(std::countr_zero(b.cap));
      spare_[c].push_back(std::move(b.data));
      spare_mask_ |= std::uint32_t{1} << c;
      b.cap = 0;
    }
  }
  static constexpr unsigned kDigitBits = 6;
  static constexpr std::size_t kDigits = std::size_t{1} << kDigitBits;  // 64 buckets a level
  static constexpr std::uint64_t kDigitMask = kDigits - 1;
  static constexpr std::size_t kLevels = (64 + kDigitBits - 1) / kDigitBits;  // 11
  static constexpr std::int64_t kNoPeek = INT64_MAX;
  static constexpr std::uint32_t kKeep = 8;       // storage an emptied bucket keeps (entries)
  static constexpr std::uint32_t kFrontSort = 32;   // a bucket this small is sorted into the front
  static constexpr std::uint32_t kFrontMax = 256;   // a front this large goes back to the buckets

  Bucket& current() noexcept { return buckets_[0][base_ & kDigitMask]; }

  [[gnu::always_inline]] void place(const Entry& e) { place(e, base_); }
  // `base` == base_ (a copy the compiler need not reload after each store in a loop).
  [[gnu::always_inline]] void place(const Entry& e, std::uint64_t base) {
    const std::uint64_t t = static_cast<std::uint64_t>(e.t);
    const std::uint64_t diff = t ^ base;
    const unsigned level = diff == 0 ? 0u : static_cast<unsigned>(63 - std::countl_zero(diff)) / kDigitBits;
    const unsigned digit = static_cast<unsigned>(t >> (level * kDigitBits)) & kDigitMask;
    append(buckets_[level][digit], e);
    occupied_[level] |= std::uint64_t{1} << digit;
    levels_ |= 1u << level;
  }

  // Every live entry, in no particular order (the current bucket from head_).
  template <class F>
  void visit(F&& f) const {
    for (std::size_t i = fhead_; i < front_.size; ++i) f(front_.data[i]);
    for (std::uint32_t lv = levels_; lv != 0; lv &= lv - 1) {
      const unsigned l = static_cast<unsigned>(std::countr_zero(lv));
      for (std::uint64_t occ = occupied_[l]; occ != 0; occ &= occ - 1) {
        const unsigned d = static_cast<unsigned>(std::countr_zero(occ));
        const Bucket& b = buckets_[l][d];
        const std::size_t from = (l == 0 && d == (base_ & kDigitMask)) ? head_ : 0;
        for (std::size_t i = from; i < b.size; ++i) f(b.data[i]);
      }
    }
  }

  void push_front(const Entry& e);  // into the sorted front run (t < front_last_)
  void advance();            // the front and the current bucket are used up and keys remain
  std::int64_t peek() const; // min_time() without moving anything
  void sort_level0();        // seq order inside each level-0 bucket
  void to_radix();           // small mode -> radix layout
  void to_small();           // radix layout -> small mode

  bool small_ = true;
  BinaryHeapEventQueue heap_;                      // small mode
  std::array<std::array<Bucket, kDigits>, kLevels> buckets_{};
  std::array<std::uint64_t, kLevels> occupied_{};  // bit d of [L]: bucket d of level L non-empty
  std::uint32_t levels_ = 0;                       // bit L: occupied_[L] != 0
  std::uint64_t base_ = 0;                         // see above; its low digit = the current bucket
  std::size_t head_ = 0;                           // next entry of the current bucket
  std::size_t size_ = 0;
  std::int64_t peek_ = kNoPeek;                    // cached min_time() (radix layout)
  Bucket front_;                                   // sorted run of the earliest keys, from fhead_
  std::size_t fhead_ = 0;
  std::int64_t front_last_ = INT64_MIN;            // time of the front's last key (INT64_MIN: none)
  std::array<std::vector<std::unique_ptr<Entry[]>>, 32> spare_;  // unused arrays of 2^i entries
  std::uint32_t spare_mask_ = 0;                   // bit i: spare_[i] is not empty
};

}  // namespace ipilab::sim
