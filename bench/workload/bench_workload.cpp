// Simulated IPIs per second of wall time (issue 3 "Speed"): ipi_hw between 2 vCPUs (unicast) and a
// multicast from one vCPU to 4095 others. items_per_second = simulated IPIs delivered per second.
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "topology/presets.h"
#include "topology/toml_read.h"
#include "workload/workload.h"

namespace {

using namespace ipilab;

struct Fixture {
  topology::Host host;
  workload::RunSpec spec;
};

Fixture make(const std::string& preset, const std::string& profile, int vcpus, const std::string& params,
             std::uint64_t iterations) {
  Fixture f;
  f.host = topology::load_preset(preset);
  std::vector<int> pcpus;
  for (int i = 0; i < vcpus; ++i) pcpus.push_back(i % f.host.cpu_id_limit());
  f.spec.vm = topology::Vm::make(f.host, vcpus, pcpus, 8192);
  f.spec.profile = cost::Profile::load_file(std::string(IPILAB_SOURCE_DIR) + "/profiles/" + profile);
  f.spec.params = workload::Params(toml_read::parse(params, "bench.toml"), "bench.toml");
  f.spec.iterations = iterations;
  f.spec.warmup = 0;
  return f;
}

void BM_IpiHwUnicast(benchmark::State& state) {
  const auto iters = static_cast<std::uint64_t>(state.range(0));
  Fixture f = make("kunpeng920-2s", "kunpeng920-2s.toml", 2, "find_4_1_its = \"pre-seed\"\n", iters);
  f.spec.host = &f.host;
  const auto& w = workload::find_workload("ipi_hw", "bench");
  auto wl = w.make();
  for (auto _ : state) {
    auto r = wl->run(f.spec);
    benchmark::DoNotOptimize(r.metrics[0].summary.mean);
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * iters));
  state.counters["sim_ipis"] = static_cast<double>(iters);
}
BENCHMARK(BM_IpiHwUnicast)->Arg(200000)->Unit(benchmark::kMillisecond);

void BM_MulticastTo4095(benchmark::State& state) {
  const auto iters = static_cast<std::uint64_t>(state.range(0));
  Fixture f = make("x86-16s-4096t", "hyperv-ws2019.toml", 4096, "mechanism = \"hyperv\"\n", iters);
  f.spec.host = &f.host;
  const auto& w = workload::find_workload("multicast", "bench");
  auto wl = w.make();
  for (auto _ : state) {
    auto r = wl->run(f.spec);
    benchmark::DoNotOptimize(r.metrics[0].summary.mean);
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * iters * 4095));
}
BENCHMARK(BM_MulticastTo4095)->Arg(50)->Unit(benchmark::kMillisecond);

}  // namespace
