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

// kvm_apic_match_dest() for one vCPU, written out from the rules (lapic.c): the model finds
// physical and logical destinations through its APIC-ID index; it must reach exactly these vCPUs.
std::vector<std::uint32_t> matched_by_rule(const X86Vm& vm, std::uint32_t sender, std::uint64_t icr) {
  const Icr f = decode_x2apic_icr(icr);
  std::vector<std::uint32_t> out;
  for (std::uint32_t v = 0; v < vm.nr_vcpus(); ++v) {
    if (!vm.vcpu(v).apic_present) continue;
    bool m = false;
    switch (f.shorthand) {
      case Shorthand::Self: m = v == sender; break;
      case Shorthand::AllIncludingSelf: m = true; break;
      case Shorthand::AllExcludingSelf: m = v != sender; break;
      case Shorthand::None:
        if (f.destination == 0xFFFFFFFFu) m = true;
        else if (f.dest_mode == DestMode::Physical) m = f.destination == vm.apic_id(v);
        else {
          const std::uint32_t ldr = x2apic_logical_id(vm.apic_id(v));
          m = (ldr >> 16) == (f.destination >> 16) && (ldr & f.destination & 0xFFFFu) != 0;
        }
        break;
    }
    if (m) out.push_back(v);
  }
  return out;
}

TEST(KvmIcrWrite, IndexedDestinationLookupReachesTheVcpusEveryMatchRuleDoes) {
  std::vector<X86Vcpu> sparse(40);
  for (std::uint32_t i = 0; i < sparse.size(); ++i) {
    sparse[i].apic_id = (i % 4) * 0x100000u + i * 3;  // IDs beyond 2^20 alias logical cluster IDs
    sparse[i].apic_present = i % 7 != 3;
  }
  std::vector<X86Vcpu> reversed(48);  // IDs not in vCPU order
  for (std::uint32_t i = 0; i < reversed.size(); ++i) reversed[i].apic_id = 47 - i;
  reversed[5].apic_present = false;
  const X86Vm vms[] = {X86Vm::identity(64), X86Vm::qemu_topology(2, 3, 2), X86Vm(sparse), X86Vm(reversed)};
  std::uint64_t state = 12345;
  auto next = [&state] { return state = state * 6364136223846793005ull + 1442695040888963407ull; };
  int checked = 0;
  for (const X86Vm& vm : vms) {
    for (int i = 0; i < 3000; ++i) {
      const auto sender = static_cast<std::uint32_t>(next() % vm.nr_vcpus());
      const std::uint64_t r = next();
      std::uint32_t dest = static_cast<std::uint32_t>(r >> 32);
      switch (r % 4) {  // mostly destinations that exist
        case 0: dest = vm.apic_id(static_cast<std::uint32_t>((r >> 8) % vm.nr_vcpus())); break;
        case 1: dest = (x2apic_cluster_id(vm.apic_id(static_cast<std::uint32_t>((r >> 8) % vm.nr_vcpus()))) << 16) |
                       static_cast<std::uint32_t>((r >> 40) & 0xFFFFu);
                break;
        default: break;
      }
      const std::uint64_t mode = (r >> 2) % 8 == 0 ? (std::uint64_t{(r >> 5) % 4} << 18) : 0;  // some shorthands
      const std::uint64_t logical = (r % 4 == 1 || (r >> 7) % 5 == 0) ? 0x800u : 0;
      const std::uint64_t icr = (std::uint64_t{dest} << 32) | mode | logical | 0xFBu;
      const IcrWriteOutcome o = kvm_x2apic_icr_write(vm, sender, icr);
      ASSERT_FALSE(o.inject_gp);
      EXPECT_EQ(vcpus_of(o), matched_by_rule(vm, sender, icr)) << std::hex << "icr " << icr << " sender " << sender;
      ++checked;
    }
  }
  EXPECT_EQ(checked, 12000);
}

TEST(KvmIcrWrite, ReusedOutcomeIsReplacedWhole) {
  // The fill-in form reuses the targets' storage but leaves nothing of the previous write behind.
  const X86Vm vm = X86Vm::identity(40);
  IcrWriteOutcome o;
  kvm_x2apic_icr_write(vm, 0, 0xFFFFFFFF000000FCull, o);  // broadcast: 40 targets
  ASSERT_EQ(o.targets.size(), 40u);
  for (std::uint64_t icr : {0x00010006000008FBull, 0x00000001000010FBull, 0x2000ull, 0x00010006000000FBull}) {
    kvm_x2apic_icr_write(vm, 3, icr, o);
    const IcrWriteOutcome fresh = kvm_x2apic_icr_write(vm, 3, icr);
    EXPECT_EQ(o.inject_gp, fresh.inject_gp) << std::hex << icr;
    EXPECT_EQ(o.fastpath, fresh.fastpath) << std::hex << icr;
    EXPECT_EQ(o.effective_icr, fresh.effective_icr) << std::hex << icr;
    EXPECT_EQ(o.targets, fresh.targets) << std::hex << icr;
    EXPECT_EQ(o.accepted, fresh.accepted) << std::hex << icr;
  }
  kvm_x2apic_self_ipi_write(vm, 5, 0xFB, o);
  EXPECT_EQ(vcpus_of(o), (std::vector<std::uint32_t>{5}));
  kvm_x2apic_self_ipi_write(vm, 5, 0x1FB, o);
  EXPECT_TRUE(o.inject_gp);
  EXPECT_TRUE(o.targets.empty());
}

TEST(X86Vm, ClusterMasksGroupEveryVcpuByTheClusterOfItsApicId) {
  // APIC IDs 0..3 (cluster 0), 16, 17 (cluster 1), 0x100000 (cluster 0x10000 & 0xFFFF = 0: aliases
  // with cluster 0, as LDR[31:16] does).
  const X86Vm vm = X86Vm::from_apic_ids({0, 1, 2, 3, 16, 17, 0x100000});
  const std::vector<std::uint32_t> c0{0, 1, 2, 3, 6}, c1{4, 5};
  for (std::uint32_t cpu = 0; cpu < vm.nr_vcpus(); ++cpu) {
    EXPECT_EQ(vm.cluster_mask(cpu).nbits(), vm.nr_vcpus());
    EXPECT_EQ(vm.cluster_mask(cpu).cpus(), cpu == 4 || cpu == 5 ? c1 : c0) << cpu;
  }
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
