// Simulation speed (issue "Speed", bench only, no timed tests): simulated IPIs per second of CPU time.
//   BM_TlbStorm256/<mechanism>: a 256-vCPU TLB-shootdown storm (every vCPU: 5 us of work, then
//     smp_call_function_many(all others, flush_tlb_func, wait=1)) on the 4096-CPU preset with the
//     KVM Skylake profile. items_per_second = deliveries (each (call, target) pair served on its
//     target: the flush ran there, by its own interrupt or coalesced behind one) per CPU second;
//     counter interrupts_per_cpu_s = interrupts taken per CPU second (most calls find the target's
//     call_single_queue busy, so interrupts are far fewer than deliveries).
//   BM_IpiHwUnicast: ipi_hw between 2 vCPUs (one interrupt per iteration).
//   BM_MulticastTo4095: one vCPU to 4095 others (Hyper-V Ex hypercall with 64 banks).
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
             std::uint64_t iterations, topology::VcpuState state = topology::VcpuState::Running) {
  Fixture f;
  f.host = topology::load_preset(preset);
  std::vector<int> pcpus;
  for (int i = 0; i < vcpus; ++i) pcpus.push_back(i % f.host.cpu_id_limit());
  f.spec.vm = topology::Vm::make(f.host, vcpus, pcpus, 8192);
  for (auto& v : f.spec.vm.vcpus) v.initial_state = state;
  f.spec.profile = cost::Profile::load_file(std::string(IPILAB_SOURCE_DIR) + "/profiles/" + profile);
  f.spec.params = workload::Params(toml_read::parse(params, "bench.toml"), "bench.toml");
  f.spec.iterations = iterations;
  f.spec.warmup = 0;
  return f;
}

void tlb_storm_256(benchmark::State& state, const char* mechanism, const char* think) {
  const auto calls = static_cast<std::uint64_t>(state.range(0));
  Fixture f = make("x86-16s-4096t", "kvm-skylake-pv-ipi.toml", 256,
                   std::string("mechanism = \"") + mechanism + "\"\n" + think, calls, topology::VcpuState::Halted);
  f.spec.host = &f.host;
  auto wl = workload::find_workload("storm", "bench").make();
  std::uint64_t deliveries = 0, interrupts = 0;
  for (auto _ : state) {
    auto r = wl->run(f.spec);
    deliveries += r.counters.at("deliveries");
    interrupts += r.counters.at("ipis_delivered");
    benchmark::DoNotOptimize(r.metrics[0].summary.mean);
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(deliveries));
  state.counters["interrupts_per_cpu_s"] = benchmark::Counter(static_cast<double>(interrupts), benchmark::Counter::kIsRate);
  state.counters["deliveries_per_run"] = static_cast<double>(deliveries) / static_cast<double>(state.iterations());
}
constexpr const char* kDense = "think_ns = 5000\n";
// Sparse: each vCPU flushes every 2 ms on average (Poisson), so most calls find idle queues and
// nearly every delivery is an interrupt of its own.
constexpr const char* kSparse = "think_ns = 2000000\narrivals = \"poisson\"\n";
BENCHMARK_CAPTURE(tlb_storm_256, x2apic_physical, "x2apic-physical", kDense)->Arg(5000)->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime();
BENCHMARK_CAPTURE(tlb_storm_256, x2apic_cluster, "x2apic-cluster", kDense)->Arg(5000)->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime();
BENCHMARK_CAPTURE(tlb_storm_256, kvm_pv, "kvm-pv", kDense)->Arg(5000)->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime();
BENCHMARK_CAPTURE(tlb_storm_256, hyperv, "hyperv", kDense)->Arg(5000)->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime();
BENCHMARK_CAPTURE(tlb_storm_256, kvm_pv_sparse, "kvm-pv", kSparse)->Arg(2000)->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime();
BENCHMARK_CAPTURE(tlb_storm_256, x2apic_cluster_sparse, "x2apic-cluster", kSparse)->Arg(2000)->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime();

void BM_IpiHwUnicast(benchmark::State& state) {
  const auto iters = static_cast<std::uint64_t>(state.range(0));
  Fixture f = make("kunpeng920-2s", "kunpeng920-2s.toml", 2, "find_4_1_its = \"pre-seed\"\n", iters);
  f.spec.host = &f.host;
  auto wl = workload::find_workload("ipi_hw", "bench").make();
  for (auto _ : state) {
    auto r = wl->run(f.spec);
    benchmark::DoNotOptimize(r.metrics[0].summary.mean);
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * iters));
}
BENCHMARK(BM_IpiHwUnicast)->Arg(200000)->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime();

void BM_MulticastTo4095(benchmark::State& state) {
  const auto iters = static_cast<std::uint64_t>(state.range(0));
  Fixture f = make("x86-16s-4096t", "hyperv-ws2019.toml", 4096, "mechanism = \"hyperv\"\n", iters);
  f.spec.host = &f.host;
  auto wl = workload::find_workload("multicast", "bench").make();
  for (auto _ : state) {
    auto r = wl->run(f.spec);
    benchmark::DoNotOptimize(r.metrics[0].summary.mean);
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * iters * 4095));
}
BENCHMARK(BM_MulticastTo4095)->Arg(50)->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime();

}  // namespace
