// `ipilab gic decode` / `gic encode` end to end (src/cli/cmd_gic.cpp). Skipped when the ipilab
// executable has not been built in this build folder.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

namespace {

struct CliRun {
  int status = -1;
  std::string out;
};

CliRun run(const std::string& args) {
  CliRun r;
  const std::string cmd = std::string(IPILAB_CLI) + " " + args + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return r;
  char buf[4096];
  std::size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  const int st = pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

class GicCli : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(IPILAB_CLI)) GTEST_SKIP() << "ipilab not built: " << IPILAB_CLI;
  }
};

constexpr const char* kVsgiBytes =
    "23 05 a0 00 05 00 00 00 00 00 00 00 34 12 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00";

TEST_F(GicCli, DecodeJson_Vsgi_CommandOpcodeFields) {
  const CliRun r = run(std::string("gic decode --json ") + kVsgiBytes);
  ASSERT_EQ(r.status, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["command"], "VSGI");
  EXPECT_EQ(j["opcode"], 0x23);
  EXPECT_EQ(j["fields"]["vPEID"], 0x1234);
  EXPECT_EQ(j["fields"]["vINTID"], 5);
  EXPECT_EQ(j["fields"]["Priority"], 0xA0);
  EXPECT_EQ(j["dwords"][0], "0x0000000500a00523");
}

TEST_F(GicCli, DecodeHuman_ListsBitRanges) {
  const CliRun r = run(std::string("gic decode ") + kVsgiBytes);
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("DW0[23:20]"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("DW1[47:32]"), std::string::npos) << r.out;
}

TEST_F(GicCli, DecodeSingleValue_IsSgir) {
  const CliRun r = run("gic decode --json 0x0000123400000005");
  ASSERT_EQ(r.status, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["command"], "GITS_SGIR");
  EXPECT_EQ(j["fields"]["vPEID"], 0x1234);
  EXPECT_EQ(j["fields"]["vINTID"], 5);
}

TEST_F(GicCli, BadHex_Exit2_NamesArgument) {
  const CliRun r = run("gic decode 23 05 zz");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("HEX"), std::string::npos) << r.out;
  EXPECT_EQ(run("gic decode 2a 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00").status, 2);
}

TEST_F(GicCli, EncodeMatchesDecode) {
  const CliRun r = run("gic encode --json vsgi vPEID=0x1234 vINTID=5 Priority=0xa0 Enable=1 Group=1");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(nlohmann::json::parse(r.out)["bytes"], kVsgiBytes);
}

// --- ipilab gic its ---

// A script file in the temporary folder, named for this process (tests run side by side), removed
// when the test ends however it ends.
struct TempFile {
  std::string path;
  TempFile(const std::string& name, const std::string& text)
      : path((std::filesystem::temp_directory_path() / (std::to_string(::getpid()) + "-" + name)).string()) {
    FILE* f = std::fopen(path.c_str(), "w");
    std::fputs(text.c_str(), f);
    std::fclose(f);
  }
  ~TempFile() { std::remove(path.c_str()); }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
};

TEST_F(GicCli, Its_ShippedExampleByName_FromAnotherDirectory_Exit0) {
  const CliRun r = run("gic its vpe-move --quiet");  // popen runs in the test's working directory
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("refused  vPE 0x1 is mapped on no ITS (vmapp_count = 0)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("error    ITS 1: VMOVP at 0x00e0: vPE 0x1 is not mapped on this ITS [unmapped_vpe]"), std::string::npos);
  EXPECT_NE(r.out.find("bring-up + 29 steps, 27 expectations checked, 0 failed"), std::string::npos);
}

// The text's count and --json's entries agree: the text counts the script's steps after the
// `system` bring-up, which --json lists as steps[0] (kind "system") and the text prints first.
TEST_F(GicCli, Its_TextStepCount_IsJsonStepsWithoutTheBringUp) {
  const CliRun t = run("gic its disable-reenable");
  const CliRun j = run("gic its disable-reenable --json");
  ASSERT_EQ(j.status, t.status) << t.out;
  const auto doc = nlohmann::json::parse(j.out);
  const auto& steps = doc["steps"];
  ASSERT_EQ(steps.size(), 20u);
  EXPECT_EQ(steps[0]["kind"], "system");
  for (std::size_t i = 1; i < steps.size(); ++i) EXPECT_NE(steps[i]["kind"], "system") << i;
  EXPECT_NE(t.out.find("\nbring-up + 19 steps, "), std::string::npos) << t.out;
  std::size_t blocks = 0;  // every entry is printed as a "[line N] ..." block, the bring-up included
  for (std::size_t p = t.out.find("[line "); p != std::string::npos; p = t.out.find("[line ", p + 1)) ++blocks;
  EXPECT_EQ(blocks, steps.size());
}

TEST_F(GicCli, Its_Json_WaitFieldsAndState) {
  const CliRun r = run("gic its wrap-wait --json");
  ASSERT_EQ(r.status, 0) << r.out.substr(0, 2000);
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["expectations"]["failed"], 0);
  bool seen = false;
  for (const auto& step : j["steps"])
    for (const auto& w : step["waits"])
      if (w["predicate"] == "offsets" && w["outcome"] == "timed_out_after_completion") {
        seen = true;
        EXPECT_EQ(w["polls"], 1000000);
        EXPECT_EQ(w["from"], "0xffa0");
        EXPECT_EQ(w["to"], "0xffe0");
        EXPECT_EQ(w["last_creadr"], "0x1e0");
        EXPECT_EQ(w["waited_commands"], 2);
        EXPECT_EQ(w["linux_message"], "ITS queue timeout (65440 65504 480); ITS cmd its_build_vmovp_cmd failed");
        EXPECT_EQ(step["state"]["its"][0]["GITS_CREADR"], "0x1e0");
      }
  EXPECT_TRUE(seen);
  EXPECT_EQ(j["steps"][0]["state"]["its"][0]["GITS_BASER2"], "0xfa1f000050000600");
}

TEST_F(GicCli, Its_BadScript_Exit2_FileLineReason) {
  const TempFile script("ipilab_bad.its", "system sockets=1 cpus_per_socket=2\n\nwrite its0 GITS_CTLR Enable=1\n");
  const std::string& path = script.path;
  const CliRun r = run("gic its " + path);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find(path + ":3: write GITS_CTLR: unknown key 'enable'"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("[line"), std::string::npos) << "nothing printed before the error";
  EXPECT_EQ(run("gic its /nonexistent/x.its").status, 2);
}

TEST_F(GicCli, Its_FailedExpect_Exit1_AfterPrinting) {
  const TempFile script("ipilab_expect.its",
                        "system sockets=1 cpus_per_socket=2\nlinux map vpe=1 cpu=0\nexpect its0 creadr=0x40\n");
  const std::string& path = script.path;
  const CliRun r = run("gic its " + path);
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.out.find("expect   FAILED its0 creadr: expected 0x40, got 0x80"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("1 of 1 expectations failed"), std::string::npos) << r.out;
}

}  // namespace
