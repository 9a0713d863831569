// Linux ITS selection (drivers/irqchip/irq-gic-v3-its.c) before and after seed f1a3fac4095c: vPE table
// sharing (allocate_vpe_l1_table, inherit_vpe_l1_table_from_*), VMOVP routing (its_send_vmovp), its_nodes
// order (its_probe_one: list_add at the head), find_4_1_its().
#include <gtest/gtest.h>

#include "common/error.h"
#include "gic/linux_its.h"
#include "gic/topology_builder.h"

namespace ipilab::gic {
namespace {

constexpr auto Pre = Find41Policy::PreSeed;
constexpr auto Post = Find41Policy::PostSeed;

TEST(GicLinuxAffinity, ComputeCommonAff_KeepsAff3Aff2Aff1ByCommonLpiAff) {
  GicrTyper t;
  t.affinity = 0x01020304;
  const std::uint32_t expect[] = {0, 0x01000000, 0x01020000, 0x01020300};
  for (std::uint8_t c = 0; c < 4; ++c) {
    t.common_lpi_aff = c;
    EXPECT_EQ(compute_common_aff(encode_gicr_typer(t)), expect[c]) << int(c);
  }
  GitsTyper its;
  its.svpet = 2;
  EXPECT_EQ(compute_its_aff(encode_gits_typer(its), 0x01020300), 0x01020000U);
  its.svpet = 0;
  EXPECT_EQ(compute_its_aff(encode_gits_typer(its), 0x01020300), 0U);
}

TEST(GicLinuxItsNodes, ListAddAtHead_ReverseFirmwareOrder) {
  GicSystem sys(build_socket_topology(SocketTopology{4, 2}));
  LinuxItsDriver drv(sys);
  EXPECT_EQ(drv.its_nodes(), (std::vector<int>{3, 2, 1, 0}));
  EXPECT_TRUE(drv.has_v4());
  EXPECT_TRUE(drv.has_v4_1());
  EXPECT_TRUE(drv.has_rvpeid());
}

TEST(GicLinuxFind41, TwoSockets_PerSocketCommonLpiAff_LocalItsIsOwnSocket_SeedF1a3fac4095c) {
  GicSystem sys(build_socket_topology(SocketTopology{2, 4}));  // Aff2 = socket, CommonLPIAff = 2
  LinuxItsDriver drv(sys);
  for (int cpu = 0; cpu < 8; ++cpu) {
    const int socket = cpu / 4;
    EXPECT_EQ(drv.cpu_vpe_table(cpu).local_4_1_its, socket) << cpu;
    EXPECT_EQ(drv.find_4_1_its(cpu, Post), socket) << cpu;
    EXPECT_TRUE(drv.choose_sgir_its(cpu, Post).its_local);
  }
  // CPU 0 and CPU 4 are the first of their socket: they adopt their ITS's table; the others share.
  EXPECT_EQ(drv.cpu_vpe_table(0).source, VpeTableSource::InheritedFromIts);
  EXPECT_EQ(drv.cpu_vpe_table(0).from_its, 0);
  EXPECT_EQ(drv.cpu_vpe_table(4).source, VpeTableSource::InheritedFromIts);
  EXPECT_EQ(drv.cpu_vpe_table(4).from_its, 1);
  EXPECT_EQ(drv.cpu_vpe_table(5).source, VpeTableSource::InheritedFromRd);
  EXPECT_EQ(drv.cpu_vpe_table(5).from_cpu, 4);
  EXPECT_EQ(drv.vpe_table_mask(6), (std::vector<int>{4, 5, 6, 7}));
  EXPECT_EQ(drv.vpe_table_mask(1), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_NE(sys.its_vpe_table(0), sys.its_vpe_table(1));
  EXPECT_EQ(sys.rd_vpe_table(7), sys.its_vpe_table(1));
}

TEST(GicLinuxFind41, PreSeed_PicksLastItsReportedByFirmware_SeedF1a3fac4095c) {
  GicSystem sys(build_socket_topology(SocketTopology{2, 4}));
  LinuxItsDriver drv(sys);
  for (int cpu = 0; cpu < 8; ++cpu) EXPECT_EQ(drv.find_4_1_its(cpu, Pre), 1) << cpu;
  const ItsChoice c = drv.choose_sgir_its(0, Pre);
  EXPECT_EQ(c.its, 1);
  EXPECT_EQ(c.its_socket, 1);
  EXPECT_EQ(c.sender_socket, 0);
  EXPECT_FALSE(c.its_local);  // the seed's 850 ns case: VM on socket 0, ITS on socket 1
  EXPECT_TRUE(drv.choose_sgir_its(5, Pre).its_local);
}

TEST(GicLinuxFind41, CommonLpiAffWholeSystem_EveryCpuInheritsSameIts_SeedF1a3fac4095c) {
  SocketTopology t{2, 4};
  t.scope = VpeTableScope::System;  // CommonLPIAff = 0, SVPET = 1
  GicSystem sys(build_socket_topology(t));
  LinuxItsDriver drv(sys);
  EXPECT_EQ(drv.cpu_vpe_table(0).source, VpeTableSource::InheritedFromIts);
  for (int cpu = 0; cpu < 8; ++cpu) {
    EXPECT_EQ(drv.cpu_vpe_table(cpu).local_4_1_its, 1) << cpu;  // first match in its_nodes = last reported
    EXPECT_EQ(drv.find_4_1_its(cpu, Post), drv.find_4_1_its(cpu, Pre));
    if (cpu > 0) {
      EXPECT_EQ(drv.cpu_vpe_table(cpu).from_cpu, 0);
    }
  }
  EXPECT_EQ(sys.its_vpe_table(0), sys.its_vpe_table(1));  // find_sibling_its shared the table
  EXPECT_EQ(drv.vpe_table_mask(3).size(), 8U);
}

TEST(GicLinuxFind41, FourSockets_Aff3_EachCpuLocalIts) {
  SocketTopology t{4, 3};
  t.level = SocketAffinityLevel::Aff3;  // CommonLPIAff = 1
  GicSystem sys(build_socket_topology(t));
  LinuxItsDriver drv(sys);
  for (int cpu = 0; cpu < 12; ++cpu) {
    EXPECT_EQ(drv.find_4_1_its(cpu, Post), cpu / 3) << cpu;
    EXPECT_EQ(drv.find_4_1_its(cpu, Pre), 3) << cpu;
  }
}

TEST(GicLinuxFind41, ReverseBootOrder_SocketStillDecides) {
  GicSystem sys(build_socket_topology(SocketTopology{2, 2}));
  LinuxItsDriver::Options o;
  o.boot_order = {3, 2, 1, 0};
  LinuxItsDriver drv(sys, o);
  EXPECT_EQ(drv.cpu_vpe_table(3).source, VpeTableSource::InheritedFromIts);
  EXPECT_EQ(drv.cpu_vpe_table(2).from_cpu, 3);
  EXPECT_EQ(drv.find_4_1_its(0, Post), 0);
  EXPECT_EQ(drv.find_4_1_its(2, Post), 1);
  o.boot_order = {0, 0, 1, 2};
  GicSystem sys2(build_socket_topology(SocketTopology{2, 2}));
  EXPECT_THROW(LinuxItsDriver(sys2, o), InputError);
}

TEST(GicLinuxFind41, SvpetZero_PrivateTables_FallbackToFirstV41) {
  auto cfg = build_socket_topology(SocketTopology{2, 2});
  for (auto& its : cfg.its) its.typer.svpet = 0;
  GicSystem sys(cfg);
  LinuxItsDriver drv(sys);
  EXPECT_EQ(drv.cpu_vpe_table(0).source, VpeTableSource::Private);
  EXPECT_FALSE(drv.cpu_vpe_table(1).local_4_1_its.has_value());  // inherited NULL from CPU 0
  EXPECT_EQ(drv.find_4_1_its(0, Post), 1);
  EXPECT_FALSE(drv.choose_sgir_its(0, Post).from_local_pointer);
}

TEST(GicLinuxFind41, NoV41Its_NullAndNoRvpeid) {
  auto cfg = build_socket_topology(SocketTopology{2, 2});
  for (auto& its : cfg.its) its.typer.vmapp = false;
  GicSystem sys(cfg);
  LinuxItsDriver drv(sys);
  EXPECT_FALSE(drv.has_v4_1());
  EXPECT_FALSE(drv.has_rvpeid());  // "Don't bother with inconsistent systems"
  EXPECT_EQ(drv.cpu_vpe_table(0).source, VpeTableSource::NotAllocated);
  EXPECT_FALSE(drv.find_4_1_its(0, Post).has_value());
  EXPECT_EQ(drv.send_vsgi(Post, 0, 1, 1).its, -1);
}

TEST(GicLinuxVmovp, AllVmovp_SingleVmovpToListFirst_NotLocalised_ItsSendVmovp) {
  GicSystem sys(build_socket_topology(SocketTopology{2, 2}));
  LinuxItsDriver drv(sys);
  EXPECT_EQ(drv.vmovp_targets(), (std::vector<int>{1}));
  drv.map_vpe(7, 0);
  const auto issued = drv.move_vpe(7, 1);  // both CPUs on socket 0, VMOVP still goes to ITS 1
  ASSERT_EQ(issued.size(), 2U);
  EXPECT_EQ(issued[0].its, 1);
  const auto& m = std::get<VmovpCmd>(issued[0].command);
  EXPECT_EQ(m.rdbase, 1U);
  EXPECT_TRUE(m.db);
  EXPECT_EQ(m.default_db, 8192U + 7);
  EXPECT_TRUE(sys.command_errors().empty());
  // The hardware propagated the move to socket 0's separate table too.
  EXPECT_EQ(sys.vpe_entry(0, 7)->rd_cpu, 1);
}

TEST(GicLinuxVmovp, NoSingleVmovp_EveryV4ItsInListOrder_WithSequenceNumbers) {
  SocketTopology t{3, 1};
  t.single_vmovp = false;
  GicSystem sys(build_socket_topology(t));
  LinuxItsDriver drv(sys);
  EXPECT_EQ(drv.vmovp_targets(), (std::vector<int>{2, 1, 0}));
  drv.map_vpe(1, 0);
  auto a = drv.move_vpe(1, 2);
  auto b = drv.move_vpe(1, 1);
  ASSERT_EQ(a.size(), 6U);
  EXPECT_EQ(std::get<VmovpCmd>(a[0].command).sequence_number, 0);
  EXPECT_EQ(std::get<VmovpCmd>(a[0].command).its_list, 0b111);
  EXPECT_EQ(std::get<VmovpCmd>(b[2].command).sequence_number, 1);
  for (int its = 0; its < 3; ++its) EXPECT_EQ(sys.vpe_entry(its, 1)->rd_cpu, 1);
  EXPECT_TRUE(sys.command_errors().empty());
}

TEST(GicLinuxMap, MapVpe_VmappOnEveryItsInListOrder_AllocOnlyFirst) {
  SocketTopology t{2, 2};
  t.pta = true;
  GicSystem sys(build_socket_topology(t));
  LinuxItsDriver drv(sys);
  const auto issued = drv.map_vpe(3, 2);
  ASSERT_EQ(issued.size(), 8U);  // (VMAPP, VSYNC, VINVALL, VSYNC) x 2
  EXPECT_EQ(issued[0].its, 1);
  EXPECT_EQ(issued[4].its, 0);
  const auto& first = std::get<VmappCmd>(issued[0].command);
  const auto& second = std::get<VmappCmd>(issued[4].command);
  EXPECT_TRUE(first.alloc);
  EXPECT_FALSE(second.alloc);
  EXPECT_EQ(first.rdbase, (0x1'0000'0000ULL + 2 * 0x40000) >> 16);  // PTA = 1: RD address >> 16
  EXPECT_EQ(sys.vpe_entry(0, 3)->rd_cpu, 2);
  EXPECT_EQ(sys.stats(1).by_opcode.at(ItsOpcode::Vmapp), 1U);
  const auto unmapped = drv.unmap_vpe(3);
  EXPECT_FALSE(std::get<VmappCmd>(unmapped[0].command).alloc);
  EXPECT_TRUE(std::get<VmappCmd>(unmapped[1].command).alloc);  // last unmap
  EXPECT_FALSE(sys.vpe_entry(0, 3).has_value());
  EXPECT_TRUE(sys.command_errors().empty());
}

struct TwoSocketVm {
  GicSystem sys{build_socket_topology(SocketTopology{2, 4})};
  LinuxItsDriver drv{sys};
  // vPE 5 on pCPU 6 (socket 1), vSGI 1 enabled, group 1, resident.
  TwoSocketVm() {
    drv.map_vpe(5, 6);
    drv.configure_vsgi(Post, 6, 5, 1, VsgiConfig{true, 0xA0, true});
    drv.schedule_vpe(6, 5);
  }
};

TEST(GicLinuxVsgi, ResidentOnOtherSocketRd_ReachedThroughLocalIts) {
  TwoSocketVm vm;
  const VsgiRoute r = vm.drv.send_vsgi(Post, 1, 5, 1);  // sender pCPU 1 on socket 0
  EXPECT_EQ(r.its, 0);
  EXPECT_EQ(r.its_socket, 0);
  EXPECT_EQ(r.sender_socket, 0);
  EXPECT_TRUE(r.its_local);
  EXPECT_TRUE(r.from_local_pointer);
  EXPECT_EQ(r.target_cpu(), 6);
  EXPECT_EQ(r.target_socket(), 1);
  EXPECT_FALSE(r.its_to_rd_local());  // the ITS -> RD hop crosses sockets
  EXPECT_TRUE(r.resident());
  EXPECT_EQ(r.write.outcome, SgirOutcome::DeliveredResident);
  EXPECT_TRUE(vm.sys.command_errors().empty());
}

TEST(GicLinuxVsgi, PreSeed_SenderOnSocket0_WritesRemoteIts) {
  TwoSocketVm vm;
  const VsgiRoute r = vm.drv.send_vsgi(Pre, 2, 5, 1);
  EXPECT_EQ(r.its, 1);
  EXPECT_FALSE(r.its_local);
  EXPECT_TRUE(r.its_to_rd_local());
  EXPECT_EQ(r.target_cpu(), 6);
  EXPECT_TRUE(r.resident());
}

TEST(GicLinuxVsgi, AfterMoveAndDeschedule_PendingWithDoorbell) {
  TwoSocketVm vm;
  vm.drv.deschedule_vpe(6, true);
  vm.drv.move_vpe(5, 3);
  const VsgiRoute r = vm.drv.send_vsgi(Post, 7, 5, 1);
  EXPECT_EQ(r.its, 1);
  EXPECT_EQ(r.target_cpu(), 3);
  EXPECT_EQ(r.target_socket(), 0);
  EXPECT_EQ(r.write.outcome, SgirOutcome::PendingNotResident);
  EXPECT_TRUE(r.write.doorbell);
  EXPECT_EQ(vm.sys.read_vsgi_pending(3, 5), 1u << 1);
}

TEST(GicLinuxVsgi, UnmappedVpe_SgirRejected_DriverRefusesVsgiCommand) {
  TwoSocketVm vm;
  EXPECT_EQ(vm.drv.send_vsgi(Post, 0, 99, 1).write.outcome, SgirOutcome::RejectedUnmappedVpe);
  const ItsCall c = vm.drv.configure_vsgi(Post, 0, 99, 1, VsgiConfig{true, 0, true});
  ASSERT_TRUE(c.refused.has_value());  // no VSGI + VSYNC naming a vPE mapped on no ITS
  EXPECT_TRUE(c.commands.empty());
  EXPECT_TRUE(vm.sys.command_errors().empty());
}

TEST(GicLinuxVsgi, FourSockets_VpeOnSocket3_RoutesFromEverySocket) {
  GicSystem sys(build_socket_topology(SocketTopology{4, 2}));
  LinuxItsDriver drv(sys);
  drv.map_vpe(9, 7);  // pCPU 7 = socket 3
  drv.configure_vsgi(Post, 7, 9, 0, VsgiConfig{true, 0x00, true});
  drv.schedule_vpe(7, 9);
  for (int sender = 0; sender < 8; ++sender) {
    const VsgiRoute post = drv.send_vsgi(Post, sender, 9, 0);
    EXPECT_EQ(post.its, sender / 2) << sender;
    EXPECT_TRUE(post.its_local);
    EXPECT_EQ(post.target_cpu(), 7);
    EXPECT_EQ(post.target_socket(), 3);
    EXPECT_EQ(post.its_to_rd_local(), sender / 2 == 3);
    EXPECT_TRUE(post.resident());
    const VsgiRoute pre = drv.send_vsgi(Pre, sender, 9, 0);
    EXPECT_EQ(pre.its, 3) << sender;
    EXPECT_EQ(pre.its_local, sender / 2 == 3);
    EXPECT_TRUE(pre.its_to_rd_local());
    EXPECT_TRUE(pre.resident());
  }
  EXPECT_TRUE(sys.command_errors().empty());
}

TEST(GicLinuxFind41, MixedV40AndV41_FallbackSkipsV40_ItsNodesListAdd) {
  auto cfg = build_socket_topology(SocketTopology{2, 2});
  cfg.its[1].typer.vmapp = false;  // the last reported ITS is v4.0 only
  cfg.its[1].typer.vsgi = false;
  GicSystem sys(cfg);
  LinuxItsDriver drv(sys);
  EXPECT_EQ(drv.its_nodes(), (std::vector<int>{1, 0}));
  EXPECT_EQ(drv.find_4_1_its(3, Pre), 0);
  EXPECT_EQ(drv.find_4_1_its(3, Post), 0);  // socket 1's RDs match no v4.1 ITS: private table, fallback
  EXPECT_EQ(drv.cpu_vpe_table(2).source, VpeTableSource::Private);
  EXPECT_EQ(drv.vmovp_targets(), (std::vector<int>{1}));  // list_first_entry, even a v4.0 ITS
}

TEST(GicLinuxHostile, BadCpuOrItsIndex_InputError) {
  GicSystem sys(build_socket_topology(SocketTopology{1, 2}));
  LinuxItsDriver drv(sys);
  EXPECT_THROW(drv.find_4_1_its(2, Post), InputError);
  EXPECT_THROW(drv.send_vsgi(Post, -1, 1, 1), InputError);
  EXPECT_THROW(drv.send_vsgi(Post, 0, 1, 16), InputError);
  EXPECT_THROW(sys.write_sgir(1, 0), InputError);
  EXPECT_THROW(sys.queue(-1), InputError);
}

// --- vPE mapping rules: the CVE-2024-50192 fix (1442ee001198), 80e9963fb3b5, the VMAPP Alloc bit ---

TEST(GicLinuxMapRules, VmovpForUnmappedVpe_Refused_Cve2024_50192) {
  GicSystem sys(build_socket_topology(SocketTopology{2, 2}));
  LinuxItsDriver drv(sys);
  const ItsCall never = drv.move_vpe(4, 1);
  ASSERT_TRUE(never.refused.has_value());
  EXPECT_NE(never.refused->find("CVE-2024-50192"), std::string::npos) << *never.refused;
  EXPECT_TRUE(never.commands.empty());
  drv.map_vpe(4, 0);
  drv.unmap_vpe(4);  // a dying vPE: vmapp_count back to 0
  EXPECT_EQ(drv.vmapp_count(4), 0);
  EXPECT_TRUE(drv.move_vpe(4, 1).refused.has_value());
  EXPECT_EQ(sys.stats(1).by_opcode.count(ItsOpcode::Vmovp), 0U);
  EXPECT_TRUE(sys.command_errors().empty());
}

TEST(GicLinuxMapRules, BeforeTheFix_VmovpAndVsyncGoOut_ItsReportsBothNamingTheVpe) {
  GicSystem sys(build_socket_topology(SocketTopology{2, 2}));
  LinuxItsDriver::Options o;
  o.behaviour.refuse_vmovp_unmapped = false;  // before 1442ee001198
  LinuxItsDriver drv(sys, o);
  drv.map_vpe(4, 0);
  drv.unmap_vpe(4);
  const ItsCall c = drv.move_vpe(4, 1);
  EXPECT_FALSE(c.refused.has_value());
  ASSERT_EQ(c.commands.size(), 2U);
  EXPECT_EQ(c.commands[0].its, 1);  // list_first_entry(its_nodes)
  ASSERT_EQ(sys.command_errors().size(), 2U);
  const CommandError& e = sys.command_errors()[0];
  EXPECT_EQ(e.kind, CommandErrorKind::UnmappedVpe);
  EXPECT_EQ(e.opcode, 0x22);
  EXPECT_EQ(e.its, 1);
  EXPECT_EQ(e.vpeid, 4);
  EXPECT_EQ(e.message, "ITS 1: VMOVP at 0x00a0: vPE 0x4 is not mapped on this ITS");
  EXPECT_EQ(sys.command_errors()[1].opcode, 0x25);  // the VSYNC after it
  EXPECT_EQ(sys.command_errors()[1].message, "ITS 1: VSYNC at 0x00c0: vPE 0x4 is not mapped on this ITS (the GIC may answer a VSYNC naming a non-existent vPE with an SError, which this model does not raise)");
  EXPECT_TRUE(c.all_completed());  // the errors do not stall the queue (CommandErrorPolicy::Skip)
}

TEST(GicLinuxMapRules, UnmapOnV41_NoVsync_80e9963fb3b5_BeforeIt_VsyncErrors) {
  GicSystem sys(build_socket_topology(SocketTopology{1, 2}));
  LinuxItsDriver drv(sys);
  drv.map_vpe(2, 1);
  const ItsCall u = drv.unmap_vpe(2);
  ASSERT_EQ(u.commands.size(), 1U);
  EXPECT_TRUE(std::holds_alternative<VmappCmd>(u.commands[0].command));
  EXPECT_TRUE(sys.command_errors().empty());

  GicSystem old_sys(build_socket_topology(SocketTopology{1, 2}));
  LinuxItsDriver::Options o;
  o.behaviour.vsync_after_unmap = true;  // before 80e9963fb3b5
  LinuxItsDriver old_drv(old_sys, o);
  old_drv.map_vpe(2, 1);
  const ItsCall v = old_drv.unmap_vpe(2);
  ASSERT_EQ(v.commands.size(), 2U);
  ASSERT_EQ(old_sys.command_errors().size(), 1U);
  EXPECT_EQ(old_sys.command_errors()[0].opcode, 0x25);
  EXPECT_EQ(old_sys.command_errors()[0].vpeid, 2);
}

TEST(GicLinuxMapRules, AllocBitFollowsVmappCount_FirstMapAndLastUnmapOnly) {
  GicSystem sys(build_socket_topology(SocketTopology{3, 1}));
  LinuxItsDriver drv(sys);
  const ItsCall m = drv.map_vpe(6, 0);
  ASSERT_EQ(m.commands.size(), 12U);
  EXPECT_TRUE(std::get<VmappCmd>(m.commands[0].command).alloc);   // ITS 2: count 0 -> 1
  EXPECT_FALSE(std::get<VmappCmd>(m.commands[4].command).alloc);  // ITS 1: 1 -> 2
  EXPECT_FALSE(std::get<VmappCmd>(m.commands[8].command).alloc);  // ITS 0: 2 -> 3
  EXPECT_EQ(drv.vmapp_count(6), 3);
  EXPECT_EQ(drv.mapped_on(6), (std::vector<int>{0, 1, 2}));
  const ItsCall u = drv.unmap_vpe(6);
  ASSERT_EQ(u.commands.size(), 3U);
  EXPECT_FALSE(std::get<VmappCmd>(u.commands[0].command).alloc);  // 3 -> 2
  EXPECT_FALSE(std::get<VmappCmd>(u.commands[1].command).alloc);  // 2 -> 1
  EXPECT_TRUE(std::get<VmappCmd>(u.commands[2].command).alloc);   // 1 -> 0
  EXPECT_EQ(CommandBytes(encode_its_command(u.commands[2].command))[1], 0x01);  // DW0[8] on the wire
  EXPECT_TRUE(drv.unmap_vpe(6).refused.has_value());
}

TEST(GicLinuxMapRules, MappedOnOneChosenIts_AllocSet_VsgiThroughTheOtherItsIsAnError) {
  auto cfg = build_socket_topology(SocketTopology{2, 2});
  for (auto& its : cfg.its) its.typer.svpet = 0;  // no sharing between ITSs
  GicSystem sys(cfg);
  LinuxItsDriver drv(sys);
  const ItsCall m = drv.map_vpe_on(3, 2, 1);
  ASSERT_EQ(m.commands.size(), 4U);
  EXPECT_TRUE(std::get<VmappCmd>(m.commands[0].command).alloc);
  EXPECT_EQ(drv.mapped_on(3), (std::vector<int>{1}));
  EXPECT_TRUE(sys.vpe_entry(1, 3).has_value());
  EXPECT_FALSE(sys.vpe_entry(0, 3).has_value());
  EXPECT_TRUE(drv.map_vpe_on(3, 2, 1).refused.has_value());  // once per ITS
  // The VSGI goes where find_4_1_its says (ITS 1, the first in its_nodes: private tables, no local
  // pointer), so it works; pinned to ITS 0 it would not.
  const ItsCall ok = drv.configure_vsgi(Post, 0, 3, 5, VsgiConfig{true, 0xA0, true});
  EXPECT_EQ(ok.commands.at(0).its, 1);
  EXPECT_TRUE(sys.command_errors().empty());
  EXPECT_EQ(sys.write_sgir(0, encode_sgir({5, 3})).outcome, SgirOutcome::RejectedUnmappedVpe);
  EXPECT_EQ(sys.write_sgir(1, encode_sgir({5, 3})).outcome, SgirOutcome::PendingNotResident);
  const ItsCall u = drv.unmap_vpe(3);
  ASSERT_EQ(u.commands.size(), 1U);  // only where it is mapped
  EXPECT_EQ(u.commands[0].its, 1);
  EXPECT_TRUE(std::get<VmappCmd>(u.commands[0].command).alloc);
}

TEST(GicLinuxMapRules, MoveToSameCpu_NoVmovp) {
  GicSystem sys(build_socket_topology(SocketTopology{1, 2}));
  LinuxItsDriver drv(sys);
  drv.map_vpe(1, 1);
  const ItsCall c = drv.move_vpe(1, 1);
  EXPECT_FALSE(c.refused.has_value());
  EXPECT_TRUE(c.commands.empty());
  EXPECT_EQ(c.notes.size(), 1U);
}

}  // namespace
}  // namespace ipilab::gic
