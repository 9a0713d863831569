// Tests of sim/engine.h: ordering, FIFO among equal times, determinism, bounded memory.
#include "sim/engine.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <utility>
#include <vector>

#include "sim/rng.h"

namespace ipilab::sim {
namespace {

TEST(Engine, EventsRunInTimeOrderAndClockFollows) {
  Simulator sim;
  std::vector<std::pair<int, std::int64_t>> seen;
  for (int t : {50, 10, 40, 20, 30}) sim.at(Ps{t}, [&seen, t](Simulator& s) { seen.push_back({t, s.now().v}); });
  EXPECT_EQ(sim.run(), 5u);
  ASSERT_EQ(seen.size(), 5u);
  for (std::size_t i = 0; i < seen.size(); ++i) {
    EXPECT_EQ(seen[i].first, static_cast<int>(10 * (i + 1)));
    EXPECT_EQ(seen[i].second, seen[i].first);
  }
  EXPECT_EQ(sim.now(), Ps{50});
}

TEST(Engine, EqualTimes_RunFirstScheduledFirst) {
  Simulator sim;
  std::vector<int> order;
  for (int i = 0; i < 100; ++i) sim.at(Ps{7}, [&order, i] { order.push_back(i); });
  // Events scheduled by a running event at the same time run after those already queued.
  sim.at(Ps{7}, [&order](Simulator& s) { s.after(Ps{0}, [&order] { order.push_back(1000); }); });
  sim.run();
  ASSERT_EQ(order.size(), 101u);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(order[static_cast<std::size_t>(i)], i);
  EXPECT_EQ(order.back(), 1000);
}

TEST(Engine, SchedulingInThePast_IsAModelBug) {
  Simulator sim;
  sim.at(Ps{100}, [](Simulator& s) { EXPECT_THROW(s.at(Ps{99}, [] {}), std::logic_error); });
  sim.run();
}

TEST(Engine, RunUntil_StopsAtLimitAndAdvancesClock) {
  Simulator sim;
  int ran = 0;
  sim.at(Ps{10}, [&] { ++ran; });
  sim.at(Ps{20}, [&] { ++ran; });
  sim.at(Ps{30}, [&] { ++ran; });
  EXPECT_EQ(sim.run_until(Ps{20}), 2u);
  EXPECT_EQ(sim.now(), Ps{20});
  EXPECT_EQ(sim.pending(), 1u);
  EXPECT_EQ(sim.run_until(Ps{25}), 0u);
  EXPECT_EQ(sim.now(), Ps{25});
  EXPECT_EQ(sim.run(), 1u);
  EXPECT_EQ(ran, 3);
}

TEST(Engine, Stop_LeavesLaterEventsQueued) {
  Simulator sim;
  sim.at(Ps{1}, [](Simulator& s) { s.stop(); });
  sim.at(Ps{2}, [] {});
  EXPECT_EQ(sim.run(), 1u);
  EXPECT_EQ(sim.pending(), 1u);
}

TEST(Engine, LargeCallables_UseHeapAndAreDestroyedOnce) {
  auto token = std::make_shared<int>(0);
  {
    Simulator sim;
    struct Big {
      std::shared_ptr<int> p;
      char pad[200];
      void operator()() const { ++*p; }
    };
    static_assert(sizeof(Big) > Simulator::kInlineBytes);
    sim.at(Ps{1}, Big{token, {}});
    sim.at(Ps{2}, Big{token, {}});               // never run: dropped by the destructor
    sim.at(Ps{1}, [token] { ++*token; });        // inline
    EXPECT_EQ(token.use_count(), 4);
    sim.run_until(Ps{1});
    EXPECT_EQ(*token, 2);
    EXPECT_EQ(token.use_count(), 2);  // the two run callables were destroyed after running
  }
  EXPECT_EQ(token.use_count(), 1);    // the pending one was destroyed with the simulator
}

TEST(Engine, ThrowingHandler_ReleasesItsSlot) {
  Simulator sim;
  sim.at(Ps{1}, [] { throw std::runtime_error("boom"); });
  EXPECT_THROW(sim.run(), std::runtime_error);
  sim.at(Ps{2}, [] {});
  EXPECT_EQ(sim.run(), 1u);
  EXPECT_EQ(sim.slot_capacity(), 1024u);
}

// A small random model: N "CPUs" each re-arm after a random delay; returns the (time, cpu) trace.
std::vector<std::pair<std::int64_t, int>> random_trace(std::uint64_t seed) {
  Simulator sim;
  Rng rng(seed);
  std::vector<std::pair<std::int64_t, int>> trace;
  struct Tick {
    Rng* rng;
    std::vector<std::pair<std::int64_t, int>>* trace;
    int cpu;
    void operator()(Simulator& s) const {
      trace->push_back({s.now().v, cpu});
      if (trace->size() < 5000)
        s.after(Ps{static_cast<std::int64_t>(rng->uniform_below(4))}, Tick{rng, trace, cpu});
    }
  };
  for (int c = 0; c < 8; ++c) sim.at(Ps{0}, Tick{&rng, &trace, c});
  sim.run();
  return trace;
}

TEST(Engine, SameSeed_GivesIdenticalEventSequence) {
  const auto a = random_trace(42);
  const auto b = random_trace(42);
  const auto c = random_trace(43);
  EXPECT_EQ(a.size(), b.size());
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
}

TEST(Engine, Memory_DoesNotGrowWithEventsRun) {
  // A ping-pong keeps 2 events pending; a million events must not allocate more slots than ten.
  auto run = [](int rounds) {
    Simulator sim;
    int left = rounds;
    struct Ping {
      int* left;
      void operator()(Simulator& s) const {
        if (--*left > 0) s.after(Ps{3}, Ping{left});
      }
    };
    sim.at(Ps{0}, Ping{&left});
    sim.at(Ps{1}, Ping{&left});
    sim.run();
    return std::pair{sim.events_run(), sim.slot_capacity()};
  };
  const auto small = run(10);
  const auto big = run(1'000'000);
  EXPECT_GE(big.first, 1'000'000u);
  EXPECT_EQ(small.second, big.second);
}


// ---------------------------------------------------------------------------------------------
// The radix queue against the binary heap it replaced: same keys in, same keys out, in every
// regime the radix queue has (small heap mode, buckets, the sorted front, one-time buckets, the
// front overflowing, mode switches back and forth, min_time without popping).

// Random monotone operations on both queues; returns how many keys were compared.
std::uint64_t compare_queues(std::uint64_t seed, int ops) {
  RadixEventQueue radix;
  BinaryHeapEventQueue heap;
  Rng rng(seed);
  std::int64_t floor = 0;  // time of the last key popped: pushes must not go below it
  std::uint64_t seq = 0, compared = 0;
  // Phases change the push/pop balance, so the size swings across the small/radix thresholds and
  // up to a few thousand keys.
  for (int op = 0; op < ops; ++op) {
    const int phase = (op / 2000) % 4;
    const std::uint64_t r = rng.uniform_below(100);
    const bool do_push = heap.empty() || (phase == 0 ? r < 70 : phase == 1 ? r < 45 : phase == 2 ? r < 52 : r < 30);
    if (do_push) {
      std::int64_t delay;
      switch (rng.uniform_below(8)) {
        case 0: delay = 0; break;                                                          // same instant
        case 1: delay = static_cast<std::int64_t>(rng.uniform_below(4)); break;            // near ties
        case 2: delay = static_cast<std::int64_t>(rng.uniform_below(64)); break;           // level 0/1
        case 3: delay = static_cast<std::int64_t>(rng.uniform_below(5000)); break;
        case 4: delay = static_cast<std::int64_t>(rng.uniform_below(2'000'000)); break;   // ~us
        case 5: delay = 100'000 * static_cast<std::int64_t>(rng.uniform_below(8)); break;  // shared times
        case 6: delay = static_cast<std::int64_t>(rng.uniform_below(std::uint64_t{1} << 40)); break;
        default: delay = static_cast<std::int64_t>(rng.uniform_below(300)); break;
      }
      // Bursts: many keys at one time (one-time buckets) or inside a short range (the front).
      const int n = rng.uniform_below(50) == 0 ? static_cast<int>(rng.uniform_below(400)) : 1;
      for (int i = 0; i < n; ++i) {
        const EventKey k{floor + delay + (n > 1 && (i & 1) ? static_cast<std::int64_t>(i % 7) : 0), seq, static_cast<std::uint32_t>(seq)};
        ++seq;
        radix.push(k);
        heap.push(k);
      }
    } else if (r % 3 == 0) {
      EXPECT_EQ(radix.min_time(), heap.min_time()) << "op " << op;
    } else {
      const EventKey a = radix.pop(), b = heap.pop();
      if (a.t != b.t || a.seq != b.seq || a.slot != b.slot) {
        ADD_FAILURE() << "op " << op << ": radix popped (" << a.t << ", " << a.seq << "), heap (" << b.t << ", " << b.seq << ")";
        return compared;
      }
      floor = a.t;
      ++compared;
    }
    EXPECT_EQ(radix.size(), heap.size());
  }
  while (!heap.empty()) {
    const EventKey a = radix.pop(), b = heap.pop();
    if (a.t != b.t || a.seq != b.seq) {
      ADD_FAILURE() << "drain: radix popped (" << a.t << ", " << a.seq << "), heap (" << b.t << ", " << b.seq << ")";
      return compared;
    }
    ++compared;
  }
  EXPECT_TRUE(radix.empty());
  return compared;
}

TEST(EventQueue, Radix_PopsExactlyTheHeapOrder_RandomMonotoneOperations) {
  for (std::uint64_t seed = 1; seed <= 4; ++seed) EXPECT_GT(compare_queues(seed, 30'000), 10'000u) << "seed " << seed;
}

TEST(EventQueue, Radix_ManyKeysAtOneTime_ComeOutInSeqOrder) {
  // 5000 keys at t = 1000 pushed around keys at other times, then more at 1000 while popping.
  RadixEventQueue q;
  std::uint64_t seq = 0;
  for (int i = 0; i < 5000; ++i) {
    q.push({1000, seq, 0});
    ++seq;
    q.push({1000 + (i % 97) * 4096, seq, 0});
    ++seq;
  }
  std::uint64_t last_seq = 0;
  int at_1000 = 0;
  while (!q.empty() && q.min_time() == 1000) {
    const EventKey k = q.pop();
    if (at_1000 > 0) {
      EXPECT_LT(last_seq, k.seq);
    }
    last_seq = k.seq;
    if (++at_1000 == 2500) q.push({1000, seq++, 0});  // same time, scheduled while running it
  }
  // 5000 keys of the first kind, 52 of the second (i = 0, 97, ..., 4947), 1 pushed while popping.
  EXPECT_EQ(at_1000, 5000 + 52 + 1);
  EXPECT_EQ(last_seq, 10000u);  // the one pushed last came out last
  EXPECT_EQ(q.min_time(), 1000 + 4096);
}

TEST(EventQueue, Radix_MinTimeDoesNotForbidEarlierPushes) {
  // After min_time() looked ahead (run_until stopping short), a push between the last time
  // handed out and that minimum must still come out first.
  RadixEventQueue q;
  for (std::uint64_t i = 0; i < 100; ++i) q.push({static_cast<std::int64_t>(1'000'000 + i * 977), i, 0});
  EXPECT_EQ(q.pop().t, 1'000'000);
  EXPECT_EQ(q.min_time(), 1'000'977);
  q.push({1'000'100, 100, 0});
  EXPECT_EQ(q.min_time(), 1'000'100);
  EXPECT_EQ(q.pop().seq, 100u);
  EXPECT_EQ(q.pop().t, 1'000'977);
}

// The same random program (agents re-arming, bursts, run_until slices with outside pushes, a
// clear) on the engine with either queue gives the same event trace.
template <class Sim>
std::vector<std::pair<std::int64_t, int>> program_trace(std::uint64_t seed) {
  Sim sim;
  Rng rng(seed);
  std::vector<std::pair<std::int64_t, int>> trace;
  struct Agent {
    Rng* rng;
    std::vector<std::pair<std::int64_t, int>>* trace;
    int id;
    void operator()(Sim& s) const {
      trace->push_back({s.now().v, id});
      if (trace->size() > 60'000) return;
      const std::uint64_t r = rng->uniform_below(1000);
      if (r < 3)  // a burst of events at one time, or spread over a few ps
        for (int i = 0; i < 300; ++i) s.after(Ps{r == 0 ? 0 : i % 5}, Agent{rng, trace, 10'000 + i});
      if (id < 10'000) {
        const std::int64_t d = r < 400 ? static_cast<std::int64_t>(r % 3)
                               : r < 900 ? static_cast<std::int64_t>(rng->uniform_below(10'000))
                                         : static_cast<std::int64_t>(rng->uniform_below(50'000'000));
        s.after(Ps{d}, Agent{rng, trace, id});
        if (r % 97 == 0) s.after(Ps{d}, Agent{rng, trace, id + 1000});  // agents multiply ...
      }
    }
  };
  for (int c = 0; c < 16; ++c) sim.at(Ps{c}, Agent{&rng, &trace, c});
  for (int slice = 0; slice < 400 && sim.pending() > 0; ++slice) {
    sim.run_until(sim.now() + Ps{static_cast<std::int64_t>(rng.uniform_below(3'000'000))});
    trace.push_back({sim.now().v, -1});
    // ... and events arrive from outside between slices, before the next pending one.
    sim.after(Ps{static_cast<std::int64_t>(rng.uniform_below(1000))}, Agent{&rng, &trace, 20'000 + slice});
    if (slice == 200) {
      trace.push_back({static_cast<std::int64_t>(sim.pending()), -2});
      sim.clear();
      for (int c = 0; c < 40; ++c) sim.after(Ps{c % 3}, Agent{&rng, &trace, 100 + c});
    }
  }
  sim.run();
  return trace;
}

TEST(Engine, RadixAndHeapEngines_RunTheSameProgramIdentically) {
  for (std::uint64_t seed : {3u, 4u, 5u}) {
    const auto radix = program_trace<Simulator>(seed);
    const auto heap = program_trace<HeapSimulator>(seed);
    EXPECT_GT(radix.size(), 20'000u);
    EXPECT_EQ(radix.size(), heap.size());
    EXPECT_TRUE(radix == heap) << "seed " << seed << ": the traces differ";
  }
}


// Queue memory follows the pending events, not the events run: 2048 agents re-arming after
// exponential delays (mean 1 us, so keys spread over every level), 20x more events.
std::size_t queue_bytes_after(std::uint64_t events) {
  Simulator sim;
  Rng rng(11);
  std::uint64_t left = events;
  struct Agent {
    Rng* rng;
    std::uint64_t* left;
    void operator()(Simulator& s) const {
      if (*left == 0) return;
      --*left;
      s.after(Ps{static_cast<std::int64_t>(-std::log(1.0 - rng->uniform01()) * 1e6)}, Agent{rng, left});
    }
  };
  for (int c = 0; c < 2048; ++c) sim.at(Ps{c}, Agent{&rng, &left});
  std::size_t peak = 0;
  while (sim.pending() > 0) {
    sim.run_until(sim.now() + from_us(50));
    peak = std::max(peak, sim.queue_memory_bytes());
  }
  return peak;
}

TEST(Engine, QueueMemory_DoesNotGrowWithEventsRun) {
  const std::size_t small = queue_bytes_after(20'000);
  const std::size_t big = queue_bytes_after(400'000);

  // What may grow: the up-to-8-entry arrays emptied buckets keep (704 buckets x 8 x 24 B, as more
  // buckets get touched) and the high-water mark of the spares; both are bounded, not per event.
  EXPECT_LE(big, small + 704 * 8 * sizeof(EventKey)) << small << " bytes after 20k events, " << big << " after 400k";
  EXPECT_LT(big, std::size_t{2048} * sizeof(EventKey) * 16);  // a small multiple of the 2048 keys
}

}  // namespace
}  // namespace ipilab::sim
