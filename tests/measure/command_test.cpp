// `ipilab measure` called as a function (src/measure/command.h), without the executable: a recorded
// measurement (--from) reported, modelled and written as a profile; a bad request refused.
#include "measure/command.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "common/error.h"

namespace ipilab::measure {
namespace {

const std::string kRecording = std::string(IPILAB_SOURCE_DIR) + "/tests/measure/data/pvm-nested-loaded.json";

CommandOptions from_fixture() {
  CommandOptions o;
  o.c2c = false;  // ipilab measure kvm
  o.from = kRecording;
  return o;
}

TEST(MeasureCommand, FromRecording_TheTableOfTheRecordedCases) {
  std::ostringstream out, err;
  measure_command(from_fixture(), out, err);
  const std::string s = out.str();
  EXPECT_TRUE(s.starts_with("Recorded measurement: " + kRecording + "\nHost: Intel(R) Xeon(R) Processor | 2 CPUs")) << s;
  EXPECT_NE(s.find("\ncpuid-exit                              1001     669669*      3332.7     34681.8      1281.8        "
                   "[1274.2, 1287.1]             1 (reference)  0\n"),
            std::string::npos)
      << s;
  EXPECT_EQ(err.str(), "");
}

TEST(MeasureCommand, FromRecordingJson_OnOut_WarningsOnErr) {
  CommandOptions o = from_fixture();
  o.json = "-";
  std::ostringstream out, err;
  measure_command(o, out, err);
  const auto j = nlohmann::json::parse(out.str());
  EXPECT_EQ(j["recorded_from"], kRecording);
  EXPECT_EQ(j["kvm"]["reference"], "cpuid-exit");
  EXPECT_FALSE(j.contains("compare"));
  ASSERT_FALSE(j["warnings"].empty());
  EXPECT_TRUE(err.str().starts_with("ipilab: warning: " + j["warnings"][0].get<std::string>() + "\n")) << err.str();
}

TEST(MeasureCommand, CompareAndProfileOut_FittedValuesAndTheProfileNamedOnErr) {
  const std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) /
                                    ("ipilab-measure-command-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  CommandOptions o = from_fixture();
  o.compare = true;
  o.profile_out = (dir / "this-host.toml").string();
  std::ostringstream out, err;
  measure_command(o, out, err);
  EXPECT_NE(out.str().find("fitted ✓: vcpu.halt_wakeup = 28664.2 ns"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("fitted ✓: guest.callback = 7389.8 ns"), std::string::npos) << out.str();
  EXPECT_EQ(err.str(), "ipilab: wrote " + o.profile_out + " (measured entries and 4 fitted over 'kvm-skylake-pv-ipi'; "
                       "run it: ipilab run this-host --profile " + o.profile_out + ")\n");
  EXPECT_TRUE(std::filesystem::exists(o.profile_out));
  std::filesystem::remove_all(dir);
}

TEST(MeasureCommand, BadRequest_InputErrorBeforeAnything) {
  std::ostringstream out, err;
  CommandOptions o = from_fixture();
  o.measuring_given = {"--rounds", "--seed"};
  try {
    measure_command(o, out, err);
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.place(), "--rounds");
    EXPECT_EQ(e.reason(), "means nothing with --from: '" + kRecording + "' was measured already");
  }
  o = from_fixture();
  o.base = "kvm-skylake-pv-ipi";
  try {
    measure_command(o, out, err);
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), "--base: only means something with --profile-out or --compare");
  }
  o = from_fixture();
  o.c2c = true;
  o.kvm = false;
  o.csv = "-";
  EXPECT_THROW(measure_command(o, out, err), InputError);
  EXPECT_EQ(out.str(), "");
  EXPECT_EQ(err.str(), "");
}

}  // namespace
}  // namespace ipilab::measure
