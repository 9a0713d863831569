// The measure report from known raw results (measure/report.h analyze()): statuses, exact ratios with
// paired intervals, a case without samples shown as a failure (never as 0), time-budget cuts, warnings.
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>

#include "common/error.h"
#include "measure/report.h"

namespace ipilab::measure {
namespace {

using kvm::BenchCase;
using kvm::Mechanism;
using kvm::TargetState;
using kvm::Workload;

kvm::CaseResult with_rounds(BenchCase b, std::vector<std::vector<double>> rounds, kvm::TimingRule t, std::uint64_t n) {
  kvm::CaseResult r;
  r.bench = b;
  r.rounds = std::move(rounds);
  r.timing = t;
  r.batch_n = n;
  for (const auto& x : r.rounds) r.iterations_run += x.size() * n;
  r.iterations_planned = r.iterations_run;
  r.pilot_op = 100;
  return r;
}

// Four rounds; the host slows down by 10 % a round; the round trip is exactly 25x the CPUID exit.
kvm::RoundsResult fake_rounds() {
  kvm::RoundsResult res;
  res.tsc_khz = 2000000;  // 2 GHz: 1 cycle = 0.5 ns
  res.rounds = 4;
  res.counter_read = 40;
  res.host_pus = {0, 1};
  std::vector<std::vector<double>> counter, cpuid, rt;
  for (int i = 0; i < 4; ++i) {
    const double k = 1.0 + 0.1 * i;
    counter.push_back({40 * k, 41 * k, 39 * k});
    cpuid.push_back({1000 * k, 1010 * k, 990 * k});
    rt.push_back({25000 * k, 25250 * k, 24750 * k});
  }
  res.cases.push_back(with_rounds(BenchCase::counter_read(), counter, kvm::TimingRule::ByDefinition, 1));
  res.cases.push_back(with_rounds(BenchCase::cpuid_exit(), cpuid, kvm::TimingRule::Batch, 25));
  auto halt = with_rounds(BenchCase::ipi(Mechanism::X2apic, Workload::RoundTrip, TargetState::Halt), rt,
                          kvm::TimingRule::IdleGap, 1);
  halt.rounds_truncated = 1;
  halt.iterations_planned = 20;
  res.cases.push_back(halt);
  kvm::CaseResult pv;
  pv.bench = BenchCase::ipi(Mechanism::KvmPv, Workload::RoundTrip, TargetState::Halt);
  pv.available = false;
  pv.unavailable_reason = "VMCALL never completes on this KVM";
  res.cases.push_back(pv);
  kvm::CaseResult empty = with_rounds(BenchCase::ipi(Mechanism::HvFast, Workload::RoundTrip, TargetState::Halt),
                                      {{}, {}, {}, {}}, kvm::TimingRule::IdleGap, 1);
  res.cases.push_back(empty);
  return res;
}

HostInfo fake_host() {
  HostInfo h;
  h.hostname = "box";
  h.cpu_model = "Test CPU";
  h.kernel = "6.1.0";
  h.cpus = 2;
  h.nested = true;
  h.hypervisor_vendor = "KVMKVMKVM";
  h.kvm_backend = "kvm_pvm";
  h.constant_tsc = true;
  h.load_average = 3.5;
  h.date_utc = "2025-01-01T00:00:00Z";
  return h;
}

MeasureOptions fake_options() {
  MeasureOptions o;
  o.c2c = false;
  o.bootstrap.resamples = 200;
  return o;
}

TEST(MeasureReport, RatiosArePairedOverRoundsAndSurviveDrift) {
  const MeasureReport r = analyze(fake_host(), fake_options(), fake_rounds(), "", std::nullopt);
  const CaseReport* rt = r.find("x2apic-physical/ipi-roundtrip/halt");
  ASSERT_NE(rt, nullptr);
  ASSERT_EQ(rt->status, CaseStatus::Ok);
  ASSERT_TRUE(rt->ratio);
  EXPECT_NEAR(rt->ratio->value, 25.0, 1e-9);
  EXPECT_NEAR(rt->ratio->ci.lo, 25.0, 1e-9);  // drift shared by both cancels in the paired ratio
  EXPECT_NEAR(rt->ratio->ci.hi, 25.0, 1e-9);
  ASSERT_TRUE(rt->median_ci);
  EXPECT_LT(rt->median_ci->lo, rt->median_ci->hi);  // ... but not in the case's own interval
  EXPECT_EQ(rt->cycles->count, 12u);
  EXPECT_NE(rt->timing_note.find("idle"), std::string::npos);
  const CaseReport* ref = r.find("cpuid-exit");
  EXPECT_NEAR(ref->ratio->value, 1.0, 1e-12);
}

TEST(MeasureReport, ACaseWithoutSamplesIsAFailureNeverAZero) {
  const MeasureReport r = analyze(fake_host(), fake_options(), fake_rounds(), "", std::nullopt);
  const CaseReport* hv = r.find("hyperv/ipi-roundtrip/halt");
  ASSERT_NE(hv, nullptr);
  EXPECT_EQ(hv->status, CaseStatus::Failed);
  EXPECT_FALSE(hv->cycles);
  EXPECT_FALSE(hv->ratio);
  EXPECT_EQ(r.failed_cases(), std::vector<std::string>{"hyperv/ipi-roundtrip/halt"});
  const nlohmann::json j = to_json(r);
  const auto& cases = j["kvm"]["cases"];
  const auto it = std::find_if(cases.begin(), cases.end(), [](const auto& c) { return c["name"] == "hyperv/ipi-roundtrip/halt"; });
  ASSERT_NE(it, cases.end());
  EXPECT_EQ((*it)["status"], "failed");
  EXPECT_TRUE((*it)["cycles"].is_null());
  EXPECT_TRUE((*it)["ns"].is_null());
  EXPECT_TRUE((*it)["ratio_to_reference"].is_null());
  EXPECT_EQ((*it)["samples"], 0);
  const std::string table = to_table(r);
  const auto line_at = table.find("hyperv/ipi-roundtrip/halt");
  ASSERT_NE(line_at, std::string::npos);
  const std::string line = table.substr(line_at, table.find('\n', line_at) - line_at);
  EXPECT_NE(line.find("FAILED"), std::string::npos) << line;
  EXPECT_EQ(line.find(" 0.0"), std::string::npos) << line;
}

TEST(MeasureReport, UnavailableMechanismIsSaidPerCaseAndTheRestStays) {
  const MeasureReport r = analyze(fake_host(), fake_options(), fake_rounds(), "", std::nullopt);
  const CaseReport* pv = r.find("kvm-pv/ipi-roundtrip/halt");
  ASSERT_NE(pv, nullptr);
  EXPECT_EQ(pv->status, CaseStatus::Unavailable);
  const nlohmann::json j = to_json(r);
  EXPECT_EQ(j["kvm"]["cases"][3]["status"], "unavailable");
  EXPECT_EQ(j["kvm"]["cases"][3]["reason"], "VMCALL never completes on this KVM");
  EXPECT_NE(to_table(r).find("kvm-pv/ipi-roundtrip/halt          unavailable on this KVM"), std::string::npos);
}

TEST(MeasureReport, IterationsAndTimeBudgetCutsAreReported) {
  const MeasureReport r = analyze(fake_host(), fake_options(), fake_rounds(), "", std::nullopt);
  const nlohmann::json j = to_json(r);
  const auto& rt = j["kvm"]["cases"][2];
  EXPECT_EQ(rt["name"], "x2apic-physical/ipi-roundtrip/halt");
  EXPECT_EQ(rt["iterations_run"], 12);
  EXPECT_EQ(rt["iterations_planned"], 20);
  EXPECT_EQ(rt["truncated_by_time_budget"], true);
  EXPECT_EQ(rt["rounds_truncated"], 1);
  EXPECT_EQ(rt["round_medians_cycles"].size(), 4u);
  EXPECT_DOUBLE_EQ(rt["ns"]["median"].get<double>(), rt["cycles"]["median"].get<double>() / 2);
  EXPECT_EQ(j["kvm"]["cases"][1]["timing"]["iterations_per_sample"], 25);
  EXPECT_EQ(j["kvm"]["counter_read_cycles"], 40.0);
  const std::string table = to_table(r);
  EXPECT_NE(table.find("12*"), std::string::npos);  // iterations run, cut by the budget
}

TEST(MeasureReport, WarnsWhereTheMeasurementIsWeak) {
  MeasureOptions o = fake_options();
  o.c2c = true;
  C2cMatrix m;
  m.pus = {0, 1};
  const double nan = std::numeric_limits<double>::quiet_NaN();
  m.mean_ns = {{nan, 50.0}, {50.0, nan}};
  m.stddev_ns = {{nan, 80.0}, {80.0, nan}};  // spread above the mean
  m.min_ns = m.mean_ns;
  m.samples_ns = {{{}, {10, 150}}, {{10, 150}, {}}};
  m.pair_class = {{PairClass::SameNode, PairClass::SameNode}, {PairClass::SameNode, PairClass::SameNode}};
  const MeasureReport r = analyze(fake_host(), o, fake_rounds(), "", m);
  auto has = [&](const char* s) {
    return std::any_of(r.warnings.begin(), r.warnings.end(), [&](const std::string& w) { return w.find(s) != std::string::npos; });
  };
  EXPECT_TRUE(has("itself a virtual machine"));
  EXPECT_TRUE(has("PVM"));
  EXPECT_TRUE(has("frequency scaling cannot be checked"));
  EXPECT_TRUE(has("load average was 3.50"));
  EXPECT_TRUE(has("CPU pairs 1-0"));
  EXPECT_TRUE(has("time budget stopped rounds early"));
  EXPECT_TRUE(has("no samples (the case failed): hyperv/ipi-roundtrip/halt"));
  HostInfo quiet = fake_host();
  quiet.nested = false;
  quiet.kvm_backend = "kvm_intel";
  quiet.load_average = 0.1;
  quiet.cpufreq_governors = {"powersave"};
  const MeasureReport q = analyze(quiet, fake_options(), fake_rounds(), "", std::nullopt);
  EXPECT_TRUE(std::any_of(q.warnings.begin(), q.warnings.end(),
                          [](const std::string& w) { return w.find("governor 'powersave'") != std::string::npos; }));
  EXPECT_FALSE(std::any_of(q.warnings.begin(), q.warnings.end(),
                           [](const std::string& w) { return w.find("virtual machine") != std::string::npos; }));
}

TEST(MeasureReport, OptionsAreCheckedBeforeMeasuring) {
  MeasureOptions o;
  o.k.reference = "x2apic";
  try {
    check_options(o);
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.place(), "--reference");
    EXPECT_NE(e.reason().find("x2apic-physical/ipi-roundtrip/halt"), std::string::npos);  // lists the names
  }
  o.k.reference = "x2apic-physical/call-single/spin";
  EXPECT_NO_THROW(check_options(o));
  const auto cases = planned_cases(o.k);
  ASSERT_EQ(cases.size(), 3u + 16u);
  EXPECT_EQ(cases[0].name(), "counter-read");
  EXPECT_EQ(cases[2].name(), "cpuid-exit");
}

}  // namespace
}  // namespace ipilab::measure
