// GicSystem and ItsCommandQueue behaviour: Arm IHI 0069H.b §5.2 (command queue), GITS_SGIR, GICR_VPENDBASER;
// Linux irq-gic-v3-its.c its_queue_full() for the one-slot-unused rule.
#include <gtest/gtest.h>

#include "common/error.h"
#include "gic/gic_system.h"
#include "gic/topology_builder.h"

namespace ipilab::gic {
namespace {

std::uint64_t queue_cbaser(std::uint8_t size_pages_minus1) {
  Cbaser c;
  c.valid = true;
  c.pa = 0x4000'0000;
  c.size = size_pages_minus1;
  return encode_cbaser(c);
}

TEST(GicItsQueue, FreshQueue_NotValid_CannotPushButCwriterIsWritable_Ihi0069CwriterDescription) {
  ItsCommandQueue q;
  EXPECT_FALSE(q.valid());
  EXPECT_TRUE(q.full());
  EXPECT_FALSE(q.push(encode_its_command(VsyncCmd{1})));
  EXPECT_TRUE(q.write_cwriter(0x20));  // CBASER.Size = 0 describes 4 KiB: 0x20 is in range
  EXPECT_EQ(q.read_cwriter(), 0x20U);
  EXPECT_FALSE(q.can_fetch());         // but nothing runs: CBASER.Valid = 0
}

TEST(GicItsQueue, OneSlotAlwaysUnused_FullAt127Of128_ItsQueueFull) {
  ItsCommandQueue q;
  q.write_cbaser(queue_cbaser(0));  // 4 KiB = 128 slots
  ASSERT_EQ(q.slots(), 128U);
  EXPECT_TRUE(q.empty());
  for (int i = 0; i < 127; ++i) ASSERT_TRUE(q.push(encode_its_command(VsyncCmd{static_cast<std::uint16_t>(i)})));
  EXPECT_TRUE(q.full());
  EXPECT_EQ(q.pending_slots(), 127U);
  EXPECT_EQ(q.read_cwriter(), 127U * 32);
  EXPECT_FALSE(q.push(encode_its_command(VsyncCmd{999})));
  q.consume();
  EXPECT_FALSE(q.full());
  EXPECT_EQ(q.read_creadr(), 32U);
  ASSERT_TRUE(q.push(encode_its_command(VsyncCmd{127})));
  EXPECT_EQ(q.read_cwriter(), 0U);  // wrapped
  EXPECT_TRUE(q.full());
}

TEST(GicItsQueue, CreadrWraps_EmptyWhenEqual) {
  ItsCommandQueue q;
  q.write_cbaser(queue_cbaser(0));
  ASSERT_TRUE(q.write_cwriter(4064));  // last slot
  // Pretend the ITS caught up: consume until CREADR == CWRITER.
  for (int i = 0; i < 127; ++i) q.consume();
  EXPECT_TRUE(q.empty());
  EXPECT_EQ(q.read_creadr(), 4064U);
  ASSERT_TRUE(q.push(encode_its_command(VsyncCmd{1})));
  EXPECT_EQ(q.read_cwriter(), 0U);
  EXPECT_EQ(q.pending_slots(), 1U);
  q.consume();
  EXPECT_EQ(q.read_creadr(), 0U);
  EXPECT_TRUE(q.empty());
}

TEST(GicItsQueue, CwriterOutsideQueue_StoredButQueueInvalid_CbaserResetsCreadrOnly_Ihi0069CreadrDescription) {
  ItsCommandQueue q;
  q.write_cbaser(queue_cbaser(0));
  EXPECT_FALSE(q.write_cwriter(4096));  // CONSTRAINED UNPREDICTABLE: queue invalid until written in range
  EXPECT_EQ(q.read_cwriter(), 4096U);
  EXPECT_FALSE(q.cwriter_in_range());
  EXPECT_TRUE(q.write_cwriter(0));
  ASSERT_TRUE(q.push(encode_its_command(VsyncCmd{1})));
  q.consume();
  EXPECT_EQ(q.read_creadr(), 32U);
  EXPECT_EQ(q.read_cwriter(), 32U);
  q.write_cbaser(queue_cbaser(1));
  EXPECT_EQ(q.read_creadr(), 0U);   // "cleared to 0 when a value is written to GITS_CBASER"
  EXPECT_EQ(q.read_cwriter(), 32U); // CWRITER is not
  EXPECT_EQ(q.size_bytes(), 8192U);
  EXPECT_EQ(q.pending_slots(), 1U); // the VSYNC at offset 0 is in the queue again
}

TEST(GicItsQueue, WriteMemory_OutsideQueue_WritesNothing) {
  ItsCommandQueue q;
  q.write_cbaser(queue_cbaser(0));
  const std::uint8_t b[4] = {1, 2, 3, 4};
  EXPECT_FALSE(q.write_memory(4094, b));
  EXPECT_EQ(q.read_memory(4094, 1)[0], 0);
  EXPECT_TRUE(q.write_memory(4092, b));
  EXPECT_EQ(q.read_memory(4095, 1)[0], 4);
}

// One socket with two CPUs, one ITS, a shared vPE table set by hand (no Linux driver).
struct Bare {
  GicSystem sys{build_socket_topology(SocketTopology{1, 2})};
  Bare() {
    const VpeTableId t = sys.create_vpe_table();
    sys.set_its_vpe_table(0, t);
    sys.write_gits_cbaser(0, queue_cbaser(0));
    sys.write_gits_ctlr(0, 1);  // Enabled
  }
  VmappCmd vmapp(std::uint16_t vpeid, int cpu) {
    VmappCmd m;
    m.alloc = true;
    m.vpeid = vpeid;
    m.rdbase = sys.rdbase_for(0, cpu);
    m.valid = true;
    m.vpt_size = 15;
    return m;
  }
};

TEST(GicSystemCommands, VsgiToUnmappedVpe_IsCommandError_QueueMovesOn_Ihi0069CommandErrors) {
  Bare b;
  const std::vector<ItsCommand> cmds{VsgiCmd{true, false, true, 0xA0, 5, 77}, b.vmapp(1, 1)};
  EXPECT_EQ(b.sys.submit(0, cmds), 1U);
  ASSERT_EQ(b.sys.command_errors().size(), 1U);
  const CommandError& e = b.sys.command_errors()[0];
  EXPECT_EQ(e.kind, CommandErrorKind::UnmappedVpe);
  EXPECT_EQ(e.opcode, 0x23);
  EXPECT_EQ(e.queue_offset, 0U);
  EXPECT_TRUE(b.sys.queue(0).empty());
  ASSERT_TRUE(b.sys.vpe_entry(0, 1).has_value());  // the VMAPP after it still ran
  EXPECT_EQ(b.sys.vpe_entry(0, 1)->rd_cpu, 1);
  EXPECT_EQ(b.sys.vsgi_state(77).config[5], VsgiConfig{});  // no effect
  EXPECT_EQ(b.sys.stats(0).command_errors, 1U);
}

TEST(GicSystemCommands, StallPolicy_StopsAtError_RetryReexecutes) {
  auto cfg = build_socket_topology(SocketTopology{1, 2});
  cfg.on_command_error = CommandErrorPolicy::Stall;
  GicSystem sys(cfg);
  sys.set_its_vpe_table(0, sys.create_vpe_table());
  sys.write_gits_cbaser(0, queue_cbaser(0));
  sys.write_gits_ctlr(0, 1);
  const std::vector<ItsCommand> cmds{VsyncCmd{9}, InvdbCmd{9}};
  EXPECT_EQ(sys.submit(0, cmds), 1U);
  EXPECT_TRUE(sys.queue(0).stalled());
  EXPECT_EQ(sys.queue(0).read_creadr(), 1U);  // offset 0, Stalled
  EXPECT_EQ(sys.queue(0).pending_slots(), 2U);
  EXPECT_TRUE(sys.queue(0).write_cwriter(sys.queue(0).read_cwriter() | 1));  // Retry
  EXPECT_FALSE(sys.queue(0).stalled());
  sys.process_commands(0);
  EXPECT_EQ(sys.command_errors().size(), 2U);  // same command fails again
}

TEST(GicSystemCommands, VpeidBeyondItsRange_IsCommandError) {
  SocketTopology t{1, 2};
  t.vpeid_bits = 8;
  GicSystem sys(build_socket_topology(t));
  sys.set_its_vpe_table(0, sys.create_vpe_table());
  sys.write_gits_cbaser(0, queue_cbaser(0));
  sys.write_gits_ctlr(0, 1);
  const std::vector<ItsCommand> cmds{VsgiCmd{true, false, true, 0, 1, 0x100}};
  sys.submit(0, cmds);
  ASSERT_EQ(sys.command_errors().size(), 1U);
  EXPECT_EQ(sys.command_errors()[0].kind, CommandErrorKind::VpeidOutOfRange);
  EXPECT_EQ(sys.write_sgir(0, encode_sgir({1, 0x100})).outcome, SgirOutcome::RejectedVpeidOutOfRange);
}

TEST(GicSystemCommands, VmappToUnknownRd_IsCommandError) {
  Bare b;
  VmappCmd m = b.vmapp(3, 0);
  m.rdbase = 99;  // PTA=0: no processor 99
  b.sys.submit(0, std::vector<ItsCommand>{m});
  ASSERT_EQ(b.sys.command_errors().size(), 1U);
  EXPECT_EQ(b.sys.command_errors()[0].kind, CommandErrorKind::UnknownRedistributor);
  EXPECT_FALSE(b.sys.vpe_entry(0, 3).has_value());
}

TEST(GicSystemCommands, MalformedBytesInQueueMemory_RecordedNotCrashing) {
  Bare b;
  ItsCommandQueue& q = b.sys.queue(0);
  std::vector<std::uint8_t> junk(64, 0xFF);
  junk[32] = 0x2A;  // VMAPTI, not modelled
  ASSERT_TRUE(q.write_memory(0, junk));
  ASSERT_TRUE(q.write_cwriter(64));
  EXPECT_EQ(b.sys.process_commands(0), 2U);
  ASSERT_EQ(b.sys.command_errors().size(), 2U);
  EXPECT_EQ(b.sys.command_errors()[0].kind, CommandErrorKind::Malformed);
  EXPECT_EQ(b.sys.command_errors()[1].opcode, 0x2A);
  EXPECT_EQ(b.sys.command_errors()[1].queue_offset, 32U);
}

TEST(GicSystemCommands, V41CommandOnV40Its_NotSupported) {
  auto cfg = build_socket_topology(SocketTopology{1, 2});
  cfg.its[0].typer.vmapp = false;
  GicSystem sys(cfg);
  sys.set_its_vpe_table(0, sys.create_vpe_table());
  sys.write_gits_cbaser(0, queue_cbaser(0));
  sys.write_gits_ctlr(0, 1);
  sys.submit(0, std::vector<ItsCommand>{InvdbCmd{1}});
  ASSERT_EQ(sys.command_errors().size(), 1U);
  EXPECT_EQ(sys.command_errors()[0].kind, CommandErrorKind::NotSupported);
}

TEST(GicSystemSgir, Resident_Delivered_NotResident_Pending_Disabled_Latched) {
  Bare b;
  const std::vector<ItsCommand> setup{b.vmapp(4, 1), VsgiCmd{true, false, true, 0x80, 2, 4}};
  ASSERT_EQ(b.sys.submit(0, setup), 0U);
  // not resident
  SgirWriteResult r = b.sys.write_sgir(0, encode_sgir({2, 4}));
  EXPECT_EQ(r.outcome, SgirOutcome::PendingNotResident);
  EXPECT_EQ(r.target_cpu, 1);
  EXPECT_FALSE(r.doorbell);
  // resident with group 1 enabled
  Vpendbaser v;
  v.valid = true;
  v.vgrp1_en = true;
  v.vpeid = 4;
  b.sys.write_vpendbaser(1, encode_vpendbaser(v));
  r = b.sys.write_sgir(0, encode_sgir({2, 4}));
  EXPECT_EQ(r.outcome, SgirOutcome::DeliveredResident);
  EXPECT_TRUE(r.resident());
  EXPECT_EQ(b.sys.read_vsgi_pending(1, 4), 1u << 2);
  // vINTID 3 never enabled: latched, not presented
  r = b.sys.write_sgir(0, encode_sgir({3, 4}) | (1ULL << 63));
  EXPECT_EQ(r.outcome, SgirOutcome::PendingDisabled);
  EXPECT_EQ(r.res0_ignored, 1ULL << 63);
  EXPECT_EQ(b.sys.read_vsgi_pending(1, 4), (1u << 2) | (1u << 3));
  // VSGI Clear=1 clears pending, keeps config
  b.sys.submit(0, std::vector<ItsCommand>{VsgiCmd{false, true, false, 0, 2, 4}});
  EXPECT_EQ(b.sys.read_vsgi_pending(1, 4), 1u << 3);
  EXPECT_TRUE(b.sys.vsgi_state(4).config[2].enable);
  EXPECT_EQ(b.sys.vsgi_state(4).config[2].priority, 0x80);
}

TEST(GicSystemSgir, Unmapped_Rejected_NoSgirFrame_Rejected) {
  Bare b;
  EXPECT_EQ(b.sys.write_sgir(0, encode_sgir({1, 9})).outcome, SgirOutcome::RejectedUnmappedVpe);
  auto cfg = build_socket_topology(SocketTopology{1, 1});
  cfg.its[0].typer.vsgi = false;
  GicSystem sys(cfg);
  EXPECT_EQ(sys.write_sgir(0, encode_sgir({1, 9})).outcome, SgirOutcome::RejectedNoSgirFrame);
  GicSystem notable(build_socket_topology(SocketTopology{1, 1}));
  EXPECT_EQ(notable.write_sgir(0, encode_sgir({1, 9})).outcome, SgirOutcome::RejectedNoVpeTable);
}

TEST(GicSystemSgir, DoorbellFiresOncePerNonResidency) {
  Bare b;
  b.sys.submit(0, std::vector<ItsCommand>{b.vmapp(4, 0), VsgiCmd{true, false, true, 0, 1, 4}});
  Vpendbaser v;
  v.valid = true;
  v.vgrp1_en = true;
  v.vpeid = 4;
  b.sys.write_vpendbaser(0, encode_vpendbaser(v));
  v.valid = false;
  v.doorbell = true;
  b.sys.write_vpendbaser(0, encode_vpendbaser(v));  // deschedule, DB requested
  EXPECT_FALSE(b.sys.resident_vpe(0).has_value());
  EXPECT_TRUE(b.sys.write_sgir(0, encode_sgir({1, 4})).doorbell);
  EXPECT_FALSE(b.sys.write_sgir(0, encode_sgir({1, 4})).doorbell);
}

TEST(GicSystemConfig, BadConfig_InputErrorNamesField) {
  auto cfg = build_socket_topology(SocketTopology{1, 2});
  cfg.its[0].vpeid_bits = 17;
  try {
    GicSystem sys(cfg);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.place(), "its[0].vpeid_bits");
  }
  cfg = build_socket_topology(SocketTopology{1, 2});
  cfg.redistributors[1].rd_pa = cfg.redistributors[0].rd_pa;
  EXPECT_THROW(GicSystem{cfg}, InputError);
  EXPECT_THROW(build_socket_topology(SocketTopology{0, 2}), InputError);
}

}  // namespace
}  // namespace ipilab::gic
