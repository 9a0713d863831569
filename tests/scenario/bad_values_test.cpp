// Values out of any sane range are bad input naming the file, line and key — in a profile (value in
// every unit, spread, bins, clock), in a scenario's profile overrides, and a run that would need
// more simulated time than the engine holds — never an internal error.
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "common/error.h"
#include "fake_workload.h"
#include "scenario/runner.h"
#include "scenario/scenario.h"
#include "sim/engine.h"

namespace ipilab::scenario {
namespace {

namespace fs = std::filesystem;

class BadValues : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string templ = (fs::temp_directory_path() / "ipilab-bad-values-XXXXXX").string();
    ASSERT_NE(::mkdtemp(templ.data()), nullptr);
    dir_ = templ;
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  std::string write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name) << text;
    return (dir_ / name).string();
  }
  // A profile whose cost.vm.exit_entry is `entry` (the table's body), run by the fake workload.
  std::string error_with_profile(const std::string& entry, const std::string& clock = "2.0", const std::string& scenario_extra = "") {
    write("p.toml", "[profile]\nname = \"bad\"\nclock_ghz = " + clock + "\nclock_source = \"test\"\n\n[cost.vm.exit_entry]\n" +
                        entry + "source = \"test\"\n");
    const std::string s = write("s.toml", "[scenario]\nworkload = \"fake\"\niterations = 10\nwarmup = 0\n[host]\npreset = "
                                          "\"kunpeng920-2s\"\n[vm]\nvcpus = 2\npin = [0, 1]\n[profile]\nfile = \"p.toml\"\n" +
                                          scenario_extra);
    try {
      run(prepare(load_scenario(s), {}, testing::fake_lookup));
    } catch (const InputError& e) {
      return e.what();
    }
    ADD_FAILURE() << "no InputError for " << entry;
    return {};
  }
  std::string p() const { return (dir_ / "p.toml").string(); }
  fs::path dir_;
};

TEST_F(BadValues, Value1e15_InEveryUnit_NamesFileLineKey) {
  for (const char* unit : {"cycles", "ns", "ps", "us"}) {
    const std::string m = error_with_profile(fmt::format("value = 1e15\nunit = \"{}\"\n", unit));
    EXPECT_NE(m.find(p() + ":7:1: cost.vm.exit_entry.value: 1000000000000000 " + unit +
                     " is out of range for a primitive cost (above 1 s)"),
              std::string::npos)
        << m;
  }
  // 1 s is the limit: 1.000001 s is out.
  EXPECT_NE(error_with_profile("value = 1000001\nunit = \"us\"\n").find("is out of range"), std::string::npos);
}

TEST_F(BadValues, Spread1e15_Bins1e15_Clock1e15_AreBadInput) {
  EXPECT_NE(error_with_profile("value = 100\nunit = \"ns\"\nspread = 1e15\n")
                .find(p() + ":9:1: cost.vm.exit_entry.spread: a relative standard deviation of 1000000000000000 is not a plausible cost spread"),
            std::string::npos);
  const std::string bins = error_with_profile("value = 100\nunit = \"ns\"\ndist = \"empirical\"\nbins = [[50, 1e15, 1]]\n");
  EXPECT_NE(bins.find(p() + ":10:9: cost.vm.exit_entry.bins[0]: hi 1000000000000000 is out of range for a primitive cost (above 1 s)"),
            std::string::npos)
      << bins;
  for (const char* clock : {"1e15", "1e-15"}) {
    const std::string c = error_with_profile("value = 100\nunit = \"ns\"\n", clock);
    EXPECT_NE(c.find(p() + ":3:1: profile.clock_ghz: must be a clock in GHz, from 0.01 to below 100; got "), std::string::npos) << c;
  }
}

TEST_F(BadValues, ScenarioOverride1e15_InEveryUnit_NamesScenarioLineKey) {
  for (const char* unit : {"cycles", "ns", "ps", "us"}) {
    const std::string m = error_with_profile(
        "value = 100\nunit = \"ns\"\n", "2.0",
        fmt::format("[profile.override.\"vm.exit_entry\"]\nvalue = 1e15\nunit = \"{}\"\nsource = \"what-if\"\n", unit));
    EXPECT_NE(m.find((dir_ / "s.toml").string() + ":13:1: profile.override.vm.exit_entry.value: cost.vm.exit_entry: 1000000000000000 " +
                     unit + " is out of range for a primitive cost (above 1 s)"),
              std::string::npos)
        << m;
  }
  const std::string s = error_with_profile("value = 100\nunit = \"ns\"\n", "2.0",
                                           "[profile.override.\"vm.exit_entry\"]\nvalue = 100\nunit = \"ns\"\nspread = 1e15\nsource = \"x\"\n");
  EXPECT_NE(s.find("cost.vm.exit_entry: spread 1000000000000000 is not a plausible cost spread (at most 10)"), std::string::npos) << s;
}

TEST_F(BadValues, RunPastTheEngineHorizon_IsBadInputNamingTheScenarioAndTheLargestCost) {
  const std::string m = error_with_profile("value = 0.5\nunit = \"us\"\n", "2.0", "[workload]\nhorizon = true\n");
  EXPECT_NE(m.find((dir_ / "s.toml").string() + ": the run would pass 2^61 ps (26.7 days of simulated time)"), std::string::npos) << m;
  EXPECT_NE(m.find("10 + 0 warm-up iterations; the profile's largest cost: " + p() + ": cost.vm.exit_entry = 0.5 us"), std::string::npos) << m;
}

TEST(EngineHorizon, BeyondTheHorizonIsBadInput_BeforeItRuns) {
  sim::Simulator s;
  int ran = 0;
  s.at(sim::kHorizon, [&] { ++ran; });
  EXPECT_THROW(s.at(sim::kHorizon + sim::Ps{1}, [&] { ++ran; }), sim::HorizonError);
  EXPECT_THROW(s.after(sim::kNever, [&] { ++ran; }), sim::HorizonError);  // would overflow now + delay
  s.run();
  EXPECT_EQ(ran, 1);
  EXPECT_EQ(s.now(), sim::kHorizon);
  EXPECT_THROW(s.after(sim::Ps{1}, [] {}), sim::HorizonError);
  EXPECT_THROW(s.at(sim::Ps{5}, [] {}), std::logic_error);  // the past stays a programming error
  try {
    s.after(sim::Ps{1}, [] {});
  } catch (const InputError& e) {  // an InputError: exit 2
    EXPECT_EQ(e.place(), "simulated time");
  }
}

}  // namespace
}  // namespace ipilab::scenario
