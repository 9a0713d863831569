// KVM_HC_SEND_IPI / KVM_HC_SCHED_YIELD per KVM version (x86/kvm_pv_version.h): each upstream change
// shown by the input that tells it apart, on both sides of the change.
#include "x86/kvm_pv_version.h"

#include <gtest/gtest.h>

#include <random>

namespace ipilab::x86 {
namespace {

HypercallRegs send_ipi(std::uint64_t low, std::uint64_t high, std::uint64_t min, std::uint64_t icr) {
  return HypercallRegs{kKvmHcSendIpi, low, high, min, icr};
}

KvmCallOutcome run(const X86Vm& vm, KvmPvVersion v, const HypercallRegs& r, KvmCallHost host = {}) {
  host.version = v;
  return kvm_emulate_pv_hypercall(vm, host, KvmCallCaller{}, r);
}

// bdf7ffc89922's reproducer: RBX = RDX = 0xFFFFFFFF, RSI = 0. As an int, min = -1: phys_map[-1].
TEST(KvmPvVersion, Bdf7ffc89922ReproducerReadsPhysMapMinusOneBeforeAndNothingAfter) {
  const X86Vm vm = X86Vm::identity(4);
  const auto r = send_ipi(0xFFFFFFFF, 0, 0xFFFFFFFF, 0);
  const auto before = run(vm, KvmPvVersion::kV4_19_rc2, r);
  ASSERT_TRUE(before.fault.has_value());
  EXPECT_EQ(before.fault->kind, KvmHostFault::Kind::kPhysMapOutOfBounds);
  EXPECT_EQ(before.fault->index, -1);
  EXPECT_EQ(before.fault->map_entries, 256u);
  EXPECT_TRUE(before.targets.empty());
  for (auto v : {KvmPvVersion::kV4_19, KvmPvVersion::kV6_16, KvmPvVersion::kMainline}) {
    const auto after = run(vm, v, r);
    EXPECT_FALSE(after.fault.has_value());
    EXPECT_EQ(after.ret, 0);
    EXPECT_TRUE(after.targets.empty());
  }
}

TEST(KvmPvVersion, BeforeBdf7ffc89922AnAbsentApicIdDereferencesNullAfterDeliveringTheLowerBits) {
  const X86Vm vm = X86Vm::from_apic_ids({0, 1, 3});
  const auto r = send_ipi(0xF, 0, 0, 0xFB);  // APIC IDs 0..3; 2 is absent
  const auto before = run(vm, KvmPvVersion::kV4_19_rc2, r);
  ASSERT_TRUE(before.fault.has_value());
  EXPECT_EQ(before.fault->kind, KvmHostFault::Kind::kNullPhysMapEntry);
  EXPECT_EQ(before.fault->index, 2);
  EXPECT_EQ(before.delivered_vcpus(), (std::vector<std::uint32_t>{0, 1}));
  const auto after = run(vm, KvmPvVersion::kV4_19, r);
  EXPECT_FALSE(after.fault.has_value());
  EXPECT_EQ(after.ret, 3);
  EXPECT_EQ(after.delivered_vcpus(), (std::vector<std::uint32_t>{0, 1, 2}));
}

TEST(KvmPvVersion, NoApicMapIsANullDereferenceInV4_19AndEopnotsuppFromV4_20) {
  const X86Vm vm = X86Vm::identity(2);
  KvmCallHost host;
  host.apic_map_present = false;
  const auto r = send_ipi(1, 0, 0, 0xFB);
  const auto before = run(vm, KvmPvVersion::kV4_19, r, host);
  ASSERT_TRUE(before.fault.has_value());
  EXPECT_EQ(before.fault->kind, KvmHostFault::Kind::kNullApicMap);
  const auto after = run(vm, KvmPvVersion::kV5_1, r, host);
  EXPECT_FALSE(after.fault.has_value());
  EXPECT_EQ(after.ret, -95);
}

// The exclusive clamp of c87bd4dd43a6's first posting: min == max_apic_id becomes 0.
TEST(KvmPvVersion, NospecV1SendsTheHighestApicIdsWindowToApicZeroMainlineDoesNot) {
  const X86Vm vm = X86Vm::from_apic_ids({0, 1, 2, 300});
  ASSERT_EQ(vm.kvm_max_apic_id(), 300u);
  const auto r = send_ipi(1, 0, 300, 0xFB);
  const auto v1 = run(vm, KvmPvVersion::kNospecV1, r);
  EXPECT_EQ(v1.ret, 1);
  EXPECT_EQ(v1.delivered_vcpus(), (std::vector<std::uint32_t>{0}));
  ASSERT_EQ(v1.clamped.size(), 1u);
  EXPECT_EQ(v1.clamped[0].min, 300u);
  EXPECT_EQ(v1.clamped[0].effective_min, 0u);
  for (auto v : {KvmPvVersion::kV6_16, KvmPvVersion::kMainline}) {
    const auto ok = run(vm, v, r);
    EXPECT_EQ(ok.ret, 1);
    EXPECT_EQ(ok.delivered_vcpus(), (std::vector<std::uint32_t>{3}));
    EXPECT_TRUE(ok.clamped.empty());
  }
}

TEST(KvmPvVersion, NospecV1DirectedYieldToTheHighestApicIdLooksUpApicZero) {
  const X86Vm vm = X86Vm::from_apic_ids({0, 1, 2, 300});
  KvmCallHost host;
  host.vcpu_ready = {true, false, false, true};
  const HypercallRegs r{kKvmHcSchedYield, 300, 0, 0, 0};
  const auto v1 = run(vm, KvmPvVersion::kNospecV1, r, host);
  EXPECT_EQ(v1.ret, 0);
  EXPECT_EQ(v1.yield.looked_up_apic_id, 0u);
  EXPECT_EQ(v1.yield.target_vcpu, 0u);
  const auto ok = run(vm, KvmPvVersion::kMainline, r, host);
  EXPECT_EQ(ok.yield.target_vcpu, 3u);
  EXPECT_TRUE(ok.yield.yield_attempted);
  host.vcpu_ready = {true, false, false, false};
  EXPECT_FALSE(run(vm, KvmPvVersion::kMainline, r, host).yield.yield_attempted);
  // Before 715062970f37 the number does not exist.
  const auto old = run(vm, KvmPvVersion::kV5_1, r, host);
  EXPECT_EQ(old.ret, -1000);
  EXPECT_FALSE(old.sched_yield_ran);
}

// min beyond the map: architecturally nothing; under a mispredicted test, phys_map[min + i] before
// c87bd4dd43a6 and phys_map[0 + i] after.
TEST(KvmPvVersion, SpeculativeLoadsPastThePhysMapBeforeC87bd4dd43a6AndClampedAfter) {
  const X86Vm vm = X86Vm::identity(4);
  const auto r = send_ipi(0x3, 0, 0x1000, 0xFB);
  const auto before = run(vm, KvmPvVersion::kV6_16, r);
  EXPECT_EQ(before.ret, 0);
  ASSERT_EQ(before.speculation.size(), 1u);
  EXPECT_EQ(before.speculation[0].indices, (std::vector<std::uint32_t>{0x1000, 0x1001}));
  EXPECT_EQ(before.speculation[0].out_of_bounds, 2u);
  const auto after = run(vm, KvmPvVersion::kMainline, r);
  EXPECT_EQ(after.ret, 0);
  ASSERT_EQ(after.speculation.size(), 1u);
  EXPECT_EQ(after.speculation[0].effective_min, 0u);
  EXPECT_EQ(after.speculation[0].indices, (std::vector<std::uint32_t>{0, 1}));
  EXPECT_EQ(after.speculation[0].out_of_bounds, 0u);
}

TEST(KvmPvVersion, HighHalfThroughTheU32WrapFromV5_5SkippedBefore) {
  const X86Vm vm = X86Vm::identity(4);
  const auto r = send_ipi(0, 0x2, 0xFFFFFFC0, 0xFB);  // high half min = 0xFFFFFFC0 + 64 = 0
  const auto v54 = run(vm, KvmPvVersion::kV5_4, r);
  EXPECT_EQ(v54.ret, 0);
  EXPECT_TRUE(v54.high_half_skipped);
  const auto v55 = run(vm, KvmPvVersion::kV6_16, r);
  EXPECT_EQ(v55.ret, 1);
  EXPECT_EQ(v55.delivered_vcpus(), (std::vector<std::uint32_t>{1}));
  EXPECT_FALSE(v55.high_half_skipped);
}

TEST(KvmPvVersion, PvFeatureCpuidCheckedFromV5_10Only) {
  const X86Vm vm = X86Vm::identity(2);
  KvmCallCaller caller;
  caller.has_pv_send_ipi = false;
  KvmCallHost host;
  host.version = KvmPvVersion::kMainline;
  const auto r = send_ipi(1, 0, 0, 0xFB);
  EXPECT_EQ(kvm_emulate_pv_hypercall(vm, host, caller, r).ret, -1000);
  host.version = KvmPvVersion::kV5_4;
  EXPECT_EQ(kvm_emulate_pv_hypercall(vm, host, caller, r).ret, 1);
}

// From v5.5 on the versioned model equals the unversioned one (kvm_pv_ipi.h) on every input.
TEST(KvmPvVersion, V6_16AndMainlineEqualTheUnversionedHostOnRandomInputs) {
  std::mt19937_64 rng(21);
  const X86Vm vm = X86Vm::from_apic_ids({0, 1, 5, 64, 130, 255, 300, 1000});
  for (int n = 0; n < 20000; ++n) {
    HypercallRegs r{kKvmHcSendIpi, rng(), rng(), rng() % 1400, rng() & 0xFFFFF};
    if (n % 3 == 0) r.rdx = rng();
    for (bool op64 : {true, false}) {
      HypercallCaller c;
      c.op_64_bit = op64;
      const auto ref = kvm_emulate_send_ipi_hypercall(vm, KvmPvIpiHostState{}, c, r);
      for (auto v : {KvmPvVersion::kV6_16, KvmPvVersion::kMainline}) {
        KvmCallHost host;
        host.version = v;
        KvmCallCaller kc;
        kc.op_64_bit = op64;
        const auto got = kvm_emulate_pv_hypercall(vm, host, kc, r);
        ASSERT_EQ(got.rax, ref.rax) << n;
        ASSERT_EQ(got.targets, ref.ipi.targets) << n;
      }
    }
  }
}

TEST(KvmPvVersion, NamesRoundTripAndV6_17IsMainline) {
  for (const auto& v : kvm_pv_versions()) EXPECT_EQ(kvm_pv_version_from_name(v.name), v.version);
  EXPECT_EQ(kvm_pv_version_from_name("v6.17"), KvmPvVersion::kMainline);
  EXPECT_FALSE(kvm_pv_version_from_name("v9").has_value());
}

}  // namespace
}  // namespace ipilab::x86
