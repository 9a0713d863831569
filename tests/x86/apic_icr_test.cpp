#include "x86/apic_icr.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>

namespace ipilab::x86 {
namespace {

// Deterministic 64-bit generator for round-trip sweeps (splitmix64).
std::uint64_t next(std::uint64_t& s) {
  std::uint64_t z = (s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

TEST(ApicIcr, LinuxPhysicalFixedIpiIsDestShiftedOver32PlusVector) {
  // native_x2apic_icr_write(__prepare_ICR(0, 0xfb, APIC_DEST_PHYSICAL), 3)
  Icr f;
  f.vector = 0xFB;
  f.destination = 3;
  EXPECT_EQ(encode_x2apic_icr(f), 0x00000003000000FBull);
  const Icr d = decode_x2apic_icr(0x00000003000000FBull);
  EXPECT_EQ(d.vector, 0xFB);
  EXPECT_EQ(d.delivery_mode, DeliveryMode::Fixed);
  EXPECT_EQ(d.dest_mode, DestMode::Physical);
  EXPECT_EQ(d.shorthand, Shorthand::None);
  EXPECT_EQ(d.destination, 3u);
  EXPECT_EQ(d, f);
}

TEST(ApicIcr, EveryFieldLandsOnItsApicdefBit) {
  Icr f;
  f.vector = 0x5A;
  f.delivery_mode = DeliveryMode::ExtInt;
  f.dest_mode = DestMode::Logical;
  f.delivery_status = true;
  f.level_assert = true;
  f.trigger = TriggerMode::Level;
  f.shorthand = Shorthand::AllExcludingSelf;
  f.destination = 0xDEADBEEF;
  // 0x5A | 0x700 | 0x800 | 0x1000 | 0x4000 | 0x8000 | 0xC0000
  EXPECT_EQ(encode_icr_low(f), 0x000CDF5Au);
  EXPECT_EQ(encode_x2apic_icr(f), 0xDEADBEEF000CDF5Aull);
  for (std::uint8_t m = 0; m < 8; ++m) {
    EXPECT_EQ(static_cast<std::uint8_t>(decode_x2apic_icr(std::uint64_t{m} << 8).delivery_mode), m);
  }
  EXPECT_EQ(decode_x2apic_icr(icr_bits::kShortSelf).shorthand, Shorthand::Self);
  EXPECT_EQ(decode_x2apic_icr(icr_bits::kShortAllInc).shorthand, Shorthand::AllIncludingSelf);
  EXPECT_EQ(decode_x2apic_icr(icr_bits::kShortAllBut).shorthand, Shorthand::AllExcludingSelf);
}

TEST(ApicIcr, InitAndSipiAsLinuxWakeupSecondaryCpuWritesThem) {
  // INIT assert: APIC_INT_LEVELTRIG | APIC_INT_ASSERT | APIC_DM_INIT = 0xC500
  const Icr init = decode_x2apic_icr(0x0000000700000000ull | 0xC500u);
  EXPECT_EQ(init.delivery_mode, DeliveryMode::Init);
  EXPECT_TRUE(init.level_assert);
  EXPECT_EQ(init.trigger, TriggerMode::Level);
  EXPECT_EQ(init.destination, 7u);
  // SIPI for a trampoline at 0x9a000: APIC_DM_STARTUP | 0x9a
  const Icr sipi = decode_x2apic_icr(0x0000000700000000ull | 0x69Au);
  EXPECT_EQ(sipi.delivery_mode, DeliveryMode::StartUp);
  EXPECT_EQ(sipi.vector, 0x9A);
}

TEST(ApicIcr, LinuxPrepareIcrTurnsNmiVectorIntoNmiDeliveryMode) {
  // __prepare_ICR: NMI_VECTOR -> APIC_DM_NMI with vector bits 0; anything else fixed|vector.
  EXPECT_EQ(linux_prepare_icr(0, kNmiVector, false), 0x400u);
  EXPECT_EQ(linux_prepare_icr(0, 0xFC, false), 0xFCu);
  EXPECT_EQ(linux_prepare_icr(0, 0xFB, true), 0x8FBu);
  EXPECT_EQ(linux_prepare_icr(icr_bits::kShortAllBut, 0xFC, false), 0xC00FCu);
  EXPECT_EQ(linux_prepare_icr(icr_bits::kShortAllInc, kNmiVector, false), 0x80400u);
}

TEST(ApicIcr, XapicPairPutsDestinationInIcr2Bits31To24) {
  Icr f;
  f.vector = 0xFB;
  f.destination = 0x2A;
  EXPECT_EQ(encode_xapic_icr(f), (XapicIcr{0x000000FBu, 0x2A000000u}));
  EXPECT_EQ(decode_xapic_icr(XapicIcr{0x000000FBu, 0x2A000000u}), f);
  f.destination = 0x100;
  EXPECT_THROW(encode_xapic_icr(f), std::invalid_argument);
}

TEST(ApicIcr, ReservedBitsAreKeptNotDropped) {
  // bits 13, 16, 17, 20..31 are reserved in the low word
  const std::uint64_t v = 0x00000001FFF32000ull;
  const Icr d = decode_x2apic_icr(v);
  EXPECT_EQ(d.reserved_low, 0xFFF32000u);
  EXPECT_EQ(d.vector, 0);
  EXPECT_EQ(encode_x2apic_icr(d), v);
  Icr bad;
  bad.reserved_low = 0x1;  // bit 0 is the vector, not reserved
  EXPECT_THROW(encode_icr_low(bad), std::invalid_argument);
  Icr x2_with_icr2;
  x2_with_icr2.reserved_high = 1;
  EXPECT_THROW(encode_x2apic_icr(x2_with_icr2), std::invalid_argument);
}

TEST(ApicIcr, X2apicRoundTripIsExactOverAllBitPatterns) {
  std::uint64_t s = 1;
  for (int i = 0; i < 200000; ++i) {
    const std::uint64_t v = next(s);
    ASSERT_EQ(encode_x2apic_icr(decode_x2apic_icr(v)), v) << std::hex << v;
  }
  EXPECT_EQ(encode_x2apic_icr(decode_x2apic_icr(~0ull)), ~0ull);
  EXPECT_EQ(encode_x2apic_icr(decode_x2apic_icr(0)), 0ull);
}

TEST(ApicIcr, XapicRoundTripIsExactOverAllBitPatterns) {
  std::uint64_t s = 2;
  for (int i = 0; i < 200000; ++i) {
    const std::uint64_t v = next(s);
    const XapicIcr pair{static_cast<std::uint32_t>(v), static_cast<std::uint32_t>(v >> 32)};
    ASSERT_EQ(encode_xapic_icr(decode_xapic_icr(pair)), pair) << std::hex << v;
  }
}

TEST(ApicIcr, X2apicLogicalIdIsClusterShifted16OrOneBitInCluster) {
  // SDM 11.12.10.2: LDR = (x2APIC ID[19:4] << 16) | (1 << x2APIC ID[3:0])
  EXPECT_EQ(x2apic_logical_id(0), 0x00000001u);
  EXPECT_EQ(x2apic_logical_id(15), 0x00008000u);
  EXPECT_EQ(x2apic_logical_id(16), 0x00010001u);
  EXPECT_EQ(x2apic_logical_id(79), 0x00048000u);
  EXPECT_EQ(x2apic_logical_id(0x12345), 0x12340020u);
  // KVM kvm_apic_calc_x2apic_ldr shifts in u32, so ID bits above 19 fall off the cluster.
  EXPECT_EQ(x2apic_logical_id(0xABCDE5), 0xBCDE0020u);
  EXPECT_EQ(x2apic_cluster_id(79), 4u);
}

TEST(ApicIcr, DescribeNamesTheFields) {
  const std::string s = describe_icr(decode_x2apic_icr(0x00010003000008FBull));
  EXPECT_NE(s.find("vector=0xfb"), std::string::npos) << s;
  EXPECT_NE(s.find("logical:0x10003"), std::string::npos) << s;
}

}  // namespace
}  // namespace ipilab::x86
