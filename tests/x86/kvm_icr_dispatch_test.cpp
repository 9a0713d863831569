#include <gtest/gtest.h>

#include "x86/kvm_icr.h"
#include "x86/linux_kvm_guest.h"

namespace ipilab::x86 {
namespace {

std::vector<std::uint32_t> vcpus_of(const IcrWriteOutcome& r) {
  std::vector<std::uint32_t> v;
  for (const auto& t : r.targets) v.push_back(t.vcpu);
  return v;
}

// ---------------------------------------------------------------------------------------------
// Host: arch/x86/kvm/lapic.c kvm_x2apic_icr_write and the match rules

TEST(KvmIcrWrite, ReservedBitsInjectGpAndBusyIsCleared) {
  const X86Vm vm = X86Vm::identity(4);
  for (std::uint64_t bad : {0x2000ull, 0x10000ull, 0x20000ull, 0x100000ull, 0x80000000ull}) {
    const IcrWriteOutcome r = kvm_x2apic_icr_write(vm, 0, 0x00000001000000FBull | bad);
    EXPECT_TRUE(r.inject_gp) << std::hex << bad;
    EXPECT_TRUE(r.targets.empty());
  }
  const IcrWriteOutcome busy = kvm_x2apic_icr_write(vm, 0, 0x00000001000010FBull);
  EXPECT_FALSE(busy.inject_gp);
  EXPECT_EQ(busy.effective_icr, 0x00000001000000FBull);
  EXPECT_EQ(vcpus_of(busy), (std::vector<std::uint32_t>{1}));
  EXPECT_EQ(busy.accepted, 1);
}

TEST(KvmIcrWrite, FastpathOnlyForPhysicalFixedSingleTargetWithoutShorthand) {
  EXPECT_TRUE(kvm_x2apic_icr_fastpath_eligible(0x00000001000000FBull));
  EXPECT_FALSE(kvm_x2apic_icr_fastpath_eligible(0x00010003000008FBull));  // logical
  EXPECT_FALSE(kvm_x2apic_icr_fastpath_eligible(0x0000000100000400ull));  // NMI
  EXPECT_FALSE(kvm_x2apic_icr_fastpath_eligible(0x00000000000C00FCull));  // all-but-self
  EXPECT_FALSE(kvm_x2apic_icr_fastpath_eligible(0xFFFFFFFF000000FBull));  // broadcast ID
}

TEST(KvmIcrWrite, LogicalClusterDestinationReachesTheMaskedCpusOfThatClusterOnly) {
  const X86Vm vm = X86Vm::identity(40);
  // cluster 1, bits 1 and 2 -> APIC IDs 17, 18
  EXPECT_EQ(vcpus_of(kvm_x2apic_icr_write(vm, 0, 0x00010006000008FBull)),
            (std::vector<std::uint32_t>{17, 18}));
  // physical destination 0x10006 names no vCPU
  EXPECT_TRUE(kvm_x2apic_icr_write(vm, 0, 0x00010006000000FBull).targets.empty());
}

TEST(KvmIcrWrite, ShorthandsAndBroadcastIdMatchAsKvmApicMatchDest) {
  const X86Vm vm = X86Vm::identity(5);
  EXPECT_EQ(vcpus_of(kvm_x2apic_icr_write(vm, 2, 0xC00FCull)),
            (std::vector<std::uint32_t>{0, 1, 3, 4}));
  EXPECT_EQ(vcpus_of(kvm_x2apic_icr_write(vm, 2, 0x800FCull)),
            (std::vector<std::uint32_t>{0, 1, 2, 3, 4}));
  EXPECT_EQ(vcpus_of(kvm_x2apic_icr_write(vm, 2, 0x400FCull)), (std::vector<std::uint32_t>{2}));
  EXPECT_EQ(kvm_x2apic_icr_write(vm, 2, 0xFFFFFFFF000000FCull).targets.size(), 5u);
}

TEST(KvmIcrWrite, LowestPriorityPicksOneTargetByVectorHashing) {
  const X86Vm vm = X86Vm::identity(16);
  // cluster 0, bits 0..3 -> 4 candidates; vector 0x31 % 4 == 1 -> APIC ID 1
  const IcrWriteOutcome r = kvm_x2apic_icr_write(vm, 0, 0x0000000F00000931ull);
  EXPECT_EQ(vcpus_of(r), (std::vector<std::uint32_t>{1}));
}

TEST(KvmSelfIpi, VectorOnlyElseGp) {
  const X86Vm vm = X86Vm::identity(3);
  const IcrWriteOutcome r = kvm_x2apic_self_ipi_write(vm, 1, 0xF6);
  EXPECT_FALSE(r.inject_gp);
  EXPECT_EQ(vcpus_of(r), (std::vector<std::uint32_t>{1}));
  EXPECT_TRUE(kvm_x2apic_self_ipi_write(vm, 1, 0x1F6).inject_gp);
  EXPECT_TRUE(kvm_x2apic_self_ipi_write(vm, 1, 0x1000000F6ull).inject_gp);
}

TEST(KvmIcrWrite, PhysicalPolicyWritesDeliverExactlyTheMask) {
  const X86Vm vm = X86Vm::qemu_topology(2, 20, 2);
  const Cpumask mask = Cpumask::of(80, {3, 39, 40, 79});
  for (X2apicMode mode : {X2apicMode::Physical, X2apicMode::Cluster}) {
    const GuestSend s = x2apic_send_ipi_mask(vm, mode, 3, mask, 0xFB, true);
    std::vector<std::uint32_t> got;
    for (const auto& w : s.msr_writes) {
      for (auto v : vcpus_of(kvm_x2apic_icr_write(vm, 3, w.value))) got.push_back(v);
    }
    EXPECT_EQ(got, (std::vector<std::uint32_t>{39, 40, 79}));
  }
}

// ---------------------------------------------------------------------------------------------
// Guest entry points: arch/x86/kernel/smp.c native_send_call_func_ipi, apic/ipi.c

TEST(LinuxKvmGuest, BroadcastBefore54UsesMaskWalksOrPvWindows) {
  const X86Vm vm = X86Vm::identity(80);
  Cpumask others = Cpumask::first_n(80, 80);
  others.clear(0);
  LinuxKvmGuestConfig cfg;
  cfg.before_5_4 = true;
  cfg.x2apic_mode = X2apicMode::Physical;
  EXPECT_EQ(linux_send_call_func_ipi(vm, cfg, 0, others).exits(), 79u);
  cfg.x2apic_mode = X2apicMode::Cluster;
  EXPECT_EQ(linux_send_call_func_ipi(vm, cfg, 0, others).exits(), 5u);
  cfg.pv_send_ipi = true;
  const GuestSend pv = linux_send_call_func_ipi(vm, cfg, 0, others);
  EXPECT_EQ(pv.exits(), 1u);
  EXPECT_EQ(pv.hypercalls.at(0), (PvIpiHypercall{~0ull, 0x7FFFull, 1, 0xFC}));
}

TEST(LinuxKvmGuest, BroadcastSince54IsOneShorthandIcrWriteEvenWithPv) {
  const X86Vm vm = X86Vm::identity(80);
  Cpumask others = Cpumask::first_n(80, 80);
  others.clear(0);
  LinuxKvmGuestConfig cfg;
  cfg.pv_send_ipi = true;
  const GuestSend s = linux_send_call_func_ipi(vm, cfg, 0, others);
  EXPECT_TRUE(s.hypercalls.empty());
  EXPECT_EQ(s.msr_writes, (std::vector<MsrWrite>{{0x830, 0xC00FCull}}));
  // Including self: the all-including shorthand.
  EXPECT_EQ(linux_send_call_func_ipi(vm, cfg, 0, Cpumask::first_n(80, 80)).msr_writes.at(0).value,
            0x800FCull);
  // Shorthands off (a CPU never booted, or no_ipi_broadcast=1): PV window again.
  cfg.ipi_shorthand = false;
  EXPECT_EQ(linux_send_call_func_ipi(vm, cfg, 0, others).hypercalls.size(), 1u);
}

TEST(LinuxKvmGuest, PartialMaskUsesSendIpiMaskAndUnicastStaysNative) {
  const X86Vm vm = X86Vm::identity(8);
  LinuxKvmGuestConfig cfg;
  cfg.pv_send_ipi = true;
  const GuestSend partial = linux_send_call_func_ipi(vm, cfg, 0, Cpumask::of(8, {2, 5}));
  EXPECT_EQ(partial.hypercalls, (std::vector<PvIpiHypercall>{{0x9, 0, 2, 0xFC}}));
  const GuestSend one = linux_send_ipi(vm, cfg, 5, 0xFB);
  EXPECT_TRUE(one.hypercalls.empty());
  EXPECT_EQ(one.msr_writes, (std::vector<MsrWrite>{{0x830, 0x00000005000000FBull}}));
  EXPECT_TRUE(linux_send_ipi_allbutself(X86Vm::identity(1), cfg, 0, 0xFC).msr_writes.empty());
}

}  // namespace
}  // namespace ipilab::x86
