// ITS register semantics as the architecture states them (Arm IHI 0069H.b §5.2 "The ITS" and the
// GITS_CTLR / GITS_CBASER / GITS_CWRITER / GITS_CREADR / GITS_BASER<n> register descriptions, the
// same text as Arm's register XML DDI 0595), with exact CREADR / CWRITER values.
#include <gtest/gtest.h>

#include "gic/gic_system.h"
#include "gic/topology_builder.h"

namespace ipilab::gic {
namespace {

constexpr std::uint64_t kQueuePa = 0x4000'0000;

std::uint64_t cbaser(std::uint64_t pa = kQueuePa, std::uint8_t size = 0) {
  Cbaser c;
  c.valid = true;
  c.pa = pa;
  c.size = size;
  return encode_cbaser(c);
}

// One ITS (GICv4.1) with a vPE table and vPE 1 mapped by hand; nothing enabled yet.
struct OneIts {
  GicSystem sys{build_socket_topology(SocketTopology{1, 2})};
  OneIts() { sys.set_its_vpe_table(0, sys.create_vpe_table()); }
  // Software writes `cmd` at CWRITER (guest memory) without touching GITS_CWRITER.
  void put(std::uint32_t offset, const ItsCommand& cmd) {
    ASSERT_TRUE(sys.queue(0).write_memory(offset, encode_its_command(cmd)));
  }
  // Software writes `cmd` at a guest physical address.
  void mem(std::uint64_t pa, const ItsCommand& cmd) { ASSERT_TRUE(sys.guest_memory().write(pa, encode_its_command(cmd))); }
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

TEST(GicItsRegisters, Reset_DisabledQuiescent_QueueRegistersZero_Baser2TypeVpe) {
  OneIts t;
  EXPECT_EQ(t.sys.read_gits_ctlr(0), 0x8000'0000U);  // Quiescent, Enabled = 0
  EXPECT_EQ(t.sys.read_gits_creadr(0), 0U);
  EXPECT_EQ(t.sys.read_gits_cwriter(0), 0U);
  GicSystem fresh(build_socket_topology(SocketTopology{1, 1}));
  const GitsBaser b = decode_gits_baser(fresh.read_gits_baser(0, 2));
  EXPECT_FALSE(b.valid);
  EXPECT_EQ(b.type, 2);          // vPE
  EXPECT_EQ(b.entry_bytes, 32);  // ItsConfig::vpe_entry_bytes, RO
  EXPECT_EQ(fresh.read_gits_baser(0, 3), 0U);  // not implemented
}

TEST(GicItsRegisters, CwriterWritableBeforeCbaserValid_NothingRunsUntilValidAndEnabled) {
  OneIts t;
  t.mem(kQueuePa, t.vmapp(1, 1));  // memory at kQueuePa, before CBASER names it
  EXPECT_TRUE(t.sys.write_gits_cwriter(0, 0x20).applied);
  EXPECT_EQ(t.sys.read_gits_cwriter(0), 0x20U);
  EXPECT_EQ(t.sys.read_gits_creadr(0), 0U);
  // Enabling with CBASER.Valid = 0 is UNPREDICTABLE: refused, the ITS stays disabled.
  const RegisterWriteResult en = t.sys.write_gits_ctlr(0, 1);
  EXPECT_FALSE(en.applied);
  EXPECT_FALSE(t.sys.its_enabled(0));
  ASSERT_EQ(t.sys.register_notes().size(), 1U);
  EXPECT_EQ(t.sys.register_notes()[0].reg, "ITS 0 GITS_CTLR");
  EXPECT_TRUE(t.sys.write_gits_cbaser(0, cbaser()).applied);
  EXPECT_EQ(t.sys.read_gits_cwriter(0), 0x20U);  // CBASER does not touch CWRITER
  EXPECT_EQ(t.sys.read_gits_creadr(0), 0U);
  EXPECT_EQ(t.sys.stats(0).commands, 0U);        // valid but disabled: nothing ran
  EXPECT_TRUE(t.sys.write_gits_ctlr(0, 1).applied);
  EXPECT_EQ(t.sys.read_gits_ctlr(0), 0x1U);      // Enabled, not Quiescent
  EXPECT_EQ(t.sys.read_gits_creadr(0), 0x20U);   // the VMAPP the memory held ran from CREADR 0
  ASSERT_TRUE(t.sys.vpe_entry(0, 1).has_value());
  EXPECT_EQ(t.sys.vpe_entry(0, 1)->rd_cpu, 1);
}

TEST(GicItsRegisters, DisableReenable_StopsAtCreadr_ResumesWithoutReplay) {
  OneIts t;
  t.sys.write_gits_cbaser(0, cbaser());
  t.sys.write_gits_ctlr(0, 1);
  t.put(0x00, t.vmapp(1, 0));
  t.put(0x20, VsyncCmd{1});
  t.sys.write_gits_cwriter(0, 0x40);
  EXPECT_EQ(t.sys.read_gits_creadr(0), 0x40U);
  EXPECT_EQ(t.sys.stats(0).commands, 2U);
  EXPECT_TRUE(t.sys.write_gits_ctlr(0, 0).applied);  // disable
  EXPECT_EQ(t.sys.read_gits_ctlr(0), 0x8000'0000U);
  t.put(0x40, VinvallCmd{1});
  t.put(0x60, VsyncCmd{1});
  t.sys.write_gits_cwriter(0, 0x80);
  EXPECT_EQ(t.sys.read_gits_creadr(0), 0x40U);  // disabled: nothing ran
  EXPECT_EQ(t.sys.queue(0).pending_slots(), 2U);
  t.sys.write_gits_ctlr(0, 1);  // re-enable: from CREADR 0x40, the two new commands only
  EXPECT_EQ(t.sys.read_gits_creadr(0), 0x80U);
  EXPECT_EQ(t.sys.stats(0).commands, 4U);
  EXPECT_EQ(t.sys.stats(0).by_opcode.at(ItsOpcode::Vmapp), 1U);
  EXPECT_EQ(t.sys.stats(0).by_opcode.at(ItsOpcode::Vsync), 2U);
  EXPECT_TRUE(t.sys.command_errors().empty());
}

TEST(GicItsRegisters, CbaserWhileEnabled_Refused_CreadrKept) {
  OneIts t;
  t.sys.write_gits_cbaser(0, cbaser());
  t.sys.write_gits_ctlr(0, 1);
  t.put(0, VsyncCmd{7});  // vPE 7 unmapped: an error, but the command is consumed
  t.sys.write_gits_cwriter(0, 0x20);
  const RegisterWriteResult r = t.sys.write_gits_cbaser(0, cbaser(0x4800'0000, 1));
  EXPECT_FALSE(r.applied);
  EXPECT_EQ(t.sys.read_gits_cbaser(0), cbaser());
  EXPECT_EQ(t.sys.read_gits_creadr(0), 0x20U);
  EXPECT_FALSE(t.sys.write_gits_baser(0, 2, 0).applied);  // BASER<n> likewise
}

// Queue memory is guest memory: writing GITS_CBASER resets CREADR, keeps CWRITER and the bytes, so the
// ITS executes the old commands again unless software also writes CWRITER (what Linux
// its_restore_enable() does: "Writing CBASER resets CREADR to 0, so make CWRITER and cmd_write line up").
TEST(GicItsRegisters, CbaserRewrite_SameAddress_OldCommandsRunAgain_UnlessCwriterReset) {
  OneIts t;
  t.sys.write_gits_cbaser(0, cbaser());
  t.sys.write_gits_ctlr(0, 1);
  t.put(0x00, t.vmapp(1, 0));
  t.put(0x20, VsyncCmd{1});
  t.sys.write_gits_cwriter(0, 0x40);
  ASSERT_EQ(t.sys.stats(0).commands, 2U);
  t.sys.write_gits_ctlr(0, 0);
  t.sys.write_gits_cbaser(0, cbaser());
  EXPECT_EQ(t.sys.read_gits_creadr(0), 0U);
  EXPECT_EQ(t.sys.read_gits_cwriter(0), 0x40U);
  EXPECT_EQ(t.sys.queue(0).pending_slots(), 2U);
  t.sys.write_gits_ctlr(0, 1);
  EXPECT_EQ(t.sys.stats(0).commands, 4U);  // VMAPP and VSYNC executed a second time, from memory
  EXPECT_EQ(t.sys.stats(0).by_opcode.at(ItsOpcode::Vmapp), 2U);
  // The its_restore_enable() sequence: CBASER, then CWRITER = 0, then enable: nothing runs.
  t.sys.write_gits_ctlr(0, 0);
  t.sys.write_gits_cbaser(0, cbaser());
  t.sys.write_gits_cwriter(0, 0);
  t.sys.write_gits_ctlr(0, 1);
  EXPECT_EQ(t.sys.stats(0).commands, 4U);
  EXPECT_EQ(t.sys.read_gits_creadr(0), 0U);
}

TEST(GicItsRegisters, CbaserElsewhere_ReadsThatMemory_OldBytesStayWhereTheyWere) {
  OneIts t;
  t.sys.write_gits_cbaser(0, cbaser());
  t.put(0x00, VsyncCmd{1});
  t.sys.write_gits_cbaser(0, cbaser(0x4800'0000));  // another page: never written, zeros
  t.sys.write_gits_cwriter(0, 0x20);
  t.sys.write_gits_ctlr(0, 1);
  ASSERT_EQ(t.sys.command_errors().size(), 1U);  // an all-zero slot is no command
  EXPECT_EQ(t.sys.command_errors()[0].kind, CommandErrorKind::Malformed);
  EXPECT_EQ(t.sys.command_errors()[0].opcode, 0);
  std::array<std::uint8_t, 1> b{};
  t.sys.guest_memory().read(kQueuePa, b);
  EXPECT_EQ(b[0], 0x25);  // the VSYNC written at the old address is still there
}

TEST(GicItsRegisters, CwriterBeyondQueue_Invalid_NothingRunsUntilInRange) {
  OneIts t;
  t.sys.write_gits_cbaser(0, cbaser());  // 4 KiB
  t.sys.write_gits_ctlr(0, 1);
  t.put(0, t.vmapp(1, 0));
  const RegisterWriteResult r = t.sys.write_gits_cwriter(0, 0x1000);
  EXPECT_TRUE(r.applied);
  EXPECT_EQ(r.notes.size(), 1U);
  EXPECT_EQ(t.sys.read_gits_cwriter(0), 0x1000U);
  EXPECT_EQ(t.sys.stats(0).commands, 0U);
  t.sys.write_gits_cwriter(0, 0x20);
  EXPECT_EQ(t.sys.read_gits_creadr(0), 0x20U);
  EXPECT_EQ(t.sys.stats(0).commands, 1U);
}

TEST(GicItsRegisters, ManualProcessing_RunsOnlyWhenAsked) {
  OneIts t;
  t.sys.write_gits_cbaser(0, cbaser());
  t.sys.write_gits_ctlr(0, 1);
  t.sys.set_processing(0, ItsProcessing::Manual);
  t.put(0x00, t.vmapp(1, 0));
  t.put(0x20, VsyncCmd{1});
  t.sys.write_gits_cwriter(0, 0x40);
  EXPECT_EQ(t.sys.read_gits_creadr(0), 0U);
  EXPECT_EQ(t.sys.process_commands(0, 1), 1U);
  EXPECT_EQ(t.sys.read_gits_creadr(0), 0x20U);
  t.sys.set_processing(0, ItsProcessing::Eager);  // eager again: runs what is left
  EXPECT_EQ(t.sys.read_gits_creadr(0), 0x40U);
}

TEST(GicItsRegisters, Baser2_RoFieldsKept_UnsupportedPageSizeReadsBack_IndirectWhenSupported) {
  auto cfg = build_socket_topology(SocketTopology{1, 1});
  cfg.its[0].baser_page_sizes = 0b011;  // 4K and 16K only
  cfg.its[0].baser_indirect = false;
  GicSystem sys(cfg);
  GitsBaser w;
  w.valid = true;
  w.indirect = true;
  w.type = 4;            // RO: stays 2
  w.entry_bytes = 8;     // RO: stays 32
  w.page_size = TablePageSize::K64;
  w.pa = 0x5000'0000;
  sys.write_gits_baser(0, 2, encode_gits_baser(w));
  const GitsBaser back = decode_gits_baser(sys.read_gits_baser(0, 2));
  EXPECT_EQ(back.type, 2);
  EXPECT_EQ(back.entry_bytes, 32);
  EXPECT_EQ(back.page_size, TablePageSize::K4);  // the previous value
  EXPECT_FALSE(back.indirect);
  EXPECT_TRUE(back.valid);
  EXPECT_EQ(back.pa, 0x5000'0000U);
  ASSERT_TRUE(sys.its_vpe_table(0).has_value());
  EXPECT_EQ(sys.vpe_table_pa(*sys.its_vpe_table(0)), 0x5000'0000U);
}

TEST(GicItsRegisters, ItsAndRdNamingOneAddress_ShareOneTable) {
  GicSystem sys(build_socket_topology(SocketTopology{1, 2}));
  GitsBaser b = decode_gits_baser(sys.read_gits_baser(0, 2));
  b.valid = true;
  b.page_size = TablePageSize::K64;
  b.pa = 0x5001'0000;
  sys.write_gits_baser(0, 2, encode_gits_baser(b));
  GicrVpropbaser41 v;
  v.valid = true;
  v.page_size = TablePageSize::K64;
  v.pa = 0x5001'0000;
  EXPECT_TRUE(sys.write_gicr_vpropbaser(1, encode_gicr_vpropbaser41(v)).applied);
  EXPECT_EQ(sys.rd_vpe_table(1), sys.its_vpe_table(0));
  EXPECT_EQ(decode_gicr_vpropbaser41(sys.read_gicr_vpropbaser(1)).entry_words, 4);  // RO Entry_Size: 32 bytes
  EXPECT_FALSE(sys.rd_vpe_table(0).has_value());
}

}  // namespace
}  // namespace ipilab::gic
