// Linux its_wait_for_range_completion(), before and after a050fa5476d4 ("irqchip/gic-v3-its: Fix
// command queue pointer comparison bug", v5.2-rc4): exact polls, offsets and the message Linux prints.
#include <gtest/gtest.h>

#include "gic/its_wait.h"
#include "gic/linux_its.h"
#include "gic/topology_builder.h"

namespace ipilab::gic {
namespace {

TEST(GicItsWaitPredicate, Linear_AccumulatesAcrossWrap_Pure) {
  ItsWaitTicket t;
  t.snapshot = 65440;
  t.from = 65440;
  t.to = 65504;
  WaitPredicateState p(WaitPredicate::Linear, t);
  EXPECT_EQ(p.to_linear(), 65504U);
  EXPECT_FALSE(p.poll(65472));
  EXPECT_EQ(p.linear(), 65472U);
  EXPECT_TRUE(p.poll(480));  // 65472 -> 480 across the end: + 544
  EXPECT_EQ(p.linear(), 66016U);
  // A batch that itself wraps: to_idx is linearised.
  ItsWaitTicket w;
  w.snapshot = 65472;
  w.from = 65472;
  w.to = 32;
  WaitPredicateState q(WaitPredicate::Linear, w);
  EXPECT_EQ(q.to_linear(), 65568U);
  EXPECT_FALSE(q.poll(0));
  EXPECT_TRUE(q.poll(32));
}

TEST(GicItsWaitPredicate, Offsets_MissesWrappedCreadr_Pure) {
  ItsWaitTicket t;
  t.from = 65440;
  t.to = 65504;
  WaitPredicateState p(WaitPredicate::Offsets, t);
  EXPECT_FALSE(p.poll(480));    // "ITS queue timeout (65440 65504 480)"
  EXPECT_TRUE(p.poll(65504));
  ItsWaitTicket w;  // wrapped batch: done when to <= rd < from
  w.from = 65472;
  w.to = 32;
  WaitPredicateState q(WaitPredicate::Offsets, w);
  EXPECT_FALSE(q.poll(65504));
  EXPECT_TRUE(q.poll(32));
  EXPECT_TRUE(q.poll(1000));
}

// One socket, two CPUs, vPE 1 mapped on CPU 0 by Linux, then the ITS made slow (Manual processing).
struct SlowIts {
  GicSystem sys{build_socket_topology(SocketTopology{1, 2})};
  LinuxItsDriver drv{sys};
  SlowIts() {
    drv.map_vpe(1, 0);  // VMAPP, VSYNC, VINVALL, VSYNC: CREADR = CWRITER = 0x80
    sys.set_processing(0, ItsProcessing::Manual);
  }
  // Other CPUs' traffic, executed at once: moves CREADR and CWRITER together.
  void advance(std::size_t commands) {
    drv.post_sync_traffic(0, 0, commands);
    sys.process_commands(0);
  }
};

TEST(GicItsWait, SlowIts_OneCommandPerPoll_ThreePollsForTwoCommands) {
  SlowIts t;
  const ItsCall c = t.drv.move_vpe(1, 1);  // VMOVP + VSYNC at 0x80, 0xa0
  ASSERT_EQ(c.waits.size(), 1U);
  const ItsWaitResult& w = c.waits[0];
  EXPECT_EQ(w.outcome, WaitOutcome::Completed);
  EXPECT_EQ(w.snapshot, 0x80U);
  EXPECT_EQ(w.from, 0x80U);
  EXPECT_EQ(w.to, 0xC0U);
  EXPECT_EQ(w.polls, 3U);    // CREADR 0x80, 0xa0, 0xc0
  EXPECT_EQ(w.udelays, 2U);
  EXPECT_EQ(w.batch_commands, 2U);
  EXPECT_EQ(w.ahead_commands, 0U);
  EXPECT_EQ(w.waited_bytes(), 64U);
  EXPECT_EQ(t.sys.read_gits_creadr(0), 0xC0U);
  EXPECT_EQ(c.waited_commands(), 2U);
  EXPECT_EQ(c.polls(), 3U);
}

TEST(GicItsWait, OtherCpusCommandsAhead_AreWaitedFor) {
  SlowIts t;
  t.drv.post_sync_traffic(0, 1, 3);        // 3 SYNCs posted by another CPU, not yet run
  const ItsCall c = t.drv.move_vpe(1, 1);  // behind them
  const ItsWaitResult& w = c.waits.at(0);
  EXPECT_EQ(w.snapshot, 0x80U);
  EXPECT_EQ(w.from, 0xE0U);
  EXPECT_EQ(w.ahead_commands, 3U);
  EXPECT_EQ(w.waited_commands, 5U);
  EXPECT_EQ(w.polls, 6U);
  EXPECT_EQ(w.outcome, WaitOutcome::Completed);
}

// The a050fa5476d4 report: the batch is at 65440..65504, other CPUs' commands carry CREADR past the
// end of the 64 KiB queue to 480 before the first read.
TEST(GicItsWait, Wrap_LinearCompletes_OffsetsSpinsOneSecond_Issue_a050fa5476d4) {
  SlowIts t;
  t.advance(2041);  // 4 + 2041 slots: CREADR = CWRITER = 65440
  ASSERT_EQ(t.sys.read_gits_creadr(0), 65440U);
  t.drv.defer_waits(true);
  const ItsCall c = t.drv.move_vpe(1, 1);
  ASSERT_EQ(c.tickets.size(), 1U);
  const ItsWaitTicket tk = c.tickets[0];
  EXPECT_EQ(tk.from, 65440U);
  EXPECT_EQ(tk.to, 65504U);
  t.advance(16);  // slots 2047, 0 .. 14
  ASSERT_EQ(t.sys.read_gits_creadr(0), 480U);

  const ItsWaitResult lin = t.drv.wait(tk, WaitPredicate::Linear);
  EXPECT_EQ(lin.outcome, WaitOutcome::Completed);
  EXPECT_EQ(lin.polls, 1U);
  EXPECT_EQ(lin.to_linear, 65504U);
  EXPECT_EQ(lin.linear, 66016U);
  EXPECT_EQ(lin.travelled_bytes, 576U);  // 18 commands
  EXPECT_EQ(lin.waited_commands, 2U);
  EXPECT_EQ(lin.linux_message, "");

  const ItsWaitResult off = t.drv.wait(tk, WaitPredicate::Offsets);
  EXPECT_EQ(off.outcome, WaitOutcome::TimedOutAfterCompletion);
  EXPECT_EQ(off.polls, 1'000'000U);
  EXPECT_EQ(off.udelays, 999'999U);
  EXPECT_EQ(off.last_creadr, 480U);
  EXPECT_EQ(off.linux_message, "ITS queue timeout (65440 65504 480); ITS cmd its_build_vmovp_cmd failed");
}

// The second issue in a050fa5476d4's message: a slow ITS whose CREADR is still a lap behind makes the
// offsets predicate return before the batch ran.
TEST(GicItsWait, LapBehind_OffsetsExitsEarly_LinearWaitsForAll) {
  SlowIts t;
  t.advance(1996);                    // CREADR = CWRITER = slot 2000 = 64000
  t.drv.post_sync_traffic(0, 0, 148); // slots 2000..2047, 0..99 pending
  t.drv.defer_waits(true);
  const ItsWaitTicket tk = t.drv.move_vpe(1, 1).tickets.at(0);
  EXPECT_EQ(tk.snapshot, 64000U);
  EXPECT_EQ(tk.from, 3200U);
  EXPECT_EQ(tk.to, 3264U);
  const ItsWaitResult off = t.drv.wait(tk, WaitPredicate::Offsets);
  EXPECT_EQ(off.outcome, WaitOutcome::CompletedEarly);
  EXPECT_EQ(off.polls, 1U);
  EXPECT_EQ(off.ahead_commands, 148U);
  const ItsWaitResult lin = t.drv.wait(tk, WaitPredicate::Linear);
  EXPECT_EQ(lin.outcome, WaitOutcome::Completed);
  EXPECT_EQ(lin.to_linear, 68800U);
  EXPECT_EQ(lin.polls, 151U);  // 150 commands, one per udelay(1)
  EXPECT_EQ(lin.waited_commands, 150U);
}

TEST(GicItsWait, DisabledIts_TimesOut_LinuxMessage_ThenRunsOnceOnEnable) {
  GicSystem sys(build_socket_topology(SocketTopology{1, 2}));
  LinuxItsDriver drv(sys);
  drv.map_vpe(1, 0);
  sys.write_gits_ctlr(0, 0);
  const ItsCall c = drv.move_vpe(1, 1);
  const ItsWaitResult& w = c.waits.at(0);
  EXPECT_EQ(w.outcome, WaitOutcome::TimedOut);
  EXPECT_EQ(w.polls, 1'000'000U);
  EXPECT_EQ(w.linux_message, "ITS queue timeout (192 128); ITS cmd its_build_vmovp_cmd failed");
  EXPECT_FALSE(c.all_completed());
  EXPECT_EQ(sys.read_gits_creadr(0), 0x80U);
  sys.write_gits_ctlr(0, 1);
  EXPECT_EQ(sys.read_gits_creadr(0), 0xC0U);
  EXPECT_EQ(sys.stats(0).by_opcode.at(ItsOpcode::Vmovp), 1U);
  EXPECT_EQ(sys.vpe_entry(0, 1)->rd_cpu, 1);
}

TEST(GicItsWait, EagerIts_EveryBatchOnePoll) {
  GicSystem sys(build_socket_topology(SocketTopology{2, 2}));
  LinuxItsDriver drv(sys);
  const ItsCall m = drv.map_vpe(1, 0);
  ASSERT_EQ(m.waits.size(), 4U);  // (VMAPP + VSYNC, VINVALL + VSYNC) on each ITS
  for (const ItsWaitResult& w : m.waits) {
    EXPECT_EQ(w.outcome, WaitOutcome::Completed);
    EXPECT_EQ(w.polls, 1U);
    EXPECT_EQ(w.waited_commands, 2U);
  }
  EXPECT_EQ(m.waited_bytes(), 256U);
}

// Linux reads GITS_CREADR raw: with the queue stalled on this CPU's VSYNC, rd_idx = offset | Stalled
// and the linear total never reaches to_idx.
TEST(GicItsWait, StalledOnOwnVsync_RawCreadrWithStalledBit_TimesOut) {
  auto cfg = build_socket_topology(SocketTopology{1, 2});
  cfg.on_command_error = CommandErrorPolicy::Stall;
  GicSystem sys(cfg);
  LinuxItsDriver::Options o;
  o.behaviour.refuse_vmovp_unmapped = false;  // a VMOVP for an unmapped vPE: the ITS stalls on it
  LinuxItsDriver drv(sys, o);
  const ItsCall c = drv.move_vpe(9, 1);
  const ItsWaitResult& w = c.waits.at(0);
  EXPECT_EQ(w.outcome, WaitOutcome::TimedOut);
  EXPECT_EQ(w.first_creadr, 0x1U);  // offset 0, Stalled
  EXPECT_EQ(w.linux_message, "ITS queue timeout (64 1); ITS cmd its_build_vmovp_cmd failed");
  EXPECT_TRUE(sys.queue(0).stalled());
}

}  // namespace
}  // namespace ipilab::gic
