// `ipilab kvm call` in-process (cli/kvm_options.h): one command per KVM version shows each fix.
#include "cli/kvm_options.h"

#include <gtest/gtest.h>

#include "common/error.h"

namespace ipilab::cli {
namespace {

bool has_line(const std::string& text, const std::string& line) { return text.find(line) != std::string::npos; }

TEST(KvmCallTool, Bdf7ffc89922BeforeAndAfter) {
  const auto before = run_kvm_call_args({"--kvm", "v4.19-rc2", "--call", "send-ipi", "--rbx", "ffffffff", "--rdx",
                                         "ffffffff"});
  EXPECT_TRUE(has_line(before.text, "fault      HOST BUG: reads map->phys_map[-1] outside the array (256 entries"));
  EXPECT_TRUE(before.json["ret"].is_null());
  EXPECT_EQ(before.json["host_fault"]["phys_map_index"], -1);
  const auto after = run_kvm_call_args({"--kvm", "v4.19", "--call", "send-ipi", "--rbx", "ffffffff", "--rdx",
                                        "ffffffff"});
  EXPECT_TRUE(has_line(after.text, "ret        0 (0 APIC(s) accepted), RAX 0x0000000000000000\ndelivered  nothing\n"));
  EXPECT_TRUE(after.json["host_fault"].is_null());
}

TEST(KvmCallTool, InclusiveClampBeforeAndAfter) {
  const std::vector<std::string> args{"--apic-ids", "0,1,2,300", "--call", "send-ipi", "--rbx", "1", "--rdx", "12c",
                                      "--rsi", "fb", "--json"};
  auto v1_args = args;
  v1_args.insert(v1_args.end(), {"--kvm", "nospec-v1"});
  const auto v1 = run_kvm_call_args(v1_args);
  EXPECT_EQ(v1.json["delivered_vcpus"], nlohmann::ordered_json::array({0}));
  EXPECT_TRUE(has_line(v1.text, "delivered  vCPU 0 (APIC 0)\n"));
  const auto ok = run_kvm_call_args(args);
  EXPECT_EQ(ok.json["kvm_version"], "mainline");
  EXPECT_EQ(ok.json["delivered_vcpus"], nlohmann::ordered_json::array({3}));
  EXPECT_TRUE(has_line(ok.text, "delivered  vCPU 3 (APIC 300)\n"));
}

TEST(KvmCallTool, BadInputNamesTheOption) {
  try {
    run_kvm_call_args({"--call", "send-ipi", "--kvm", "v3"});
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.place(), "--kvm");
  }
  try {
    run_kvm_call_args({"--kvm", "v5.4", "--call", "send-ipi", "--no-pv-send-ipi"});
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.place(), "--no-pv-send-ipi");
  }
  try {
    run_kvm_call_args({"--call", "send-ipi", "--apic-ids", "1,1"});
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.place(), "--apic-ids");
  }
  try {
    run_kvm_call_args({"--call", "sched-yield", "--ready", "9"});
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.place(), "--ready");
  }
  EXPECT_THROW(run_kvm_call_args({"--rbx", "1"}), InputError);
  EXPECT_THROW(run_kvm_call_args({"--call", "send-ipi", "--rbx", "zz"}), InputError);
}

}  // namespace
}  // namespace ipilab::cli
