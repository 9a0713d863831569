#include "x86/guest_x2apic.h"

#include <gtest/gtest.h>

#include <set>
#include <stdexcept>

#include "common/error.h"

namespace ipilab::x86 {
namespace {

constexpr std::uint8_t kCallFunctionVector = 0xFC;        // Linux CALL_FUNCTION_VECTOR
constexpr std::uint8_t kCallFunctionSingleVector = 0xFB;  // Linux CALL_FUNCTION_SINGLE_VECTOR

std::vector<std::uint64_t> values(const GuestSend& s) {
  std::vector<std::uint64_t> v;
  for (const auto& w : s.msr_writes) {
    EXPECT_EQ(w.msr, kMsrX2apicIcr);
    v.push_back(w.value);
  }
  return v;
}

TEST(X86Vm, RejectsDuplicateAndBroadcastApicIdsNamingTheVcpu) {
  try {
    X86Vm::from_apic_ids({0, 1, 1});
    FAIL() << "no throw";
  } catch (const InputError& e) {
    EXPECT_EQ(e.place(), "vm.vcpu[2].apic_id");
  }
  EXPECT_THROW(X86Vm::from_apic_ids({0, 0xFFFFFFFFu}), InputError);
  EXPECT_THROW(X86Vm::identity(0), InputError);
}

TEST(X86Vm, KvmMaxApicIdIsAtLeast255AsKvmRecalculateApicMap) {
  EXPECT_EQ(X86Vm::identity(4).kvm_max_apic_id(), 255u);
  EXPECT_EQ(X86Vm::from_apic_ids({0, 300}).kvm_max_apic_id(), 300u);
  EXPECT_EQ(X86Vm::from_apic_ids({0, 300}).vcpu_of_apic_id(300), 1u);
  EXPECT_FALSE(X86Vm::from_apic_ids({0, 300}).vcpu_of_apic_id(1).has_value());
  // An APIC that is not present is not in phys_map and does not raise max_apic_id.
  X86Vm vm({X86Vcpu{0, true, true}, X86Vcpu{400, false, true}});
  EXPECT_EQ(vm.kvm_max_apic_id(), 255u);
  EXPECT_FALSE(vm.vcpu_of_apic_id(400).has_value());
}

TEST(X86Vm, QemuTopologyLeavesGapsAtPowerOfTwoBoundaries) {
  // x86_apicid_from_topo_ids: 20 cores need 5 bits, 2 threads 1 bit -> socket 1 starts at 64.
  const X86Vm vm = X86Vm::qemu_topology(2, 20, 2);
  ASSERT_EQ(vm.nr_vcpus(), 80u);
  EXPECT_EQ(vm.apic_id(0), 0u);
  EXPECT_EQ(vm.apic_id(1), 1u);
  EXPECT_EQ(vm.apic_id(39), 39u);
  EXPECT_EQ(vm.apic_id(40), 64u);
  EXPECT_EQ(vm.apic_id(79), 103u);
}

TEST(Cpumask, FindNextCountsTheWordsFindNextBitReads) {
  const Cpumask m = Cpumask::of(80, {0, 70});
  std::uint64_t words = 0;
  EXPECT_EQ(m.find_next(0, &words), 0u);   // word 0
  EXPECT_EQ(m.find_next(1, &words), 70u);  // word 0, word 1
  EXPECT_EQ(m.find_next(71, &words), 80u); // word 1, end
  EXPECT_EQ(words, 4u);
  EXPECT_EQ(m.find_next(80, &words), 80u); // start >= nbits reads nothing
  EXPECT_EQ(words, 4u);
  EXPECT_THROW(Cpumask(80).set(80), std::out_of_range);
}

TEST(X2apicPhysical, OneIcrWritePerTargetSkippingSelfForAllButSelf) {
  const X86Vm vm = X86Vm::from_apic_ids({0, 2, 4, 6});
  const Cpumask mask = Cpumask::first_n(4, 4);
  const GuestSend s =
      x2apic_send_ipi_mask(vm, X2apicMode::Physical, 1, mask, kCallFunctionVector, true);
  EXPECT_EQ(values(s), (std::vector<std::uint64_t>{0x00000000000000FCull, 0x00000004000000FCull,
                                                   0x00000006000000FCull}));
  EXPECT_EQ(s.work.icr_writes, 3u);
  EXPECT_EQ(s.work.cpus_visited, 4u);
  EXPECT_EQ(s.work.cpumask_words_walked, 4u);  // 4 hits in one word; start 4 >= nbits reads none
  EXPECT_EQ(s.exits(), 3u);
  const GuestSend all =
      x2apic_send_ipi_mask(vm, X2apicMode::Physical, 1, mask, kCallFunctionVector, false);
  EXPECT_EQ(all.work.icr_writes, 4u);
  EXPECT_EQ(values(all)[1], 0x00000002000000FCull);
}

TEST(X2apicPhysical, NmiIsSentWithDeliveryModeNmiAndVectorZero) {
  const X86Vm vm = X86Vm::identity(2);
  const GuestSend s = x2apic_send_ipi_mask(vm, X2apicMode::Physical, 0, Cpumask::of(2, {1}),
                                           kNmiVector, false);
  EXPECT_EQ(values(s), (std::vector<std::uint64_t>{0x0000000100000400ull}));
}

TEST(X2apicCluster, TwentyCpusFromCpu0GoOutAsOneWritePerCluster) {
  // Identity APIC IDs: CPUs 0..15 are cluster 0, 16..19 cluster 1.
  const X86Vm vm = X86Vm::identity(20);
  const Cpumask all = Cpumask::first_n(20, 20);
  const GuestSend inc =
      x2apic_send_ipi_mask(vm, X2apicMode::Cluster, 0, all, kCallFunctionVector, false);
  EXPECT_EQ(values(inc), (std::vector<std::uint64_t>{0x0000FFFF000008FCull, 0x0001000F000008FCull}));
  const GuestSend but =
      x2apic_send_ipi_mask(vm, X2apicMode::Cluster, 0, all, kCallFunctionVector, true);
  EXPECT_EQ(values(but), (std::vector<std::uint64_t>{0x0000FFFE000008FCull, 0x0001000F000008FCull}));
  EXPECT_EQ(but.work.icr_writes, 2u);
  EXPECT_EQ(but.work.cpus_visited, 2u);           // one outer iteration per cluster
  EXPECT_EQ(but.work.cpumask_words_written, 3u);  // copy + one andnot per cluster (1 word each)
}

TEST(X2apicCluster, QemuTwoSocketTopologyGroupsBySocketAlignedClusters) {
  // 2 sockets x 5 cores x 2 threads: IDs 0..9 and 16..25 -> clusters 0 and 1, 10 CPUs each.
  const X86Vm vm = X86Vm::qemu_topology(2, 5, 2);
  const GuestSend s = x2apic_send_ipi_mask(vm, X2apicMode::Cluster, 0, Cpumask::first_n(20, 20),
                                           kCallFunctionVector, false);
  EXPECT_EQ(values(s), (std::vector<std::uint64_t>{0x000003FF000008FCull, 0x000103FF000008FCull}));
}

TEST(X2apicCluster, ScatteredMaskCombinesOnlyTheMaskedCpusOfEachCluster) {
  const X86Vm vm = X86Vm::identity(40);
  const Cpumask mask = Cpumask::of(40, {1, 3, 17, 18, 33, 39});
  const GuestSend s =
      x2apic_send_ipi_mask(vm, X2apicMode::Cluster, 1, mask, kCallFunctionSingleVector, true);
  EXPECT_EQ(values(s), (std::vector<std::uint64_t>{0x00000008000008FBull, 0x00010006000008FBull,
                                                   0x00020082000008FBull}));
}

TEST(X2apicCluster, DestinationsCoverExactlyTheMaskOnRandomVms) {
  std::uint64_t seed = 12345;
  auto rnd = [&seed]() {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<std::uint32_t>(seed >> 33);
  };
  for (int round = 0; round < 200; ++round) {
    const std::uint32_t n = 1 + rnd() % 150;
    std::set<std::uint32_t> used;
    std::vector<std::uint32_t> ids;
    while (ids.size() < n) {
      const std::uint32_t id = rnd() % 600;
      if (used.insert(id).second) ids.push_back(id);
    }
    const X86Vm vm = X86Vm::from_apic_ids(ids);
    Cpumask mask(n);
    for (std::uint32_t c = 0; c < n; ++c) {
      if (rnd() % 3 == 0) mask.set(c);
    }
    const std::uint32_t self = rnd() % n;
    const GuestSend s = x2apic_send_ipi_mask(vm, X2apicMode::Cluster, self, mask, 0xFB, true);
    std::set<std::uint32_t> expect, got, clusters;
    for (auto c : mask.cpus()) {
      if (c != self) expect.insert(ids[c]);
    }
    for (const auto& w : s.msr_writes) {
      const Icr f = decode_x2apic_icr(w.value);
      ASSERT_EQ(f.dest_mode, DestMode::Logical);
      const std::uint32_t cluster = f.destination >> 16;
      EXPECT_TRUE(clusters.insert(cluster).second) << "cluster written twice";
      for (std::uint32_t b = 0; b < 16; ++b) {
        if (f.destination & (1u << b)) got.insert((cluster << 4) | b);
      }
    }
    ASSERT_EQ(got, expect) << "round " << round;
  }
}

TEST(X2apicSingle, PhysicalUsesApicIdClusterUsesLogicalId) {
  const X86Vm vm = X86Vm::from_apic_ids({0, 33});
  EXPECT_EQ(x2apic_send_ipi_one(vm, X2apicMode::Physical, 1, 0xFB).msr_writes.at(0).value,
            0x00000021000000FBull);
  EXPECT_EQ(x2apic_send_ipi_one(vm, X2apicMode::Cluster, 1, 0xFB).msr_writes.at(0).value,
            0x00020002000008FBull);
}

TEST(X2apicShorthand, OneWriteDestinationZeroAndSelfIpiUsesMsr83f) {
  EXPECT_EQ(x2apic_send_ipi_shorthand(0xFC, Shorthand::AllExcludingSelf).msr_writes.at(0),
            (MsrWrite{0x830, 0xC00FCull}));
  EXPECT_EQ(x2apic_send_ipi_shorthand(0xFC, Shorthand::AllIncludingSelf).msr_writes.at(0),
            (MsrWrite{0x830, 0x800FCull}));
  EXPECT_EQ(x2apic_send_ipi_self(0xF6).msr_writes.at(0), (MsrWrite{0x83F, 0xF6}));
  EXPECT_THROW(x2apic_send_ipi_shorthand(0xFC, Shorthand::None), std::invalid_argument);
}

TEST(X2apicPolicies, RejectMasksNamingCpusTheVmDoesNotHave) {
  const X86Vm vm = X86Vm::identity(4);
  EXPECT_THROW(x2apic_send_ipi_mask(vm, X2apicMode::Physical, 0, Cpumask::of(8, {5}), 0xFB, false),
               std::invalid_argument);
  EXPECT_THROW(x2apic_send_ipi_mask(vm, X2apicMode::Physical, 0, Cpumask(2), 0xFB, false),
               std::invalid_argument);
  EXPECT_THROW(x2apic_send_ipi_mask(vm, X2apicMode::Cluster, 4, Cpumask(4), 0xFB, false),
               std::invalid_argument);
}

}  // namespace
}  // namespace ipilab::x86
