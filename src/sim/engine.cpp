#include "sim/engine.h"

namespace ipilab::sim {

namespace {
// Heap order: earliest time first, then earliest scheduled first.
inline bool later(std::int64_t ta, std::uint64_t sa, std::int64_t tb, std::uint64_t sb) {
  return ta > tb || (ta == tb && sa > sb);
}
}  // namespace

std::uint32_t Simulator::alloc_slot() {
  if (free_head_ == kNoSlot) {
    const std::size_t base = chunks_.size() * kChunk;
    if (base + kChunk > kNoSlot) throw std::length_error("sim::Simulator: too many pending events");
    chunks_.push_back(std::make_unique<Slot[]>(kChunk));
    // Thread the new chunk onto the free list, lowest index first.
    for (std::size_t i = kChunk; i-- > 0;) free_slot(static_cast<std::uint32_t>(base + i));
  }
  const std::uint32_t s = free_head_;
  free_head_ = slot(s).next_free;
  return s;
}

void Simulator::push(Key k) {
  // Sift up with a hole (one copy per level).
  std::size_t i = heap_.size();
  heap_.push_back(k);
  Key* h = heap_.data();
  while (i > 0) {
    const std::size_t parent = (i - 1) / 2;
    if (!later(h[parent].t, h[parent].seq, k.t, k.seq)) break;
    h[i] = h[parent];
    i = parent;
  }
  h[i] = k;
}

Simulator::Key Simulator::pop() {
  Key* h = heap_.data();
  const Key top = h[0];
  const Key last = h[heap_.size() - 1];
  heap_.pop_back();
  const std::size_t n = heap_.size();
  if (n > 0) {
    // Sift the former last element down from the root.
    std::size_t i = 0;
    for (;;) {
      std::size_t c = 2 * i + 1;
      if (c >= n) break;
      if (c + 1 < n && later(h[c].t, h[c].seq, h[c + 1].t, h[c + 1].seq)) ++c;
      if (!later(last.t, last.seq, h[c].t, h[c].seq)) break;
      h[i] = h[c];
      i = c;
    }
    h[i] = last;
  }
  return top;
}

bool Simulator::run_one() {
  const Key k = pop();
  now_ = Ps{k.t};
  ++events_run_;
  Slot& sl = slot(k.slot);
  struct Release {
    Simulator* sim;
    std::uint32_t s;
    ~Release() { sim->free_slot(s); }
  } release{this, k.slot};
  sl.call(sl.buf, *this);
  return true;
}

std::uint64_t Simulator::run() {
  stopped_ = false;
  const std::uint64_t before = events_run_;
  while (!heap_.empty() && !stopped_) run_one();
  return events_run_ - before;
}

std::uint64_t Simulator::run_until(Ps limit) {
  stopped_ = false;
  const std::uint64_t before = events_run_;
  while (!heap_.empty() && !stopped_ && heap_.front().t <= limit.v) run_one();
  if (!stopped_ && now_ < limit) now_ = limit;
  return events_run_ - before;
}

void Simulator::clear() noexcept {
  for (const Key& k : heap_) {
    Slot& sl = slot(k.slot);
    sl.drop(sl.buf);
    free_slot(k.slot);
  }
  heap_.clear();
}

}  // namespace ipilab::sim
