// Exact-bit tests of the GIC codecs against Linux arm-gic-v3.h and its_encode_* (irq-gic-v3-its.c).
// Expected doublewords are computed by hand in the comments next to them.
#include <gtest/gtest.h>

#include <vector>

#include "common/error.h"
#include "gic/its_command.h"
#include "gic/registers.h"
#include "gic/sgir.h"

namespace ipilab::gic {
namespace {

CommandDwords dw(const ItsCommand& c) { return encode_its_dwords(c); }

TEST(GicSgir, Encode_VintidLow4_VpeidAt32_ArmGicV3h) {
  EXPECT_EQ(encode_sgir({5, 0x1234}), 0x0000'1234'0000'0005ULL);
  EXPECT_EQ(encode_sgir({15, 0xFFFF}), 0x0000'FFFF'0000'000FULL);
  EXPECT_EQ(kGitsSgirOffset, 0x20020U);
}

TEST(GicSgir, Encode_Vintid16_IsInputError) { EXPECT_THROW(encode_sgir({16, 0}), InputError); }

TEST(GicSgir, Decode_ReportsRes0Bits) {
  const SgirDecode d = decode_sgir(0x8000'1234'0000'0035ULL);
  EXPECT_EQ(d.sgir.vintid, 5);
  EXPECT_EQ(d.sgir.vpeid, 0x1234);
  EXPECT_EQ(d.res0_set, 0x8000'0000'0000'0030ULL);
  EXPECT_FALSE(d.clean());
  EXPECT_TRUE(decode_sgir(0x0000'0001'0000'0002ULL).clean());
}

TEST(GicSgir, RoundTrip_AllVintidsSomeVpeids) {
  for (unsigned v = 0; v < 16; ++v)
    for (unsigned p : {0u, 1u, 0x1234u, 0xFFFFu}) {
      const Sgir s{static_cast<std::uint8_t>(v), static_cast<std::uint16_t>(p)};
      EXPECT_EQ(decode_sgir(encode_sgir(s)).sgir, s);
    }
}

TEST(GicItsCommand, Vsgi_Vintid5_Vpeid1234_Prio0xA0_Enable_Group1_ExactBits_LinuxItsEncode) {
  VsgiCmd c;
  c.enable = true;
  c.group = true;
  c.priority = 0xA0;
  c.vintid = 5;
  c.vpeid = 0x1234;
  // DW0 = 0x23 | Enable(1<<8)=0x100 | Group(1<<10)=0x400 | (0xA0>>4)<<20=0xA00000 | 5<<32
  // DW1 = 0x1234 << 32
  const CommandDwords expect{0x0000'0005'00A0'0523ULL, 0x0000'1234'0000'0000ULL, 0, 0};
  EXPECT_EQ(dw(c), expect);
  const CommandBytes b = encode_its_command(c);
  const std::vector<std::uint8_t> first16(b.begin(), b.begin() + 16);
  EXPECT_EQ(first16, (std::vector<std::uint8_t>{0x23, 0x05, 0xA0, 0x00, 0x05, 0, 0, 0, 0, 0, 0, 0, 0x34, 0x12, 0, 0}));
}

TEST(GicItsCommand, Vsgi_ClearBit9) {
  VsgiCmd c;
  c.clear = true;
  c.vintid = 15;
  c.vpeid = 1;
  EXPECT_EQ(dw(c), (CommandDwords{0x0000'000F'0000'0223ULL, 0x0000'0001'0000'0000ULL, 0, 0}));
}

TEST(GicItsCommand, Vsgi_PriorityLowNibble_IsInputError) {
  VsgiCmd c;
  c.priority = 0xA5;
  EXPECT_THROW(dw(c), InputError);
  c.priority = 0;
  c.vintid = 16;
  EXPECT_THROW(dw(c), InputError);
}

TEST(GicItsCommand, Vmapp_V41Form_ExactBits_LinuxItsEncode) {
  VmappCmd c;
  c.alloc = true;
  c.vconf_pa = 0x7000'0000;
  c.default_db = 0x2003;
  c.vpeid = 3;
  c.rdbase = 0x10004;  // PTA=1: RD at 0x1'0004'0000
  c.valid = true;
  c.vpt_size = 15;
  c.vpt_pa = 0x8003'0000;
  // DW0 = 0x29 | Alloc 0x100 | (0x7000'0000 >> 16) << 16
  // DW1 = Default_DB 0x2003 | 3 << 32
  // DW2 = 0x10004 << 16 | V << 63
  // DW3 = VPT_size 15 | (0x8003'0000 >> 16) << 16
  const CommandDwords expect{0x0000'0000'7000'0129ULL, 0x0000'0003'0000'2003ULL, 0x8000'0001'0004'0000ULL,
                             0x0000'0000'8003'000FULL};
  EXPECT_EQ(dw(c), expect);
}

TEST(GicItsCommand, Vmapp_PtzBit9_UnalignedVpt_IsInputError) {
  VmappCmd c;
  c.ptz = true;
  EXPECT_EQ(dw(c)[0], 0x229ULL);
  c.vpt_pa = 0x8003'1000;
  EXPECT_THROW(dw(c), InputError);
  c.vpt_pa = 1ULL << 52;
  EXPECT_THROW(dw(c), InputError);
}

TEST(GicItsCommand, Vmovp_ExactBits_LinuxItsEncode) {
  VmovpCmd c;
  c.sequence_number = 7;
  c.its_list = 0b101;
  c.vpeid = 0x42;
  c.rdbase = 33;  // PTA=0: processor number 33
  c.db = true;
  c.default_db = 0x2042;
  const CommandDwords expect{0x0000'0007'0000'0022ULL, 0x0000'0042'0000'0005ULL, 0x8000'0000'0021'0000ULL, 0x2042ULL};
  EXPECT_EQ(dw(c), expect);
}

TEST(GicItsCommand, SmallCommands_ExactBits_LinuxItsEncode) {
  EXPECT_EQ(dw(SyncCmd{0x10004}), (CommandDwords{0x05, 0, 0x0000'0001'0004'0000ULL, 0}));
  EXPECT_EQ(dw(VsyncCmd{0xBEEF}), (CommandDwords{0x25, 0x0000'BEEF'0000'0000ULL, 0, 0}));
  EXPECT_EQ(dw(InvdbCmd{1}), (CommandDwords{0x2E, 0x0000'0001'0000'0000ULL, 0, 0}));
  EXPECT_EQ(dw(VinvallCmd{0xFFFF}), (CommandDwords{0x2D, 0x0000'FFFF'0000'0000ULL, 0, 0}));
  EXPECT_THROW(dw(SyncCmd{1ULL << 36}), InputError);  // RDbase is 36 bits [51:16]
}

std::vector<ItsCommand> samples() {
  VmappCmd m{true, false, 0x7000'0000, 0x2003, 3, 0x10004, true, 15, 0x8003'0000};
  VmappCmd unmap{true, false, 0, 0, 3, 0, false, 0, 0};
  VmappCmd big{true, true, 0xF'FFFF'FFFF'0000ULL, 0xFFFF'FFFF, 0xFFFF, 0xF'FFFF'FFFFULL, true, 31, 0xF'FFFF'FFFF'0000ULL};
  VmovpCmd v{7, 0b101, 0x42, 33, true, 0x2042};
  VsgiCmd s{true, false, true, 0xA0, 5, 0x1234};
  VsgiCmd s2{false, true, false, 0xF0, 15, 0xFFFF};
  return {SyncCmd{0x10004}, VsyncCmd{0xBEEF}, m, unmap, big, v, s, s2, InvdbCmd{1}, VinvallCmd{0xFFFF}};
}

TEST(GicItsCommand, RoundTrip_BytesAndDwords_Exact) {
  for (const ItsCommand& c : samples()) {
    const CommandBytes b = encode_its_command(c);
    const CommandDecode d = decode_its_command(b);
    ASSERT_TRUE(d.ok()) << d.error->message;
    EXPECT_EQ(*d.command, c) << opcode_name(opcode_of(c));
    EXPECT_EQ(encode_its_command(*d.command), b);
    EXPECT_EQ(decode_its_dwords(dw(c)).command, c);
  }
}

TEST(GicItsCommand, Decode_WrongLength_IsError) {
  const std::vector<std::uint8_t> short_cmd(31, 0);
  const CommandDecode d = decode_its_command(short_cmd);
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.error->kind, CommandDecodeErrorKind::WrongLength);
  EXPECT_EQ(d.error->byte_offset, 31U);
  EXPECT_EQ(decode_its_command(std::span<const std::uint8_t>{}).error->kind, CommandDecodeErrorKind::WrongLength);
  EXPECT_EQ(decode_its_command(std::vector<std::uint8_t>(33, 0)).error->kind, CommandDecodeErrorKind::WrongLength);
}

TEST(GicItsCommand, Decode_UnknownAndUnsupportedOpcodes) {
  CommandBytes b{};
  b[0] = 0x00;
  EXPECT_EQ(decode_its_command(b).error->kind, CommandDecodeErrorKind::UnknownOpcode);
  b[0] = 0xFF;
  EXPECT_EQ(decode_its_command(b).error->kind, CommandDecodeErrorKind::UnknownOpcode);
  b[0] = 0x2A;  // VMAPTI: real, not modelled
  const CommandDecode d = decode_its_command(b);
  EXPECT_EQ(d.error->kind, CommandDecodeErrorKind::UnsupportedOpcode);
  EXPECT_NE(d.error->message.find("VMAPTI"), std::string::npos);
  EXPECT_EQ(d.error->opcode, 0x2A);
}

TEST(GicItsCommand, Decode_ReservedBits_NameDwordAndBits) {
  CommandDwords v = dw(VsgiCmd{true, false, true, 0xA0, 5, 0x1234});
  v[0] |= 1ULL << 11;  // between Group [10] and Priority [23:20]
  CommandDecode d = decode_its_dwords(v);
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.error->kind, CommandDecodeErrorKind::ReservedBitsSet);
  EXPECT_EQ(d.error->dword, 0);
  EXPECT_EQ(d.error->bits, 1ULL << 11);
  EXPECT_EQ(d.error->byte_offset, 1U);
  v = dw(VsyncCmd{1});
  v[3] = 0x8000'0000'0000'0000ULL;
  d = decode_its_dwords(v);
  EXPECT_EQ(d.error->dword, 3);
  EXPECT_EQ(d.error->byte_offset, 31U);
  v = dw(VmappCmd{});
  v[2] |= 1ULL << 62;  // between RDbase [51:16] and V [63]
  EXPECT_EQ(decode_its_dwords(v).error->dword, 2);
}

TEST(GicItsCommand, Describe_ListsLayoutFieldsWithDisplayValues) {
  const auto fields = describe(VsgiCmd{true, false, true, 0xA0, 5, 0x1234});
  ASSERT_EQ(fields.size(), 6U);
  EXPECT_EQ(fields[3].field->name, "Priority");
  EXPECT_EQ(fields[3].raw, 0xAU);
  EXPECT_EQ(fields[3].value, 0xA0U);
  EXPECT_EQ(fields[5].field->name, "vPEID");
  EXPECT_EQ(fields[5].value, 0x1234U);
}

TEST(GicItsCommand, BuildCommand_ByFieldNames_MatchesStruct) {
  const std::vector<std::pair<std::string, std::uint64_t>> f{
      {"vpeid", 0x1234}, {"VINTID", 5}, {"priority", 0xA0}, {"enable", 1}, {"group", 1}};
  EXPECT_EQ(build_command(ItsOpcode::Vsgi, f), ItsCommand(VsgiCmd{true, false, true, 0xA0, 5, 0x1234}));
  const std::vector<std::pair<std::string, std::uint64_t>> bad{{"nosuch", 1}};
  EXPECT_THROW(build_command(ItsOpcode::Vsgi, bad), InputError);
  const std::vector<std::pair<std::string, std::uint64_t>> too_big{{"vINTID", 16}};
  EXPECT_THROW(build_command(ItsOpcode::Vsgi, too_big), InputError);
}

TEST(GicRegisters, GitsTyper_FeatureBits_ArmGicV3h) {
  GitsTyper t;
  t.physical = true;
  t.vlpis = true;
  t.vmovp = true;
  t.vsgi = true;
  t.vmapp = true;
  t.svpet = 2;
  // [0] | [1] | [37] 0x20'0000'0000 | [39] 0x80'0000'0000 | [40] 0x100'0000'0000 | 2 << 41 = 0x400'0000'0000
  EXPECT_EQ(encode_gits_typer(t), 0x0000'05A0'0000'0003ULL);
  t = GitsTyper{};
  t.physical = false;
  t.pta = true;
  t.nid = true;
  EXPECT_EQ(encode_gits_typer(t), (1ULL << 19) | (1ULL << 43));
  t.svpet = 4;
  EXPECT_THROW(encode_gits_typer(t), InputError);
}

TEST(GicRegisters, GicrTyper_FeatureBits_ArmGicV3h) {
  GicrTyper t;
  t.plpis = true;
  t.vlpis = true;
  t.rvpeid = true;
  t.processor_number = 33;
  t.common_lpi_aff = 2;
  t.vsgi = true;
  t.affinity = 0x00010203;
  // 1 | 2 | RVPEID 0x80 | 33 << 8 = 0x2100 | 2 << 24 | VSGI 1 << 26 = 0x400'0000 | aff << 32
  EXPECT_EQ(encode_gicr_typer(t), 0x0001'0203'0600'2183ULL);
  EXPECT_EQ(decode_gicr_typer(0x0001'0203'0600'2183ULL), t);
}

TEST(GicRegisters, RoundTrip_AnyValue_KeepsUnmodelledBits) {
  for (std::uint64_t v : {0ULL, ~0ULL, 0x0123'4567'89AB'CDEFULL, 0xFEDC'BA98'7654'3210ULL, 0x8000'0000'0000'0001ULL}) {
    EXPECT_EQ(encode_gits_typer(decode_gits_typer(v)), v);
    EXPECT_EQ(encode_gicr_typer(decode_gicr_typer(v)), v);
    EXPECT_EQ(encode_cbaser(decode_cbaser(v)), v);
    EXPECT_EQ(encode_cwriter(decode_cwriter(v)), v);
    EXPECT_EQ(encode_creadr(decode_creadr(v)), v);
    EXPECT_EQ(encode_vpendbaser(decode_vpendbaser(v)), v);
  }
}

TEST(GicRegisters, Cbaser_LinuxQueue64K_ArmGicV3h) {
  Cbaser c;
  c.valid = true;
  c.pa = 0x4000'0000;
  c.size = 15;
  c.shareability = 1;
  EXPECT_EQ(encode_cbaser(c), 0x8000'0000'4000'040FULL);
  EXPECT_EQ(c.size_bytes(), 65536U);
  c.pa = 0x4000'0800;
  EXPECT_THROW(encode_cbaser(c), InputError);
}

TEST(GicRegisters, CwriterCreadr_OffsetBits19to5) {
  EXPECT_EQ(encode_cwriter(Cwriter{0xFFE0, true, 0}), 0xFFE1ULL);
  EXPECT_EQ(decode_creadr(0x20001).offset, 0x20000U);
  EXPECT_TRUE(decode_creadr(0x20001).stalled);
  EXPECT_THROW(encode_cwriter(Cwriter{0x10, false, 0}), InputError);
  EXPECT_THROW(encode_cwriter(Cwriter{0x100000, false, 0}), InputError);
}

TEST(GicRegisters, Vpendbaser_ValidVpeid_ArmGicV3h) {
  Vpendbaser v;
  v.valid = true;
  v.vgrp1_en = true;
  v.vpeid = 0x42;
  EXPECT_EQ(encode_vpendbaser(v), 0x8400'0000'0000'0042ULL);
}

}  // namespace
}  // namespace ipilab::gic
