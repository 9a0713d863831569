// ipilab/sim/engine.h — the discrete-event engine: one clock, one event queue, run to completion.
//
// Model: an event is a callable scheduled at a simulated time (Ps). `run()` repeatedly takes the
// earliest event, sets now() to its time and calls it; the callable may schedule more events.
// Determinism: events are ordered by (time, sequence number), where the sequence number is the
// order in which they were scheduled, so events at equal times run first-scheduled-first (FIFO).
// Nothing depends on addresses, hashing or wall time: the same program and seed give the same run.
//
// Speed: events are not std::function. A callable of up to kInlineBytes (48) bytes that is nothrow
// move-constructible is stored in place inside a slot of a chunked pool (slots never move, so no
// relocation); a larger one is heap-allocated once (allowed, but slower: capture pointers/indices).
// The queue holds 24-byte (time, seq, slot) keys; bench/sim measures the rate.
//
// The queue (event_queue.h) and why it is a radix queue. Every candidate ran inside this same
// engine in one bench_sim run (BM_Engine<...>: a hold model with 2 / 64 / 4096 / 65536 pending
// events; delays fixed per chain, exponential with mean 1 us, or shared 100 ns steps with many
// equal times). Events/s in millions on the 2-core development VM, fixed / exp / ties:
//                    2 pending         64              4096              65536
//   binary heap      90 / 77 / 77     30 / 27 / 25    13 / 14 / 15      9.3 / 9.5 / 8.3
//   4-ary heap       74 / 62 / 62     28 / 24 / 21    12 / 13 / 12      8.3 / 8.7 / 7.9
//   calendar queue   77 / 36 / 46     25 / 5.6 / 20   30 / 4.9 / 30     13 / 7.0 / 12
//   ladder queue     48 / 44 / 43     40 / 36 / 41    35 / 24 / 26      12 / 8.5 / 18
//   radix, 1 bit     75 / 54 / 52     39 / 39 / 58    32 / 27 / 49      20 / 14 / 30
//   radix, 6 bits    73 / 65 / 66     42 / 38 / 40    37 / 34 / 55      24 / 18 / 30   <- chosen
// (bench_sim prints the current figures and the ratios to the binary heap; the machine is shared,
// so single figures move by ~10 % between runs, the ratios much less.)
//   - Heaps pay O(log n) compare-and-move steps with hard-to-predict branches on push and pop.
//   - Brown's calendar queue (CACM 31(10), 1988) estimates its bucket width only when it resizes:
//     after a start at 1 ps spacing its width stays ~1000x too small for 1 us delays (exp row), the
//     sensitivity that motivated the ladder queue.
//   - The ladder queue (Tang, Goh & Thng, ACM TOMACS 15(3), 2005) adapts, but its bottom list and
//     rung spawning cost more than a heap at small sizes, and it thrashes memory at 65536.
//   - A radix heap needs no parameter from the time distribution: our times are integer ps and the
//     queue is monotone (nothing is scheduled before now()), exactly the case it serves. With 64-way
//     digits a key moves down once or twice instead of once per bit; a small sorted "front" for
//     sparse buckets, a no-copy path for many events at one time, and a plain binary heap while at
//     most 32 events are pending (where a tiny heap is the fastest structure) complete it. It keeps
//     the (time, seq) order exactly (event_queue.h says how; tests/sim/engine_test.cpp checks it
//     against the heap on random programs). Cost: at 2 pending it runs at ~0.8-0.85x the heap's
//     rate (the mode check and the larger inlined push; still 65-73 M events/s); from 64 pending
//     up it is 1.4x to 3.8x faster (median of 3 runs; all built-in scenarios together take 3 %
//     less CPU than with the previous engine).
//
// A callable is invoked as f(Simulator&) if that compiles, else as f().
// Errors: scheduling in the past (when < now()) throws std::logic_error (a model bug, not input).
//
// Simulator is BasicSimulator on the radix queue; HeapSimulator is the same engine on the
// previous binary heap (for tests that compare run orders and for the bench). Both give the same
// run for the same program: the order is defined by (time, seq), not by the queue.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <stdexcept>
#include <type_traits>
#include <utility>
#include <vector>

#include "common/error.h"
#include "sim/event_queue.h"
#include "sim/time.h"

namespace ipilab::sim {

/// The latest time an event may be scheduled at: 2^61 ps, about 26.7 days of simulated time. Below
/// it a time plus a few more durations (each cost is at most 1 s, cost/profile.h) cannot overflow
/// the int64 picoseconds of sim/time.h, so a run that would need more time stops cleanly instead.
inline constexpr Ps kHorizon{std::int64_t{1} << 61};

/// at()/after() beyond kHorizon: the run asked for more simulated time than the engine represents
/// (in practice costs, times or iterations out of any sane range). Bad input (exit 2); the scenario
/// layer adds the run's place and its largest cost.
class HorizonError : public InputError {
 public:
  HorizonError()
      : InputError("simulated time", "the run would pass 2^61 ps (26.7 days of simulated time), more than the engine "
                                     "represents: the costs, times or iterations are out of range") {}
};

namespace detail {

/// The engine's pool of callable slots: chunks of kChunk slots that never move, a free list.
class SlotPool {
 public:
  static constexpr std::size_t kInlineBytes = 48;
  struct Slot {
    alignas(std::max_align_t) unsigned char buf[kInlineBytes];
    void (*call)(void* callable, void* sim);  // invokes, then destroys, the callable
    void (*drop)(void* callable) noexcept;    // destroys without invoking
    std::uint32_t next_free;
  };

  Slot& operator[](std::uint32_t s) noexcept { return chunks_[s >> kChunkBits][s & (kChunk - 1)]; }
  std::uint32_t alloc() {
    if (free_head_ == kNoSlot) grow();
    const std::uint32_t s = free_head_;
    free_head_ = (*this)[s].next_free;
    return s;
  }
  void free(std::uint32_t s) noexcept {
    (*this)[s].next_free = free_head_;
    free_head_ = s;
  }
  std::size_t capacity() const noexcept { return chunks_.size() * kChunk; }

 private:
  static constexpr std::size_t kChunkBits = 10;
  static constexpr std::size_t kChunk = std::size_t{1} << kChunkBits;
  static constexpr std::uint32_t kNoSlot = UINT32_MAX;
  void grow();  // engine.cpp: adds one chunk to the free list (std::length_error past 2^32 slots)
  std::vector<std::unique_ptr<Slot[]>> chunks_;
  std::uint32_t free_head_ = kNoSlot;
};

}  // namespace detail

/// The engine, on the queue `Queue` (event_queue.h). `Derived` is the concrete simulator type,
/// which callables receive (f(Derived&)). Use Simulator.
template <class Derived, class Queue>
class BasicSimulator {
 public:
  /// Bytes a callable may occupy to be stored without a heap allocation.
  static constexpr std::size_t kInlineBytes = detail::SlotPool::kInlineBytes;

  BasicSimulator(const BasicSimulator&) = delete;
  BasicSimulator& operator=(const BasicSimulator&) = delete;

  /// Current simulated time (the time of the event being run, or of the last one run).
  Ps now() const noexcept { return now_; }

  /// Schedules `f` at absolute time `when` (>= now()). Throws std::logic_error if when < now(),
  /// HorizonError if when > kHorizon.
  template <class F>
  void at(Ps when, F&& f) {
    if (when < now_ || when > kHorizon) [[unlikely]] bad_time(when);
    const std::uint32_t s = pool_.alloc();
    emplace(pool_[s], std::forward<F>(f));
    queue_.push(EventKey{when.v, next_seq_++, s});
  }

  /// Schedules `f` after `delay` (>= 0) from now().
  template <class F>
  void after(Ps delay, F&& f) {
    if (delay > kHorizon) [[unlikely]] throw HorizonError();  // now_ + delay must not overflow
    at(now_ + delay, std::forward<F>(f));
  }

  /// Runs events until the queue is empty or stop() is called. Returns the number of events run.
  std::uint64_t run() {
    stopped_ = false;
    const std::uint64_t before = events_run_;
    while (!queue_.empty() && !stopped_) run_one();
    return events_run_ - before;
  }

  /// Runs every event with time <= `limit`, then sets now() to `limit` if the queue still holds
  /// later events (or is empty). Returns the number of events run.
  std::uint64_t run_until(Ps limit) {
    stopped_ = false;
    const std::uint64_t before = events_run_;
    while (!queue_.empty() && !stopped_ && queue_.min_time() <= limit.v) run_one();
    if (!stopped_ && now_ < limit) now_ = limit;
    return events_run_ - before;
  }

  /// Makes run()/run_until() return after the current event. Pending events stay queued.
  void stop() noexcept { stopped_ = true; }

  /// Drops every pending event (destroying the callables) without running them.
  void clear() noexcept {
    queue_.for_each([this](const EventKey& k) {
      detail::SlotPool::Slot& sl = pool_[k.slot];
      sl.drop(sl.buf);
      pool_.free(k.slot);
    });
    queue_.clear();
  }

  /// Pending events.
  std::size_t pending() const noexcept { return queue_.size(); }
  /// Events run since construction.
  std::uint64_t events_run() const noexcept { return events_run_; }
  /// Slots allocated in the pool (the high-water mark of pending events, rounded up to a chunk):
  /// memory of the engine is proportional to this, not to the number of events run.
  std::size_t slot_capacity() const noexcept { return pool_.capacity(); }
  /// Bytes the queue holds for pending keys (if the queue reports it; else 0): like
  /// slot_capacity(), it follows the peak number of pending events, not the events run.
  std::size_t queue_memory_bytes() const noexcept {
    if constexpr (requires(const Queue& q) { q.memory_bytes(); }) return queue_.memory_bytes();
    else return 0;
  }

 protected:
  BasicSimulator() = default;
  ~BasicSimulator() { clear(); }

 private:
  using Slot = detail::SlotPool::Slot;

  [[noreturn]] void bad_time(Ps when) const {
    if (when > kHorizon) throw HorizonError();
    throw std::logic_error("sim::Simulator::at: time in the past");
  }

  void run_one() {
    const EventKey k = queue_.pop();
    now_ = Ps{k.t};
    ++events_run_;
    Slot& sl = pool_[k.slot];
    struct Release {
      detail::SlotPool* pool;
      std::uint32_t s;
      ~Release() { pool->free(s); }
    } release{&pool_, k.slot};
    sl.call(sl.buf, this);
  }

  template <class F>
  static void invoke(F& f, void* self) {
    Derived& sim = *static_cast<Derived*>(static_cast<BasicSimulator*>(self));
    if constexpr (std::is_invocable_v<F&, Derived&>) f(sim);
    else f();
  }

  template <class F>
  static void emplace(Slot& sl, F&& f) {
    using Fn = std::decay_t<F>;
    if constexpr (sizeof(Fn) <= kInlineBytes && alignof(Fn) <= alignof(std::max_align_t) &&
                  std::is_nothrow_move_constructible_v<Fn>) {
      ::new (static_cast<void*>(sl.buf)) Fn(std::forward<F>(f));
      sl.call = [](void* p, void* self) {
        Fn* fn = std::launder(static_cast<Fn*>(p));
        struct Destroy {
          Fn* fn;
          ~Destroy() { fn->~Fn(); }
        } guard{fn};
        invoke(*fn, self);
      };
      sl.drop = [](void* p) noexcept { std::launder(static_cast<Fn*>(p))->~Fn(); };
    } else {
      Fn* heap = new Fn(std::forward<F>(f));
      ::new (static_cast<void*>(sl.buf)) Fn*(heap);
      sl.call = [](void* p, void* self) {
        std::unique_ptr<Fn> fn(*std::launder(static_cast<Fn**>(p)));
        invoke(*fn, self);
      };
      sl.drop = [](void* p) noexcept { delete *std::launder(static_cast<Fn**>(p)); };
    }
  }

  Ps now_{};
  bool stopped_ = false;
  std::uint64_t next_seq_ = 0;
  std::uint64_t events_run_ = 0;
  Queue queue_;
  detail::SlotPool pool_;
};

/// The simulator: the engine on the radix queue.
class Simulator : public BasicSimulator<Simulator, RadixEventQueue> {
 public:
  Simulator() = default;
};

/// The same engine on the previous binary heap: the reference the radix queue is tested and
/// benchmarked against (same program -> same run).
class HeapSimulator : public BasicSimulator<HeapSimulator, BinaryHeapEventQueue> {
 public:
  HeapSimulator() = default;
};

}  // namespace ipilab::sim
