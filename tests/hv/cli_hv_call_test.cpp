// `ipilab hv call` run in-process (cli/hv_options.h run_call_args is the command minus printing):
// the ten KVM selftest hyperv_ipi cases and validation cases give, through the command line, the
// same JSON as Partition::execute gives directly, with the exact statuses and delivered VPs.
#include <gtest/gtest.h>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "common/error.h"
#include "common/hex.h"
#include "cli/hv_options.h"
#include "hv/call_tool.h"
#include "partition_cases.h"

namespace ipilab::hv {
namespace {

using nlohmann::ordered_json;
using cli::run_call_args;

/// The command-line words that reproduce `regs` + `page` exactly (raw control word and registers).
std::vector<std::string> args_for(const HypercallRegs& regs, const std::vector<std::uint8_t>& page) {
  std::vector<std::string> a = {"--vps",  "0,2,65",  "--control", fmt::format("{:#x}", regs.rcx),
                                "--rdx",  fmt::format("{:#x}", regs.rdx), "--r8", fmt::format("{:#x}", regs.r8),
                                "--json"};
  for (std::size_t i = 0; i < regs.xmm.size(); ++i) {
    a.push_back(fmt::format("--xmm{}", i));
    a.push_back(fmt::format("{:#x}:{:#x}", regs.xmm[i][0], regs.xmm[i][1]));
  }
  if (!page.empty()) {
    a.push_back("--input");
    a.push_back(format_hex_bytes(page.data(), page.size()));
  }
  return a;
}

/// Only the outcome part of the CLI's JSON (it also carries partition/registers).
ordered_json outcome_part(const ordered_json& j) {
  ordered_json o;
  for (const auto& [k, v] : j.items())
    if (k != "partition" && k != "sender_vcpu" && k != "registers") o[k] = v;
  return o;
}

class CliSelftestCase : public ::testing::TestWithParam<testdata::SelftestCase> {};

TEST_P(CliSelftestCase, JsonEqualsTheLibraryAnswer) {
  const auto& c = GetParam();
  const auto res = run_call_args(args_for(c.regs, c.page));
  const auto lib = Partition(testdata::selftest_config()).execute(0, c.regs, testdata::memory_with(c.page));
  EXPECT_EQ(outcome_part(res.json), tool::outcome_json(lib));
  EXPECT_EQ(res.json["status"], "HV_STATUS_SUCCESS");
  EXPECT_EQ(res.json["status_code"], 0);
  EXPECT_EQ(res.json["delivered"].get<std::vector<std::uint32_t>>(), c.expect_vps);
  EXPECT_EQ(res.json["vector"], 0xFE);
  EXPECT_EQ(res.json["registers"]["rcx"], c.regs.rcx);
  EXPECT_NE(res.text.find("HV_STATUS_SUCCESS (0x0000)"), std::string::npos) << res.text;
}

INSTANTIATE_TEST_SUITE_P(Cases1To10, CliSelftestCase, ::testing::ValuesIn(testdata::selftest_cases()),
                         [](const auto& info) { return "Case" + std::to_string(info.param.number); });

// The friendly spellings of the --help examples give the same answers as the raw forms.
TEST(CliHvCall, HelpExamplesGiveTheSelftestAnswers) {
  auto j = run_call_args({"--vps", "0,2,65", "--call", "send-ipi-ex", "--varhead", "1", "--input-qwords", "fe,0,2,2"}).json;
  EXPECT_EQ(j["status"], "HV_STATUS_SUCCESS");
  EXPECT_EQ(j["delivered"], ordered_json({65}));
  EXPECT_EQ(j["delivered_vcpus"], ordered_json({2}));
  j = run_call_args({"--vps", "0,2,65", "--call", "send-ipi", "--fast", "--rdx", "fe", "--r8", "4"}).json;
  EXPECT_EQ(j["delivered"], ordered_json({2}));
  j = run_call_args({"--vps", "0,2,65", "--call", "send-ipi-ex", "--fast", "--varhead", "2", "--rdx", "fe", "--r8",
                     "0", "--xmm0", "3:4", "--xmm1", "2"})
          .json;
  EXPECT_EQ(j["delivered"], ordered_json({2, 65}));
  EXPECT_EQ(j["control"]["word"], 0x50015u);
  j = run_call_args({"--vps", "0,2,65", "--control", "0x20015", "--input-qwords", "fe,0,3,4,2"}).json;
  EXPECT_EQ(j["status"], "HV_STATUS_INVALID_HYPERCALL_INPUT");
  EXPECT_EQ(j["status_code"], 3);
  EXPECT_EQ(j["rejected_by"], "varhead != popcount(valid_bank_mask)");
  EXPECT_EQ(j["delivered"], ordered_json::array());
}

// The KVM selftest hyperv_features (guest_test_hcalls_access) stages through the CLI (zeroed input
// page = no --input: memory is zero).
TEST(CliHvCall, HypervFeaturesStages) {
  const std::vector<std::string> base = {"--vcpus", "2", "--enforce-cpuid", "--no-xmm-input"};
  auto run = [&](std::vector<std::string> extra) {
    auto a = base;
    a.insert(a.end(), extra.begin(), extra.end());
    return run_call_args(a).json;
  };
  EXPECT_EQ(run({"--call", "beef"})["status"], "HV_STATUS_INVALID_HYPERCALL_CODE");
  EXPECT_EQ(run({"--call", "send-ipi", "--no-cluster-ipi"})["status"], "HV_STATUS_ACCESS_DENIED");
  EXPECT_EQ(run({"--call", "send-ipi"})["status_code"], 3);
  const auto stage14 = run({"--call", "send-ipi-ex"});
  EXPECT_EQ(stage14["status"], "HV_STATUS_SUCCESS");
  EXPECT_EQ(stage14["delivered"], ordered_json::array());
  const auto ud = run({"--call", "send-ipi-ex", "--fast", "--varhead", "1", "--rdx", "fe", "--xmm0", "1:2"});
  EXPECT_EQ(ud["inject_ud"], true);
  EXPECT_EQ(ud["status"], "#UD");
  EXPECT_TRUE(ud["status_code"].is_null());
}

// The extra validation cases (read from kvm_hv_hypercall / kvm_hv_send_ipi; in no selftest) through the
// CLI, each checked against the library answer too.
TEST(CliHvCall, ValidationCasesMatchTheLibrary) {
  struct Case {
    std::vector<std::string> args;
    const char* status;
    std::vector<std::uint32_t> delivered;
  };
  const std::vector<Case> cases = {
      {{"--call", "send-ipi", "--varhead", "1", "--input-qwords", "fe,4"}, "HV_STATUS_INVALID_HYPERCALL_INPUT", {}},
      {{"--call", "send-ipi", "--rep-count", "1", "--input-qwords", "fe,4"}, "HV_STATUS_INVALID_HYPERCALL_INPUT", {}},
      {{"--control", "0x8000000b", "--input-qwords", "fe,4"}, "HV_STATUS_INVALID_HYPERCALL_INPUT", {}},
      {{"--call", "send-ipi", "--fast", "--rdx", "1000000fe", "--r8", "4"}, "HV_STATUS_INVALID_HYPERCALL_INPUT", {}},
      {{"--call", "send-ipi", "--fast", "--rdx", "f", "--r8", "4"}, "HV_STATUS_INVALID_HYPERCALL_INPUT", {}},
      {{"--call", "send-ipi", "--fast", "--rdx", "100", "--r8", "4"}, "HV_STATUS_INVALID_HYPERCALL_INPUT", {}},
      {{"--call", "send-ipi", "--fast", "--rdx", "10", "--r8", "4"}, "HV_STATUS_SUCCESS", {2}},
      {{"--call", "send-ipi", "--fast", "--rdx", "ff", "--r8", "5"}, "HV_STATUS_SUCCESS", {0, 2}},
      {{"--call", "send-ipi", "--fast", "--rdx", "fe", "--r8", "8000000000000002"}, "HV_STATUS_SUCCESS", {}},
      {{"--call", "send-ipi-ex", "--varhead", "1", "--input-qwords", "fe,2,2,2"}, "HV_STATUS_SUCCESS", {65}},
      {{"--call", "send-ipi-ex", "--fast", "--varhead", "12", "--rdx", "fe", "--xmm0", "fff:0"},
       "HV_STATUS_INVALID_HYPERCALL_INPUT", {}},
      {{"--call", "send-ipi-ex", "--varhead", "1", "--input-gpa", "fff0"},
       "HV_STATUS_INVALID_HYPERCALL_INPUT", {}},  // 8 of the 24 header bytes are outside the 64 KiB memory
      {{"--call", "send-ipi", "--input-qwords", "fe,4", "--no-lapic"}, "HV_STATUS_INVALID_HYPERCALL_INPUT", {}},
      {{"--call", "send-ipi", "--input-qwords", "fe,5", "--apic-disabled", "0"}, "HV_STATUS_SUCCESS", {2}},
      {{"--call", "send-ipi", "--input-qwords", "ffffffff000000fe,4"}, "HV_STATUS_SUCCESS", {2}},
      {{"--call", "send-ipi", "--input-qwords", "ffffffff000000fe,4", "--flavor", "xen"},
       "HV_STATUS_INVALID_PARAMETER", {}},
      {{"--call", "send-ipi-ex", "--input-qwords", "0,0,0,0", "--flavor", "xen"}, "HV_STATUS_INVALID_PARAMETER", {}},
      {{"--call", "2", "--fast"}, "HV_STATUS_INVALID_HYPERCALL_CODE", {}},
  };
  for (const auto& c : cases) {
    std::vector<std::string> args = {"--vps", "0,2,65"};
    args.insert(args.end(), c.args.begin(), c.args.end());
    const auto res = run_call_args(args);
    const std::string label = fmt::format("{}", fmt::join(c.args, " "));
    EXPECT_EQ(res.json["status"], c.status) << label;
    EXPECT_EQ(res.json["delivered"].get<std::vector<std::uint32_t>>(), c.delivered) << label;
    // Same request through the library.
    const auto req = tool::build_request([&] {
      tool::CallOptions o;
      CLI::App app;
      cli::add_call_options(app, o);
      std::vector<std::string> rev(args.rbegin(), args.rend());
      app.parse(rev);
      return o;
    }());
    const auto lib = Partition(req.config).execute(req.sender_vcpu, req.regs, req.memory);
    EXPECT_EQ(outcome_part(res.json), tool::outcome_json(lib)) << label;
  }
}

TEST(CliHvCall, FlushIsReportedAsNotModelled) {
  const auto j = run_call_args({"--call", "2", "--fast"}).json;
  EXPECT_EQ(j["modelled"], false);
  EXPECT_EQ(j["rejected_by"], "call code implemented by KVM but not modelled by ipilab");
}

TEST(CliHvCall, BadArgumentsNameTheOption) {
  auto place_of = [](std::vector<std::string> args) -> std::string {
    try {
      run_call_args(args);
    } catch (const InputError& e) {
      return e.place();
    }
    return "no error";
  };
  EXPECT_EQ(place_of({"--call", "send-ipi", "--fast", "--rdx", "zz"}), "--rdx");
  // Above the largest VP index: refused while parsing, with the bound.
  try {
    run_call_args({"--vps", "0,4096", "--call", "send-ipi"});
    ADD_FAILURE() << "--vps 0,4096 accepted";
  } catch (const CLI::ParseError& e) {
    EXPECT_STREQ(e.what(), "--vps: 4096 exceeds the largest VP index 4095 (64 sparse banks of 64 VPs)");
  }
  EXPECT_EQ(place_of({"--vps", "0,70", "--max-vcpus", "64", "--call", "send-ipi"}), "--vps");
  EXPECT_EQ(place_of({"--call", "send-ipi", "--apic-disabled", "1,1"}), "--apic-disabled");
  EXPECT_EQ(place_of({"--vcpus", "0", "--call", "send-ipi"}), "--vcpus");
  EXPECT_EQ(place_of({"--vcpus", "2", "--sender", "2", "--call", "send-ipi"}), "--sender");
  EXPECT_EQ(place_of({"--call", "send-ipi", "--varhead", "1024"}), "--varhead");
  EXPECT_EQ(place_of({"--call", "10000"}), "--call");
  EXPECT_EQ(place_of({"--fast"}), "--call");
  EXPECT_EQ(place_of({"--call", "send-ipi", "--input", "fe0"}), "--input");
  EXPECT_EQ(place_of({"--call", "send-ipi", "--input-qwords", "fe,4", "--input-gpa", "10000"}), "--input-qwords");
  EXPECT_EQ(place_of({"--call", "send-ipi", "--memory-size", "100000000"}), "--memory-size");
  EXPECT_EQ(place_of({"--call", "send-ipi", "--apic-disabled", "9"}), "--apic-disabled");
  EXPECT_EQ(place_of({"--call", "send-ipi", "--fast", "--xmm3", "1:zz"}), "--xmm3");
  EXPECT_THROW(run_call_args({"--call", "send-ipi", "--flavor", "hyperv"}), CLI::ParseError);
  EXPECT_THROW(run_call_args({"--control", "b", "--call", "send-ipi"}), CLI::ParseError);
  EXPECT_THROW(run_call_args({"--vps", "0,x"}), CLI::ParseError);
}

// `--rdx fe --r8 0x20` without --fast used to run as a slow call reading a zero page at GPA 0xfe
// ("vector outside 0x10..0xFF"): the options of the other form are refused, naming them and --fast.
TEST(CliHvCall, RegistersWithoutFastAndAnInputPageWithFastAreRefused) {
  auto error_of = [](std::vector<std::string> args) -> std::string {
    try {
      run_call_args(args);
    } catch (const InputError& e) {
      return e.what();
    }
    return "no error";
  };
  const std::string slow_regs =
      "register input is for a fast call: add --fast (without it this is a slow call, which reads its input from "
      "guest memory: --input or --input-qwords at --input-gpa, and RDX is that GPA)";
  EXPECT_EQ(error_of({"--vps", "5,5,7", "--call", "send-ipi", "--rdx", "fb", "--r8", "20"}),
            "--rdx, --r8: " + slow_regs);
  EXPECT_EQ(error_of({"--call", "send-ipi", "--r8", "20"}), "--r8: " + slow_regs);
  EXPECT_EQ(error_of({"--call", "send-ipi-ex", "--varhead", "1", "--xmm0", "1:4"}), "--xmm0: " + slow_regs);
  EXPECT_EQ(error_of({"--call", "send-ipi", "--fast", "--input-qwords", "fe,4"}),
            "--input-qwords: an input page is for a slow (memory) call, but --fast makes this a fast call, which "
            "takes its input in RDX/R8 (and XMM): drop --fast, or give the input as --rdx/--r8/--xmmN");
  EXPECT_EQ(error_of({"--call", "send-ipi", "--fast", "--input", "fe 00"}).substr(0, 9), "--input: ");
  // With --fast the same registers run: VP 5 (vCPUs 0 and 1) gets 0xfb.
  const auto j = run_call_args({"--vps", "5,5,7", "--call", "send-ipi", "--fast", "--rdx", "fb", "--r8", "20"}).json;
  EXPECT_EQ(j["status"], "HV_STATUS_SUCCESS");
  // --control is the raw form: a slow control word with RDX = GPA and R8 as given still runs.
  EXPECT_EQ(error_of({"--control", "0xb", "--rdx", "1000", "--r8", "0", "--input-qwords", "fe,4"}), "no error");
}

TEST(CliHvCall, SlowCallRdxDefaultsToTheInputGpaFastCallToZero) {
  auto j = run_call_args({"--call", "send-ipi", "--input-gpa", "2000", "--input-qwords", "fe,2"}).json;
  EXPECT_EQ(j["registers"]["rdx"], 0x2000u);
  EXPECT_EQ(j["delivered"], ordered_json({1}));
  j = run_call_args({"--call", "send-ipi", "--fast"}).json;
  EXPECT_EQ(j["registers"]["rdx"], 0u);
}

}  // namespace
}  // namespace ipilab::hv
