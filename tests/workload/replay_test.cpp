// replay: recorded sends re-issued through a mechanism; the model's latency is the same span the
// trace measures (send -> handler entry).
#include <gtest/gtest.h>

#include "run_helpers.h"
#include "workload/replay.h"

namespace ipilab::workload {
namespace {

using testing::make_setup;

std::vector<ReplaySend> spaced_sends(int n, std::uint64_t gap_ns) {
  std::vector<ReplaySend> v;
  for (int i = 0; i < n; ++i) v.push_back({1000 + static_cast<std::uint64_t>(i) * gap_ns, 0, {1}, IpiKind::CallFunctionSingle, "call-function-single"});
  return v;
}

TEST(Replay, EachSendGoesThroughTheMechanismAndIsTimedToHandlerEntry) {
  auto pre = make_setup("ws2019-2s-e5-2420v2", "hyperv-ws2019.toml", {0, 1}, 8192, {1}, "send_ipi_one = \"pre-seed\"\n");
  auto main = make_setup("ws2019-2s-e5-2420v2", "hyperv-ws2019.toml", {0, 1}, 8192, {1}, "send_ipi_one = \"mainline\"\n");
  pre.spec.host = &pre.host;
  main.spec.host = &main.host;
  const auto sends = spaced_sends(200, 100'000);  // 100 us apart: the target is back in HLT each time
  const ReplayResult rp = replay(pre.spec, sends, "hyperv");
  const ReplayResult rm = replay(main.spec, sends, "hyperv");
  EXPECT_EQ(rp.counters.at("hypercalls"), 200u);
  ASSERT_EQ(rm.latency_by_kind.at("call-function-single").count(), 200u);
  // The pre-seed path's extra cpumask work: 282 cycles at 2.2 GHz = 128 ns (+- spread).
  const double d = rp.latency_by_kind.at("call-function-single").mean() - rm.latency_by_kind.at("call-function-single").mean();
  EXPECT_NEAR(d / 1000.0, 128.2, 10.0);
  // Mainline: hook + fast hypercall + post (2453 cycles) + wake (4654.6) + irq entry (150) = 7257.6 cycles.
  EXPECT_NEAR(rm.latency_by_kind.at("call-function-single").mean() / 1000.0, 7257.6 / 2.2, 7257.6 / 2.2 * 0.03);
}

TEST(Replay, BackToBackSendsQueueBehindTheBusyTarget) {
  auto s = make_setup("ws2019-2s-e5-2420v2", "hyperv-ws2019.toml", {0, 1}, 8192, {}, "send_ipi_one = \"mainline\"\n");
  s.spec.host = &s.host;
  // Sends 10 ns apart from one sender: each waits for the sender (hypercall ~1.1 us), so latencies grow
  // no more than the sender's serialisation; the running target pays injection, not wake-up.
  const ReplayResult r = replay(s.spec, spaced_sends(50, 10), "hyperv");
  const auto& h = r.latency_by_kind.at("call-function-single");
  EXPECT_EQ(h.count(), 50u);
  EXPECT_GT(h.max(), h.min());
}

}  // namespace
}  // namespace ipilab::workload
