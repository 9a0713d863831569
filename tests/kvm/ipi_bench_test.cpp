// The interleaved benchmark in a real KVM guest (kvm/ipi_bench.h): every send mechanism really delivers
// in both target states and both workloads (exact handler and CSD counts per case), x2APIC and PV take no
// user-space exit inside their chunks and Hyper-V exactly one per hypercall; the guest loops follow the
// batch estimator (checked with a fake counter: 16.016 per batch, 26 per iteration); a time budget cuts
// rounds short and says so.
#include <gtest/gtest.h>

#include "kvm/ipi_bench.h"
#include "kvm_test_util.h"

namespace ipilab::kvm {
namespace {

std::vector<BenchCase> every_ipi_case() {
  std::vector<BenchCase> v;
  for (Mechanism m : {Mechanism::X2apic, Mechanism::KvmPv, Mechanism::HvFast, Mechanism::HvEx})
    for (Workload w : {Workload::RoundTrip, Workload::CallSingle})
      for (TargetState t : {TargetState::Spin, TargetState::Halt}) v.push_back(BenchCase::ipi(m, w, t));
  return v;
}

TEST(IpiBench, EveryCaseDeliversEverySendOnceWithOnlyItsOwnExits) {
  IPILAB_SKIP_WITHOUT_KVM(true);
  RoundsConfig c;
  c.cases = {BenchCase::loop(), BenchCase::cpuid_exit()};
  for (const BenchCase& b : every_ipi_case()) c.cases.push_back(b);
  c.rounds = 2;
  c.samples_per_round = 6;
  c.pilot_samples = 4;
  c.warmup = 2;
  c.halt_gap_us = 5;
  c.budget_seconds_per_case = 0;  // no budget: every round takes all its samples
  c.max_batch = 4;                // keep the spin batches short on a PVM host
  const RoundsResult r = run_bench_rounds(c);
  ASSERT_EQ(r.cases.size(), 3u + 16u);
  EXPECT_EQ(r.cases[0].bench.kind, CaseKind::CounterRead);  // always first
  EXPECT_EQ(r.rounds, 2u);
  EXPECT_GT(r.tsc_khz, 0u);
  const bool pv = kvm_hypercall_works();
  for (const CaseResult& k : r.cases) {
    SCOPED_TRACE(k.bench.name());
    if (k.bench.kind == CaseKind::Ipi && k.bench.mechanism == Mechanism::KvmPv && !pv) {
      EXPECT_FALSE(k.available);
      EXPECT_NE(k.unavailable_reason.find("VMCALL"), std::string::npos);
      EXPECT_TRUE(k.rounds.empty());
      continue;
    }
    ASSERT_TRUE(k.available);
    ASSERT_EQ(k.rounds.size(), 2u);
    for (const auto& round : k.rounds) {
      ASSERT_EQ(round.size(), 6u);
      for (double s : round) EXPECT_GT(s, 0.0);
    }
    EXPECT_EQ(k.pilot.size(), 4u);
    EXPECT_EQ(k.rounds_truncated, 0u);
    EXPECT_GE(k.batch_n, 1u);
    EXPECT_LE(k.batch_n, 4u);
    if (k.bench.kind == CaseKind::CounterRead) {
      EXPECT_EQ(k.timing, TimingRule::ByDefinition);
      EXPECT_EQ(k.iterations_run, 0u);
      continue;
    }
    EXPECT_EQ(k.iterations_run, 2u * 6u * k.batch_n);
    EXPECT_EQ(k.iterations_planned, k.iterations_run);
    // pilot (4 x 1) + three chunks of warm-up (3 x 2) + the timed iterations.
    EXPECT_EQ(k.loop_iterations, 4u + 6u + k.iterations_run);
    if (k.bench.kind != CaseKind::Ipi) {
      EXPECT_EQ(k.target_irqs, 0u);
      EXPECT_TRUE(k.sender_exits.empty());
      continue;
    }
    if (k.bench.target == TargetState::Halt) {
      EXPECT_EQ(k.batch_n, 1u);
      EXPECT_EQ(k.timing, TimingRule::IdleGap);
    }
    EXPECT_EQ(k.target_irqs, k.loop_iterations);
    if (k.bench.workload == Workload::CallSingle) EXPECT_EQ(k.csd_calls, k.loop_iterations);
    else EXPECT_EQ(k.csd_calls, 0u);
    const bool hv = k.bench.mechanism == Mechanism::HvFast || k.bench.mechanism == Mechanism::HvEx;
    if (hv) {
      ASSERT_EQ(k.sender_exits.size(), 1u);
      EXPECT_EQ(k.sender_exits.at("io:hv-hypercall"), k.loop_iterations);
    } else {
      EXPECT_TRUE(k.sender_exits.empty());
    }
  }
}

TEST(IpiBench, GuestLoopsAreBatchEstimatorsAgainstAFakeCounter) {
  // Every timestamp read costs 10 units and every iteration 16 (the real operations still run).
  IPILAB_SKIP_WITHOUT_KVM(true);
  RoundsConfig c;
  c.cases = {BenchCase::loop(), BenchCase::cpuid_exit(),
             BenchCase::ipi(Mechanism::X2apic, Workload::RoundTrip, TargetState::Spin),
             BenchCase::ipi(Mechanism::X2apic, Workload::RoundTrip, TargetState::Halt),
             BenchCase::ipi(Mechanism::HvFast, Workload::CallSingle, TargetState::Halt)};
  c.rounds = 1;
  c.samples_per_round = 2;
  c.pilot_samples = 3;
  c.warmup = 1;
  c.halt_gap_us = 5;
  c.fake_counter = FakeCounter{10, 16};
  const RoundsResult r = run_bench_rounds(c);
  EXPECT_DOUBLE_EQ(r.counter_read, 10.0);
  for (const CaseResult& k : r.cases) {
    SCOPED_TRACE(k.bench.name());
    ASSERT_EQ(k.rounds.size(), 1u);
    ASSERT_EQ(k.rounds[0].size(), 2u);
    for (double p : k.pilot) EXPECT_DOUBLE_EQ(p, k.bench.kind == CaseKind::CounterRead ? 10.0 : 26.0);
    for (double s : k.rounds[0]) {
      if (k.bench.kind == CaseKind::CounterRead) {
        EXPECT_DOUBLE_EQ(s, 10.0);
      } else if (k.bench.target == TargetState::Halt && k.bench.kind == CaseKind::Ipi) {
        EXPECT_EQ(k.batch_n, 1u);
        EXPECT_DOUBLE_EQ(s, 26.0);  // one pair per iteration: 16 + 10
      } else {
        EXPECT_EQ(k.batch_n, 625u);  // 10 / (0.001 * 16)
        EXPECT_EQ(k.timing, TimingRule::Batch);
        EXPECT_DOUBLE_EQ(s, (625.0 * 16 + 10) / 625);  // 16.016: one read over 625 iterations
      }
    }
  }
}

TEST(IpiBench, TimeBudgetCutsEveryRoundAndSaysSo) {
  IPILAB_SKIP_WITHOUT_KVM();
  RoundsConfig c;
  c.cases = {BenchCase::ipi(Mechanism::X2apic, Workload::RoundTrip, TargetState::Halt)};
  c.rounds = 2;
  c.samples_per_round = 100000;
  c.pilot_samples = 2;
  c.halt_gap_us = 200;               // >= 200 us per sample
  c.budget_seconds_per_case = 0.02;  // 10 ms per round: far fewer than 100000 samples
  const RoundsResult r = run_bench_rounds(c);
  const CaseResult& k = r.cases.at(1);
  EXPECT_EQ(k.rounds_truncated, 2u);
  ASSERT_EQ(k.rounds.size(), 2u);
  for (const auto& round : k.rounds) {
    EXPECT_GT(round.size(), 0u);
    EXPECT_LT(round.size(), 100000u);
  }
  EXPECT_LT(k.iterations_run, k.iterations_planned);
  EXPECT_EQ(k.iterations_run, k.rounds[0].size() + k.rounds[1].size());
}

TEST(IpiBench, BadConfigurationsAreRefusedBeforeAnyVm) {
  RoundsConfig c;
  c.rounds = 0;
  EXPECT_THROW(run_bench_rounds(c), std::invalid_argument);
  c.rounds = 1;
  c.cases = {BenchCase::loop(), BenchCase::loop()};
  EXPECT_THROW(run_bench_rounds(c), std::invalid_argument);
  c.cases = {};
  c.samples_per_round = kMaxChunkRecords + 1;
  EXPECT_THROW(run_bench_rounds(c), std::invalid_argument);
}

TEST(IpiBench, CaseNamesAndParsing) {
  EXPECT_EQ(BenchCase::ipi(Mechanism::HvEx, Workload::CallSingle, TargetState::Spin).name(), "hyperv-ex/call-single/spin");
  EXPECT_EQ(BenchCase::cpuid_exit().name(), "cpuid-exit");
  EXPECT_EQ(mechanism_from_string("kvm-pv"), Mechanism::KvmPv);
  EXPECT_FALSE(mechanism_from_string("kvm_pv"));
  EXPECT_EQ(workload_from_string("call-single"), Workload::CallSingle);
  EXPECT_EQ(target_from_string("halt"), TargetState::Halt);
  // The simulator's mechanism names; the old ones stay accepted.
  EXPECT_EQ(BenchCase::ipi(Mechanism::X2apic, Workload::RoundTrip, TargetState::Halt).name(),
            "x2apic-physical/ipi-roundtrip/halt");
  EXPECT_EQ(BenchCase::ipi(Mechanism::HvFast, Workload::RoundTrip, TargetState::Halt).name(), "hyperv/ipi-roundtrip/halt");
  EXPECT_EQ(mechanism_from_string("x2apic"), Mechanism::X2apic);
  EXPECT_EQ(mechanism_from_string("hv-fast"), Mechanism::HvFast);
  EXPECT_EQ(mechanism_from_string("hv-ex"), Mechanism::HvEx);
  EXPECT_EQ(mechanism_from_string("hyperv-ex"), Mechanism::HvEx);
  EXPECT_EQ(case_from_name("x2apic/call-single/spin"),
            BenchCase::ipi(Mechanism::X2apic, Workload::CallSingle, TargetState::Spin));
  EXPECT_EQ(case_from_name("hv-ex/ipi-roundtrip/halt")->name(), "hyperv-ex/ipi-roundtrip/halt");
  EXPECT_EQ(case_from_name("cpuid-exit"), BenchCase::cpuid_exit());
  EXPECT_FALSE(case_from_name("x2apic/ipi-roundtrip"));
  EXPECT_FALSE(case_from_name("x2apic/ipi-roundtrip/halt/"));
  EXPECT_FALSE(case_from_name("cpuid"));
}

}  // namespace
}  // namespace ipilab::kvm
