// `ipilab hv send` and the per-version parts of `ipilab hv call`: in-process through the CLI11
// options (cli/hv_options.h) for the exact JSON contract of docs/hv.md, and through the built
// binary for exit statuses, `--linux list` and the shell's empty cpulist ('').
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <cstdio>
#include <filesystem>

#include <CLI/CLI.hpp>

#include "cli/hv_options.h"
#include "common/error.h"

namespace ipilab::hv {
namespace {

using nlohmann::ordered_json;
using cli::run_call_args;
using cli::run_send_args;

std::vector<std::string> keys(const ordered_json& j) {
  std::vector<std::string> k;
  for (const auto& [key, v] : j.items()) k.push_back(key);
  return k;
}

// ---- the JSON contract -------------------------------------------------------------------------------
TEST(CliHvSend, JsonContract_FastCall) {
  const auto j = run_send_args({"--linux", "mainline", "--cpu-vp", "0,1,2,3", "--self", "0", "--send-ipi", "2",
                                "--vector", "fb", "--json"})
                     .json;
  EXPECT_EQ(keys(j), (std::vector<std::string>{"hypercalls", "fallback", "returned", "oracle"}));
  ASSERT_EQ(j["hypercalls"].size(), 1u);
  EXPECT_EQ(j["hypercalls"][0], ordered_json::parse(R"({"control": "0x1000b", "fast": true, "rdx": "0xfb", "r8": "0x4"})"));
  EXPECT_EQ(keys(j["hypercalls"][0]), (std::vector<std::string>{"control", "fast", "rdx", "r8"}));
  EXPECT_TRUE(j["fallback"].is_null());
  EXPECT_EQ(j["returned"], true);
  const auto& o = j["oracle"];
  EXPECT_EQ(o["ran"], true);
  EXPECT_EQ(o["host"], "kvm mainline");
  EXPECT_EQ(o["intended"], ordered_json({2}));
  EXPECT_EQ(o["delivered"], ordered_json({2}));
  EXPECT_EQ(o["lost"], ordered_json::array());
  EXPECT_EQ(o["misdelivered"], ordered_json::array());
  EXPECT_EQ(o["ok"], true);
  EXPECT_EQ(o["hypercalls"][0]["status"], "HV_STATUS_SUCCESS");
  EXPECT_EQ(o["hypercalls"][0]["delivered_vps"], ordered_json({2}));
}

TEST(CliHvSend, JsonContract_SlowCallInputQwordsAreWhatTheHypervisorReads) {
  const auto j = run_send_args({"--linux", "v5.10", "--cpu-vp", "0,70", "--self", "0", "--send-ipi", "1",
                                "--vector", "0xFB"})
                     .json;
  EXPECT_EQ(j["hypercalls"][0], ordered_json::parse(
                                    R"({"control": "0x40015", "fast": false,
                                        "input_qwords": ["0xfb", "0x0", "0x3", "0x0", "0x40"]})"));
  EXPECT_EQ(keys(j["hypercalls"][0]), (std::vector<std::string>{"control", "fast", "input_qwords"}));
}

TEST(CliHvSend, JsonContract_Fallback) {
  auto j = run_send_args({"--linux", "mainline", "--cpu-vp", "0,1,2,3", "--self", "0", "--send-ipi-mask", "3,2",
                          "--vector", "2"})
               .json;  // NMI_VECTOR: native
  EXPECT_EQ(j["hypercalls"], ordered_json::array());
  EXPECT_EQ(j["fallback"], ordered_json::parse(R"({"function": "send_IPI_mask", "cpus": [2, 3], "vector": 2})"));
  EXPECT_EQ(j["returned"], false);
  j = run_send_args({"--linux", "mainline", "--cpu-vp", "0,1", "--self", "0", "--send-ipi-all", "--vector", "2"}).json;
  EXPECT_EQ(j["fallback"], ordered_json::parse(R"({"function": "send_IPI_all", "cpus": null, "vector": 2})"));
  j = run_send_args({"--linux", "mainline", "--cpu-vp", "0,1", "--self", "1", "--send-ipi-allbutself", "--vector",
                     "2"})
          .json;  // hv_send_ipi_allbutself -> orig_apic.send_IPI_mask_allbutself(cpu_online_mask)
  EXPECT_EQ(j["fallback"],
            ordered_json::parse(R"({"function": "send_IPI_mask_allbutself", "cpus": [0, 1], "vector": 2})"));
  j = run_send_args({"--linux", "mainline", "--cpu-vp", "0,1", "--self", "0", "--send-ipi", "1", "--vector", "fb",
                     "--no-cluster-ipi"})
          .json;
  EXPECT_EQ(j["returned"], nullptr);
  EXPECT_EQ(j["fallback"], ordered_json::parse(R"({"function": "send_IPI", "cpus": [1], "vector": 251})"));
  EXPECT_EQ(j["oracle"]["ok"], true);
}

TEST(CliHvSend, EveryVersionOnTheVp70Case) {
  // CPU 1 has VP 70: a CPU below 64 whose VP index is >= 64, the case of Michael Kelley's review of the
  // seed's v2 (LKML, 25 Oct 2019). CPU 6 has VP 6.
  struct Row {
    const char* linux;
    const char* control;
    bool ok;
  };
  const std::vector<Row> rows = {{"v5.4", "0x40015", true},
                                 {"seed-v2", "0x1000b", false},
                                 {"v5.10", "0x40015", true},
                                 {"exclude-self-unfixed", "0x40015", true},
                                 {"mainline", "0x40015", true}};
  for (const auto& r : rows) {
    const auto j = run_send_args({"--linux", r.linux, "--cpu-vp", "0,70,2,3,4,5,6,7", "--self", "0", "--send-ipi",
                                  "1", "--vector", "fb"})
                       .json;
    EXPECT_EQ(j["hypercalls"][0]["control"], r.control) << r.linux;
    EXPECT_EQ(j["oracle"]["ok"], r.ok) << r.linux;
  }
}

TEST(CliHvSend, HypercallStatusAndKvmVersion) {
  auto j = run_send_args({"--linux", "v5.10", "--cpu-vp", "0,1", "--self", "0", "--send-ipi", "1", "--vector", "fb",
                          "--hypercall-status", "100000000"})
               .json;
  EXPECT_EQ(j["returned"], false);
  EXPECT_EQ(j["fallback"]["function"], "send_IPI");
  EXPECT_EQ(j["oracle"]["hypercalls"][0]["guest_rax"], "0x100000000");
  EXPECT_EQ(j["oracle"]["hypercalls"][0]["host_rax"], "0x0");
  EXPECT_EQ(j["oracle"]["duplicated"], ordered_json({1}));
  j = run_send_args({"--linux", "mainline", "--kvm", "v5.15", "--cpu-vp", "0,1,2,70", "--self", "0",
                     "--send-ipi-all", "--vector", "fd"})
          .json;
  EXPECT_EQ(j["oracle"]["host"], "kvm v5.15");
  EXPECT_EQ(j["oracle"]["lost"], ordered_json({0, 1, 2, 3}));
  EXPECT_EQ(j["oracle"]["hypercalls"][0]["delivered_vps"], ordered_json::array());
}

TEST(CliHvSend, PresentOnlineAndEmptyMask) {
  auto j = run_send_args({"--linux", "v5.4", "--cpu-vp", "0,1,2,70", "--online", "0,1,3", "--self", "0",
                          "--send-ipi-all", "--vector", "fd"})
               .json;
  EXPECT_EQ(j["hypercalls"][0]["input_qwords"], ordered_json({"0xfd", "0x0", "0x3", "0x3", "0x40"}));
  j = run_send_args({"--linux", "v5.4", "--cpu-vp", "0,1", "--self", "0", "--send-ipi-mask", "", "--vector", "fd"}).json;
  EXPECT_EQ(j["hypercalls"], ordered_json::array());
  EXPECT_EQ(j["returned"], true);
  EXPECT_TRUE(j["fallback"].is_null());
}

TEST(CliHvSend, TextShowsTheDecodedInputAndTheVerdict) {
  const auto t = run_send_args({"--linux", "seed-v2", "--cpu-vp", "0,70,2,3,4,5,6,7", "--self", "0", "--send-ipi",
                                "1", "--vector", "fb"})
                     .text;
  EXPECT_NE(t.find("R8  0x40: processor_mask, VPs 6"), std::string::npos) << t;
  EXPECT_NE(t.find("lost 1; misdelivered 6; duplicated none -> WRONG"), std::string::npos) << t;
  EXPECT_NE(t.find("returned   __send_ipi_one returned true"), std::string::npos) << t;
  const auto t2 = run_send_args({"--linux", "v5.10", "--cpu-vp", "0,70", "--self", "0", "--send-ipi", "1",
                                 "--vector", "fb"})
                      .text;
  EXPECT_NE(t2.find("[2] 0x0000000000000003  vp_set.valid_bank_mask: banks 0,1"), std::string::npos) << t2;
  EXPECT_NE(t2.find("[4] 0x0000000000000040  bank_contents[1] = bank 1: VPs 70"), std::string::npos) << t2;
  EXPECT_NE(t2.find("judged success: bits 31:0 must be 0"), std::string::npos) << t2;
}

TEST(CliHvSend, BadOptionsNameTheOption) {
  auto place_of = [](std::vector<std::string> args) -> std::string {
    try {
      run_send_args(args);
    } catch (const InputError& e) {
      return e.place();
    }
    return "no error";
  };
  const std::vector<std::string> base = {"--linux", "mainline", "--cpu-vp", "0,1", "--self", "0", "--vector", "fb"};
  auto with = [&](std::vector<std::string> extra) {
    auto a = base;
    a.insert(a.end(), extra.begin(), extra.end());
    return place_of(a);
  };
  EXPECT_EQ(with({}), "--send-ipi");                                         // no hook
  EXPECT_EQ(with({"--send-ipi", "1", "--send-ipi-all"}), "--send-ipi");      // two hooks
  EXPECT_EQ(with({"--send-ipi", "2"}), "--send-ipi");                        // no CPU 2
  EXPECT_EQ(with({"--send-ipi-mask", "0-2"}), "--send-ipi-mask item 1 '0-2'");
  EXPECT_EQ(with({"--send-ipi-all", "--present", "0", "--online", "0-1"}), "--online");
  EXPECT_EQ(with({"--send-ipi-all", "--online", "1"}), "--self");            // CPU 0 offline
  EXPECT_EQ(with({"--send-ipi-all", "--max-vp-index", "0"}), "--max-vp-index");
  EXPECT_EQ(with({"--send-ipi-all", "--nr-cpus", "1"}), "--cpu-vp");
  EXPECT_EQ(with({"--send-ipi-all", "--kvm", "v4.0"}), "--kvm");
  EXPECT_EQ(place_of({"--linux", "v6.1", "--cpu-vp", "0", "--self", "0", "--send-ipi-all", "--vector", "fb"}),
            "--linux");
  EXPECT_EQ(place_of({"--linux", "mainline", "--cpu-vp", "0,2147483648", "--self", "0", "--send-ipi-all",
                      "--vector", "fb"}),
            "--cpu-vp item 2 (CPU 1)");
  EXPECT_EQ(place_of({"--linux", "mainline", "--cpu-vp", "0", "--self", "0", "--send-ipi-all", "--vector",
                      "100000000"}),
            "--vector");
  EXPECT_EQ(place_of({"--linux", "mainline", "--cpu-vp", "inval,1", "--self", "0", "--send-ipi", "1", "--vector",
                      "fb"}),
            "--self");  // the host cannot run the sender's hypercall: force the status
  EXPECT_EQ(place_of({"--linux", "mainline", "--cpu-vp", "0", "--send-ipi-all", "--vector", "fb"}), "--self");
  EXPECT_EQ(place_of({"--linux", "mainline", "--self", "0", "--send-ipi-all", "--vector", "fb"}), "--cpu-vp");
  EXPECT_THROW(run_send_args({"--linux", "mainline", "--self", "x"}), CLI::ParseError);
}

// ---- hv call: --kvm and duplicate VP indices ----------------------------------------------------------
TEST(CliHvCallVersions, KvmVersionAndDuplicates) {
  auto j = run_call_args({"--vps", "5,5,7", "--call", "send-ipi", "--fast", "--rdx", "fb", "--r8", "20"}).json;
  EXPECT_EQ(j["status"], "HV_STATUS_SUCCESS");
  EXPECT_EQ(j["delivered"], ordered_json({5, 5}));
  EXPECT_EQ(j["delivered_vcpus"], ordered_json({0, 1}));
  j = run_call_args({"--vps", "0,2,65", "--kvm", "v5.15", "--call", "send-ipi-ex", "--input-qwords", "fe,1,0"}).json;
  EXPECT_EQ(j["status"], "HV_STATUS_SUCCESS");
  EXPECT_EQ(j["delivered"], ordered_json::array());
  EXPECT_EQ(j["partition"]["kvm_version"], "v5.15");
  j = run_call_args({"--vps", "0,2,65", "--kvm", "v5.16", "--call", "send-ipi-ex", "--input-qwords", "fe,1,0"}).json;
  EXPECT_EQ(j["delivered"], ordered_json({0, 2, 65}));
  j = run_call_args({"--vps", "0,2,65", "--kvm", "v5.16", "--call", "send-ipi-ex", "--fast", "--varhead", "1",
                     "--rdx", "fe", "--xmm0", "1:4"})
          .json;
  EXPECT_EQ(j["status"], "HV_STATUS_INVALID_HYPERCALL_INPUT");
  EXPECT_EQ(j["rejected_by"], "fast SEND_IPI_EX (KVM before 47d3e5cdfe60 accepts only the memory form)");
  auto place_of = [](std::vector<std::string> args) -> std::string {
    try {
      run_call_args(args);
    } catch (const InputError& e) {
      return e.place();
    }
    return "no error";
  };
  EXPECT_EQ(place_of({"--call", "send-ipi", "--kvm", "v5.0"}), "--kvm");
  EXPECT_EQ(place_of({"--call", "send-ipi", "--kvm", "v5.16", "--flavor", "xen"}), "--kvm");
  EXPECT_EQ(place_of({"--call", "send-ipi", "--kvm", "v5.18", "--no-lapic"}), "--no-lapic");
  EXPECT_EQ(place_of({"--vps", "5,5", "--flavor", "xen", "--call", "send-ipi"}), "--vps");
}

// ---- the built binary ----------------------------------------------------------------------------------
struct CliRun {
  int status = -1;
  std::string out;
};

CliRun run_binary(const std::string& args) {
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

class HvBinary : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(IPILAB_CLI)) GTEST_SKIP() << "ipilab not built: " << IPILAB_CLI;
  }
};

TEST_F(HvBinary, LinuxListNamesEveryVersionWithItsCommits) {
  const auto r = run_binary("hv send --linux list");
  ASSERT_EQ(r.status, 0) << r.out;
  for (const char* s : {"v5.4 ", "68bb7bfb7985d", "seed-v2", "20191025131546.18794-1-vkuznets@redhat.com", "v5.10",
                        "b264f57fde0c", "exclude-self-unfixed", "dfb5c1e12c28 without f5c20e4a5f18", "mainline"})
    EXPECT_NE(r.out.find(s), std::string::npos) << s;
  const auto k = run_binary("hv call --kvm list");
  ASSERT_EQ(k.status, 0) << k.out;
  for (const char* s : {"3244867af8c0", "bd1ba5732bb9", "47d3e5cdfe60", "v5.15", "v5.16", "v5.18", "mainline"})
    EXPECT_NE(k.out.find(s), std::string::npos) << s;
}

TEST_F(HvBinary, JsonOnStdoutAndEmptyCpulistFromTheShell) {
  const auto r = run_binary("hv send --linux mainline --cpu-vp 0,1 --self 0 --send-ipi-mask '' --vector fb --json");
  ASSERT_EQ(r.status, 0) << r.out;
  const auto j = ordered_json::parse(r.out);
  EXPECT_EQ(j["returned"], true);
  EXPECT_EQ(j["hypercalls"], ordered_json::array());
}

TEST_F(HvBinary, BadInputExits2NamingTheOption) {
  auto r = run_binary("hv send --linux mainline --cpu-vp 0,1 --self 0 --send-ipi 5 --vector fb");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("ipilab: error: --send-ipi: CPU 5 does not exist"), std::string::npos) << r.out;
  r = run_binary("hv send --linux mainline --cpu-vp 0,x --self 0 --send-ipi 1 --vector fb");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("--cpu-vp item 2 'x'"), std::string::npos) << r.out;
  r = run_binary("hv call --vps 0,1 --kvm v5.16 --call send-ipi --no-lapic");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("host"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace ipilab::hv

namespace ipilab::hv {
namespace {

/// The "  ipilab hv <cmd> ..." lines of a --help text, split into words (the examples use no quotes).
std::vector<std::vector<std::string>> examples(const std::string& help, const std::string& cmd) {
  std::vector<std::vector<std::string>> out;
  std::size_t pos = 0;
  const std::string prefix = "  ipilab hv " + cmd + " ";
  while ((pos = help.find(prefix, pos)) != std::string::npos) {
    const std::size_t end = help.find('\n', pos);
    const std::string line = help.substr(pos + prefix.size(), end - pos - prefix.size());
    std::vector<std::string> words;
    std::size_t i = 0;
    while (i < line.size()) {
      const std::size_t j = line.find(' ', i);
      const std::string w = line.substr(i, j == std::string::npos ? std::string::npos : j - i);
      if (!w.empty()) words.push_back(w);
      if (j == std::string::npos) break;
      i = j + 1;
    }
    out.push_back(words);
    pos = end;
  }
  return out;
}

TEST(HvHelp, EveryExampleRuns) {
  const auto send = examples(tool::send_help(), "send");
  EXPECT_EQ(send.size(), 5u);
  for (const auto& a : send) EXPECT_NO_THROW(cli::run_send_args(a)) << a.size();
  const auto call = examples(tool::call_help(), "call");
  EXPECT_EQ(call.size(), 7u);
  for (const auto& a : call) EXPECT_NO_THROW(cli::run_call_args(a));
}

}  // namespace
}  // namespace ipilab::hv
