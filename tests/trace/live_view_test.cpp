// What `trace --live` shows each second (trace/live_view.h), from records fed by hand.
#include <gtest/gtest.h>

#include "trace/live_view.h"

namespace ipilab::trace {
namespace {

IpiRecord ipi(std::uint32_t src, std::uint32_t dst, IpiKind kind, SendOutcome o, std::uint64_t send,
              std::optional<std::uint64_t> arrival, IpiKind arrival_kind) {
  return {.id = 0, .send_ns = send, .src = src, .dst = dst, .kind = kind, .callsite = {}, .callback = {}, .outcome = o,
          .arrival_ns = arrival, .arrival_kind = arrival_kind, .handler_ns = std::nullopt};
}

TEST(LiveView, CountsRatesSharesAndTheTopPairPerInterval) {
  LiveView v;
  // Interval 1 (2 s): 3 reschedule IPIs 0->1 raised (100, 200, 250 ns), one coalesced onto the
  // last (latencies below 256 ns, which the histogram keeps exactly), one call-function-single send
  // answered by a call-function entry (counted as the entry's
  // kind), one unmatched 1->0; two queued calls, one polling-idle.
  for (std::uint64_t lat : {100, 200, 250})
    v.on_ipi(ipi(0, 1, IpiKind::Reschedule, SendOutcome::Raised, 10, 10 + lat, IpiKind::Reschedule));
  v.on_ipi(ipi(0, 1, IpiKind::Reschedule, SendOutcome::Coalesced, 20, 260, IpiKind::Reschedule));
  v.on_ipi(ipi(1, 2, IpiKind::CallFunctionSingle, SendOutcome::Raised, 30, 80, IpiKind::CallFunction));
  v.on_ipi(ipi(1, 0, IpiKind::Reschedule, SendOutcome::Unmatched, 40, std::nullopt, IpiKind::Unknown));
  CallRecord c;
  c.service = CallService::PollingIdle;
  v.on_call(c);
  c.service = CallService::Ipi;
  v.on_call(c);
  EXPECT_EQ(v.line(2.0),
            "ipilab: live 2 s: 3 IPIs/s (6 in total); reschedule 2/s p50 200 p99 250 ns; call-function 0/s p50 50 p99 "
            "50 ns; coalesced 16.7 %, polling-idle 50.0 % of 2 calls; top pair CPU 0 -> 1 2/s\n");
  const std::string t = v.table(2.0, 4);
  EXPECT_NE(t.find("IPIs     3/s now, 6 in total; coalesced 16.7 %, unmatched 16.7 %"), std::string::npos) << t;
  EXPECT_NE(t.find("polling-idle (no IPI) 50.0 %"), std::string::npos) << t;
  EXPECT_NE(t.find("CPU 0   -> CPU 1                  2          4"), std::string::npos) << t;
  // Interval 2 (1 s): nothing new; totals stay, rates drop to 0.
  v.next_interval(2.0);
  EXPECT_EQ(v.line(3.0), "ipilab: live 3 s: 0 IPIs/s (6 in total); coalesced 16.7 %, polling-idle 50.0 % of 2 calls\n");
  EXPECT_NE(v.table(3.0, 4).find("(no IPI in this interval)"), std::string::npos);
  EXPECT_EQ(v.ipis(), 6u);
  EXPECT_EQ(v.calls(), 2u);
}

}  // namespace
}  // namespace ipilab::trace
