// bench_sim: speed of the discrete-event engine and of cost sampling; the same binary runs the
// whole-VM speed benchmarks of bench/workload/bench_workload.cpp (tlb_shootdown_256/*, BM_IpiHwUnicast,
// BM_MulticastTo4095: simulated interrupts delivered per CPU second).
//
//   BM_Engine<Queue>/PATTERN/PENDING   raw engine rate, events/s: PENDING independent chains, each
//                            event re-arming itself after a delay, so PENDING events are always
//                            queued (the "hold model" of event-queue studies). Every queue runs in the
//                            same engine (sim::BasicSimulator); only the queue differs:
//                              Radix      the engine's queue (sim::Simulator)
//                              BinaryHeap the previous queue (sim::HeapSimulator), the reference
//                              FourAryHeap, Calendar, Ladder  candidates (candidate_queues.h)
//                            PATTERN: 0 fixed  chain c re-arms every 1000 + c ps (distinct times)
//                                     1 exp    exponential delays, mean 1 us (a table of 4096)
//                                     2 ties   all chains start at 0 and re-arm after 100..800 ns in
//                                              100 ns steps: every time is shared by many events
//                                              (PENDING / 8 on average), the FIFO tie-break at work
//                            After the runs, a table prints every queue's events/s and its ratio to
//                            BinaryHeap for each PATTERN/PENDING (the comparison asked for: same
//                            run, same machine state).
//   BM_Sample/dist:K         cost sampling (sim::Distribution::sample), samples/s: K = 0 fixed,
//                            1 lognormal, 2 normal, 3 exponential, 4 empirical (50 bins), beside
//   BM_SampleReference/dist:K  the textbook draw of the same lognormal (K = 0: polar-method normal,
//                            then exp) and normal (K = 1), Rng::with_spread.
//   BM_UnicastIpiRoundTrip   a synthetic IPI round trip with the shape of ipi_hw: sender vCPU
//                            resource -> wire delay -> target vCPU resource (handler) -> ack delay
//                            -> sender; latency recorded in a Histogram. Reports simulated IPIs/s.
//   BM_Multicast4096         one sender, 4096 targets: a hypervisor resource serializes the
//                            per-target posting, each target runs its handler, the sender waits for
//                            all acks. Reports simulated IPI deliveries/s.
// Each reports "hist_bytes" and "slots": the memory of the streaming statistics and of the event
// pool, which must not grow with the iteration count (compare runs with different --benchmark_min_time).
// Before any benchmark, main() checks that every queue runs a random program (many equal times) in
// exactly the order of BinaryHeap; a mismatch aborts the bench (exit 1).
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "candidate_queues.h"
#include "sim/engine.h"
#include "sim/histogram.h"
#include "sim/resource.h"
#include "sim/rng.h"

namespace {

using ipilab::sim::BasicSimulator;
using ipilab::sim::from_ns;
using ipilab::sim::HeapSimulator;
using ipilab::sim::Histogram;
using ipilab::sim::Jitter;
using ipilab::sim::Ps;
using ipilab::sim::Resource;
using ipilab::sim::Rng;
using ipilab::sim::Simulator;

class FourAryHeapSimulator : public BasicSimulator<FourAryHeapSimulator, ipilab::bench::QuaternaryHeapEventQueue> {};
class CalendarSimulator : public BasicSimulator<CalendarSimulator, ipilab::bench::CalendarEventQueue> {};
class LadderSimulator : public BasicSimulator<LadderSimulator, ipilab::bench::LadderEventQueue> {};
class BinaryRadixSimulator : public BasicSimulator<BinaryRadixSimulator, ipilab::bench::BinaryRadixEventQueue> {};

// Delay tables of the patterns (ps), 4096 entries each, cycled through by a shared index.
struct Delays {
  std::vector<std::int64_t> exp, ties;
  Delays() {
    Rng rng(12345);
    for (int i = 0; i < 4096; ++i) {
      exp.push_back(1 + static_cast<std::int64_t>(-std::log(1.0 - rng.uniform01()) * 1e6));
      ties.push_back(100'000 * static_cast<std::int64_t>(1 + rng.uniform_below(8)));
    }
  }
};
const Delays& delays() {
  static const Delays d;
  return d;
}

struct ChainState {
  std::uint64_t budget = 0;
  std::uint32_t next = 0;  // index into the delay table
  int pattern = 0;
  const std::int64_t* table = nullptr;
};

struct Chain {
  ChainState* st;
  std::int64_t step;  // pattern 0
  template <class S>
  void operator()(S& s) const {
    if (st->budget == 0) return;
    --st->budget;
    const std::int64_t d = st->pattern == 0 ? step : st->table[st->next++ & 4095];
    s.after(Ps{d}, Chain{st, step});
  }
};

template <class Sim>
void BM_Engine(benchmark::State& state) {
  const int pattern = static_cast<int>(state.range(0));
  const int chains = static_cast<int>(state.range(1));
  Sim sim;
  ChainState st;
  st.pattern = pattern;
  st.table = pattern == 1 ? delays().exp.data() : delays().ties.data();
  std::uint64_t events = 0;
  for (auto _ : state) {
    st.budget = 1'000'000;
    for (int c = 0; c < chains; ++c) sim.after(Ps{pattern == 2 ? 0 : c}, Chain{&st, 1000 + c});
    events += sim.run();
  }
  state.counters["events/s"] = benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsRate);
  state.counters["slots"] = static_cast<double>(sim.slot_capacity());
  state.counters["queue_bytes"] = static_cast<double>(sim.queue_memory_bytes());
}
void engine_args(benchmark::internal::Benchmark* b) {
  b->ArgNames({"pattern", "pending"});
  for (int pattern : {0, 1, 2})
    for (int pending : {2, 64, 4096, 65536}) b->Args({pattern, pending});
  b->Unit(benchmark::kMillisecond);
}
BENCHMARK_TEMPLATE(BM_Engine, Simulator)->Name("BM_Engine<Radix>")->Apply(engine_args);
BENCHMARK_TEMPLATE(BM_Engine, HeapSimulator)->Name("BM_Engine<BinaryHeap>")->Apply(engine_args);
BENCHMARK_TEMPLATE(BM_Engine, FourAryHeapSimulator)->Name("BM_Engine<FourAryHeap>")->Apply(engine_args);
BENCHMARK_TEMPLATE(BM_Engine, CalendarSimulator)->Name("BM_Engine<Calendar>")->Apply(engine_args);
BENCHMARK_TEMPLATE(BM_Engine, LadderSimulator)->Name("BM_Engine<Ladder>")->Apply(engine_args);
BENCHMARK_TEMPLATE(BM_Engine, BinaryRadixSimulator)->Name("BM_Engine<Radix2>")->Apply(engine_args);

// The order check: 64 agents re-arming after 0..3 ps (many equal times) plus bursts of 200 events
// at one time, 200,000 events; returns the (time, agent) trace.
template <class Sim>
std::vector<std::pair<std::int64_t, int>> order_trace() {
  Sim sim;
  Rng rng(7);
  std::vector<std::pair<std::int64_t, int>> trace;
  struct Tick {
    Rng* rng;
    std::vector<std::pair<std::int64_t, int>>* trace;
    int id;
    void operator()(Sim& s) const {
      trace->push_back({s.now().v, id});
      if (trace->size() >= 200'000) return;
      const std::uint64_t r = rng->uniform_below(1000);
      if (r == 0)
        for (int i = 0; i < 200; ++i) s.after(Ps{5}, Tick{rng, trace, 1000 + i});
      if (id < 1000) s.after(Ps{static_cast<std::int64_t>(r < 500 ? r % 4 : r * 37)}, Tick{rng, trace, id});
    }
  };
  for (int c = 0; c < 64; ++c) sim.at(Ps{0}, Tick{&rng, &trace, c});
  sim.run();
  return trace;
}

// Cost sampling: one sim::Distribution per kind (1 us mean), samples/s. BM_SampleReference draws
// the same lognormal / normal the textbook way (polar-method normal, then exp), the peer the
// one-draw samplers are measured against.
void BM_Sample(benchmark::State& state) {
  std::vector<ipilab::sim::EmpiricalBin> bins;
  for (int i = 0; i < 50; ++i) bins.push_back({20'000.0 * i, 20'000.0 * i + 20'000, static_cast<double>(1 + (i * 7919) % 13)});
  double bm = 0, w = 0;
  for (const auto& b : bins) { bm += b.count * (b.lo + b.hi) / 2; w += b.count; }
  const ipilab::sim::Distribution dists[] = {
      ipilab::sim::Distribution::fixed(from_ns(1000)), ipilab::sim::Distribution::lognormal(from_ns(1000), 0.1),
      ipilab::sim::Distribution::normal(from_ns(1000), 0.1), ipilab::sim::Distribution::exponential(from_ns(1000)),
      ipilab::sim::Distribution::empirical(Ps{static_cast<std::int64_t>(bm / w)}, bins)};
  const ipilab::sim::Distribution& d = dists[state.range(0)];
  Rng rng(3);
  std::int64_t sum = 0;
  for (auto _ : state) {
    for (int i = 0; i < 1000; ++i) sum += d.sample(rng).v;
  }
  benchmark::DoNotOptimize(sum);
  state.SetLabel(std::string(ipilab::sim::dist_name(d.kind())));
  state.counters["samples/s"] = benchmark::Counter(1000.0 * static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_Sample)->ArgName("dist")->DenseRange(0, 4);

void BM_SampleReference(benchmark::State& state) {
  const auto shape = state.range(0) == 0 ? ipilab::sim::SpreadShape::Lognormal : ipilab::sim::SpreadShape::NormalClipped;
  Rng rng(3);
  double sum = 0;
  for (auto _ : state) {
    for (int i = 0; i < 1000; ++i) sum += rng.with_spread(1e6, 0.1, shape);
  }
  benchmark::DoNotOptimize(sum);
  state.SetLabel(state.range(0) == 0 ? "lognormal, polar normal + exp" : "normal, polar");
  state.counters["samples/s"] = benchmark::Counter(1000.0 * static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_SampleReference)->ArgName("dist")->DenseRange(0, 1);

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

namespace {

// Console output as usual, plus events/s of every BM_Engine run for the ratio table.
class RatioReporter : public benchmark::ConsoleReporter {
 public:
  std::map<std::pair<int, long>, std::map<std::string, double>> rate;  // (pattern, pending) -> queue -> events/s
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& r : runs) {
      const std::string name = r.benchmark_name();
      // One figure per case: the run itself, or with --benchmark_repetitions the median.
      const bool median = r.run_type == Run::RT_Aggregate && r.aggregate_name == "median";
      if (name.rfind("BM_Engine<", 0) != 0 || (r.run_type != Run::RT_Iteration && !median)) continue;
      const auto close = name.find('>');
      const auto it = r.counters.find("events/s");
      if (close == std::string::npos || it == r.counters.end()) continue;
      int pattern = -1;
      long pending = 0;  // the rest of the name is "/pattern:P/pending:N"
      if (std::sscanf(name.c_str() + close + 1, "/pattern:%d/pending:%ld", &pattern, &pending) != 2) continue;
      double& slot = rate[{pattern, pending}][name.substr(10, close - 10)];
      if (median || slot == 0) slot = it->second.value;
    }
    ConsoleReporter::ReportRuns(runs);
  }
};

template <class Sim>
bool same_order_as_heap(const char* name) {
  static const auto reference = order_trace<HeapSimulator>();
  if (order_trace<Sim>() == reference) return true;
  std::fprintf(stderr, "bench_sim: %s runs the order-check program in a different order than BinaryHeap\n", name);
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  bool ok = same_order_as_heap<Simulator>("Radix");
  ok &= same_order_as_heap<FourAryHeapSimulator>("FourAryHeap");
  ok &= same_order_as_heap<CalendarSimulator>("Calendar");
  ok &= same_order_as_heap<LadderSimulator>("Ladder");
  ok &= same_order_as_heap<BinaryRadixSimulator>("Radix2");
  if (!ok) return 1;
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  if (!reporter.rate.empty()) {
    static const char* const kQueues[] = {"Radix", "BinaryHeap", "FourAryHeap", "Calendar", "Ladder", "Radix2"};
    static const char* const kPatterns[] = {"fixed", "exp", "ties"};
    std::printf("\nEngine events/s (M/s) by queue, and each queue / BinaryHeap (the previous queue), same run:\n");
    std::printf("%-22s", "pattern pending");
    for (const char* q : kQueues) std::printf(" %13s", q);
    std::printf("   Radix/BinaryHeap\n");
    for (const auto& [which, by_queue] : reporter.rate) {
      const auto [pattern, pending] = which;
      std::printf("%-6s %15ld", pattern >= 0 && pattern < 3 ? kPatterns[pattern] : "?", pending);
      const auto heap = by_queue.find("BinaryHeap");
      for (const char* q : kQueues) {
        const auto it = by_queue.find(q);
        if (it == by_queue.end()) std::printf(" %13s", "-");
        else if (heap == by_queue.end()) std::printf(" %13.1f", it->second / 1e6);
        else std::printf(" %6.1f (%4.2fx)", it->second / 1e6, it->second / heap->second);
      }
      const auto radix = by_queue.find("Radix");
      if (radix != by_queue.end() && heap != by_queue.end()) std::printf("   %.2fx", radix->second / heap->second);
      std::printf("\n");
    }
  }
  benchmark::Shutdown();
  return 0;
}
