// Codec tests for src/hv/abi.h: exact bits on the wire, round trips, TLFS examples.
#include "hv/abi.h"

#include <gtest/gtest.h>

namespace ipilab::hv {
namespace {

TEST(Tlfs_Control, FieldsLandOnTheirBits) {
  // TLFS "Hypercall Interface" (hypercall input value): code 15:0, fast 16, varhead 26:17,
  // rep count 43:32, rep start 59:48.
  const HypercallControl c{HVCALL_SEND_IPI_EX, true, 2, 0x123, 0x045, 0};
  EXPECT_EQ(encode_control(c), 0x0045'0123'0005'0015ull);
  EXPECT_EQ(decode_control(0x0045'0123'0005'0015ull), c);
}

TEST(Tlfs_Control, SlowExWithTwoBanksIsTheLinuxWord) {
  // Linux hv_do_rep_hypercall(HVCALL_SEND_IPI_EX, 0, nr_bank=2, ...): varhead 2 << 17.
  EXPECT_EQ(encode_control({HVCALL_SEND_IPI_EX, false, 2, 0, 0, 0}), 0x0004'0015ull);
  // hv_do_fast_hypercall16(HVCALL_SEND_IPI, ...): fast bit 16.
  EXPECT_EQ(encode_control({HVCALL_SEND_IPI, true, 0, 0, 0, 0}), 0x0001'000Bull);
}

TEST(Tlfs_Control, EveryBitRoundTrips) {
  for (int bit = 0; bit < 64; ++bit) {
    const std::uint64_t w = 1ull << bit;
    EXPECT_EQ(encode_control(decode_control(w)), w) << "bit " << bit;
  }
  EXPECT_EQ(encode_control(decode_control(~0ull)), ~0ull);
  EXPECT_EQ(decode_control(1ull << 31).reserved, 1ull << 31);  // Linux HV_HYPERCALL_NESTED is RsvdZ here
}

TEST(Tlfs_Control, OutOfRangeFieldsAreRejectedByTheEncoder) {
  EXPECT_THROW(encode_control({HVCALL_SEND_IPI, false, 0x400, 0, 0, 0}), std::invalid_argument);
  EXPECT_THROW(encode_control({HVCALL_SEND_IPI, false, 0, 0x1000, 0, 0}), std::invalid_argument);
  EXPECT_THROW(encode_control({HVCALL_SEND_IPI, false, 0, 0, 0, 1ull << 16}), std::invalid_argument);
}

TEST(Tlfs_Result, StatusAndRepsCompleted) {
  EXPECT_EQ(encode_result({0x3, 0}), 0x3ull);
  EXPECT_EQ(decode_result(0x0000'0ABC'FFFF'0005ull), (HypercallResult{0x5, 0xABC}));
  EXPECT_TRUE(hv_result_success(0xFFFF'0000ull));  // only bits 15:0 count (Linux hv_result_success)
  EXPECT_FALSE(hv_result_success(0x3));
}

TEST(Tlfs_Status, NamesBothWays) {
  EXPECT_EQ(status_name(HvStatus::HV_STATUS_INVALID_HYPERCALL_INPUT), "HV_STATUS_INVALID_HYPERCALL_INPUT");
  EXPECT_EQ(status_name(0x42), "HV_STATUS_0x0042");
  EXPECT_EQ(status_from_name("invalid_hypercall_code"), HvStatus::HV_STATUS_INVALID_HYPERCALL_CODE);
  EXPECT_EQ(status_from_name("HV_STATUS_ACCESS_DENIED"), HvStatus::HV_STATUS_ACCESS_DENIED);
  EXPECT_FALSE(status_from_name("NOPE").has_value());
}

TEST(Tlfs_SendIpi, SixteenBytesLittleEndian) {
  const SendIpiInput in{0xFE, 0x01, 1ull << 2};
  const auto bytes = encode_send_ipi(in);
  const std::array<std::uint8_t, 16> expect{0xFE, 0, 0, 0, 0x01, 0, 0, 0, 0x04, 0, 0, 0, 0, 0, 0, 0};
  EXPECT_EQ(bytes, expect);
  EXPECT_EQ(decode_send_ipi(bytes), in);
  EXPECT_FALSE(decode_send_ipi(std::span<const std::uint8_t>(bytes.data(), 15)).has_value());
}

TEST(Tlfs_SendIpi, FastFormPutsTargetVtlInRdxHighHalf) {
  const FastRegs r = encode_send_ipi_fast({0xFE, 0x1, 0x8000'0000'0000'0001ull});
  EXPECT_EQ(r.rdx, 0x1'0000'00FEull);
  EXPECT_EQ(r.r8, 0x8000'0000'0000'0001ull);
  EXPECT_EQ(decode_send_ipi_fast(r), (SendIpiInput{0xFE, 0x1, 0x8000'0000'0000'0001ull}));
}

TEST(Tlfs_VpSet, TlfsExampleIsCompact) {
  // TLFS HV_VP_SET example: VPs {0, 5, 130} -> ValidBanksMask 0x5, BankContents {0x21, 0x04}.
  const std::uint32_t vps[] = {0, 5, 130};
  const VpSet s = vpset_from_vps(vps);
  EXPECT_EQ(s.format, HV_GENERIC_SET_SPARSE_4K);
  EXPECT_EQ(s.valid_bank_mask, 0x5u);
  EXPECT_EQ(s.bank_contents, (std::vector<std::uint64_t>{0x21, 0x04}));
  EXPECT_TRUE(vpset_contains(s, 130));
  EXPECT_FALSE(vpset_contains(s, 66));
  EXPECT_EQ(vpset_vps(s), (std::vector<std::uint32_t>{0, 5, 130}));
  EXPECT_EQ(vpset_bank_count(s), 2u);
}

TEST(Tlfs_VpSet, CompactIndexSkipsInvalidBanks) {
  // KVM selftest hyperv_ipi case 5: valid_bank_mask 0x2, one element 1<<1 => VP 65.
  const VpSet s{HV_GENERIC_SET_SPARSE_4K, 0x2, {1ull << 1}};
  EXPECT_TRUE(vpset_contains(s, 65));
  EXPECT_FALSE(vpset_contains(s, 1));
  EXPECT_FALSE(vpset_contains(s, 4096));
  const VpSet all{HV_GENERIC_SET_ALL, 0, {}};
  EXPECT_TRUE(vpset_contains(all, 4000));
  EXPECT_THROW(vpset_from_vps(std::vector<std::uint32_t>{4096}), std::invalid_argument);
}

TEST(Tlfs_SendIpiEx, MemoryLayoutAndRoundTrip) {
  const SendIpiExInput in{0xFE, 0, {HV_GENERIC_SET_SPARSE_4K, 0x3, {1ull << 2, 1ull << 1}}};
  const auto bytes = encode_send_ipi_ex(in);
  ASSERT_EQ(bytes.size(), 40u);
  EXPECT_EQ(bytes[0], 0xFE);
  EXPECT_EQ(bytes[16], 0x03);  // valid_bank_mask at +16
  EXPECT_EQ(bytes[24], 0x04);  // bank[0] at +24
  EXPECT_EQ(bytes[32], 0x02);  // bank[1] at +32
  EXPECT_EQ(decode_send_ipi_ex(bytes, 2), in);
  EXPECT_FALSE(decode_send_ipi_ex(bytes, 3).has_value());
  EXPECT_FALSE(decode_send_ipi_ex(std::span<const std::uint8_t>(bytes.data(), 23), 0).has_value());
}

TEST(Tlfs_SendIpiEx, XmmLayoutMatchesKvmSelftestCase8) {
  // hyperv_ipi case 8: RDX = 0xFE, R8 = 0 (sparse), XMM0 = {0x3, 1<<2}, XMM1 = {1<<1, 0}.
  const SendIpiExInput in{0xFE, 0, {HV_GENERIC_SET_SPARSE_4K, 0x3, {1ull << 2, 1ull << 1}}};
  const XmmFastInput x = encode_send_ipi_ex_xmm(in);
  EXPECT_EQ(x.rdx, 0xFEu);
  EXPECT_EQ(x.r8, 0u);
  EXPECT_EQ(x.xmm[0][0], 0x3u);
  EXPECT_EQ(x.xmm[0][1], 1ull << 2);
  EXPECT_EQ(x.xmm[1][0], 1ull << 1);
  EXPECT_EQ(x.xmm[1][1], 0u);
  EXPECT_EQ(decode_send_ipi_ex_xmm(x, 2), in);
  EXPECT_FALSE(decode_send_ipi_ex_xmm(x, 12).has_value());
  SendIpiExInput twelve = in;
  twelve.vp_set.bank_contents.assign(12, 1);
  EXPECT_THROW(encode_send_ipi_ex_xmm(twelve), std::invalid_argument);
}

}  // namespace
}  // namespace ipilab::hv
