// Seed 000 (Hyper-V __send_ipi_one, WS2019, 2-vCPU guest): the figures come out of the model.
#include <gtest/gtest.h>

#include "run_helpers.h"

namespace ipilab::workload {
namespace {

using testing::make_setup;
using testing::run;

double main_mean(const RunResult& r) { return r.metrics.at(0).summary.mean; }
double metric_mean(const RunResult& r, const std::string& name) {
  for (const auto& m : r.metrics)
    if (m.name == name) return m.summary.mean;
  ADD_FAILURE() << "no metric " << name;
  return 0;
}

constexpr double kSeed000Tol = 0.02;  // scenarios/seed000-send-ipi-one.toml's (default) tolerance for the loop figures

TEST(Seed000_SmpCallFunctionSingle, PreSeedIs8043CyclesWithNrCpus8192) {
  auto s = make_setup("ws2019-2s-e5-2420v2", "hyperv-ws2019.toml", {0, 1}, 8192, {1},
                      "mechanism = \"hyperv\"\nsend_ipi_one = \"pre-seed\"\n");
  const RunResult r = run(s, "smp_call_function_single");
  EXPECT_EQ(r.metrics[0].unit, "cycles");
  EXPECT_NEAR(main_mean(r), 8043, 8043 * kSeed000Tol);
  EXPECT_EQ(r.counters.at("hypercalls.HvCallSendSyntheticClusterIpi"), r.counters.at("sends"));
  EXPECT_EQ(r.counters.at("lost"), 0u);
}

TEST(Seed000_SmpCallFunctionSingle, MainlineIs7761CyclesWithNrCpus8192) {
  auto s = make_setup("ws2019-2s-e5-2420v2", "hyperv-ws2019.toml", {0, 1}, 8192, {1},
                      "mechanism = \"hyperv\"\nsend_ipi_one = \"mainline\"\n");
  const RunResult r = run(s, "smp_call_function_single");
  EXPECT_NEAR(main_mean(r), 7761, 7761 * kSeed000Tol);
}

TEST(Seed000_SmpCallFunctionSingle, WithNrCpus64ThePathsNearlyMeetAndMainlineDoesNotMove) {
  auto pre = make_setup("ws2019-2s-e5-2420v2", "hyperv-ws2019.toml", {0, 1}, 64, {1},
                        "send_ipi_one = \"pre-seed\"\n");
  auto main = make_setup("ws2019-2s-e5-2420v2", "hyperv-ws2019.toml", {0, 1}, 64, {1},
                         "send_ipi_one = \"mainline\"\n");
  const double p = main_mean(run(pre, "smp_call_function_single"));
  const double m = main_mean(run(main, "smp_call_function_single"));
  EXPECT_LT(p - m, 60) << "pre-seed " << p << " mainline " << m;  // 282 cycles apart at NR_CPUS=8192
  EXPECT_NEAR(m, 7761, 7761 * kSeed000Tol);
}

TEST(Seed000_SendCost, ExCallIs12650AndNativeIs26000Cycles) {
  // Target CPU 1 with VP index 64: mainline __send_ipi_one (hv_apic.c) takes __send_ipi_mask_ex.
  auto ex = make_setup("ws2019-2s-e5-2420v2", "hyperv-ws2019.toml", {0, 1}, 8192, {1},
                       "send_ipi_one = \"mainline\"\n", {{1, 64}});
  const RunResult rex = run(ex, "smp_call_function_single");
  EXPECT_NEAR(metric_mean(rex, "send_cost"), 12650, 12650 * 0.03);
  EXPECT_EQ(rex.counters.at("hypercalls.HvCallSendSyntheticClusterIpiEx"), rex.counters.at("sends"));
  // No hypercall page: every send goes to orig_apic.send_IPI.
  auto nat = make_setup("ws2019-2s-e5-2420v2", "hyperv-ws2019.toml", {0, 1}, 8192, {1},
                        "send_ipi_one = \"mainline\"\nhypercall_page = false\n");
  const RunResult rn = run(nat, "smp_call_function_single");
  EXPECT_NEAR(metric_mean(rn, "send_cost"), 26000, 26000 * 0.03);
  EXPECT_EQ(rn.counters.at("native_fallbacks"), rn.counters.at("sends"));
}

TEST(Seed000_VpIndexMap, SeedV2LosesTheIpiWhileV3AndPreSeedDeliver) {
  // CPU 1 (below 64) has VP index 70: v2 tests the CPU number and sends 1 << (70 & 63) = VP 6.
  for (const char* policy : {"seed-v2", "seed-v3", "pre-seed"}) {
    auto s = make_setup("ws2019-2s-e5-2420v2", "hyperv-ws2019.toml", {0, 1}, 8192, {1},
                        std::string("send_ipi_one = \"") + policy + "\"\n", {{1, 70}}, 500);
    const RunResult r = run(s, "smp_call_function_single");
    if (std::string(policy) == "seed-v2") {
      EXPECT_EQ(r.counters.at("lost"), r.counters.at("sends")) << policy;
      EXPECT_EQ(r.metrics[0].summary.count, 0u);
    } else {
      EXPECT_EQ(r.counters.at("lost"), 0u) << policy;
      EXPECT_EQ(r.counters.at("misdelivered"), 0u) << policy;
      EXPECT_EQ(r.counters.at("hypercalls.HvCallSendSyntheticClusterIpiEx"), r.counters.at("sends")) << policy;
    }
  }
}

TEST(Seed000_Determinism, SameSeedSameFigures) {
  auto a = make_setup("ws2019-2s-e5-2420v2", "hyperv-ws2019.toml", {0, 1}, 8192, {1}, "send_ipi_one = \"pre-seed\"\n");
  auto b = make_setup("ws2019-2s-e5-2420v2", "hyperv-ws2019.toml", {0, 1}, 8192, {1}, "send_ipi_one = \"pre-seed\"\n");
  const RunResult ra = run(a, "smp_call_function_single");
  const RunResult rb = run(b, "smp_call_function_single");
  EXPECT_EQ(ra.metrics[0].summary.mean, rb.metrics[0].summary.mean);
  EXPECT_EQ(ra.metrics[0].summary.p99, rb.metrics[0].summary.p99);
}

}  // namespace
}  // namespace ipilab::workload
