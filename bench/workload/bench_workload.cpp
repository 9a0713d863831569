// Simulation speed of whole-VM runs, compiled into bench_sim (bench/sim/CMakeLists.txt; benchmarks only, no timed tests), per second of
// CPU time of this process.
//
// The figure asked for: a 256-vCPU TLB-shootdown storm, >= 2 M simulated IPI deliveries per CPU
// second. An IPI delivery here is an interrupt that reaches a target vCPU: one per target per IPI
// sent (the run's ipis_delivered counter, interrupts taken). A call served by an IPI already on its
// way — its CSD llist_add()ed onto a call_single_queue that was not empty, so the sender sent no IPI
// for it (Linux __smp_call_single_queue) — is NOT a delivery. Every storm benchmark reports both:
//   irq/s       interrupts delivered to target vCPUs per CPU second (also items_per_second)
//   calls/s     (call, target) pairs served per CPU second: flush_tlb_func ran on the target, by an
//               interrupt of its own or riding on an earlier one
//   calls/irq   calls served per interrupt (how much each interrupt carries)
//   events/irq  engine events per interrupt
//
// BM_TlbShootdown256/<mechanism>/<shape>: 256 vCPUs pinned one per host CPU on the 4096-CPU preset
// (x86-16s-4096t: 16 sockets, so most IPIs cross sockets), the KVM Skylake profile, every vCPU
// idle in HLT when it has nothing to do. Every vCPU loops: think, then
// smp_call_function_many(every other vCPU: 255 targets, flush_tlb_func, wait=1).
//   storm      THE REPRESENTATIVE ONE. Think exponential (Poisson shootdowns), mean 2 ms: each vCPU
//              starts 500 shootdowns/s (128,000/s in the VM) and is offered 127,500 flush requests/s
//              by the others. Why this one: (1) it is the case the issue names, a shootdown storm
//              from every vCPU, each flushing every CPU the mm runs on (native_flush_tlb_multi to
//              mm_cpumask: a multi-threaded process on all 256 vCPUs); (2) the VM can sustain it —
//              targets spend about 4 % of their time in interrupt handlers — so the run measures
//              interrupt delivery, not a queue growing without bound; a storm a real VM cannot serve
//              is a livelock, not a workload; (3) the shape was this bench's "sparse" case before
//              the speed work, not picked to meet the figure. Even so 6 to 9 calls ride on each
//              interrupt: a 255-target send takes 20-270 us (one ICR write, hypercall or bank per
//              target group), during which its CSDs sit queued and later callers coalesce on them.
//   overload   think 5 us, fixed: the 255 others offer each vCPU 51 M flushes/s, far beyond what it
//              can run; its call_single_queue is never empty and 100-250 calls ride on each
//              interrupt. Measures the per-call cost (calls/s), not interrupt delivery.
//   scenario   the built-in tlb-shootdown-storm scenario's shape (think exponential, mean 20 us) at
//              256 vCPUs: overloaded too at this size (30-90 calls per interrupt).
//
// Later figures, ratios to each starting commit and instructions per run: bench/workload/README.md
// (compare.sh, instructions.sh there).
// Figures, storm shape (branch perf2 against its starting commit 557f657, both binaries side by side
// in the same minutes on the shared 2-core development VM; medians of 5 repetitions; the quietest
// round, and the now/base ratio over 5 rounds, which moves less than the figures as other builds
// come and go). Instructions: callgrind Ir of one Storm::run (load does not move them; `perf stat -e
// instructions` has no PMU on this VM). calls/s = irq/s x calls/irq (the model's: 8.56, 6.37, 5.77,
// 5.68, the same before and after: every output is byte-identical).
//   mechanism        irq/s base -> now      ratio         calls/s base -> now   instructions/run base -> now
//   x2apic_physical  1.42 M -> 1.63 M      1.04-1.18x    12.2 M -> 14.0 M      405.6 M -> 348.6 M (0.86x)
//   x2apic_cluster   1.64 M -> 1.95 M      1.12-1.28x    10.4 M -> 12.4 M      472.3 M -> 369.2 M (0.78x)
//   kvm_pv           1.96 M -> 2.07 M      1.03-1.13x    11.3 M -> 12.0 M      428.5 M -> 385.8 M (0.90x)
//   hyperv           1.25 M -> 1.96 M      1.57-1.69x     7.1 M -> 11.1 M      638.2 M -> 412.9 M (0.65x)
// Rebased onto main a7f975d (whose own changes add ~1 % to every run), instructions/run main -> perf2,
// in the table's order: 408.5 -> 355.5 M (0.87x), 475.6 -> 376.5 M (0.79x), 432.1 -> 393.2 M (0.91x),
// 642.1 -> 420.4 M (0.65x).
// hyperv took 1.6x kvm_pv's time per run (1.49x its instructions), now 1.07x its instructions (its
// send path still builds the hypercall input page in the guest and decodes it in the host per send).
// x2apic_physical is furthest from 2 M/s: it coalesces most (8.56 calls per interrupt), so per-call
// work (the CSD's queue statistics, its flush and unlock samples) dominates its instructions per
// interrupt.
//
// BM_IpiHwUnicast: ipi_hw between 2 vCPUs (one interrupt per iteration).
// BM_MulticastTo4095: one vCPU to 4095 others (Hyper-V Ex hypercall with 64 banks); items = IPIs.
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

struct Shape {
  const char* params;
  std::uint64_t calls;  // iterations (calls, over all senders) per run
};
constexpr Shape kStorm{"think_ns = 2000000\narrivals = \"poisson\"\n", 2000};
constexpr Shape kOverload{"think_ns = 5000\n", 5000};
constexpr Shape kScenario{"think_ns = 20000\narrivals = \"poisson\"\n", 3000};

void tlb_shootdown_256(benchmark::State& state, const char* mechanism, Shape shape) {
  Fixture f = make("x86-16s-4096t", "kvm-skylake-pv-ipi.toml", 256,
                   std::string("mechanism = \"") + mechanism + "\"\nsend = \"call\"\ntargets = \"all-but-self\"\n"
                   "handler = \"tlb_flush\"\nwait = true\n" + shape.params,
                   shape.calls, topology::VcpuState::Halted);
  f.spec.host = &f.host;
  auto wl = workload::find_workload("storm", "bench").make();
  std::uint64_t calls = 0, irqs = 0, events = 0;
  for (auto _ : state) {
    auto r = wl->run(f.spec);
    calls += r.counters.at("deliveries");
    irqs += r.counters.at("ipis_delivered");
    events += r.events;
    benchmark::DoNotOptimize(r.metrics[0].summary.mean);
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(irqs));
  state.counters["irq/s"] = benchmark::Counter(static_cast<double>(irqs), benchmark::Counter::kIsRate);
  state.counters["calls/s"] = benchmark::Counter(static_cast<double>(calls), benchmark::Counter::kIsRate);
  state.counters["calls/irq"] = irqs ? static_cast<double>(calls) / static_cast<double>(irqs) : 0.0;
  state.counters["events/irq"] = irqs ? static_cast<double>(events) / static_cast<double>(irqs) : 0.0;
}

#define TLB_SHOOTDOWN(name, mech, shape) \
  BENCHMARK_CAPTURE(tlb_shootdown_256, name, mech, shape)->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime()
TLB_SHOOTDOWN(x2apic_physical/storm, "x2apic-physical", kStorm);
TLB_SHOOTDOWN(x2apic_cluster/storm, "x2apic-cluster", kStorm);
TLB_SHOOTDOWN(kvm_pv/storm, "kvm-pv", kStorm);
TLB_SHOOTDOWN(hyperv/storm, "hyperv", kStorm);
TLB_SHOOTDOWN(x2apic_physical/overload, "x2apic-physical", kOverload);
TLB_SHOOTDOWN(x2apic_cluster/overload, "x2apic-cluster", kOverload);
TLB_SHOOTDOWN(kvm_pv/overload, "kvm-pv", kOverload);
TLB_SHOOTDOWN(hyperv/overload, "hyperv", kOverload);
TLB_SHOOTDOWN(x2apic_physical/scenario, "x2apic-physical", kScenario);
TLB_SHOOTDOWN(x2apic_cluster/scenario, "x2apic-cluster", kScenario);
TLB_SHOOTDOWN(kvm_pv/scenario, "kvm-pv", kScenario);
TLB_SHOOTDOWN(hyperv/scenario, "hyperv", kScenario);

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
