// Queueing laws on one FIFO resource: Poisson arrivals scheduled on the engine (sim::Simulator),
// each served by sim::Resource (first come, first served), services drawn by sim::Distribution.
//
// Theory (one server, arrival rate lambda, mean service S, utilisation rho = lambda S):
//   M/M/1 (exponential service):   mean wait in queue Wq = rho S / (1 - rho)
//   M/D/1 (deterministic service): Wq = rho S / (2 (1 - rho))   (Pollaczek-Khinchine, E[S^2] = S^2)
//   both (Poisson arrivals see time averages): the fraction of arrivals that wait = rho.
// Here lambda = 1 / us and S = rho us, so every mean is exact in integer ps: Wq = 0.5 / 8.1 us
// (M/M/1 at rho 0.5 / 0.9) and 0.25 / 4.05 us (M/D/1).
//
// Sample sizes. The waits of successive customers are strongly correlated, so the sample mean of n
// waits has a relative standard deviation sqrt(K / n), K the relative asymptotic variance. K was
// measured over 200 independent seeds of exactly these runs (n = 400,000 after the same warm-up):
//   M/M/1  rho 0.5: K = 23     rho 0.9: K = 409  (the rho 0.9 estimate is the costly one)
//   M/D/1  rho 0.5: K = 14     rho 0.9: K = 222
//   fraction of arrivals that wait: K <= 2 in every case
// (+-10 % on K from 200 seeds). With n = 8,000,000 (M/M/1) and 4,000,000 (M/D/1) measured
// customers the 2 % tolerance is 2.8 (M/M/1) and 2.7 (M/D/1) standard deviations at rho 0.9 and
// over 10 at rho 0.5: a run on another random stream fails with probability ~0.6 %. The fraction
// that waits gets 1 %, over 15 standard deviations. Warm-up: the first 50,000 customers (about 150
// relaxation times of the rho 0.9 queue, ~1 / (1 - sqrt(rho))^2 = 380 service times) are not
// counted. Each run is one event per arrival (the resource's grant gives the wait at once); CPU
// time of the M/M/1 run, the longest: ~0.4 s in the release build, ~1.5 s under ASan (this
// executable is compiled optimised there too, tests/sim/CMakeLists.txt).
//
// Exactness. Separately, the engine + resource must BE the FIFO single-server queue: with each
// departure also an event, the waits equal the Lindley recursion W' = max(0, W + S - A) computed
// from the same samples, to the ps, and customers leave in arrival order at their granted ends.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdint>
#include <vector>

#include "sim/engine.h"
#include "sim/resource.h"
#include "sim/rng.h"

namespace ipilab::sim {
namespace {

constexpr Ps kInterarrival{1'000'000};  // 1 us: lambda = 1 / us
constexpr std::uint64_t kWarmup = 50'000;

// One Poisson arrival stream; every arrival joins each server's queue (the servers are independent
// FIFO queues sharing the arrival times).
struct Server {
  Resource resource;
  Distribution service;
  double rho;
  double sum_wait = 0;  // ps, measured customers only
  std::uint64_t waited = 0;
};

struct QueueRun {
  Simulator sim;
  Rng rng;
  Distribution interarrival = Distribution::exponential(kInterarrival);
  std::vector<Server> servers;
  std::uint64_t arrivals_left = 0, warmup_left = 0, measured = 0;

  explicit QueueRun(std::uint64_t seed) : rng(seed) {}
  void arrive() {
    const bool count = warmup_left == 0;
    if (!count) --warmup_left;
    for (Server& s : servers) {
      const Grant g = s.resource.request(sim.now(), s.service.sample(rng));
      if (count) {
        s.sum_wait += static_cast<double>(g.wait.v);
        s.waited += g.wait.v > 0;
      }
    }
    measured += count;
    if (--arrivals_left > 0) sim.after(interarrival.sample(rng), [this] { arrive(); });
  }
  void go(std::uint64_t n) {
    arrivals_left = kWarmup + n;
    warmup_left = kWarmup;
    sim.at(Ps{0}, [this] { arrive(); });
    sim.run();
  }
};

Server server(double rho, bool exponential) {
  const Ps mean{static_cast<std::int64_t>(rho * 1'000'000)};
  return Server{Resource(exponential ? "M/M/1" : "M/D/1"),
                exponential ? Distribution::exponential(mean) : Distribution::fixed(mean), rho};
}

void expect_law(const QueueRun& r, const Server& s, double wq_ps, const char* what) {
  const double mean = s.sum_wait / static_cast<double>(r.measured);
  const double frac = static_cast<double>(s.waited) / static_cast<double>(r.measured);
  EXPECT_NEAR(mean / wq_ps, 1.0, 0.02) << what << " rho " << s.rho << ": mean wait " << mean / 1e6 << " us, theory "
                                        << wq_ps / 1e6 << " us";
  EXPECT_NEAR(frac / s.rho, 1.0, 0.01) << what << " rho " << s.rho << ": fraction that waited " << frac;
  std::printf("%s rho %.1f: mean wait %.4f us (theory %.4f, %+.2f %%), waited %.4f (theory %.1f)\n", what, s.rho,
              mean / 1e6, wq_ps / 1e6, 100 * (mean / wq_ps - 1), frac, s.rho);
}

TEST(Queueing, MM1_MeanWaitIsRhoSOverOneMinusRho_AtUtilisation05And09) {
  QueueRun r(20240601);
  r.servers.push_back(server(0.5, true));
  r.servers.push_back(server(0.9, true));
  r.go(8'000'000);
  ASSERT_EQ(r.measured, 8'000'000u);
  expect_law(r, r.servers[0], 0.5 * 500'000 / 0.5, "M/M/1");  // 0.5 us
  expect_law(r, r.servers[1], 0.9 * 900'000 / 0.1, "M/M/1");  // 8.1 us
}

TEST(Queueing, MD1_MeanWaitIsPollaczekKhinchine_AtUtilisation05And09) {
  QueueRun r(20240602);
  r.servers.push_back(server(0.5, false));
  r.servers.push_back(server(0.9, false));
  r.go(4'000'000);
  ASSERT_EQ(r.measured, 4'000'000u);
  expect_law(r, r.servers[0], 0.5 * 500'000 / (2 * 0.5), "M/D/1");  // 0.25 us
  expect_law(r, r.servers[1], 0.9 * 900'000 / (2 * 0.1), "M/D/1");  // 4.05 us
}

TEST(Queueing, EngineAndResource_AreExactlyTheLindleyRecursion) {
  // M/M/1 at rho 0.9 with every departure an event too (up to ~100 pending events: the engine's
  // small-heap and radix modes both run, and switch), 200,000 customers.
  struct Ctx {
    Simulator sim;
    Rng rng{7};
    Resource res{"server"};
    Distribution interarrival = Distribution::exponential(kInterarrival);
    Distribution service = Distribution::exponential(Ps{900'000});
    std::vector<std::int64_t> gaps, services, waits;  // gaps[i]: arrival i+1 - arrival i
    std::uint64_t departed = 0;
    std::size_t max_pending = 0;
    std::size_t n = 200'000;
    void arrive() {
      const std::uint64_t me = waits.size();
      const Ps s = service.sample(rng);
      const Grant g = res.request(sim.now(), s);
      services.push_back(s.v);
      waits.push_back(g.wait.v);
      const Ps end = g.end;
      sim.at(end, [this, me, end] {
        EXPECT_EQ(departed, me) << "departures out of arrival order";
        EXPECT_EQ(sim.now(), end);
        ++departed;
      });
      max_pending = std::max(max_pending, sim.pending());
      if (waits.size() < n) {
        const Ps gap = interarrival.sample(rng);
        gaps.push_back(gap.v);
        sim.after(gap, [this] { arrive(); });
      }
    }
  } c;
  c.sim.at(Ps{0}, [&c] { c.arrive(); });
  c.sim.run();
  const std::size_t n = c.n;
  const auto& waits = c.waits;
  const auto& services = c.services;
  const auto& gaps = c.gaps;
  const std::uint64_t departed = c.departed;
  const std::size_t max_pending = c.max_pending;
  ASSERT_EQ(waits.size(), n);
  EXPECT_EQ(departed, n);
  EXPECT_GT(max_pending, 40u);  // past the radix queue's small mode (32)
  std::int64_t w = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (i > 0) w = std::max<std::int64_t>(0, w + services[i - 1] - gaps[i - 1]);
    ASSERT_EQ(waits[i], w) << "customer " << i;
  }
}

}  // namespace
}  // namespace ipilab::sim
