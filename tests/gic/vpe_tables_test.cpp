// Register-level vPE tables as Linux programs them (irq-gic-v3-its.c its_alloc_tables /
// its_parse_indirect_baser / its_setup_baser / find_sibling_its for GITS_BASER2; allocate_vpe_l1_table
// / inherit_vpe_l1_table_from_its / _from_rd for GICR_VPROPBASER), for CommonLPIAff 0..3. Expected
// values are composed field by field in the comments (layouts: table_registers.h).
#include <gtest/gtest.h>

#include "gic/linux_its.h"
#include "gic/topology_builder.h"

namespace ipilab::gic {
namespace {

constexpr auto PostPolicy = Find41Policy::PostSeed;

// GITS_BASER2 with 32-byte entries, 64K pages, 16 vPEID bits: (32 << 16) = 2 MiB > 2 x 64K -> indirect;
// ids = 16 - log2(64K / 32) = 5, level-1 = 8 << 5 = 256 bytes -> one 64K page (Size = 0).
// Valid 1<<63 | Indirect 1<<62 | InnerCache RaWaWb 7<<59 | Type vPE 2<<56 | Entry_Size 31<<48 |
// PA | InnerShareable 1<<10 | Page_Size 64K 2<<8 = 0xfa1f'0000'0000'0600 | PA.
constexpr std::uint64_t kBaser2Bits = 0xFA1F'0000'0000'0600;
// GICR_VPROPBASER inherited from that: Valid 1<<63 | Entry_Size (RO, 4 words) 3<<59 | Indirect 1<<55 |
// Page_Size 64K 2<<53 | PA | Shareability 1<<10 | InnerCache 7<<7 (copied from BASER2) | Size 0.
constexpr std::uint64_t kVpropFromItsBits = 0x98C0'0000'0000'0780;
// A private table: 64K page holds 2048 entries < 65536 -> indirect, nl2 = 32, npg = 1; RaWb 3<<7,
// InnerShareable, Z 1<<52, Valid.
constexpr std::uint64_t kVpropPrivateBits = 0x98D0'0000'0000'0580;

TEST(GicVpeTables, PerSocket_CommonLpiAff2_Baser2PerIts_VpropbaserInheritedOnEverySharer) {
  GicSystem sys(build_socket_topology(SocketTopology{2, 4}));
  LinuxItsDriver drv(sys);
  EXPECT_EQ(sys.read_gits_baser(0, 2), kBaser2Bits | 0x5000'0000);
  EXPECT_EQ(sys.read_gits_baser(1, 2), kBaser2Bits | 0x5001'0000);
  EXPECT_EQ(drv.its_baser2(1), sys.read_gits_baser(1, 2));
  for (int cpu = 0; cpu < 8; ++cpu) {
    const std::uint64_t pa = cpu < 4 ? 0x5000'0000 : 0x5001'0000;
    EXPECT_EQ(sys.read_gicr_vpropbaser(cpu), kVpropFromItsBits | pa) << cpu;
    EXPECT_EQ(drv.cpu_vpe_table(cpu).vpropbaser, kVpropFromItsBits | pa) << cpu;
  }
  EXPECT_EQ(drv.cpu_vpe_table(0).source, VpeTableSource::InheritedFromIts);
  EXPECT_EQ(drv.cpu_vpe_table(3).source, VpeTableSource::InheritedFromRd);
  EXPECT_EQ(sys.rd_vpe_table(5), sys.its_vpe_table(1));
  EXPECT_TRUE(drv.bringup_notes().empty());
}

TEST(GicVpeTables, CommonLpiAff0_SiblingItsCopiesBaser2_OneTableEverywhere) {
  SocketTopology t{2, 4};
  t.scope = VpeTableScope::System;  // CommonLPIAff 0, SVPET 1 on both ITSs (Aff3 = 0 for both)
  GicSystem sys(build_socket_topology(t));
  LinuxItsDriver drv(sys);
  EXPECT_EQ(sys.read_gits_baser(0, 2), kBaser2Bits | 0x5000'0000);
  EXPECT_EQ(sys.read_gits_baser(1, 2), kBaser2Bits | 0x5000'0000);  // find_sibling_its: ITS 0's value
  for (int cpu = 0; cpu < 8; ++cpu) {
    EXPECT_EQ(sys.read_gicr_vpropbaser(cpu), kVpropFromItsBits | 0x5000'0000) << cpu;
    EXPECT_EQ(drv.cpu_vpe_table(cpu).local_4_1_its, 1) << cpu;  // first in its_nodes
  }
  EXPECT_EQ(drv.vpe_table_mask(7).size(), 8U);
}

TEST(GicVpeTables, CommonLpiAff1_Aff3Sockets_PerSocketTables) {
  SocketTopology t{2, 2};
  t.level = SocketAffinityLevel::Aff3;  // CommonLPIAff 1, SVPET 1, socket in Aff3
  GicSystem sys(build_socket_topology(t));
  LinuxItsDriver drv(sys);
  EXPECT_EQ(sys.read_gicr_vpropbaser(1), kVpropFromItsBits | 0x5000'0000);
  EXPECT_EQ(sys.read_gicr_vpropbaser(2), kVpropFromItsBits | 0x5001'0000);
  EXPECT_EQ(drv.find_4_1_its(3, PostPolicy), 1);
}

// CommonLPIAff 3 (Aff3.Aff2.Aff1): with 32 CPUs per socket the RDs form two Aff1 clusters of 16; the
// socket's ITS (GITS_MPIDR Aff1 = 0, SVPET = 3) matches cluster 0 only. Cluster 1 gets a private
// table, its CPUs share it, and local_4_1_its stays NULL there (fallback: first v4.1 ITS).
TEST(GicVpeTables, CommonLpiAff3_SecondClusterPrivate_ZOnlyOnTheAllocator) {
  auto cfg = build_socket_topology(SocketTopology{2, 32});
  for (auto& rd : cfg.redistributors) rd.typer.common_lpi_aff = 3;
  for (auto& its : cfg.its) its.typer.svpet = 3;
  GicSystem sys(cfg);
  LinuxItsDriver drv(sys);
  // ITS tables at 0x5000'0000, 0x5001'0000; then CPU 16's private table, then CPU 48's.
  EXPECT_EQ(drv.cpu_vpe_table(0).source, VpeTableSource::InheritedFromIts);
  EXPECT_EQ(drv.cpu_vpe_table(16).source, VpeTableSource::Private);
  EXPECT_EQ(sys.read_gicr_vpropbaser(16), kVpropPrivateBits | 0x5002'0000);
  EXPECT_EQ(drv.cpu_vpe_table(17).source, VpeTableSource::InheritedFromRd);
  EXPECT_EQ(drv.cpu_vpe_table(17).from_cpu, 16);
  EXPECT_EQ(sys.read_gicr_vpropbaser(17), (kVpropPrivateBits & ~(std::uint64_t{1} << 52)) | 0x5002'0000);
  EXPECT_EQ(sys.read_gicr_vpropbaser(48), kVpropPrivateBits | 0x5003'0000);
  EXPECT_EQ(sys.read_gicr_vpropbaser(40), kVpropFromItsBits | 0x5001'0000);
  EXPECT_EQ(drv.vpe_table_mask(20), (drv.vpe_table_mask(31)));
  EXPECT_EQ(drv.vpe_table_mask(20).size(), 16U);
  EXPECT_EQ(drv.find_4_1_its(5, PostPolicy), 0);
  EXPECT_EQ(drv.find_4_1_its(20, PostPolicy), 1);  // NULL -> first v4.1 in its_nodes: ITS 1
  EXPECT_EQ(drv.find_4_1_its(40, PostPolicy), 1);
  EXPECT_FALSE(drv.choose_sgir_its(20, PostPolicy).its_local);
}

TEST(GicVpeTables, SmallEntries_FlatBaser2_TwoPages) {
  auto cfg = build_socket_topology(SocketTopology{1, 1});
  cfg.its[0].vpe_entry_bytes = 1;  // 1 << 16 = 64 KiB <= 128 KiB: flat; one 64K page
  cfg.its[0].typer.svpet = 0;
  GicSystem sys(cfg);
  LinuxItsDriver drv(sys);
  const GitsBaser b = decode_gits_baser(sys.read_gits_baser(0, 2));
  EXPECT_FALSE(b.indirect);
  EXPECT_EQ(b.entry_bytes, 1);
  EXPECT_EQ(b.pages, 1);
  EXPECT_EQ(b.page_size, TablePageSize::K64);
  EXPECT_EQ(vpe_table_capacity(b.indirect, 65536, b.pages, b.entry_bytes), 65536U);
}

TEST(GicVpeTables, Only4KPages_ProbeFallsBack_IndirectFourKiB) {
  auto cfg = build_socket_topology(SocketTopology{1, 1});
  cfg.its[0].baser_page_sizes = 0b001;
  GicSystem sys(cfg);
  LinuxItsDriver drv(sys);
  const GitsBaser b = decode_gits_baser(sys.read_gits_baser(0, 2));
  // 32 << 16 > 8 KiB: indirect; ids = 16 - log2(4096 / 32) = 9; 8 << 9 = 4 KiB: one 4K page.
  EXPECT_EQ(b.page_size, TablePageSize::K4);
  EXPECT_TRUE(b.indirect);
  EXPECT_EQ(b.pages, 1);
  EXPECT_EQ(vpe_table_capacity(true, 4096, 1, 32), 65536U);
  // The RD inherits the 4K geometry.
  const GicrVpropbaser41 v = decode_gicr_vpropbaser41(sys.read_gicr_vpropbaser(0));
  EXPECT_EQ(v.page_size, TablePageSize::K4);
  EXPECT_TRUE(v.indirect);
  EXPECT_EQ(v.pa, b.pa);
}

}  // namespace
}  // namespace ipilab::gic
