// scenario.expect entries marked `kind = "predicted"` (a published figure no profile value was fitted
// to) need a `reason` for their tolerance; anything but reproduced / predicted is an error.
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "common/error.h"
#include "scenario/scenario.h"

namespace ipilab::scenario {
namespace {

namespace fs = std::filesystem;

constexpr const char* kHead = R"([scenario]
name = "t"
title = "test scenario"
workload = "fake"
iterations = 50
warmup = 0
reproduces = "nothing published"
)";
constexpr const char* kTail = R"(
[host]
preset = "kunpeng920-2s"
[vm]
vcpus = 2
pin = [0, 1]
[profile]
file = "profile.toml"
[workload]
base_ns = 100
)";

class ExpectKind : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string templ = (fs::temp_directory_path() / "ipilab-expect-kind-XXXXXX").string();
    ASSERT_NE(::mkdtemp(templ.data()), nullptr);
    dir_ = templ;
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  Scenario load(const std::string& expect) {
    const fs::path p = dir_ / "s.toml";
    std::ofstream(p) << kHead << expect << kTail;
    return load_scenario(p.string());
  }
  fs::path dir_;
};

TEST_F(ExpectKind, PredictedWithReasonIsKept_DefaultIsReproduced) {
  const Scenario s = load(
      "[scenario.expect.base]\nlatency = { value = 600, tolerance = 0.2, kind = \"predicted\", reason = \"two estimates\" }\n"
      "sends = 50\n");
  ASSERT_EQ(s.expect.size(), 2u);
  for (const auto& e : s.expect) {
    if (e.key == "latency") {
      EXPECT_EQ(e.kind, "predicted");
      EXPECT_EQ(e.reason, "two estimates");
      EXPECT_DOUBLE_EQ(e.tolerance, 0.2);
    } else {
      EXPECT_EQ(e.kind, "reproduced");
      EXPECT_TRUE(e.reason.empty());
    }
  }
}

TEST_F(ExpectKind, PredictedWithoutReason_OrUnknownKind_IsAnError) {
  try {
    load("[scenario.expect.base]\nlatency = { value = 600, kind = \"predicted\" }\n");
    ADD_FAILURE() << "no InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("scenario.expect.base.latency.reason"), std::string::npos) << e.what();
  }
  try {
    load("[scenario.expect.base]\nlatency = { value = 600, kind = \"guessed\" }\n");
    ADD_FAILURE() << "no InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("'guessed' is not one of reproduced, predicted"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace ipilab::scenario
