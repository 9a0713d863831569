// The this-host model (measure/this_host.h) on a recorded measurement (tests/measure/data: `ipilab measure
// --json` on the development host, a nested VM on the PVM backend, while other builds loaded it): what is
// fitted to which case, what is predicted and how close, what is not covered and why, and that the profile
// it writes is exactly what `ipilab run this-host --profile` then runs. One live test measures for real
// and skips visibly without /dev/kvm.
#include <cmath>
#include <fstream>
#include <map>

#include <gtest/gtest.h>

#include "common/error.h"
#include "cost/profile.h"
#include "kvm/vm.h"
#include "measure/recorded.h"
#include "measure/this_host.h"
#include "scenario/runner.h"
#include "scenario/scenario.h"
#include "workload/workload.h"

namespace ipilab::measure {
namespace {

const std::string kFixture = std::string(IPILAB_SOURCE_DIR) + "/tests/measure/data/pvm-nested-loaded.json";

nlohmann::json fixture_json() {
  std::ifstream in(kFixture);
  return nlohmann::json::parse(in);
}

const CaseComparison& find(const ThisHostModel& m, const std::string& name) {
  for (const CaseComparison& c : m.cases)
    if (c.name == name) return c;
  throw std::runtime_error("no case " + name);
}

const ThisHostModel& fixture_model() {
  static const ThisHostModel m = model_this_host(load_recorded(kFixture), load_base_profile("kvm-skylake-pv-ipi"));
  return m;
}

TEST(RecordedMeasurement, LoadsWhatTheJsonHolds) {
  const MeasureReport r = load_recorded(kFixture);
  EXPECT_EQ(r.host.kvm_backend, "kvm_pvm");
  EXPECT_EQ(r.tsc_khz, 2599998u);
  EXPECT_EQ(r.options.k.reference, "cpuid-exit");
  ASSERT_EQ(r.kvm.size(), 19u);
  const CaseReport* rt = r.find("x2apic-physical/ipi-roundtrip/halt");
  ASSERT_NE(rt, nullptr);
  EXPECT_EQ(rt->status, CaseStatus::Ok);
  EXPECT_EQ(rt->result.timing, kvm::TimingRule::IdleGap);
  EXPECT_EQ(rt->rounds_timed, 20u);
  EXPECT_TRUE(rt->result.rounds.empty());  // the raw samples are not in the JSON, and not invented
  EXPECT_NEAR(cycles_to_ns(rt->cycles->median, r.tsc_khz), 34578.9, 0.1);
  EXPECT_EQ(r.find("x2apic/ipi-roundtrip/halt"), rt);  // the old name still finds it
  EXPECT_EQ(r.find("kvm-pv/call-single/halt")->status, CaseStatus::Unavailable);
  ASSERT_TRUE(r.c2c);
  EXPECT_EQ(r.c2c->pus.size(), 2u);
  EXPECT_EQ(r.c2c->samples_ns[1][0].size(), 30u);
  // Written back, the JSON says the same (the round-trip loses nothing the JSON had).
  const nlohmann::json again = to_json(r);
  const nlohmann::json orig = fixture_json();
  for (std::size_t i = 0; i < orig["kvm"]["cases"].size(); ++i) {
    SCOPED_TRACE(i);
    const auto& a = orig["kvm"]["cases"][i];
    const auto& b = again["kvm"]["cases"][i];
    EXPECT_EQ(a["name"], b["name"]);
    EXPECT_EQ(a["status"], b["status"]);
    if (a["status"] != "ok") continue;
    EXPECT_DOUBLE_EQ(a["cycles"]["median"].get<double>(), b["cycles"]["median"].get<double>());
    EXPECT_EQ(a["histogram_ns"].size(), b["histogram_ns"].size());
    EXPECT_EQ(a["ratio_to_reference"], b["ratio_to_reference"]);
  }
}

TEST(RecordedMeasurement, MalformedInputNamesThePlace) {
  nlohmann::json j = fixture_json();
  j["kvm"]["cases"][3].erase("status");
  try {
    report_from_json(j, "m.json");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.place(), "m.json: kvm.cases[3].status");
    EXPECT_EQ(e.reason(), "missing");
  }
  j = fixture_json();
  j["kvm"]["cases"][4]["name"] = "x2apic-logical/ipi-roundtrip/halt";
  EXPECT_THROW(report_from_json(j, "m.json"), InputError);
  j = fixture_json();
  j["kvm"]["cases"][4]["histogram_ns"][0] = {1, 2};
  try {
    report_from_json(j, "m.json");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.place(), "m.json: kvm.cases[4].histogram_ns[0]");
  }
  EXPECT_THROW(report_from_json(nlohmann::json::object(), "m.json"), InputError);
  EXPECT_THROW(load_recorded("/nonexistent/m.json"), InputError);
}

// PVM host: the four halted-target fits, two predictions, six spinning cases not covered, four unavailable.
TEST(ThisHostModel, FitsFourValuesAndPredictsTheCallSingleCasesOfHyperV) {
  const ThisHostModel& m = fixture_model();
  EXPECT_EQ(m.fitted_count, 4u);
  ASSERT_EQ(m.fits.size(), 4u);
  const std::map<std::string, std::string> expect_fit = {{"vcpu.halt_wakeup", "x2apic-physical/ipi-roundtrip/halt"},
                                                         {"guest.callback", "x2apic-physical/call-single/halt"},
                                                         {"hv.hypercall_entry_exit", "hyperv/ipi-roundtrip/halt"},
                                                         {"hv.slow_input_map", "hyperv-ex/ipi-roundtrip/halt"}};
  for (const FitOutcome& f : m.fits) {
    SCOPED_TRACE(f.step.key);
    EXPECT_EQ(expect_fit.at(f.step.key), f.step.case_name);
    EXPECT_TRUE(f.fitted);
    EXPECT_GT(f.value_ns, 0);
    // A fit gets within the simulated median's resolution (a histogram percentile: 1/256).
    EXPECT_NEAR(f.modelled_ns / f.measured_ns, 1.0, 0.004);
    const CaseComparison& c = find(m, f.step.case_name);
    EXPECT_EQ(c.role, Role::Fitted);
    EXPECT_DOUBLE_EQ(*c.modelled_ns, f.modelled_ns);  // the final run on the written profile = the fit's last run
  }
  // The values (this fixture, seed 1, 2000 iterations): the wake-up and the user-space hypercall dominate.
  EXPECT_NEAR(m.fits[0].value_ns, 28697, 28697 * 0.01);
  EXPECT_NEAR(m.fits[2].value_ns, 16431, 16431 * 0.01);

  EXPECT_EQ(m.predicted_count, 2u);
  EXPECT_EQ(m.predicted_within, 2u);
  for (const char* name : {"hyperv/call-single/halt", "hyperv-ex/call-single/halt"}) {
    SCOPED_TRACE(name);
    const CaseComparison& c = find(m, name);
    EXPECT_EQ(c.role, Role::Predicted);
    ASSERT_TRUE(c.diff);
    EXPECT_LT(std::fabs(*c.diff), 0.02);  // +0.3 % and +0.6 % on this fixture; the target is 10 %
    EXPECT_TRUE(c.within_target);
  }
  EXPECT_EQ(m.not_covered, 6u);
  EXPECT_EQ(find(m, "hyperv/ipi-roundtrip/spin").role, Role::NotCovered);
  EXPECT_NE(find(m, "hyperv/ipi-roundtrip/spin").detail.find("next VM exit"), std::string::npos);
  EXPECT_FALSE(find(m, "hyperv/ipi-roundtrip/spin").counted);
  EXPECT_EQ(m.unavailable, 4u);
  EXPECT_EQ(find(m, "kvm-pv/ipi-roundtrip/halt").role, Role::Unavailable);
  EXPECT_TRUE(find(m, "kvm-pv/ipi-roundtrip/halt").modelled_ns);  // modelled on the inherited values, not compared
  EXPECT_FALSE(find(m, "kvm-pv/ipi-roundtrip/halt").diff);
  // The reference run back through the model: the measured entry's sampler gives its median again.
  const CaseComparison& ref = find(m, "cpuid-exit");
  EXPECT_EQ(ref.role, Role::Primitive);
  EXPECT_NEAR(*ref.diff, 0.0, 0.01);
  EXPECT_DOUBLE_EQ(*ref.modelled_ratio, 1.0);
  EXPECT_NE(compare_table(m).find("4 values fitted to 4 measured figures (one each); 2 figures predicted without a "
                                  "fit of its own: 2 within ±10 %"),
            std::string::npos);
  const nlohmann::json j = compare_json(m);
  EXPECT_EQ(j["counts"]["fitted_values"], 4);
  EXPECT_EQ(j["counts"]["predicted"], 2);
  EXPECT_EQ(j["cases"].size(), 19u);
}

// The profile the model writes is what cost::Profile loads and what `ipilab run this-host --profile F` runs:
// the same medians, case by case.
TEST(ThisHostModel, TheWrittenProfileRunsTheScenarioToTheSameFigures) {
  const ThisHostModel& m = fixture_model();
  const cost::Profile p = cost::Profile::parse(m.profile_text, "/tmp/this-host.toml");
  for (const FitOutcome& f : m.fits) {
    const cost::Cost& c = p.get(f.step.key);
    EXPECT_EQ(c.cls, cost::CostClass::Fitted);
    EXPECT_EQ(c.dist, sim::DistKind::Fixed);
    EXPECT_DOUBLE_EQ(c.value, f.value_ns);
    EXPECT_EQ(c.source.rfind("FITTED by `ipilab measure`", 0), 0u);
  }
  EXPECT_EQ(p.get("vm.exit_entry").cls, cost::CostClass::Measured);
  EXPECT_EQ(p.get("mem.cacheline_same_node").cls, cost::CostClass::Measured);
  EXPECT_EQ(p.get("x2apic.icr_write_exit").source, load_base_profile("kvm-skylake-pv-ipi").profile.get("x2apic.icr_write_exit").source);

  scenario::RunOverrides ov;
  ov.profile = std::make_shared<const cost::Profile>(p);
  ov.profile_shown = "/tmp/this-host.toml";
  const auto ps = scenario::prepare(scenario::load_scenario(m.scenario_file), ov, workload::find_workload);
  const scenario::ScenarioResult r = scenario::run(ps);
  ASSERT_EQ(r.variants.size(), 17u);
  for (const auto& v : r.variants) {
    SCOPED_TRACE(v.name);
    EXPECT_DOUBLE_EQ(v.result.metrics[0].summary.p50, *find(m, v.name).modelled_ns);
    EXPECT_NE(v.profile_label.find("from --profile"), std::string::npos);
  }
  // The flag and CSD lines are priced from the measured c2c entry (kvm_bench line_transfer = auto).
  const auto& rt = r.variants[2];
  ASSERT_EQ(rt.name, "x2apic-physical/ipi-roundtrip/halt");
  bool line = false;
  for (const auto& [k, v] : rt.result.settings) line |= k == "cache-line transfer" && v.find("mem.cacheline_same_node (measured)") != std::string::npos;
  EXPECT_TRUE(line);
}

// On a backend other than PVM, the spinning cases are covered: one more fit (the running target's
// interrupt delivery) and five more predictions.
TEST(ThisHostModel, OffPvmTheSpinningCasesAreCovered) {
  nlohmann::json j = fixture_json();
  j["host"]["kvm_backend"] = "kvm_intel";
  const ThisHostModel m = model_this_host(report_from_json(j, "m.json"), load_base_profile("kvm-skylake-pv-ipi"));
  EXPECT_EQ(m.fitted_count, 5u);
  EXPECT_EQ(m.fits.back().step.key, "apic.interrupt_injection");
  EXPECT_EQ(m.predicted_count, 7u);
  EXPECT_EQ(m.not_covered, 0u);
  EXPECT_EQ(find(m, "hyperv/call-single/spin").role, Role::Predicted);
}

TEST(ThisHostModel, AMedianBelowTheRestCannotBeFittedAndSaysSo) {
  nlohmann::json j = fixture_json();
  for (auto& c : j["kvm"]["cases"])
    if (c["name"] == "x2apic-physical/ipi-roundtrip/halt") c["cycles"]["median"] = 2600.0;  // 1 us
  const ThisHostModel m = model_this_host(report_from_json(j, "m.json"), load_base_profile("kvm-skylake-pv-ipi"));
  EXPECT_FALSE(m.fits[0].fitted);
  EXPECT_EQ(m.fits[0].value_ns, 0.0);
  const CaseComparison& c = find(m, "x2apic-physical/ipi-roundtrip/halt");
  EXPECT_EQ(c.role, Role::Fitted);
  EXPECT_FALSE(c.within_target);
  EXPECT_NE(m.profile_text.find("Could not be fitted"), std::string::npos);
  EXPECT_EQ(m.fitted_count, 3u);
}

TEST(ThisHostModel, NothingToCompareWithoutKvmCases) {
  nlohmann::json j = fixture_json();
  j.erase("kvm");
  try {
    model_this_host(report_from_json(j, "m.json"), load_base_profile("kvm-skylake-pv-ipi"));
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.place(), "--compare");
  }
}

// For real: measure the halted x2APIC and Hyper-V cases briefly, model them, and check the shape (what is
// fitted and predicted; the figures themselves are this host's, not asserted).
TEST(ThisHostModel, LiveMeasurementModelledInTheSameProcess) {
  try {
    kvm::check_kvm_available(true);
  } catch (const UnavailableError& e) {
    GTEST_SKIP() << "KVM unavailable: " << e.what();
  }
  MeasureOptions o;
  o.c2c = false;
  o.k.rounds = 2;
  o.k.samples_per_round = 20;
  o.k.pilot_samples = 5;
  o.k.budget_seconds_per_case = 0.5;
  o.k.mechanisms = {kvm::Mechanism::X2apic, kvm::Mechanism::HvFast, kvm::Mechanism::HvEx};
  o.k.targets = {kvm::TargetState::Halt};
  o.bootstrap.resamples = 50;
  const MeasureReport r = run_measure(o);
  ModelOptions mo;
  mo.iterations = 300;
  const ThisHostModel m = model_this_host(r, load_base_profile("kvm-skylake-pv-ipi"), mo);
  EXPECT_EQ(m.fits.size(), 4u);
  EXPECT_EQ(m.predicted_count, 2u);
  for (const char* name : {"hyperv/call-single/halt", "hyperv-ex/call-single/halt"}) EXPECT_TRUE(find(m, name).diff) << name;
  EXPECT_NO_THROW(cost::Profile::parse(m.profile_text, "live.toml"));
}

}  // namespace
}  // namespace ipilab::measure
