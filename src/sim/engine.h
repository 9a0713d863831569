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
// The queue is a binary heap of 24-byte (time, seq, slot) keys. bench/sim measures the rate.
//
// A callable is invoked as f(Simulator&) if that compiles, else as f().
// Errors: scheduling in the past (when < now()) throws std::logic_error (a model bug, not input).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <stdexcept>
#include <type_traits>
#include <utility>
#include <vector>

#include "sim/time.h"

namespace ipilab::sim {

class Simulator {
 public:
  /// Bytes a callable may occupy to be stored without a heap allocation.
  static constexpr std::size_t kInlineBytes = 48;

  Simulator() = default;
  Simulator(const Simulator&) = delete;
  Simulator& operator=(const Simulator&) = delete;
  ~Simulator() { clear(); }

  /// Current simulated time (the time of the event being run, or of the last one run).
  Ps now() const noexcept { return now_; }

  /// Schedules `f` at absolute time `when` (>= now()). Throws std::logic_error if when < now().
  template <class F>
  void at(Ps when, F&& f) {
    if (when < now_) throw std::logic_error("sim::Simulator::at: time in the past");
    const std::uint32_t s = alloc_slot();
    emplace(slot(s), std::forward<F>(f));
    push(Key{when.v, next_seq_++, s});
  }

  /// Schedules `f` after `delay` (>= 0) from now().
  template <class F>
  void after(Ps delay, F&& f) { at(now_ + delay, std::forward<F>(f)); }

  /// Runs events until the queue is empty or stop() is called. Returns the number of events run.
  std::uint64_t run();

  /// Runs every event with time <= `limit`, then sets now() to `limit` if the queue still holds
  /// later events (or is empty). Returns the number of events run.
  std::uint64_t run_until(Ps limit);

  /// Makes run()/run_until() return after the current event. Pending events stay queued.
  void stop() noexcept { stopped_ = true; }

  /// Drops every pending event (destroying the callables) without running them.
  void clear() noexcept;

  /// Pending events.
  std::size_t pending() const noexcept { return heap_.size(); }
  /// Events run since construction.
  std::uint64_t events_run() const noexcept { return events_run_; }
  /// Slots allocated in the pool (the high-water mark of pending events, rounded up to a chunk):
  /// memory of the engine is proportional to this, not to the number of events run.
  std::size_t slot_capacity() const noexcept { return chunks_.size() * kChunk; }

 private:
  struct Slot {
    alignas(std::max_align_t) unsigned char buf[kInlineBytes];
    void (*call)(void*, Simulator&);  // invokes, then destroys, the callable
    void (*drop)(void*) noexcept;     // destroys without invoking
    std::uint32_t next_free;
  };
  struct Key {
    std::int64_t t;
    std::uint64_t seq;
    std::uint32_t slot;
  };
  static constexpr std::size_t kChunkBits = 10;
  static constexpr std::size_t kChunk = std::size_t{1} << kChunkBits;
  static constexpr std::uint32_t kNoSlot = UINT32_MAX;

  Slot& slot(std::uint32_t s) noexcept { return chunks_[s >> kChunkBits][s & (kChunk - 1)]; }
  std::uint32_t alloc_slot();
  void free_slot(std::uint32_t s) noexcept {
    slot(s).next_free = free_head_;
    free_head_ = s;
  }
  void push(Key k);
  Key pop();
  bool run_one();

  template <class F>
  static void invoke(F& f, Simulator& sim) {
    if constexpr (std::is_invocable_v<F&, Simulator&>) f(sim);
    else f();
  }

  template <class F>
  static void emplace(Slot& sl, F&& f) {
    using Fn = std::decay_t<F>;
    if constexpr (sizeof(Fn) <= kInlineBytes && alignof(Fn) <= alignof(std::max_align_t) &&
                  std::is_nothrow_move_constructible_v<Fn>) {
      ::new (static_cast<void*>(sl.buf)) Fn(std::forward<F>(f));
      sl.call = [](void* p, Simulator& sim) {
        Fn* fn = std::launder(static_cast<Fn*>(p));
        struct Destroy {
          Fn* fn;
          ~Destroy() { fn->~Fn(); }
        } guard{fn};
        invoke(*fn, sim);
      };
      sl.drop = [](void* p) noexcept { std::launder(static_cast<Fn*>(p))->~Fn(); };
    } else {
      Fn* heap = new Fn(std::forward<F>(f));
      ::new (static_cast<void*>(sl.buf)) Fn*(heap);
      sl.call = [](void* p, Simulator& sim) {
        std::unique_ptr<Fn> fn(*std::launder(static_cast<Fn**>(p)));
        invoke(*fn, sim);
      };
      sl.drop = [](void* p) noexcept { delete *std::launder(static_cast<Fn**>(p)); };
    }
  }

  Ps now_{};
  bool stopped_ = false;
  std::uint64_t next_seq_ = 0;
  std::uint64_t events_run_ = 0;
  std::vector<Key> heap_;
  std::vector<std::unique_ptr<Slot[]>> chunks_;
  std::uint32_t free_head_ = kNoSlot;
};

}  // namespace ipilab::sim
