// bench_sweep: the same sweep (bench/sweep/bench-224.toml: 224 points of seed 000's Hyper-V loop)
// with 1 worker and with 2 (and as many as this process may use), side by side in one run, then the
// speed-up of each against -j 1 and the points per second. Wall time (UseRealTime): what a user waits.
// Run it when the machine is otherwise idle; on a shared machine repeat it (--benchmark_repetitions).
//   build/release/bin/bench_sweep [--benchmark_repetitions=3] [--benchmark_min_time=...]
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <sstream>

#include "sweep/command.h"
#include "sweep/exec.h"
#include "workload/workload.h"

namespace {

std::mutex g_mu;
std::map<unsigned, double> g_best;  // jobs -> fastest seconds per sweep
std::size_t g_points = 0;

void BM_Sweep(benchmark::State& state) {
  const unsigned jobs = static_cast<unsigned>(state.range(0));
  ipilab::sweep::SweepOptions o;
  o.spec = std::string(IPILAB_SOURCE_DIR) + "/bench/sweep/bench-224.toml";
  o.jobs = jobs;
  const auto lookup = [](std::string_view n, std::string_view p) -> const ipilab::workload::WorkloadInfo& {
    return ipilab::workload::find_workload(n, p);
  };
  auto exec = ipilab::sweep::local_executor();
  for (auto _ : state) {
    std::ostringstream out, err;
    const auto t0 = std::chrono::steady_clock::now();
    if (ipilab::sweep::sweep_command(o, out, err, lookup, *exec) != 0) state.SkipWithError("a point failed");
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::lock_guard<std::mutex> lock(g_mu);
    auto it = g_best.find(jobs);
    if (it == g_best.end() || s < it->second) g_best[jobs] = s;
  }
  g_points = 224;
  state.counters["points_per_s"] = benchmark::Counter(static_cast<double>(224 * state.iterations()), benchmark::Counter::kIsRate);
}

}  // namespace

BENCHMARK(BM_Sweep)->ArgName("jobs")->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(3.0);

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  if (g_best.count(1)) {
    const double one = g_best[1];
    for (const auto& [jobs, s] : g_best)
      std::printf("sweep of %zu points, -j %u: best %.3f s, %.1f points/s, speed-up vs -j 1: %.2fx\n", g_points, jobs, s,
                  static_cast<double>(g_points) / s, one / s);
  }
  return 0;
}
