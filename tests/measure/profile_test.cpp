// The profile written by `ipilab measure --profile-out` is a valid cost profile (src/cost/profile.h)
// whose values are the measured primitives, with provenance in `source`.
#include <cmath>
#include <limits>

#include <gtest/gtest.h>

#include "cost/profile.h"
#include "measure/report.h"

namespace ipilab::measure {
namespace {

MeasureReport fake_report() {
  MeasureReport r;
  r.host.hostname = "box";
  r.host.cpu_model = "Test CPU";
  r.host.kernel = "6.1.0";
  r.host.kvm_backend = "kvm_intel";
  r.host.date_utc = "2025-01-01T00:00:00Z";
  r.tsc_khz = 2000000;
  r.cpuid_exit = summarize(std::vector<std::uint64_t>{1000, 1200, 1100}, 1);
  C2cMatrix m;
  m.pus = {0, 1};
  const double nan = std::numeric_limits<double>::quiet_NaN();
  m.mean_ns = {{nan, 50.0}, {50.0, nan}};
  m.stddev_ns = m.min_ns = m.mean_ns;
  m.round_trips = 1000;
  m.samples = 30;
  r.c2c = m;
  auto add = [&](kvm::Mechanism mech, kvm::TargetState t, std::vector<std::uint64_t> s) {
    KvmCase c;
    c.mechanism = mech;
    c.target = t;
    c.workload = kvm::Workload::RoundTrip;
    c.cycles = summarize(s, 1);
    c.tsc_khz = 2000000;
    r.kvm.push_back(c);
  };
  add(kvm::Mechanism::X2apic, kvm::TargetState::Spin, {4000});
  add(kvm::Mechanism::X2apic, kvm::TargetState::Halt, {10000});
  add(kvm::Mechanism::HvFast, kvm::TargetState::Halt, {16000});
  return r;
}

TEST(MeasureProfile, WrittenProfileParsesWithMeasuredValuesAndProvenance) {
  const std::string text = to_profile_toml(fake_report());
  const cost::Profile p = cost::Profile::parse(text, "this-host.toml");
  EXPECT_EQ(p.name(), "this-host");
  EXPECT_DOUBLE_EQ(p.clock_ghz(), 2.0);
  EXPECT_DOUBLE_EQ(p.get("vm.exit_entry").value, 1100.0);   // CPUID exit median, cycles
  EXPECT_DOUBLE_EQ(p.get("mem.cacheline_same_node").value, 50.0);  // c2c median pair, ns
  EXPECT_DOUBLE_EQ(p.get("hv.hypercall_entry_exit").value, 6000.0);  // 16000 - 10000
  EXPECT_DOUBLE_EQ(p.get("vcpu.halt_wakeup").value, 6000.0);         // 10000 - 4000
  const std::string& src = p.get("vm.exit_entry").source;
  EXPECT_NE(src.find("Test CPU"), std::string::npos);
  EXPECT_NE(src.find("6.1.0"), std::string::npos);
  EXPECT_NE(src.find("2025-01-01T00:00:00Z"), std::string::npos);
  EXPECT_NE(src.find("CPUID"), std::string::npos);
}

}  // namespace
}  // namespace ipilab::measure
