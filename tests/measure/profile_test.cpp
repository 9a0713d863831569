// `ipilab measure --profile-out` (measure/profile_writer.h): a complete profile over a shipped base —
// measured entries as empirical histograms (contract: value = the bins' mean within 1 %, bins ascending
// and non-overlapping) with class "measured" and provenance, `extends` naming the base, every other base
// entry listed as inherited, keys the catalog knows.
#include <cmath>
#include <limits>
#include <sstream>

#include <gtest/gtest.h>
#include <toml++/toml.h>

#include "common/error.h"
#include "cost/catalog.h"
#include "cost/profile.h"
#include "measure/profile_writer.h"
#include "measure/recorded.h"
#include "measure/stats.h"

namespace ipilab::measure {
namespace {

using kvm::BenchCase;

kvm::CaseResult rounds_of(BenchCase b, double base, std::uint64_t n) {
  kvm::CaseResult r;
  r.bench = b;
  r.batch_n = n;
  r.timing = n > 1 ? kvm::TimingRule::Batch : kvm::TimingRule::ByDefinition;
  for (int i = 0; i < 5; ++i) {
    std::vector<double> round;
    for (int k = 0; k < 40; ++k) round.push_back(base * (1.0 + 0.01 * ((i * 40 + k) % 13)) + (k == 7 ? 20 * base : 0));
    r.rounds.push_back(round);
    r.iterations_run += round.size() * n;
  }
  return r;
}

MeasureReport fake_report() {
  HostInfo h;
  h.hostname = "box";
  h.cpu_model = "Test CPU";
  h.kernel = "6.1.0";
  h.cpus = 2;
  h.kvm_backend = "kvm_intel";
  h.constant_tsc = true;
  h.cpufreq_governors = {"performance"};
  h.load_average = 0;
  h.date_utc = "2025-01-01T00:00:00Z";
  kvm::RoundsResult k;
  k.tsc_khz = 2000000;  // 2 GHz
  k.rounds = 5;
  k.counter_read = 40;
  k.cases.push_back(rounds_of(BenchCase::counter_read(), 40, 1));
  k.cases.push_back(rounds_of(BenchCase::loop(), 1.5, 4096));
  k.cases.push_back(rounds_of(BenchCase::cpuid_exit(), 2000, 20));
  k.cases.push_back(rounds_of(BenchCase::ipi(kvm::Mechanism::X2apic, kvm::Workload::RoundTrip, kvm::TargetState::Halt),
                              50000, 1));
  C2cMatrix m;
  m.pus = {0, 1};
  const double nan = std::numeric_limits<double>::quiet_NaN();
  m.mean_ns = {{nan, 50.0}, {50.0, nan}};
  m.stddev_ns = {{nan, 1.0}, {1.0, nan}};
  m.min_ns = m.mean_ns;
  m.samples_ns = {{{}, {49, 50, 51}}, {{49, 50, 51}, {}}};
  m.pair_class = {{PairClass::Smt, PairClass::SameNode}, {PairClass::SameNode, PairClass::Smt}};
  m.round_trips = 1000;
  m.samples = 3;
  MeasureOptions o;
  o.bootstrap.resamples = 100;
  return analyze(h, o, k, "", m);
}

struct Written {
  std::string text;
  toml::table doc;
};

Written write() {
  const BaseProfile base = load_base_profile("kvm-skylake-pv-ipi");
  Written w;
  w.text = to_profile_toml(fake_report(), base);
  w.doc = toml::parse(std::string_view(w.text), std::string_view("this-host.toml"));
  return w;
}

TEST(MeasureProfile, ExtendsTheBaseAndMarksMeasuredEntries) {
  const Written w = write();
  EXPECT_EQ(w.doc["profile"]["name"].value_or(std::string()), "this-host");
  EXPECT_EQ(w.doc["profile"]["extends"].value_or(std::string()), "kvm-skylake-pv-ipi");
  EXPECT_DOUBLE_EQ(w.doc["profile"]["clock_ghz"].value_or(0.0), 2.0);
  const toml::table& costs = *w.doc["cost"].as_table();
  std::vector<std::string> keys;
  for (const auto& [group, t] : costs)
    for (const auto& [name, e] : *t.as_table()) keys.push_back(std::string(group.str()) + "." + std::string(name.str()));
  EXPECT_EQ(keys, (std::vector<std::string>{"guest.bench_loop", "guest.counter_read", "mem.cacheline_same_node",
                                            "vm.exit_entry"}));
  for (const std::string& k : keys) EXPECT_NE(cost::find_cost_key(k), nullptr) << k;
}

TEST(MeasureProfile, MeasuredEntriesAreEmpiricalHistogramsWithTheirMean) {
  const Written w = write();
  for (const char* key : {"vm.exit_entry", "guest.counter_read", "guest.bench_loop", "mem.cacheline_same_node"}) {
    SCOPED_TRACE(key);
    const std::string k(key);
    const toml::table& e = *w.doc["cost"][k.substr(0, k.find('.'))][k.substr(k.find('.') + 1)].as_table();
    EXPECT_EQ(e["unit"].value_or(std::string()), "ns");
    EXPECT_EQ(e["dist"].value_or(std::string()), "empirical");
    EXPECT_EQ(e["class"].value_or(std::string()), "measured");
    const std::string source = e["source"].value_or(std::string());
    EXPECT_EQ(source.rfind("MEASURED", 0), 0u);
    for (const char* part : {"box", "Test CPU", "6.1.0", "kvm_intel", "2025-01-01T00:00:00Z", "timed iterations"})
      EXPECT_NE(source.find(part), std::string::npos) << part;
    const toml::array& bins = *e["bins"].as_array();
    ASSERT_GT(bins.size(), 0u);
    std::vector<Bin> b;
    double prev_hi = -1;
    for (const auto& x : bins) {
      const toml::array& t = *x.as_array();
      ASSERT_EQ(t.size(), 3u);
      Bin bin{t[0].value<double>().value(), t[1].value<double>().value(),
              static_cast<std::uint64_t>(t[2].value<std::int64_t>().value())};
      EXPECT_LT(bin.lo, bin.hi);
      EXPECT_GE(bin.lo, prev_hi);  // ascending, non-overlapping
      EXPECT_GT(bin.count, 0u);
      prev_hi = bin.hi;
      b.push_back(bin);
    }
    const double value = e["value"].value<double>().value();
    EXPECT_NEAR(value / bins_mean(b), 1.0, 1e-5);  // contract: within 1 %; written as the bins' mean
  }
  // The CPUID exit: 2000 cycles = 1000 ns at 2 GHz, and 200 samples behind it.
  const toml::table& exit = *w.doc["cost"]["vm"]["exit_entry"].as_table();
  std::uint64_t n = 0;
  for (const auto& x : *exit["bins"].as_array()) n += static_cast<std::uint64_t>((*x.as_array())[2].value<std::int64_t>().value());
  EXPECT_EQ(n, 200u);
  EXPECT_NE(exit["note"].value_or(std::string()).find("Median 10"), std::string::npos);
}

TEST(MeasureProfile, EveryBaseEntryNotMeasuredIsListedAsInherited) {
  const Written w = write();
  const BaseProfile base = load_base_profile("kvm-skylake-pv-ipi");
  for (const std::string& k : base.profile.keys()) {
    const bool measured = k == "vm.exit_entry" || k == "guest.bench_loop" || k == "guest.counter_read";
    EXPECT_EQ(w.text.find("inherited  " + k + " = ") != std::string::npos, !measured) << k;
  }
  EXPECT_NE(w.text.find("# measured; overrides the base's 400 ns\n[cost.vm.exit_entry]"), std::string::npos);
  EXPECT_NE(w.text.find("x2apic-physical/ipi-roundtrip/halt"), std::string::npos);  // the measured cases, as comments
}

TEST(MeasureProfile, BaseIsAShippedNameOrAFile) {
  EXPECT_EQ(load_base_profile("kvm-skylake-pv-ipi").reference, "kvm-skylake-pv-ipi");
  const BaseProfile f = load_base_profile(std::string(IPILAB_SOURCE_DIR) + "/profiles/hyperv-ws2019.toml");
  EXPECT_EQ(f.reference.front(), '/');
  EXPECT_EQ(f.profile.name(), "hyperv-ws2019");
  try {
    load_base_profile("kvm-skylake");
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.place(), "--base");
    EXPECT_NE(e.reason().find("kvm-skylake-pv-ipi"), std::string::npos);  // lists the shipped ones
  }
  EXPECT_THROW(load_base_profile("/no/such/profile.toml"), InputError);
}

// The contract between the two sides: cost::Profile loads exactly what --profile-out writes — the measured
// entries as empirical distributions whose mean is the written value, class measured, from this file; every
// other key from the base through `extends`, with the base's value and provenance.
TEST(MeasureProfile, CostProfileLoadsExactlyWhatIsWritten) {
  const Written w = write();
  const cost::Profile p = cost::Profile::parse(w.text, "/tmp/this-host.toml");
  const BaseProfile base = load_base_profile("kvm-skylake-pv-ipi");
  EXPECT_EQ(p.name(), "this-host");
  ASSERT_EQ(p.layers().size(), 2u);
  EXPECT_EQ(p.layers()[1].name, "kvm-skylake-pv-ipi");
  EXPECT_DOUBLE_EQ(p.clock_ghz(), 2.0);
  for (const char* key : {"vm.exit_entry", "guest.counter_read", "guest.bench_loop", "mem.cacheline_same_node"}) {
    SCOPED_TRACE(key);
    const cost::Cost& c = p.get(key);
    const std::string k(key);
    const toml::table& e = *w.doc["cost"][k.substr(0, k.find('.'))][k.substr(k.find('.') + 1)].as_table();
    EXPECT_EQ(c.dist, sim::DistKind::Empirical);
    EXPECT_EQ(c.cls, cost::CostClass::Measured);
    EXPECT_EQ(c.unit, cost::Unit::Ns);
    EXPECT_DOUBLE_EQ(c.value, e["value"].value<double>().value());
    EXPECT_EQ(c.bins.size(), e["bins"].as_array()->size());
    EXPECT_NEAR(c.mean.ns(), c.value, 1e-3);  // stored in ps: the value to the picosecond
    EXPECT_EQ(c.from, "/tmp/this-host.toml");
  }
  // The CPUID exit: the mean of its samples (2000+ cycles at 2 GHz, one sample in 40 twenty times longer)
  // within the bins' width; the base said 400.
  const double mean_ns = fake_report().find("cpuid-exit")->cycles->mean / 2.0;
  EXPECT_NEAR(p.get("vm.exit_entry").value / mean_ns, 1.0, 0.03);
  for (const std::string& key : base.profile.keys()) {
    if (key == "vm.exit_entry" || key == "guest.bench_loop" || key == "guest.counter_read") continue;
    SCOPED_TRACE(key);
    const cost::Cost& c = p.get(key);
    const cost::Cost& b = base.profile.get(key);
    EXPECT_EQ(c.mean, b.mean);
    EXPECT_EQ(c.source, b.source);
    EXPECT_EQ(c.from, b.from);
  }
  EXPECT_EQ(p.keys().size(), base.profile.keys().size() + 1);  // + the cache line
}

// A profile written from a measurement and one written from its JSON recording are the same text.
TEST(MeasureProfile, ARecordedMeasurementGivesTheSameProfile) {
  const MeasureReport live = fake_report();
  const MeasureReport recorded = report_from_json(to_json(live), "m.json");
  const BaseProfile base = load_base_profile("kvm-skylake-pv-ipi");
  EXPECT_EQ(to_profile_toml(recorded, base), to_profile_toml(live, base));
}

TEST(MeasureProfile, NothingMeasuredIsAnErrorNotAnEmptyProfile) {
  MeasureReport r;
  EXPECT_THROW(to_profile_toml(r, load_base_profile("kvm-skylake-pv-ipi")), InputError);
}

}  // namespace
}  // namespace ipilab::measure
