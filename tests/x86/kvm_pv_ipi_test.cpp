#include "x86/kvm_pv_ipi.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

namespace ipilab::x86 {
namespace {

constexpr std::uint8_t kCallFunctionVec = 0xFC;

// ---------------------------------------------------------------------------------------------
// Guest: arch/x86/kernel/kvm.c __send_ipi_mask

TEST(KvmPvGuest, ApicIds0_1_2_130FromCpu0FlushAtTheGapIntoTwoHypercalls) {
  const X86Vm vm = X86Vm::from_apic_ids({0, 1, 2, 130});
  const Cpumask all = Cpumask::first_n(4, 4);
  const GuestSend s = kvm_guest_send_ipi_mask(vm, all, kCallFunctionVec);
  ASSERT_EQ(s.hypercalls.size(), 2u);
  EXPECT_EQ(s.hypercalls[0], (PvIpiHypercall{0x7, 0x0, 0, 0xFC}));
  EXPECT_EQ(s.hypercalls[1], (PvIpiHypercall{0x1, 0x0, 130, 0xFC}));
  EXPECT_EQ(s.work.hypercalls, 2u);
  EXPECT_EQ(s.work.cpus_visited, 4u);
  EXPECT_TRUE(s.msr_writes.empty());

  const GuestSend but = kvm_guest_send_ipi_mask_allbutself(vm, 0, all, kCallFunctionVec);
  ASSERT_EQ(but.hypercalls.size(), 2u);
  EXPECT_EQ(but.hypercalls[0], (PvIpiHypercall{0x3, 0x0, 1, 0xFC}));  // APIC IDs 1, 2
  EXPECT_EQ(but.hypercalls[1], (PvIpiHypercall{0x1, 0x0, 130, 0xFC}));
  EXPECT_EQ(but.work.cpumask_words_written, 1u);  // the copy into __pv_cpu_mask
}

TEST(KvmPvGuest, DescendingApicIdsShiftTheWindowDownInsteadOfFlushing) {
  // 100, then 50 (max - 50 < 128: shift by 50), then 10 (100 - 10 < 128: shift by 40).
  const X86Vm vm = X86Vm::from_apic_ids({100, 50, 10});
  const GuestSend s = kvm_guest_send_ipi_mask(vm, Cpumask::first_n(3, 3), 0xFB);
  ASSERT_EQ(s.hypercalls.size(), 1u);
  EXPECT_EQ(s.hypercalls[0], (PvIpiHypercall{(1ull << 40) | 1ull, 1ull << 26, 10, 0xFB}));
}

TEST(KvmPvGuest, ApicIdEqualToWindowTopThenBelowMinFlushesAfterLiRongQingFix) {
  // APIC IDs 1, 128, 0 (the case in the 2022 fix "apic_id > min"): 128 joins (bit 127), 0 cannot
  // (max - 0 == 128) and must flush rather than set bit -1.
  const X86Vm vm = X86Vm::from_apic_ids({1, 128, 0});
  const GuestSend s = kvm_guest_send_ipi_mask(vm, Cpumask::first_n(3, 3), 0xFB);
  ASSERT_EQ(s.hypercalls.size(), 2u);
  EXPECT_EQ(s.hypercalls[0], (PvIpiHypercall{0x1, 1ull << 63, 1, 0xFB}));
  EXPECT_EQ(s.hypercalls[1], (PvIpiHypercall{0x1, 0x0, 0, 0xFB}));
}

TEST(KvmPvGuest, NmiVectorBecomesApicDmNmiInA3) {
  const X86Vm vm = X86Vm::identity(4);
  const GuestSend s = kvm_guest_send_ipi_mask(vm, Cpumask::of(4, {2, 3}), kNmiVector);
  ASSERT_EQ(s.hypercalls.size(), 1u);
  EXPECT_EQ(s.hypercalls[0], (PvIpiHypercall{0x3, 0x0, 2, 0x400}));
}

TEST(KvmPvGuest, EmptyMaskAndSelfOnlyAllButSelfMakeNoHypercall) {
  const X86Vm vm = X86Vm::identity(4);
  EXPECT_TRUE(kvm_guest_send_ipi_mask(vm, Cpumask(4), 0xFB).hypercalls.empty());
  EXPECT_TRUE(kvm_guest_send_ipi_mask_allbutself(vm, 2, Cpumask::of(4, {2}), 0xFB).hypercalls.empty());
}

TEST(KvmPvGuest, EightyVcpuBroadcastIsOneWindowOf79Bits) {
  const X86Vm vm = X86Vm::identity(80);
  const GuestSend s = kvm_guest_send_ipi_mask_allbutself(vm, 0, Cpumask::first_n(80, 80), 0xFC);
  ASSERT_EQ(s.hypercalls.size(), 1u);
  EXPECT_EQ(s.hypercalls[0], (PvIpiHypercall{~0ull, 0x7FFFull, 1, 0xFC}));  // IDs 1..64, 65..79
}

TEST(KvmPvGuest, PvIpiSupportedNeedsFeatureAndMoreThanOneCpu) {
  EXPECT_TRUE(linux_pv_ipi_supported(true, 2));
  EXPECT_FALSE(linux_pv_ipi_supported(true, 1));
  EXPECT_FALSE(linux_pv_ipi_supported(false, 80));
}

// ---------------------------------------------------------------------------------------------
// Host: arch/x86/kvm/lapic.c kvm_pv_send_ipi / __pv_send_ipi

std::vector<std::uint32_t> target_vcpus(const PvIpiHostResult& r) {
  std::vector<std::uint32_t> v;
  for (const auto& t : r.targets) v.push_back(t.vcpu);
  return v;
}

TEST(KvmPvHost, DeliversToTheVcpusWhoseApicIdIsMinPlusBit) {
  const X86Vm vm = X86Vm::from_apic_ids({0, 2, 4, 6, 130});
  const KvmPvIpiHostState host;
  // bits 0 and 2 of the low half relative to 2 -> APIC IDs 2, 4; bit 0 of the high half -> 66 (absent)
  const PvIpiHostResult r = kvm_pv_send_ipi(vm, host, 0x5, 0x1, 2, 0xFB, true);
  EXPECT_EQ(r.ret, 2);
  EXPECT_EQ(r.targets, (std::vector<PvIpiTarget>{{1, 2, true}, {2, 4, true}}));
  EXPECT_EQ(r.delivered_vcpus(), (std::vector<std::uint32_t>{1, 2}));
  EXPECT_EQ(r.work.set_bits_examined, 3u);
  EXPECT_EQ(r.work.set_irq_calls, 2u);
  // min 130 reaches the last vCPU.
  EXPECT_EQ(kvm_pv_send_ipi(vm, host, 0x1, 0, 130, 0xFB, true).delivered_vcpus(),
            (std::vector<std::uint32_t>{4}));
}

TEST(KvmPvHost, BitsForNonexistentApicIdsAreIgnored) {
  const X86Vm vm = X86Vm::identity(4);
  const PvIpiHostResult r = kvm_pv_send_ipi(vm, KvmPvIpiHostState{}, ~0ull, ~0ull, 0, 0xFB, true);
  EXPECT_EQ(r.ret, 4);
  EXPECT_EQ(target_vcpus(r), (std::vector<std::uint32_t>{0, 1, 2, 3}));
  EXPECT_EQ(r.work.bits_in_range, 128u);  // max_apic_id is 255, so both halves scan 64 bits
  EXPECT_EQ(r.work.set_bits_examined, 128u);
  EXPECT_EQ(r.work.set_irq_calls, 4u);
  // min 200 <= max_apic_id 255: scans 56 bits, finds nobody.
  const PvIpiHostResult r200 = kvm_pv_send_ipi(vm, KvmPvIpiHostState{}, ~0ull, 0, 200, 0xFB, true);
  EXPECT_EQ(r200.ret, 0);
  EXPECT_EQ(r200.work.bits_in_range, 56u);
}

TEST(KvmPvHost, MinAboveMaxApicIdDeliversNothingAndReturnsZero) {
  const X86Vm vm = X86Vm::identity(8);
  for (std::uint32_t min : {256u, 1000u, 0x7FFFFFFFu, 0xFFFFFF00u}) {
    const PvIpiHostResult r = kvm_pv_send_ipi(vm, KvmPvIpiHostState{}, ~0ull, ~0ull, min, 0xFB, true);
    EXPECT_EQ(r.ret, 0) << min;
    EXPECT_TRUE(r.targets.empty()) << min;
    EXPECT_EQ(r.work.bits_in_range, 0u) << min;
  }
}

TEST(KvmPvHost, U32MinWrapsForTheHighHalfAsInTheKernel) {
  // kvm_pv_send_ipi takes u32 min and adds cluster_size in u32: min 0xFFFFFFFF puts the high half
  // at APIC ID 63, min 0xFFFFFFC0 at APIC ID 0. Real KVM delivers these (to the VM's own vCPUs).
  const X86Vm vm = X86Vm::identity(80);
  const PvIpiHostResult r = kvm_pv_send_ipi(vm, KvmPvIpiHostState{}, ~0ull, ~0ull, 0xFFFFFFFFu, 0xFB, true);
  EXPECT_EQ(r.ret, 17);  // APIC IDs 63..79
  EXPECT_EQ(r.targets.front().apic_id, 63u);
  EXPECT_EQ(r.targets.back().apic_id, 79u);
  const PvIpiHostResult r0 = kvm_pv_send_ipi(vm, KvmPvIpiHostState{}, 0, 0x1, 0xFFFFFFC0u, 0xFB, true);
  EXPECT_EQ(r0.delivered_vcpus(), (std::vector<std::uint32_t>{0}));
}

TEST(KvmPvHost, LogicalDestinationOrShorthandInIcrIsKvmEinval) {
  const X86Vm vm = X86Vm::identity(4);
  EXPECT_EQ(kvm_pv_send_ipi(vm, {}, 1, 0, 0, 0x8FB, true).ret, -22);
  EXPECT_EQ(kvm_pv_send_ipi(vm, {}, 1, 0, 0, 0x400FB, true).ret, -22);
  EXPECT_EQ(kvm_pv_send_ipi(vm, {}, 1, 0, 0, 0xC00FB, true).ret, -22);
  EXPECT_TRUE(kvm_pv_send_ipi(vm, {}, 1, 0, 0, 0xC00FB, true).targets.empty());
  // Other high bits of a3 are ignored: bits 32+ and reserved low bits still deliver.
  EXPECT_EQ(kvm_pv_send_ipi(vm, {}, 1, 0, 0, 0xFFFFFFFF000020FBull, true).ret, 1);
}

TEST(KvmPvHost, NoApicMapIsEopnotsupp) {
  KvmPvIpiHostState host;
  host.apic_map_present = false;
  EXPECT_EQ(kvm_pv_send_ipi(X86Vm::identity(4), host, 1, 0, 0, 0xFB, true).ret, -95);
}

TEST(KvmPvHost, AcceptanceFollowsApicAcceptIrqPerDeliveryMode) {
  // vCPU 1 has a software-disabled APIC: fixed IPIs are dropped, NMIs still land.
  const X86Vm vm({X86Vcpu{0, true, true}, X86Vcpu{1, true, false}, X86Vcpu{2, true, true}}, false);
  const PvIpiHostResult fixed = kvm_pv_send_ipi(vm, {}, 0x7, 0, 0, 0xFB, true);
  EXPECT_EQ(fixed.ret, 2);
  EXPECT_EQ(fixed.targets.size(), 3u);
  EXPECT_FALSE(fixed.targets[1].accepted);
  EXPECT_EQ(kvm_pv_send_ipi(vm, {}, 0x7, 0, 0, 0x400, true).ret, 3);
  // Lowest priority is not arbitrated on this path: every sw-enabled target takes it.
  EXPECT_EQ(kvm_pv_send_ipi(vm, {}, 0x7, 0, 0, 0x1FB, true).ret, 2);
  // Level-triggered deassert of a fixed IPI is dropped; INIT deassert likewise.
  EXPECT_EQ(kvm_pv_send_ipi(vm, {}, 0x7, 0, 0, 0x80FB, true).ret, 0);
  EXPECT_EQ(kvm_pv_send_ipi(vm, {}, 0x7, 0, 0, 0x8500, true).ret, 0);
  EXPECT_EQ(kvm_pv_send_ipi(vm, {}, 0x7, 0, 0, 0xC500, true).ret, 3);
  // SMI needs host SMM support (this VM has none); ExtINT is never accepted.
  EXPECT_EQ(kvm_pv_send_ipi(vm, {}, 0x7, 0, 0, 0x200, true).ret, 0);
  EXPECT_EQ(kvm_pv_send_ipi(vm, {}, 0x7, 0, 0, 0x700, true).ret, 0);
  EXPECT_EQ(kvm_pv_send_ipi(vm, {}, 0x7, 0, 0, 0x69A, true).ret, 3);
}

TEST(KvmPvHypercall, ReturnValuesAndRaxAsEmulateHypercallWritesThem) {
  const X86Vm vm = X86Vm::identity(40);
  const KvmPvIpiHostState host;
  HypercallRegs regs;
  regs.rbx = 0x3;
  regs.rsi = 0xFB;
  // a2 is a full register; kvm_pv_send_ipi's u32 min drops bits 32..63.
  regs.rdx = 0x100000005ull;
  HypercallOutcome ok = kvm_emulate_send_ipi_hypercall(vm, host, HypercallCaller{}, regs);
  EXPECT_TRUE(ok.send_ipi_ran);
  EXPECT_EQ(ok.rax, 2u);
  EXPECT_EQ(ok.ipi.delivered_vcpus(), (std::vector<std::uint32_t>{5, 6}));

  regs.rdx = 0;
  HypercallCaller no_feature;
  no_feature.has_pv_send_ipi = false;
  const HypercallOutcome enosys = kvm_emulate_send_ipi_hypercall(vm, host, no_feature, regs);
  EXPECT_FALSE(enosys.send_ipi_ran);
  EXPECT_EQ(enosys.ret, -1000);
  EXPECT_EQ(enosys.rax, 0xFFFFFFFFFFFFFC18ull);

  HypercallCaller user;
  user.cpl = 3;
  EXPECT_EQ(kvm_emulate_send_ipi_hypercall(vm, host, user, regs).ret, -1);

  HypercallRegs other = regs;
  other.rax = 11;  // KVM_HC_SCHED_YIELD is outside this model
  EXPECT_EQ(kvm_emulate_send_ipi_hypercall(vm, host, HypercallCaller{}, other).ret, -1000);

  regs.rsi = 0x8FB;  // logical
  EXPECT_EQ(kvm_emulate_send_ipi_hypercall(vm, host, HypercallCaller{}, regs).rax,
            0xFFFFFFFFFFFFFFEAull);
}

TEST(KvmPvHypercall, ThirtyTwoBitCallerTruncatesArgumentsAndUses32BitHalves) {
  const X86Vm vm = X86Vm::identity(40);
  HypercallCaller c32;
  c32.op_64_bit = false;
  HypercallRegs regs;
  regs.rax = 0xFFFFFFFF0000000Aull;  // nr is truncated to 10 too
  regs.rbx = 0x100000001ull;         // bit 32 disappears
  regs.rcx = 0x1;                    // high half starts at min + 32
  regs.rsi = 0xFB;
  const HypercallOutcome r = kvm_emulate_send_ipi_hypercall(vm, {}, c32, regs);
  EXPECT_EQ(r.ipi.delivered_vcpus(), (std::vector<std::uint32_t>{0, 32}));
  EXPECT_EQ(r.rax, 2u);
  regs.rsi = 0x8FB;
  EXPECT_EQ(kvm_emulate_send_ipi_hypercall(vm, {}, c32, regs).rax, 0xFFFFFFEAull);
}

// ---------------------------------------------------------------------------------------------
// Both sides

TEST(KvmPvRoundTrip, GuestWindowsDeliverToExactlyTheMaskOnRandomVms) {
  std::uint64_t seed = 99;
  auto rnd = [&seed]() {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<std::uint32_t>(seed >> 33);
  };
  for (int round = 0; round < 300; ++round) {
    const std::uint32_t n = 1 + rnd() % 200;
    std::set<std::uint32_t> used;
    std::vector<std::uint32_t> ids;
    const std::uint32_t spread = (round % 3 == 0) ? 300 : 5000;
    while (ids.size() < n) {
      const std::uint32_t id = rnd() % spread;
      if (used.insert(id).second) ids.push_back(id);
    }
    const X86Vm vm = X86Vm::from_apic_ids(ids);
    Cpumask mask(n);
    for (std::uint32_t c = 0; c < n; ++c) {
      if (rnd() % 2 == 0) mask.set(c);
    }
    const std::uint32_t self = rnd() % n;
    const GuestSend s = kvm_guest_send_ipi_mask_allbutself(vm, self, mask, 0xFB);
    KvmPvGuestState guest;
    const PvIpiExecution ex = kvm_pv_execute(vm, KvmPvIpiHostState{}, true, s, guest);
    std::vector<std::uint32_t> expect;
    for (auto c : mask.cpus()) {
      if (c != self) expect.push_back(c);
    }
    std::vector<std::uint32_t> got = ex.delivered_vcpus;
    std::sort(got.begin(), got.end());
    ASSERT_EQ(got, expect) << "round " << round;
    EXPECT_EQ(ex.failed_calls, 0u);
    EXPECT_FALSE(guest.warned);
    for (const auto& hc : s.hypercalls) EXPECT_NE(hc.a0 | hc.a1, 0u);
  }
}

TEST(KvmPvRoundTrip, FailedHypercallWarnsOnceAndLosesItsTargets) {
  // Linux WARN_ONCE(ret < 0, ...) and carries on: no retry, no native fallback.
  const X86Vm vm = X86Vm::from_apic_ids({0, 1, 2, 130});
  const GuestSend s = kvm_guest_send_ipi_mask(vm, Cpumask::first_n(4, 4), 0xFB);
  KvmPvGuestState guest;
  const PvIpiExecution first = kvm_pv_execute(vm, {}, /*guest_has_pv_send_ipi=*/false, s, guest);
  EXPECT_EQ(first.failed_calls, 2u);
  EXPECT_TRUE(first.warn_fired_now);
  EXPECT_TRUE(first.delivered_vcpus.empty());
  EXPECT_EQ(first.calls.at(0).ret, -1000);
  const PvIpiExecution second = kvm_pv_execute(vm, {}, false, s, guest);
  EXPECT_EQ(second.failed_calls, 2u);
  EXPECT_FALSE(second.warn_fired_now);
  const PvIpiExecution ok = kvm_pv_execute(vm, {}, true, s, guest);
  EXPECT_EQ(ok.delivered_vcpus, (std::vector<std::uint32_t>{0, 1, 2, 3}));
}

}  // namespace
}  // namespace ipilab::x86
