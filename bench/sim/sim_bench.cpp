// bench_sim: speed of the discrete-event engine (issue 3, "Speed").
//
//   BM_EngineEvents          raw engine rate: K independent self-rescheduling chains, events/s.
//   BM_UnicastIpiRoundTrip   a synthetic IPI round trip with the shape of ipi_hw: sender vCPU
//                            resource -> wire delay -> target vCPU resource (handler) -> ack delay
//                            -> sender; latency recorded in a Histogram. Reports simulated IPIs/s.
//   BM_Multicast4096         one sender, 4096 targets: a hypervisor resource serializes the
//                            per-target posting, each target runs its handler, the sender waits for
//                            all acks. Reports simulated IPI deliveries/s.
// Each reports "hist_bytes" and "slots": the memory of the streaming statistics and of the event
// pool, which must not grow with the iteration count (compare runs with different --benchmark_min_time).
#include <benchmark/benchmark.h>

#include <cstdint>
#include <vector>

#include "sim/engine.h"
#include "sim/histogram.h"
#include "sim/resource.h"
#include "sim/rng.h"

namespace {

using ipilab::sim::from_ns;
using ipilab::sim::Histogram;
using ipilab::sim::Jitter;
using ipilab::sim::Ps;
using ipilab::sim::Resource;
using ipilab::sim::Rng;
using ipilab::sim::Simulator;

void BM_EngineEvents(benchmark::State& state) {
  const int chains = static_cast<int>(state.range(0));
  Simulator sim;
  std::uint64_t budget = 0;
  struct Chain {
    std::uint64_t* budget;
    std::int64_t step;
    void operator()(Simulator& s) const {
      if (*budget == 0) return;
      --*budget;
      s.after(Ps{step}, Chain{budget, step});
    }
  };
  std::uint64_t events = 0;
  for (auto _ : state) {
    budget = 1'000'000;
    for (int c = 0; c < chains; ++c) sim.after(Ps{c}, Chain{&budget, 1000 + c});
    events += sim.run();
  }
  state.counters["events/s"] = benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsRate);
  state.counters["slots"] = static_cast<double>(sim.slot_capacity());
}
BENCHMARK(BM_EngineEvents)->Arg(2)->Arg(64)->Arg(4096)->Unit(benchmark::kMillisecond);

// One unicast round trip = 4 events: send done on sender, delivery at target, handler done, ack.
struct UnicastModel {
  Simulator sim;
  Rng rng{1};
  Resource sender{"vCPU0"}, target{"vCPU1"};
  Histogram latency;
  std::uint64_t left = 0;
  Ps started{};
  Jitter send_cost, wire, handler, ack;

  explicit UnicastModel(double spread)
      : send_cost(from_ns(120), spread), wire(from_ns(250), spread), handler(from_ns(200), spread),
        ack(from_ns(180), spread) {}

  void start() {
    started = sim.now();
    const auto g = sender.request(sim.now(), send_cost.sample(rng));
    sim.at(g.end + wire.sample(rng), [this] { deliver(); });
  }
  void deliver() {
    const auto g = target.request(sim.now(), handler.sample(rng));
    sim.at(g.end + ack.sample(rng), [this] { acked(); });
  }
  void acked() {
    latency.record(sim.now() - started);
    if (--left > 0) start();
  }
};

void BM_UnicastIpiRoundTrip(benchmark::State& state) {
  UnicastModel m(static_cast<double>(state.range(0)) / 100.0);
  const std::uint64_t per_iter = 100'000;
  for (auto _ : state) {
    m.left = per_iter;
    m.start();
    m.sim.run();
  }
  state.counters["IPIs/s"] = benchmark::Counter(static_cast<double>(per_iter * state.iterations()),
                                                benchmark::Counter::kIsRate);
  state.counters["mean_ns"] = m.latency.mean() / 1000.0;
  state.counters["p99_ns"] = m.latency.percentile(99) / 1000.0;
  state.counters["hist_bytes"] = static_cast<double>(m.latency.memory_bytes());
  state.counters["slots"] = static_cast<double>(m.sim.slot_capacity());
}
// Arg = spread in percent (0: exact costs, no RNG draws; 10: lognormal jitter on every step).
BENCHMARK(BM_UnicastIpiRoundTrip)->Arg(0)->Arg(10)->Unit(benchmark::kMillisecond);

struct MulticastModel {
  Simulator sim;
  Rng rng{2};
  Resource hypervisor{"hypervisor on pCPU0"};
  std::vector<Resource> targets;
  Histogram latency;
  std::uint64_t rounds_left = 0;
  std::uint32_t acks_left = 0;
  Ps started{};
  Ps per_target = from_ns(25), wire = from_ns(250), handler = from_ns(200), ack = from_ns(180);

  explicit MulticastModel(std::size_t n) : targets(n) {}

  void start() {
    started = sim.now();
    acks_left = static_cast<std::uint32_t>(targets.size());
    for (std::uint32_t i = 0; i < targets.size(); ++i) {
      const auto g = hypervisor.request(sim.now(), per_target);
      sim.at(g.end + wire, [this, i] { deliver(i); });
    }
  }
  void deliver(std::uint32_t i) {
    const auto g = targets[i].request(sim.now(), handler);
    sim.at(g.end + ack, [this] { acked(); });
  }
  void acked() {
    if (--acks_left > 0) return;
    latency.record(sim.now() - started);
    if (--rounds_left > 0) start();
  }
};

void BM_Multicast4096(benchmark::State& state) {
  MulticastModel m(4096);
  const std::uint64_t rounds = 100;
  for (auto _ : state) {
    m.rounds_left = rounds;
    m.start();
    m.sim.run();
  }
  state.counters["IPIs/s"] = benchmark::Counter(static_cast<double>(rounds * 4096 * state.iterations()),
                                                benchmark::Counter::kIsRate);
  state.counters["round_us"] = m.latency.mean() / 1e6;
  state.counters["hist_bytes"] = static_cast<double>(m.latency.memory_bytes());
  state.counters["slots"] = static_cast<double>(m.sim.slot_capacity());
}
BENCHMARK(BM_Multicast4096)->Unit(benchmark::kMillisecond);

}  // namespace
