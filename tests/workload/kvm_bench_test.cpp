// kvm_bench: ipilab measure kvm's guest programs simulated. With every cost fixed, a timed sample is exactly
// the sum of its steps, as the harness times it: the counter read once per sample (1/N of it per iteration
// in a batch), the loop control per iteration, the send path, the wake-up or the running target's
// injection, the handler entry, the flag's (or the CSD's) line there and back.
#include <map>
#include <set>

#include <gtest/gtest.h>

#include "common/error.h"
#include "run_helpers.h"
#include "workload/mechanism.h"
#include "workload/vm_run.h"

namespace ipilab::workload {
namespace {

using testing::make_setup;

// The costs fixed for these tests (testing::fix_x86_costs sets every other key to 0).
const std::map<std::string, double> kKvmBenchNs = {
    {"guest.counter_read", 1000}, {"guest.bench_loop", 10},          {"guest.ipi_path_call", 5},
    {"vm.exit_entry", 400},       {"x2apic.icr_write_exit", 200},    {"x2apic.icr_dest_per_target", 100},
    {"vcpu.halt_wakeup", 3000},   {"apic.interrupt_injection", 700}, {"guest.irq_entry", 100},
    {"guest.eoi", 60},            {"guest.irq_exit", 50},            {"vcpu.halt_exit", 1500},
    {"guest.csd_queue", 40},      {"guest.callback", 20},            {"guest.csd_unlock", 30},
    {"kvm.pv_send_ipi_call", 150}, {"kvm.pv_send_ipi_per_dest", 80}, {"mem.cacheline_same_node", 60}};

RunResult kvm_bench_run(const std::string& toml, bool halted, std::uint64_t iterations = 400) {
  auto s = make_setup("skylake-2s-40c", "kvm-skylake-pv-ipi.toml", {0, 1}, 2, halted ? std::vector<int>{1} : std::vector<int>{},
                      toml, {}, iterations);
  testing::fix_x86_costs(s.spec.profile, "kvm_bench", kKvmBenchNs);
  return testing::run(s, "kvm_bench");
}

double mean_of(const RunResult& r, const std::string& metric) {
  for (const auto& m : r.metrics)
    if (m.name == metric) return m.summary.mean;
  ADD_FAILURE() << "no metric " << metric;
  return 0;
}

// send path: 5 + 400 + 200 + 100 = 705; line there and back: 2 x 60 (the profile's measured-style entry).
TEST(KvmBench, HaltedRoundTripIsTheSumOfItsSteps) {
  const RunResult r = kvm_bench_run("mechanism = \"x2apic-physical\"", true);
  // read 1000 + loop 10 + send 705 + wake-up 3000 + irq entry 100 + 2 x 60
  EXPECT_DOUBLE_EQ(mean_of(r, "sample"), 1000 + 10 + 705 + 3000 + 100 + 120);
  EXPECT_DOUBLE_EQ(mean_of(r, "operation"), 705 + 3000 + 100 + 120);
  EXPECT_EQ(r.counters.at("icr_writes"), 400u);
  bool line = false;
  for (const auto& [k, v] : r.settings) line |= k == "cache-line transfer" && v == "60 ns from the profile's mem.cacheline_same_node (unclassified)";
  EXPECT_TRUE(line);
}

TEST(KvmBench, BatchCarriesOneReadPerSampleAndARunningTargetPaysTheInjection) {
  const RunResult r = kvm_bench_run("mechanism = \"x2apic-physical\"\nbatch = 10", false, 2000);
  EXPECT_NEAR(mean_of(r, "sample"), 1000.0 / 10 + 10 + 705 + 700 + 100 + 120, 1e-6);
}

TEST(KvmBench, CallSingleAddsTheSlotTheFunctionAndTheRelease) {
  const RunResult r = kvm_bench_run("mechanism = \"x2apic-physical\"\ncase = \"call-single\"", true);
  EXPECT_DOUBLE_EQ(mean_of(r, "sample"), 1000 + 10 + 40 + 705 + 3000 + 100 + 60 + 20 + 30 + 60);
}

TEST(KvmBench, CpuidExitDrawsTheMeasuredSampleOncePerSample) {
  const RunResult r = kvm_bench_run("case = \"cpuid-exit\"\nbatch = 1000", false);
  EXPECT_NEAR(mean_of(r, "sample"), 1.0 + 400, 1e-6);  // read / 1000 + one exit
  EXPECT_EQ(r.metrics.front().summary.count, 400u);  // one sample per iteration of the run
  EXPECT_EQ(r.counters.at("vm_exits"), 400u * 1000u);  // one CPUID exit per loop iteration of a sample
  EXPECT_EQ(kvm_bench_run("case = \"cpuid-exit\"", false, 250).counters.at("vm_exits"), 250u);
}

TEST(KvmBench, KvmPvWithAMaskIsOneHypercallWithOneTargetIsAnIcrWrite) {
  const RunResult mask = kvm_bench_run("mechanism = \"kvm-pv\"\naddressing = \"mask\"", true);
  EXPECT_EQ(mask.counters.at("hypercalls"), 400u);
  EXPECT_EQ(mask.counters.count("icr_writes") ? mask.counters.at("icr_writes") : 0u, 0u);
  // read + loop + path 5 + exit 400 + call 150 + per dest 80 + wake-up + entry + lines
  EXPECT_DOUBLE_EQ(mean_of(mask, "sample"), 1000 + 10 + 5 + 400 + 150 + 80 + 3000 + 100 + 120);
  const RunResult one = kvm_bench_run("mechanism = \"kvm-pv\"", true);
  EXPECT_EQ(one.counters.at("icr_writes"), 400u);  // kvm_setup_pv_ipi leaves apic->send_IPI alone
}

TEST(KvmBench, LineTransferFromTheHostOnRequest) {
  const RunResult r = kvm_bench_run("mechanism = \"x2apic-physical\"\nline_transfer = \"host\"", true);
  std::string line;
  for (const auto& [k, v] : r.settings)
    if (k == "cache-line transfer") line = v;
  EXPECT_NE(line.find("from the host's latency matrix"), std::string::npos) << line;
  EXPECT_THROW(kvm_bench_run("mechanism = \"gicv4.1-vsgi\"", true), InputError);  // an Arm mechanism
  EXPECT_THROW(kvm_bench_run("case = \"ipi-roundtrip\"\ntarget = 0", true), InputError);
}

}  // namespace
}  // namespace ipilab::workload
