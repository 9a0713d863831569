// Tests of sim/engine.h: ordering, FIFO among equal times, determinism, bounded memory.
#include "sim/engine.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace ipilab::sim
