#include "sim/engine.h"

namespace ipilab::sim::detail {

void SlotPool::grow() {
  const std::size_t base = chunks_.size() * kChunk;
  if (base + kChunk > kNoSlot) throw std::length_error("sim::Simulator: too many pending events");
  chunks_.push_back(std::make_unique<Slot[]>(kChunk));
  // Thread the new chunk onto the free list, lowest index first.
  for (std::size_t i = kChunk; i-- > 0;) free(static_cast<std::uint32_t>(base + i));
}

}  // namespace ipilab::sim::detail

namespace ipilab::sim {

void RadixEventQueue::grow(Bucket& b) {
  // Capacities are powers of two from 8; take the smallest spare array of at least twice the size.
  const std::uint32_t want = b.cap == 0 ? 8 : 2 * b.cap;
  if (want <= b.cap) throw std::length_error("sim::RadixEventQueue: bucket too large");
  std::unique_ptr<Entry[]> bigger;
  std::uint32_t cap = want;
  if (const std::uint32_t fits = spare_mask_ & ~(want - 1); fits != 0) {
    const unsigned c = static_cast<unsigned>(std::countr_zero(fits));
    bigger = std::move(spare_[c].back());
    spare_[c].pop_back();
    if (spare_[c].empty()) spare_mask_ &= ~(std::uint32_t{1} << c);
    cap = std::uint32_t{1} << c;
  } else {
    bigger = std::make_unique_for_overwrite<Entry[]>(want);
  }
  std::copy(b.begin(), b.end(), bigger.get());
  trim(b);
  b.data = std::move(bigger);
  b.cap = cap;
}

void RadixEventQueue::push_front(const Entry& e) {
  if (front_.size - fhead_ >= kFrontMax) {
    // Too many keys arrive inside the front's range: give the front back to the buckets (all of
    // its keys are >= base_) and restore seq order at level 0.
    for (std::size_t i = fhead_; i < front_.size; ++i) place(front_.data[i]);
    front_.clear();
    fhead_ = 0;
    front_last_ = INT64_MIN;
    sort_level0();
    place(e);
    return;
  }
  // After every queued key of a time <= e.t (e has the largest seq): upper bound on t.
  Entry* first = front_.data.get() + fhead_;
  Entry* pos = std::upper_bound(first, front_.end(), e.t, [](std::int64_t t, const Entry& x) { return t < x.t; });
  const std::size_t at = static_cast<std::size_t>(pos - front_.data.get());
  append(front_, e);  // may reallocate
  Entry* d = front_.data.get();
  std::move_backward(d + at, d + front_.size - 1, d + front_.size);
  d[at] = e;
}

void RadixEventQueue::advance() {
  if (front_.size != 0) {
    front_.clear();
    fhead_ = 0;
  }
  // Retire the used-up current bucket.
  const unsigned cur = static_cast<unsigned>(base_ & kDigitMask);
  buckets_[0][cur].clear();
  trim(buckets_[0][cur]);
  head_ = 0;
  occupied_[0] &= ~(std::uint64_t{1} << cur);
  if (occupied_[0] != 0) {  // the next time at level 0
    base_ = (base_ & ~kDigitMask) | static_cast<unsigned>(std::countr_zero(occupied_[0]));
    return;
  }
  levels_ &= ~1u;
  // Level 0 is empty: move the lowest bucket of the lowest non-empty level down.
  const unsigned level = static_cast<unsigned>(std::countr_zero(levels_));
  const unsigned digit = static_cast<unsigned>(std::countr_zero(occupied_[level]));
  Bucket& from = buckets_[level][digit];
  std::int64_t m = INT64_MAX, top = INT64_MIN;
  for (const Entry& e : from) {
    m = std::min(m, e.t);
    top = std::max(top, e.t);
  }
  base_ = static_cast<std::uint64_t>(m);
  occupied_[level] &= ~(std::uint64_t{1} << digit);
  if (occupied_[level] == 0) levels_ &= ~(1u << level);
  if (m == top && from.size > kFrontSort) {
    // One time (many events at one instant): the bucket becomes the current one as it is.
    Bucket& now = current();
    std::swap(now, from);
    trim(from);
    occupied_[0] |= std::uint64_t{1} << (base_ & kDigitMask);
    levels_ |= 1u;
    sort_level0();
    return;
  }
  if (from.size <= kFrontSort) {
    // Few keys: they become the front, sorted by (t, seq); pushes before its last time are
    // inserted into it (push_front), later ones go to the buckets as usual.
    std::swap(front_, from);
    from.clear();
    trim(from);
    fhead_ = 0;
    if (front_.size > 1)
      std::sort(front_.begin(), front_.end(), [](const Entry& a, const Entry& b) { return runs_after(b, a); });
    front_last_ = front_.data[front_.size - 1].t;
    return;
  }
  for (const Entry& e : from) place(e, m);  // every entry lands at a level < `level`
  from.clear();
  trim(from);
  sort_level0();
}

void RadixEventQueue::sort_level0() {
  const auto by_seq = [](const Entry& a, const Entry& b) { return a.seq < b.seq; };
  for (std::uint64_t occ = occupied_[0]; occ != 0; occ &= occ - 1) {
    Bucket& b = buckets_[0][static_cast<unsigned>(std::countr_zero(occ))];
    if (b.size > 1 && !std::is_sorted(b.begin(), b.end(), by_seq)) std::sort(b.begin(), b.end(), by_seq);
  }
}

std::int64_t RadixEventQueue::peek() const {
  if (fhead_ < front_.size) return front_.data[fhead_].t;
  const unsigned cur = static_cast<unsigned>(base_ & kDigitMask);
  if (head_ < buckets_[0][cur].size) return static_cast<std::int64_t>(base_);
  if (const std::uint64_t occ = occupied_[0] & ~(std::uint64_t{1} << cur); occ != 0)
    return static_cast<std::int64_t>((base_ & ~kDigitMask) | static_cast<unsigned>(std::countr_zero(occ)));
  for (unsigned level = 1; level < kLevels; ++level) {
    if (occupied_[level] == 0) continue;
    const Bucket& b = buckets_[level][static_cast<unsigned>(std::countr_zero(occupied_[level]))];
    std::int64_t m = INT64_MAX;
    for (const Entry& e : b) m = std::min(m, e.t);
    return m;
  }
  return INT64_MAX;  // empty (not reached: callers check empty())
}

void RadixEventQueue::to_radix() {
  // base_ is the time of the last key handed out: <= every queued and every later key.
  head_ = 0;
  heap_.for_each([this](const EventKey& k) { place(k); });
  heap_.clear();
  sort_level0();
  peek_ = kNoPeek;
  small_ = false;
}

void RadixEventQueue::to_small() {
  visit([this](const Entry& e) { heap_.push(e); });
  for (std::uint32_t lv = levels_; lv != 0; lv &= lv - 1) {
    const unsigned l = static_cast<unsigned>(std::countr_zero(lv));
    for (std::uint64_t occ = occupied_[l]; occ != 0; occ &= occ - 1) {
      Bucket& b = buckets_[l][static_cast<unsigned>(std::countr_zero(occ))];
      b.clear();
      trim(b);
    }
    occupied_[l] = 0;
  }
  buckets_[0][base_ & kDigitMask].clear();
  reset_to_small();
}

void RadixEventQueue::reset_to_small() noexcept {
  levels_ = 0;
  head_ = 0;
  peek_ = kNoPeek;
  front_.clear();
  fhead_ = 0;
  front_last_ = INT64_MIN;
  small_ = true;
}

void RadixEventQueue::clear() noexcept {
  heap_.clear();
  for (auto& level : buckets_)
    for (auto& v : level) {
      v.clear();
      if (v.cap > kKeep) {  // as trim(), but freed: clear() must not allocate
        v.data.reset();
        v.cap = 0;
      }
    }
  occupied_.fill(0);
  size_ = 0;
  reset_to_small();
}

std::size_t RadixEventQueue::memory_bytes() const noexcept {
  std::size_t entries = front_.cap;
  for (const auto& level : buckets_)
    for (const Bucket& b : level) entries += b.cap;
  for (std::size_t c = 0; c < spare_.size(); ++c) entries += spare_[c].size() << c;
  return entries * sizeof(Entry) + heap_.memory_bytes();
}

}  // namespace ipilab::sim
