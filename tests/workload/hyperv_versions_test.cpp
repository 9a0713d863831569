// The hyperv mechanism per Linux version (arch/x86/hyperv/hv_apic.c) and KVM version
// (arch/x86/kvm/hyperv.c): who gets each IPI, the exact sample hypercall, VP_INVAL / >= 4096 /
// repeated VP indices, the cpu masks and hv_max_vp_index, and the bad inputs (exit 2) with their place.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/error.h"
#include "hv/send_case.h"
#include "hv/send_tool.h"
#include "run_helpers.h"

namespace ipilab::workload {
namespace {
using testing::first_n;
using testing::counter;

using testing::make_setup;
using testing::run;
using testing::Setup;



// An 8-vCPU guest whose CPU 7 has VP index 64 (so a mask with it needs the Ex hypercall), CPU 0
// broadcasting a call-function IPI to the 7 others with send_IPI_mask_allbutself(all CPUs) — what
// hv_send_ipi_allbutself passes (cpu_online_mask = cpu_present_mask).
Setup broadcast(const std::string& guest, const std::string& kvm, const std::string& extra = "") {
  return make_setup("skylake-2s-40c", "kvm-skylake-pv-ipi.toml", first_n(8), 8192, {},
                    "mechanism = \"hyperv\"\ntargets = 7\naddressing = \"allbutself\"\nhandler = \"callback\"\n"
                    "linux = \"" + guest + "\"\nkvm = \"" + kvm + "\"\n" + extra,
                    {{7, 64}}, 100);
}

// dfb5c1e12c28 ("remove on-stack cpumask from hv_send_ipi_mask_allbutself") kept HV_GENERIC_SET_ALL
// for mask == cpu_present_mask although exclude_self; f5c20e4a5f18 ("Avoid erroneously sending IPI to
// 'self'") fixed it. On a KVM with 3244867af8c0 (v5.16+) SET_ALL reaches every vCPU, the sender too.
TEST(HyperVVersions, ExcludeSelfUnfixedOnMainlineKvm_SenderInterruptsItself) {
  auto s = broadcast("exclude-self-unfixed", "mainline");
  const RunResult r = run(s, "multicast");
  EXPECT_EQ(counter(r, "sends"), 100u);
  EXPECT_EQ(counter(r, "hypercalls.HvCallSendSyntheticClusterIpiEx"), 100u);
  EXPECT_EQ(counter(r, "misdelivered"), 100u);  // one spurious self-IPI per send
  EXPECT_EQ(counter(r, "lost"), 0u);
  EXPECT_EQ(counter(r, "ipis_delivered"), 700u);
  ASSERT_TRUE(r.sample_hypercall);
  const auto& j = r.sample_hypercall->json;
  EXPECT_EQ(j["hypercalls"][0]["control"], "0x15");  // HVCALL_SEND_IPI_EX, varhead 0
  EXPECT_EQ(j["hypercalls"][0]["input_qwords"], nlohmann::ordered_json::parse(R"(["0xfc", "0x1", "0x0"])"));
  EXPECT_EQ(j["oracle"]["misdelivered"], nlohmann::ordered_json::parse("[0]"));
}

// Before 3244867af8c0 ("KVM: x86: Ignore sparse banks size for an "all CPUs", non-sparse IPI req",
// v5.16-rc5) KVM returned HV_STATUS_SUCCESS for SET_ALL with valid_bank_mask 0 and delivered nothing.
TEST(HyperVVersions, ExcludeSelfUnfixedOnKvm515_EveryTargetLost) {
  auto s = broadcast("exclude-self-unfixed", "v5.15");
  const RunResult r = run(s, "multicast");
  EXPECT_EQ(counter(r, "lost"), 700u);
  EXPECT_EQ(counter(r, "misdelivered"), 0u);
  EXPECT_EQ(counter(r, "ipis_delivered"), 0u);
  EXPECT_EQ(counter(r, "native_fallbacks"), 0u);  // judged a success: nothing falls back
  EXPECT_EQ(r.metrics[0].summary.count, 0u);
  const auto& o = r.sample_hypercall->json["oracle"];
  EXPECT_EQ(o["hypercalls"][0]["status"], "HV_STATUS_SUCCESS");
  EXPECT_EQ(o["lost"], nlohmann::ordered_json::parse("[1,2,3,4,5,6,7]"));
}

// v5.4's hv_send_ipi_mask_allbutself copies the mask and clears self; mainline passes exclude_self
// and uses the sparse set: both reach exactly CPUs 1-7 on either host.
TEST(HyperVVersions, V54AndMainlineSendTheSparseSetOnEitherHost) {
  for (const char* lx : {"v5.4", "v5.10", "mainline"})
    for (const char* kvm : {"v5.15", "v5.16", "v5.18", "mainline"}) {
      auto s = broadcast(lx, kvm);
      const RunResult r = run(s, "multicast");
      EXPECT_EQ(counter(r, "lost"), 0u) << lx << " on " << kvm;
      EXPECT_EQ(counter(r, "misdelivered"), 0u) << lx << " on " << kvm;
      EXPECT_EQ(counter(r, "ipis_delivered"), 700u) << lx << " on " << kvm;
      // hv_send_ipi_ex: vector 0xfc, SPARSE_4K, banks 0 and 1, bank 0 = VPs 1-6, bank 1 = VP 64.
      EXPECT_EQ(r.sample_hypercall->json["hypercalls"][0]["input_qwords"],
                nlohmann::ordered_json::parse(R"(["0xfc", "0x0", "0x3", "0x7e", "0x1"])"))
          << lx << " on " << kvm;
      EXPECT_EQ(r.sample_hypercall->json["hypercalls"][0]["control"], "0x40015") << lx;  // varhead 2
    }
}

// The sample is exactly what `ipilab hv send` prints for the command it names (send_case.h).
TEST(HyperVSample, IsTheHvSendOfItsCommand_Seed000Vp70) {
  // CPU 1 with VP index 70 (seed 000's review case). v2: fast SEND_IPI with BIT_ULL(70) = bit 6 on
  // x86-64; mainline (b264f57fde0c): SEND_IPI_EX with bank 1 = 1 << 6.
  auto v2 = make_setup("ws2019-2s-e5-2420v2", "hyperv-ws2019.toml", {0, 1}, 8192, {1}, "linux = \"seed-v2\"\n",
                       {{1, 70}}, 50);
  const RunResult r2 = run(v2, "smp_call_function_single");
  ASSERT_TRUE(r2.sample_hypercall);
  const SampleHypercall& a = *r2.sample_hypercall;
  EXPECT_EQ(a.call, "CPU 0: apic->send_IPI(cpu 1, vector 0xfb)");
  EXPECT_EQ(a.command, "ipilab hv send --linux seed-v2 --kvm mainline --cpu-vp 0,70 --self 0 --send-ipi 1 --vector fb");
  EXPECT_EQ(a.json["hypercalls"], nlohmann::ordered_json::parse(R"([{"control": "0x1000b", "fast": true, "rdx": "0xfb", "r8": "0x40"}])"));
  EXPECT_THAT(a.text, ::testing::HasSubstr("R8  0x40: processor_mask, VPs 6"));
  EXPECT_EQ(counter(r2, "lost"), counter(r2, "sends"));

  auto ml = make_setup("ws2019-2s-e5-2420v2", "hyperv-ws2019.toml", {0, 1}, 8192, {1}, "linux = \"mainline\"\n",
                       {{1, 70}}, 50);
  const RunResult rm = run(ml, "smp_call_function_single");
  const SampleHypercall& b = *rm.sample_hypercall;
  EXPECT_EQ(b.json["hypercalls"], nlohmann::ordered_json::parse(
                                      R"([{"control": "0x40015", "fast": false, "input_qwords": ["0xfb", "0x0", "0x3", "0x0", "0x40"]}])"));
  EXPECT_EQ(b.json["linux"], "mainline");
  EXPECT_EQ(b.json["kvm"], "mainline");
  EXPECT_EQ(b.json["command"], b.command);
  // The JSON after "call", "linux", "kvm", "command" is hv send --json of that command, byte for byte.
  hv::tool::SendOptions o;
  o.linux_version = "mainline";
  o.cpu_vp = "0,70";
  o.self = 0u;
  o.send_ipi = 1u;
  o.vector = "fb";
  const hv::tool::SendToolResult t = hv::tool::run_send(o);
  nlohmann::ordered_json tail;
  for (auto it = b.json.begin(); it != b.json.end(); ++it)
    if (it.key() != "call" && it.key() != "linux" && it.key() != "kvm" && it.key() != "command") tail[it.key()] = it.value();
  EXPECT_EQ(tail.dump(), t.json.dump());
  EXPECT_EQ(b.text, t.text);
}

TEST(HyperVSample, X2apicMechanismsHaveNone) {
  auto s = make_setup("ws2019-2s-e5-2420v2", "hyperv-ws2019.toml", {0, 1}, 8192, {1}, "mechanism = \"x2apic-physical\"\n",
                      {}, 20);
  EXPECT_FALSE(run(s, "smp_call_function_single").sample_hypercall);
}

// VP_INVAL (hv_vp_index[] not read yet): mainline __send_ipi_one returns false for it and the send
// goes to orig_apic.send_IPI; v5.4's __send_ipi_mask returns false too (VP_INVAL -> fail).
TEST(HyperVVpIndex, InvalTargetFallsBackToTheNativeApic) {
  for (const char* lx : {"v5.4", "v5.10", "mainline"}) {
    auto s = make_setup("ws2019-2s-e5-2420v2", "hyperv-ws2019.toml", {0, 1}, 8192, {1},
                        std::string("linux = \"") + lx + "\"\n", {{1, topology::kVpInval}}, 50);
    const RunResult r = run(s, "smp_call_function_single");
    EXPECT_EQ(counter(r, "native_fallbacks"), counter(r, "sends")) << lx;
    EXPECT_EQ(counter(r, "hypercalls"), 0u) << lx;
    EXPECT_EQ(counter(r, "icr_writes"), counter(r, "sends")) << lx;
    EXPECT_EQ(counter(r, "lost"), 0u) << lx;
    EXPECT_EQ(r.sample_hypercall->json["fallback"]["function"], "send_IPI") << lx;
    EXPECT_THAT(r.notes, ::testing::Contains(::testing::HasSubstr("CPU 1 has VP_INVAL"))) << lx;
  }
}

// A VP index >= 4096: __cpumask_to_vpset returns 0 (hv_max_vp_index / 64 >= 64). v5.4 turns that
// into HV_GENERIC_SET_ALL, which KVM delivers to its vCPUs — CPU 0, the sender — never to CPU 1,
// which no KVM vCPU can represent (HV_X64_MSR_VP_INDEX < KVM_MAX_VCPUS); mainline falls back.
TEST(HyperVVpIndex, Beyond4096_V54SendsSetAllToTheSenderMainlineFallsBack) {
  auto pre = make_setup("ws2019-2s-e5-2420v2", "hyperv-ws2019.toml", {0, 1}, 8192, {1}, "linux = \"v5.4\"\n",
                        {{1, 4096}}, 50);
  const RunResult rp = run(pre, "smp_call_function_single");
  EXPECT_EQ(counter(rp, "lost"), counter(rp, "sends"));
  EXPECT_EQ(counter(rp, "misdelivered"), counter(rp, "sends"));
  EXPECT_EQ(rp.sample_hypercall->json["hypercalls"][0]["input_qwords"], nlohmann::ordered_json::parse(R"(["0xfb", "0x1", "0x0"])"));
  auto ml = make_setup("ws2019-2s-e5-2420v2", "hyperv-ws2019.toml", {0, 1}, 8192, {1}, "linux = \"mainline\"\n",
                       {{1, 4096}}, 50);
  const RunResult rm = run(ml, "smp_call_function_single");
  EXPECT_EQ(counter(rm, "native_fallbacks"), counter(rm, "sends"));
  EXPECT_EQ(counter(rm, "lost"), 0u);
  EXPECT_EQ(counter(rm, "hypercalls"), 0u);
}

// hv_max_vp_index >= 4096 with every VP index small: the same nr_bank == 0 as above (v5.4: SET_ALL,
// here delivered to CPUs 0 and 1 on mainline KVM: CPU 0 is misdelivered; mainline guest: native).
TEST(HyperVVpIndex, MaxVpIndex4096MakesCpumaskToVpsetGiveUp) {
  auto pre = make_setup("ws2019-2s-e5-2420v2", "hyperv-ws2019.toml", {0, 1}, 8192, {1},
                        "linux = \"v5.4\"\nhv_max_vp_index = 4096\n", {{1, 70}}, 50);
  const RunResult rp = run(pre, "smp_call_function_single");
  EXPECT_EQ(counter(rp, "lost"), 0u);
  EXPECT_EQ(counter(rp, "misdelivered"), counter(rp, "sends"));
  EXPECT_EQ(rp.sample_hypercall->json["hypercalls"][0]["control"], "0x15");
  EXPECT_THAT(rp.sample_hypercall->command, ::testing::HasSubstr("--max-vp-index 4096"));
  auto ml = make_setup("ws2019-2s-e5-2420v2", "hyperv-ws2019.toml", {0, 1}, 8192, {1},
                       "linux = \"mainline\"\nhv_max_vp_index = 4096\n", {{1, 70}}, 50);
  EXPECT_EQ(counter(run(ml, "smp_call_function_single"), "native_fallbacks"), 50u);
}

// Repeated VP indices: KVM's host write of HV_X64_MSR_VP_INDEX checks only the bound, and
// kvm_hv_send_ipi_to_many tests every vCPU's own index, so both holders of VP 5 receive.
TEST(HyperVVpIndex, RepeatedIndexReachesEveryHolder) {
  auto s = make_setup("ws2019-2s-e5-2420v2", "hyperv-ws2019.toml", {0, 1, 2}, 8192, {1, 2},
                      "linux = \"mainline\"\ntarget = 1\n", {{1, 5}, {2, 5}}, 50);
  const RunResult r = run(s, "smp_call_function_single");
  EXPECT_EQ(counter(r, "hypercalls.HvCallSendSyntheticClusterIpi"), 50u);
  EXPECT_EQ(counter(r, "lost"), 0u);
  EXPECT_EQ(counter(r, "misdelivered"), 50u);  // CPU 2 gets CPU 1's IPIs
  const auto& o = r.sample_hypercall->json["oracle"];
  EXPECT_EQ(o["delivered"], nlohmann::ordered_json::parse("[1,2]"));
  EXPECT_EQ(o["misdelivered"], nlohmann::ordered_json::parse("[2]"));
  EXPECT_EQ(r.sample_hypercall->json["hypercalls"][0]["r8"], "0x20");
}

// cpu_present_mask decides SET_ALL: with CPU 7 present but not online, the broadcast mask (the
// online CPUs) is not cpu_present_mask, so even the unfixed kernel sends the sparse set.
TEST(HyperVMasks, OnlineSubsetOfPresentAvoidsSetAll) {
  auto s = make_setup("skylake-2s-40c", "kvm-skylake-pv-ipi.toml", first_n(8), 8192, {},
                      "mechanism = \"hyperv\"\ntargets = 6\naddressing = \"allbutself\"\nhandler = \"callback\"\n"
                      "linux = \"exclude-self-unfixed\"\nonline = \"0-6\"\n",
                      {{6, 64}}, 100);
  const RunResult r = run(s, "multicast");
  EXPECT_EQ(counter(r, "misdelivered"), 0u);
  EXPECT_EQ(counter(r, "lost"), 0u);
  EXPECT_EQ(r.sample_hypercall->json["hypercalls"][0]["input_qwords"][1], "0x0");  // SPARSE_4K
  EXPECT_THAT(r.sample_hypercall->command, ::testing::HasSubstr("--online '0-6'"));
  // The same with present = online = 0-6 given as a list: now the mask is cpu_present_mask, and
  // SET_ALL reaches every vCPU the KVM host has — CPU 0 (the sender) and CPU 7, whose vCPU exists
  // although the guest does not count it present.
  auto t = make_setup("skylake-2s-40c", "kvm-skylake-pv-ipi.toml", first_n(8), 8192, {},
                      "mechanism = \"hyperv\"\ntargets = 6\naddressing = \"allbutself\"\nhandler = \"callback\"\n"
                      "linux = \"exclude-self-unfixed\"\npresent = [0, 1, 2, 3, 4, 5, 6]\n",
                      {{6, 64}}, 100);
  const RunResult rt = run(t, "multicast");
  EXPECT_EQ(counter(rt, "misdelivered"), 200u);
  EXPECT_EQ(rt.sample_hypercall->json["oracle"]["misdelivered"], nlohmann::ordered_json::parse("[0,7]"));
}

std::string run_error(Setup& s, const std::string& workload) {
  try {
    run(s, workload);
  } catch (const InputError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no InputError";
  return {};
}

TEST(HyperVErrors, BadInputsNameTheirPlace) {
  // A sender whose VP index no KVM vCPU holds cannot have its hypercall run.
  auto inval = make_setup("ws2019-2s-e5-2420v2", "hyperv-ws2019.toml", {0, 1}, 8192, {1}, "linux = \"mainline\"\n",
                          {{0, topology::kVpInval}}, 20);
  EXPECT_THAT(run_error(inval, "smp_call_function_single"),
              ::testing::HasSubstr("test.toml: vm.vp_index.0: CPU 0 issues a hypercall, but its VP index (inval)"));
  auto beyond = make_setup("ws2019-2s-e5-2420v2", "hyperv-ws2019.toml", {0, 1}, 8192, {1}, "linux = \"mainline\"\n",
                           {{0, 5000}}, 20);
  EXPECT_THAT(run_error(beyond, "smp_call_function_single"), ::testing::HasSubstr("KVM_MAX_VCPUS = 4096"));
  // linux and the older names together.
  auto both = make_setup("ws2019-2s-e5-2420v2", "hyperv-ws2019.toml", {0, 1}, 8192, {1},
                         "linux = \"v5.4\"\nsend_ipi_one = \"pre-seed\"\n", {}, 20);
  EXPECT_THAT(run_error(both, "smp_call_function_single"),
              ::testing::HasSubstr("test.toml:2:16: workload.send_ipi_one: give either linux or send_ipi_one"));
  // A pair that is no Linux version.
  auto hybrid = make_setup("ws2019-2s-e5-2420v2", "hyperv-ws2019.toml", {0, 1}, 8192, {1},
                           "send_ipi_one = \"pre-seed\"\nmask_path = \"mainline\"\n", {}, 20);
  EXPECT_THAT(run_error(hybrid, "smp_call_function_single"),
              ::testing::HasSubstr("workload.mask_path: no Linux version has send_ipi_one \"pre-seed\" with mask_path \"mainline\""));
  // A target that is not online.
  auto offline = make_setup("ws2019-2s-e5-2420v2", "hyperv-ws2019.toml", {0, 1}, 8192, {1}, "online = \"0\"\n", {}, 20);
  EXPECT_THAT(run_error(offline, "smp_call_function_single"),
              ::testing::HasSubstr("workload.online: the workload's CPU 1 is sent an IPI, but it is not online (online: 0)"));
  // online not within present; hv_max_vp_index below a VP index; a cpulist naming no CPU.
  auto notpresent = make_setup("ws2019-2s-e5-2420v2", "hyperv-ws2019.toml", {0, 1}, 8192, {1},
                               "present = \"0\"\nonline = \"0-1\"\n", {}, 20);
  EXPECT_THAT(run_error(notpresent, "smp_call_function_single"), ::testing::HasSubstr("workload.online: CPU 1 is online but not present"));
  auto maxvp = make_setup("ws2019-2s-e5-2420v2", "hyperv-ws2019.toml", {0, 1}, 8192, {1}, "hv_max_vp_index = 10\n",
                          {{1, 70}}, 20);
  EXPECT_THAT(run_error(maxvp, "smp_call_function_single"),
              ::testing::HasSubstr("workload.hv_max_vp_index: 10 is below the VP index 70"));
  auto badlist = make_setup("ws2019-2s-e5-2420v2", "hyperv-ws2019.toml", {0, 1}, 8192, {1}, "present = \"0-5\"\n", {}, 20);
  EXPECT_THAT(run_error(badlist, "smp_call_function_single"), ::testing::HasSubstr("workload.present"));
}

// The older parameter names map onto the versions (send_ipi_one pre-seed = linux v5.4, ...).
TEST(HyperVVersions, OlderNamesMapOntoLinuxVersions) {
  for (auto [old, name] : std::vector<std::pair<std::string, std::string>>{{"send_ipi_one = \"pre-seed\"", "v5.4"},
                                                                           {"send_ipi_one = \"seed-v2\"", "seed-v2"},
                                                                           {"send_ipi_one = \"seed-v3\"", "v5.10"},
                                                                           {"send_ipi_one = \"mainline\"", "mainline"},
                                                                           {"mask_path = \"exclude-self-unfixed\"", "exclude-self-unfixed"},
                                                                           {"send_ipi_one = \"mainline\"\nmask_path = \"v5.4\"", "v5.10"}}) {
    auto s = make_setup("ws2019-2s-e5-2420v2", "hyperv-ws2019.toml", {0, 1}, 8192, {1}, old + "\n", {}, 10);
    const RunResult r = run(s, "smp_call_function_single");
    EXPECT_THAT(r.settings, ::testing::Contains(std::pair<std::string, std::string>{"linux", name})) << old;
  }
}

}  // namespace
}  // namespace ipilab::workload
