// Linux Hyper-V IPI send paths (src/hv/guest_send.h) against the real KVM-semantics Partition:
// exact control words, registers and input bytes, fallbacks to the native APIC, and the oracle.
// Sources: arch/x86/hyperv/hv_apic.c (v5.4, seed v2/v3, Sep/Oct 2021, mainline) and
// include/asm-generic/mshyperv.h (__cpumask_to_vpset).
#include "hv/guest_send.h"

#include <gtest/gtest.h>

#include <vector>

#include "common/error.h"
#include "hv/oracle.h"
#include "hv/partition.h"

namespace ipilab::hv {
namespace {

constexpr std::uint32_t kCallFunctionSingleVector = 0xFB;  // arch/x86/include/asm/irq_vectors.h
constexpr std::uint32_t kNmiVector = 0x02;

GuestConfig guest_with_vps(std::vector<std::uint32_t> vps, unsigned nr_cpus = 64) {
  GuestConfig c = GuestConfig::identity(static_cast<unsigned>(vps.size()), nr_cpus);
  c.hv_vp_index = std::move(vps);
  return c;
}

// A partition holding exactly the guest's CPUs with their VP indices.
struct Rig {
  LinuxHvGuest guest;
  Partition partition;
  Rig(GuestConfig cfg, GuestPolicy pol) : guest(cfg, pol), partition(partition_config_for(cfg)) {}
  GuestHostSend run(const SendRequest& r) { return run_on_partition(guest, partition, r); }
  GuestHostSend one(unsigned sender, unsigned cpu, std::uint32_t v = kCallFunctionSingleVector) {
    return run({SendHook::kSendIpi, sender, v, cpu, std::nullopt});
  }
  GuestHostSend mask(SendHook h, unsigned sender, std::vector<unsigned> cpus, std::uint32_t v = kCallFunctionSingleVector) {
    return run({h, sender, v, 0, Cpumask::of(guest.config().nr_cpus, cpus)});
  }
  GuestHostSend hook(SendHook h, unsigned sender, std::uint32_t v = kCallFunctionSingleVector) {
    return run({h, sender, v, 0, std::nullopt});
  }
};

std::vector<std::uint32_t> delivered_vps(const GuestHostSend& s) {
  std::vector<std::uint32_t> v;
  for (const auto& o : s.outcomes) {
    for (const auto& d : o.delivered) v.push_back(d.vp_index);
  }
  return v;
}

// ---- The acceptance case: CPU 1 with VP index 70 ---------------------------------------

TEST(HvApicV3, Vp70_SendsExWithTwoDenseBanks_AndVp70Receives) {
  Rig rig(guest_with_vps({0, 70}), GuestPolicy::mainline());
  const GuestHostSend s = rig.one(0, 1);
  ASSERT_EQ(s.send.hypercalls.size(), 1u);
  const IssuedHypercall& h = s.send.hypercalls[0];
  // hv_do_rep_hypercall(HVCALL_SEND_IPI_EX, 0, nr_bank = 2, input, NULL): 0x15 | 2 << 17.
  EXPECT_EQ(h.regs.rcx, 0x0000'0000'0004'0015ull);
  EXPECT_EQ(h.regs.rdx, rig.guest.config().input_page_gpa(0));
  EXPECT_EQ(h.regs.r8, 0u);
  const std::vector<std::uint8_t> want = {
      0xFB, 0, 0, 0, 0, 0, 0, 0,           // vector, reserved
      0, 0, 0, 0, 0, 0, 0, 0,              // format HV_GENERIC_SET_SPARSE_4K
      0x03, 0, 0, 0, 0, 0, 0, 0,           // valid_bank_mask GENMASK(1, 0): dense, bank 0 empty
      0, 0, 0, 0, 0, 0, 0, 0,              // bank 0
      0x40, 0, 0, 0, 0, 0, 0, 0};          // bank 1: bit 70 % 64 = 6
  EXPECT_EQ(h.input, want);
  EXPECT_TRUE(h.judged_success);
  ASSERT_EQ(s.outcomes.size(), 1u);
  EXPECT_EQ(s.outcomes[0].status, HvStatus::HV_STATUS_SUCCESS);
  ASSERT_EQ(s.outcomes[0].delivered.size(), 1u);
  EXPECT_EQ(s.outcomes[0].delivered[0], (Delivery{1, 70, 0xFB}));
  EXPECT_FALSE(s.send.native.has_value());
  EXPECT_TRUE(s.oracle.ok());
  EXPECT_EQ(s.oracle.delivered, (std::vector<unsigned>{1}));
  EXPECT_EQ(s.send.work.hypercalls.send_ipi_ex_slow, 1u);
  EXPECT_EQ(s.send.work.varhead_qwords, 2u);
  EXPECT_EQ(s.send.work.slow_input_bytes, 40u);
}

TEST(HvApicV3, SeedV3OnV54_SameWireAsMainline) {
  Rig a(guest_with_vps({0, 70}), GuestPolicy::seed_v3());
  Rig b(guest_with_vps({0, 70}), GuestPolicy::mainline());
  const auto sa = a.one(0, 1);
  const auto sb = b.one(0, 1);
  ASSERT_EQ(sa.send.hypercalls.size(), 1u);
  EXPECT_EQ(sa.send.hypercalls[0].regs, sb.send.hypercalls[0].regs);
  EXPECT_EQ(sa.send.hypercalls[0].input, sb.send.hypercalls[0].input);
  EXPECT_TRUE(sa.oracle.ok());
}

TEST(HvApicV2, CpuBelow64WithVp70_ShiftWrapsToVp6_Misdelivered) {
  // 8 CPUs, VP == CPU except CPU 1 -> VP 70. v2 tests cpu (1) < 64 and sends BIT_ULL(70), which x86
  // SHL turns into 1 << (70 & 63) = 1 << 6: VP 6 (CPU 6) gets it, CPU 1 never does.
  Rig rig(guest_with_vps({0, 70, 2, 3, 4, 5, 6, 7}), GuestPolicy::seed_v2());
  const GuestHostSend s = rig.one(0, 1);
  ASSERT_EQ(s.send.hypercalls.size(), 1u);
  EXPECT_EQ(s.send.hypercalls[0].regs.rcx, 0x0001'000Bull);  // HVCALL_SEND_IPI | fast
  EXPECT_EQ(s.send.hypercalls[0].regs.rdx, 0xFBull);
  EXPECT_EQ(s.send.hypercalls[0].regs.r8, 1ull << 6);
  EXPECT_EQ(delivered_vps(s), (std::vector<std::uint32_t>{6}));
  EXPECT_FALSE(s.oracle.ok());
  EXPECT_EQ(s.oracle.missing, (std::vector<unsigned>{1}));
  EXPECT_EQ(s.oracle.extra, (std::vector<unsigned>{6}));
}

TEST(HvApicV2, CpuBelow64WithVp70_NoVp6_Lost) {
  Rig rig(guest_with_vps({0, 70}), GuestPolicy::seed_v2());
  const GuestHostSend s = rig.one(0, 1);
  ASSERT_EQ(s.outcomes.size(), 1u);
  EXPECT_EQ(s.outcomes[0].status, HvStatus::HV_STATUS_SUCCESS);  // KVM ignores bits of absent VPs
  EXPECT_TRUE(s.outcomes[0].delivered.empty());
  EXPECT_FALSE(s.send.native.has_value());  // the guest believes it worked
  EXPECT_EQ(s.oracle.missing, (std::vector<unsigned>{1}));
  EXPECT_TRUE(s.oracle.extra.empty());
}

TEST(HvApicPreSeed, Vp70_GoesExViaCpumaskLast_NoLoss) {
  Rig rig(guest_with_vps({0, 70, 2, 3, 4, 5, 6, 7}), GuestPolicy::pre_seed());
  const GuestHostSend s = rig.one(0, 1);
  ASSERT_EQ(s.send.hypercalls.size(), 1u);
  EXPECT_EQ(s.send.hypercalls[0].regs.rcx, 0x0004'0015ull);
  EXPECT_TRUE(s.oracle.ok());
  EXPECT_EQ(delivered_vps(s), (std::vector<std::uint32_t>{70}));
}

TEST(HvApicV3, CpuAbove64WithSmallVp_UsesFastCall) {
  // v3 tests the VP number: CPU 65 with VP 5 is a fast call with bit 5. v2 would go Ex (cpu >= 64).
  std::vector<std::uint32_t> vps(66, VP_INVAL);
  vps[0] = 0;
  vps[65] = 5;
  GuestConfig cfg = guest_with_vps(vps, 128);
  cfg.present = {0, 65};
  cfg.online = {0, 65};
  Rig v3(cfg, GuestPolicy::mainline());
  const auto s3 = v3.one(0, 65);
  ASSERT_EQ(s3.send.hypercalls.size(), 1u);
  EXPECT_EQ(s3.send.hypercalls[0].regs.r8, 1ull << 5);
  EXPECT_TRUE(s3.oracle.ok());
  Rig v2(cfg, GuestPolicy::seed_v2());
  const auto s2 = v2.one(0, 65);
  ASSERT_EQ(s2.send.hypercalls.size(), 1u);
  EXPECT_EQ(s2.send.hypercalls[0].regs.rcx, 0x0002'0015ull);  // Ex, one bank: VP 5 is in bank 0
  EXPECT_TRUE(s2.oracle.ok());
}

// ---- VP >= 64 on the single path: Ex with valid_bank_mask GENMASK(vp/64, 0), varhead vp/64 + 1 ----

class SinglePathHighVp : public ::testing::TestWithParam<std::uint32_t> {};

TEST_P(SinglePathHighVp, ExWithDenseBanksUpToTheVpsBank) {
  const std::uint32_t vp = GetParam();
  const std::uint32_t nr_bank = vp / 64 + 1;
  Rig rig(guest_with_vps({0, vp}), GuestPolicy::mainline());
  const GuestHostSend s = rig.one(0, 1);
  ASSERT_EQ(s.send.hypercalls.size(), 1u);
  const IssuedHypercall& h = s.send.hypercalls[0];
  EXPECT_EQ(h.regs.rcx, 0x15ull | (static_cast<std::uint64_t>(nr_bank) << 17));
  ASSERT_EQ(h.input.size(), 24u + 8u * nr_bank);
  const auto dec = decode_send_ipi_ex(h.input, nr_bank);
  ASSERT_TRUE(dec.has_value());
  EXPECT_EQ(dec->vp_set.format, HV_GENERIC_SET_SPARSE_4K);
  EXPECT_EQ(dec->vp_set.valid_bank_mask, nr_bank == 64 ? ~0ull : (1ull << nr_bank) - 1);
  for (std::uint32_t b = 0; b + 1 < nr_bank; ++b) EXPECT_EQ(dec->vp_set.bank_contents[b], 0u) << "bank " << b;
  EXPECT_EQ(dec->vp_set.bank_contents[nr_bank - 1], 1ull << (vp % 64));
  EXPECT_EQ(s.send.work.vpset_banks_cleared, nr_bank);  // hv_max_vp_index / 64 + 1
  EXPECT_EQ(s.send.work.vpset_banks_built, nr_bank);
  EXPECT_EQ(delivered_vps(s), (std::vector<std::uint32_t>{vp}));
  EXPECT_TRUE(s.oracle.ok());
}

INSTANTIATE_TEST_SUITE_P(Vps, SinglePathHighVp, ::testing::Values(64u, 70u, 127u, 128u, 200u, 703u, 4095u));

// ---- Fallbacks to the native APIC ------------------------------------------------------------

TEST(HvApicFallback, VpInval_V3AndPreSeedFallBack_V2ShiftsTo63) {
  GuestConfig cfg = guest_with_vps({0, VP_INVAL});
  for (GuestPolicy pol : {GuestPolicy::mainline(), GuestPolicy::seed_v3(), GuestPolicy::pre_seed()}) {
    LinuxHvGuest g(cfg, pol);
    Partition p(partition_config_for(cfg));
    const auto s = run_on_partition(g, p, {SendHook::kSendIpi, 0, kCallFunctionSingleVector, 1, std::nullopt});
    EXPECT_TRUE(s.send.hypercalls.empty()) << policy_name(pol);
    ASSERT_TRUE(s.send.native.has_value()) << policy_name(pol);
    EXPECT_EQ(s.send.native->hook, SendHook::kSendIpi);
    EXPECT_EQ(s.send.native->cpus, (std::vector<unsigned>{1}));
    EXPECT_TRUE(s.oracle.ok()) << policy_name(pol);
  }
  // v2 has no VP_INVAL check: BIT_ULL(-1) -> 1 << (0xFFFFFFFF & 63) = bit 63 (VP 63), lost.
  LinuxHvGuest g(cfg, GuestPolicy::seed_v2());
  Partition p(partition_config_for(cfg));
  const auto s = run_on_partition(g, p, {SendHook::kSendIpi, 0, kCallFunctionSingleVector, 1, std::nullopt});
  ASSERT_EQ(s.send.hypercalls.size(), 1u);
  EXPECT_EQ(s.send.hypercalls[0].regs.r8, 1ull << 63);
  EXPECT_EQ(s.oracle.missing, (std::vector<unsigned>{1}));
}

TEST(HvApicFallback, VpInvalInMask_FallsBackWholeMask) {
  GuestConfig cfg = guest_with_vps({0, 1, VP_INVAL, 3});
  for (GuestPolicy pol : {GuestPolicy::pre_seed(), GuestPolicy::mainline()}) {
    Rig rig(cfg, pol);
    const auto s = rig.mask(SendHook::kSendIpiMask, 0, {1, 2, 3});
    EXPECT_TRUE(s.send.hypercalls.empty());
    ASSERT_TRUE(s.send.native.has_value());
    EXPECT_EQ(s.send.native->hook, SendHook::kSendIpiMask);
    EXPECT_EQ(s.send.native->cpus, (std::vector<unsigned>{1, 2, 3}));
    EXPECT_TRUE(s.oracle.ok());
  }
  // Ex path (VP >= 64 present): __cpumask_to_vpset returns -1 on VP_INVAL.
  GuestConfig ex = guest_with_vps({0, 100, VP_INVAL});
  Rig rig(ex, GuestPolicy::mainline());
  const auto s = rig.mask(SendHook::kSendIpiMask, 0, {1, 2});
  EXPECT_TRUE(s.send.hypercalls.empty());
  EXPECT_EQ(s.send.work.irq_save_restore, 1u);
  EXPECT_EQ(s.send.work.vpset_banks_cleared, 2u);
  ASSERT_TRUE(s.send.native.has_value());
  EXPECT_TRUE(s.oracle.ok());
}

struct BadVectorCase {
  SendHook hook;
  std::uint32_t vector;
  std::vector<unsigned> native_cpus;  // sender is CPU 0 of a 4-CPU guest, mask {1, 2}
};

class VectorOutsideRange : public ::testing::TestWithParam<BadVectorCase> {};

TEST_P(VectorOutsideRange, FallsBackToTheSameOrigApicHook) {
  const BadVectorCase& c = GetParam();
  for (GuestPolicy pol : {GuestPolicy::pre_seed(), GuestPolicy::seed_v2(), GuestPolicy::mainline()}) {
    Rig rig(guest_with_vps({0, 1, 2, 3}), pol);
    SendRequest r{c.hook, 0, c.vector, 1, std::nullopt};
    if (c.hook == SendHook::kSendIpiMask || c.hook == SendHook::kSendIpiMaskAllButSelf) {
      r.mask = Cpumask::of(64, {1, 2});
      r.target_cpu = 0;
    }
    const auto s = rig.run(r);
    EXPECT_TRUE(s.send.hypercalls.empty()) << policy_name(pol) << " " << hook_name(c.hook);
    ASSERT_TRUE(s.send.native.has_value());
    const SendHook expect_hook = c.hook == SendHook::kSendIpiAllButSelf ? SendHook::kSendIpiMaskAllButSelf : c.hook;
    EXPECT_EQ(s.send.native->hook, expect_hook);
    EXPECT_EQ(s.send.native->cpus, c.native_cpus);
    EXPECT_EQ(s.send.native->vector, c.vector);
    EXPECT_EQ(s.send.work.native_fallbacks, 1u);
    EXPECT_TRUE(s.oracle.ok());
  }
}

INSTANTIATE_TEST_SUITE_P(
    Hooks, VectorOutsideRange,
    ::testing::Values(BadVectorCase{SendHook::kSendIpi, kNmiVector, {1}},
                      BadVectorCase{SendHook::kSendIpi, 0x0F, {1}},
                      BadVectorCase{SendHook::kSendIpi, 0x100, {1}},
                      BadVectorCase{SendHook::kSendIpiMask, kNmiVector, {1, 2}},
                      BadVectorCase{SendHook::kSendIpiMask, 0x0F, {1, 2}},
                      BadVectorCase{SendHook::kSendIpiMaskAllButSelf, 0x100, {1, 2}},
                      BadVectorCase{SendHook::kSendIpiAllButSelf, kNmiVector, {1, 2, 3}},
                      BadVectorCase{SendHook::kSendIpiAll, kNmiVector, {0, 1, 2, 3}},
                      BadVectorCase{SendHook::kSendIpiSelf, 0x0F, {0}}));

TEST(HvApicFallback, VectorBoundsAreHypercalls) {
  Rig rig(guest_with_vps({0, 1}), GuestPolicy::mainline());
  EXPECT_EQ(rig.one(0, 1, 0x10).send.hypercalls.size(), 1u);
  EXPECT_EQ(rig.one(0, 1, 0xFF).send.hypercalls.size(), 1u);
}

TEST(HvApicFallback, NoExProcessorMasks_HighVpGoesNative) {
  GuestConfig cfg = guest_with_vps({0, 70});
  cfg.ex_processor_masks_recommended = false;
  Rig rig(cfg, GuestPolicy::mainline());
  const auto s = rig.one(0, 1);
  EXPECT_TRUE(s.send.hypercalls.empty());
  EXPECT_EQ(s.send.work.irq_save_restore, 0u);  // returns before local_irq_save
  ASSERT_TRUE(s.send.native.has_value());
  EXPECT_TRUE(s.oracle.ok());
}

TEST(HvApicFallback, NoInputPage_HighVpGoesNative) {
  GuestConfig cfg = guest_with_vps({0, 70});
  cfg.input_page_present = false;
  Rig rig(cfg, GuestPolicy::mainline());
  const auto s = rig.one(0, 1);
  EXPECT_TRUE(s.send.hypercalls.empty());
  EXPECT_EQ(s.send.work.irq_save_restore, 1u);
  ASSERT_TRUE(s.send.native.has_value());
}

TEST(HvApicFallback, NoHypercallPage_NativeUnlessMainlineTdx) {
  GuestConfig cfg = guest_with_vps({0, 1});
  cfg.hypercall_page = false;
  for (GuestPolicy pol : {GuestPolicy::pre_seed(), GuestPolicy::seed_v2(), GuestPolicy::mainline()}) {
    Rig rig(cfg, pol);
    const auto s = rig.one(0, 1);
    EXPECT_TRUE(s.send.hypercalls.empty());
    EXPECT_TRUE(s.send.native.has_value());
  }
  cfg.fully_enlightened_tdx = true;
  Rig tdx(cfg, GuestPolicy::mainline());
  EXPECT_EQ(tdx.one(0, 1).send.hypercalls.size(), 1u);
  Rig old(cfg, GuestPolicy::seed_v3());  // the TDX exception came years after v5.5
  EXPECT_TRUE(old.one(0, 1).send.native.has_value());
}

TEST(HvApicFallback, FailedStatusFallsBackAfterTheHypercall) {
  LinuxHvGuest g(guest_with_vps({0, 1}), GuestPolicy::mainline());
  int calls = 0;
  const HypervisorCall hv = [&](unsigned, const HypercallRegs&, const GuestMemory&) {
    ++calls;
    return static_cast<std::uint64_t>(HvStatus::HV_STATUS_INVALID_HYPERCALL_INPUT);
  };
  const SendResult s = g.send_IPI(0, 1, kCallFunctionSingleVector, hv);
  EXPECT_EQ(calls, 1);
  ASSERT_EQ(s.hypercalls.size(), 1u);
  EXPECT_FALSE(s.hypercalls[0].judged_success);
  EXPECT_EQ(s.work.hypercalls.failed, 1u);
  ASSERT_TRUE(s.native.has_value());
  EXPECT_EQ(s.native->hook, SendHook::kSendIpi);
}

TEST(HvApicFallback, StatusJudgement_V54UsesLow32Bits_MainlineLow16) {
  // RAX = 0x0001'0000: HV_STATUS_SUCCESS with a reserved bit 16 set. v5.4's `int ret == 0` and the
  // seed's `!status` call it a failure; hv_result_success (mainline) a success.
  const HypervisorCall hv = [](unsigned, const HypercallRegs&, const GuestMemory&) { return 0x0001'0000ull; };
  LinuxHvGuest old(guest_with_vps({0, 1}), GuestPolicy::pre_seed());
  EXPECT_TRUE(old.send_IPI(0, 1, kCallFunctionSingleVector, hv).native.has_value());
  LinuxHvGuest v3(guest_with_vps({0, 1}), GuestPolicy::seed_v3());
  EXPECT_TRUE(v3.send_IPI(0, 1, kCallFunctionSingleVector, hv).native.has_value());
  LinuxHvGuest now(guest_with_vps({0, 1}), GuestPolicy::mainline());
  EXPECT_FALSE(now.send_IPI(0, 1, kCallFunctionSingleVector, hv).native.has_value());
  // Reps completed (bits 43:32) are dropped by v5.4's int truncation: success everywhere.
  const HypervisorCall reps = [](unsigned, const HypercallRegs&, const GuestMemory&) { return 1ull << 32; };
  LinuxHvGuest mask_old(guest_with_vps({0, 1, 2}), GuestPolicy::pre_seed());
  EXPECT_FALSE(mask_old.send_IPI_mask(0, Cpumask::of(64, {1, 2}), kCallFunctionSingleVector, reps).native.has_value());
}

// ---- allbutself and SET_ALL ----------------------------------------------------------------------

class AllButSelf : public ::testing::TestWithParam<std::vector<std::uint32_t>> {};

TEST_P(AllButSelf, MaskEqualsPresent_NeverTargetsTheSender) {
  for (GuestPolicy pol : {GuestPolicy::pre_seed(), GuestPolicy::seed_v3(), GuestPolicy::mainline()}) {
    Rig rig(guest_with_vps(GetParam()), pol);
    const unsigned n = static_cast<unsigned>(GetParam().size());
    std::vector<unsigned> all;
    for (unsigned i = 0; i < n; ++i) all.push_back(i);
    for (unsigned sender : {0u, n - 1}) {
      for (const GuestHostSend& s : {rig.mask(SendHook::kSendIpiMaskAllButSelf, sender, all),
                                      rig.hook(SendHook::kSendIpiAllButSelf, sender)}) {
        EXPECT_TRUE(s.oracle.ok()) << policy_name(pol) << " sender " << sender;
        EXPECT_EQ(s.oracle.delivered.size(), n - 1);
        for (unsigned cpu : s.oracle.delivered) EXPECT_NE(cpu, sender);
        for (const auto& h : s.send.hypercalls) {
          if (!h.input.empty()) {
            EXPECT_EQ(decode_send_ipi_ex(h.input, 0)->vp_set.format, HV_GENERIC_SET_SPARSE_4K);
          }
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(VpMaps, AllButSelf,
                         ::testing::Values(std::vector<std::uint32_t>{0, 1, 2, 3},         // fast path
                                           std::vector<std::uint32_t>{0, 1, 2, 130},       // Ex path
                                           std::vector<std::uint32_t>{64, 65, 66, 67}));  // Ex, all high

TEST(AllButSelfRegression, Sep2021FormSendsSpuriousSelfIpiWithSetAll) {
  // dfb5c1e12c28 kept SET_ALL for mask == present even with exclude_self; fixed in Oct 2021.
  const GuestPolicy unfixed{SendIpiOneVersion::kSeedV3, MaskPathVersion::kExcludeSelfUnfixed};
  Rig rig(guest_with_vps({0, 1, 2, 130}), unfixed);
  const auto s = rig.hook(SendHook::kSendIpiAllButSelf, 0);
  ASSERT_EQ(s.send.hypercalls.size(), 1u);
  EXPECT_EQ(s.send.hypercalls[0].regs.rcx, 0x15ull);  // varhead 0
  EXPECT_EQ(decode_send_ipi_ex(s.send.hypercalls[0].input, 0)->vp_set.format, HV_GENERIC_SET_ALL);
  EXPECT_EQ(s.oracle.extra, (std::vector<unsigned>{0}));
  EXPECT_TRUE(s.oracle.missing.empty());
}

TEST(SetAll, OnlyForAllOrPresentMaskWithoutExcludeSelf) {
  Rig rig(guest_with_vps({0, 1, 2, 130}), GuestPolicy::mainline());
  const auto all = rig.hook(SendHook::kSendIpiAll, 1);
  ASSERT_EQ(all.send.hypercalls.size(), 1u);
  EXPECT_EQ(all.send.hypercalls[0].regs.rcx, 0x15ull);
  EXPECT_EQ(all.send.hypercalls[0].input,
            (std::vector<std::uint8_t>{0xFB, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}));
  EXPECT_TRUE(all.oracle.ok());
  EXPECT_EQ(all.oracle.delivered, (std::vector<unsigned>{0, 1, 2, 3}));

  const auto present = rig.mask(SendHook::kSendIpiMask, 1, {0, 1, 2, 3});
  EXPECT_EQ(decode_send_ipi_ex(present.send.hypercalls.at(0).input, 0)->vp_set.format, HV_GENERIC_SET_ALL);

  const auto some = rig.mask(SendHook::kSendIpiMask, 1, {0, 3});
  EXPECT_EQ(some.send.hypercalls.at(0).regs.rcx, 0x15ull | (3ull << 17));
  EXPECT_EQ(decode_send_ipi_ex(some.send.hypercalls.at(0).input, 3)->vp_set.format, HV_GENERIC_SET_SPARSE_4K);
  EXPECT_TRUE(some.oracle.ok());

  // online != present: send_IPI_all builds a sparse set of the online CPUs.
  GuestConfig cfg = guest_with_vps({0, 1, 2, 130});
  cfg.online = {0, 1, 3};
  Rig partial(cfg, GuestPolicy::mainline());
  const auto s = partial.hook(SendHook::kSendIpiAll, 0);
  EXPECT_EQ(decode_send_ipi_ex(s.send.hypercalls.at(0).input, 3)->vp_set.format, HV_GENERIC_SET_SPARSE_4K);
  EXPECT_TRUE(s.oracle.ok());
  EXPECT_EQ(s.oracle.delivered, (std::vector<unsigned>{0, 1, 3}));
}

TEST(SetAll, V54NrBankZeroBecomesSetAll_MainlineFallsBack) {
  // hv_max_vp_index >= 4096 makes cpumask_to_vpset return 0; v5.4 then sends SET_ALL (every VP,
  // self included), mainline falls back to native.
  GuestConfig cfg = guest_with_vps({0, 1, 70});
  cfg.hv_max_vp_index = 4096;
  Rig old(cfg, GuestPolicy::pre_seed());
  const auto s = old.mask(SendHook::kSendIpiMask, 0, {1, 2});
  ASSERT_EQ(s.send.hypercalls.size(), 1u);
  EXPECT_EQ(decode_send_ipi_ex(s.send.hypercalls[0].input, 0)->vp_set.format, HV_GENERIC_SET_ALL);
  EXPECT_EQ(s.oracle.extra, (std::vector<unsigned>{0}));
  Rig now(cfg, GuestPolicy::mainline());
  const auto m = now.mask(SendHook::kSendIpiMask, 0, {1, 2});
  EXPECT_TRUE(m.send.hypercalls.empty());
  EXPECT_TRUE(m.send.native.has_value());
  EXPECT_TRUE(m.oracle.ok());
}

TEST(SelfIpi, GoesThroughTheHypercall) {
  Rig rig(guest_with_vps({0, 1}), GuestPolicy::mainline());
  const auto s = rig.hook(SendHook::kSendIpiSelf, 1);
  ASSERT_EQ(s.send.hypercalls.size(), 1u);
  EXPECT_EQ(s.send.hypercalls[0].regs.r8, 1ull << 1);
  EXPECT_TRUE(s.oracle.ok());
  EXPECT_EQ(s.oracle.delivered, (std::vector<unsigned>{1}));
}

TEST(MaskPath, EmptyOrOnlySelf_NoHypercallNoFallback) {
  for (GuestPolicy pol : {GuestPolicy::pre_seed(), GuestPolicy::mainline()}) {
    Rig rig(guest_with_vps({0, 1}), pol);
    const auto e = rig.mask(SendHook::kSendIpiMask, 0, {});
    EXPECT_TRUE(e.send.hypercalls.empty());
    EXPECT_FALSE(e.send.native.has_value());
    const auto s = rig.mask(SendHook::kSendIpiMaskAllButSelf, 0, {0});
    EXPECT_TRUE(s.send.hypercalls.empty());
    EXPECT_FALSE(s.send.native.has_value());
    EXPECT_TRUE(s.oracle.ok());
  }
}

TEST(InputPage, StaleBanksAreClearedBetweenCalls) {
  // Send to VP 130 (bank 2) and then to VP 70 (bank 1): the second input must not keep bank 2's bit.
  Rig rig(guest_with_vps({0, 70, 130}), GuestPolicy::mainline());
  (void)rig.one(0, 2);
  const auto s = rig.one(0, 1);
  EXPECT_EQ(s.send.work.vpset_banks_cleared, 3u);
  ASSERT_EQ(s.send.hypercalls.size(), 1u);
  EXPECT_EQ(s.send.hypercalls[0].regs.rcx, 0x15ull | (2ull << 17));
  EXPECT_EQ(delivered_vps(s), (std::vector<std::uint32_t>{70}));
  std::vector<std::uint8_t> bank2(8);
  ASSERT_TRUE(rig.guest.input_page(0).read(rig.guest.config().input_page_gpa(0) + 24 + 16, bank2));
  EXPECT_EQ(bank2, std::vector<std::uint8_t>(8, 0));
}

// ---- Bad requests and configs --------------------------------------------------------------

TEST(GuestConfigValidation, RejectsWhatLinuxCannotHold) {
  EXPECT_NO_THROW(guest_with_vps({0, 0}).validate());  // duplicate VP: a KVM host may set one (send_case_test)
  EXPECT_THROW(guest_with_vps({0, 0x80000000u}).validate(), InputError);           // negative int
  EXPECT_THROW(guest_with_vps({0, 1, 2}, 2).validate(), InputError);               // nr_cpu_ids > NR_CPUS
  GuestConfig c = guest_with_vps({0, 1});
  c.online = {0, 1};
  c.present = {0};
  EXPECT_THROW(c.validate(), InputError);
  GuestConfig m = guest_with_vps({0, 70});
  m.hv_max_vp_index = 69;
  EXPECT_THROW(m.validate(), InputError);
  GuestConfig v = guest_with_vps({0, 1});
  v.hv_vp_index.pop_back();
  EXPECT_THROW(LinuxHvGuest(v, GuestPolicy::mainline()), InputError);
  EXPECT_THROW(policy_from_name("v4"), InputError);
  EXPECT_EQ(policy_from_name("seed-v2"), GuestPolicy::seed_v2());
}

TEST(SendRequestValidation, RejectsRequestsTheKernelCannotMake) {
  GuestConfig cfg = guest_with_vps({0, 1, 2});
  cfg.online = {0, 1};
  LinuxHvGuest g(cfg, GuestPolicy::mainline());
  const HypervisorCall hv = [](unsigned, const HypercallRegs&, const GuestMemory&) { return 0ull; };
  EXPECT_THROW(g.send_IPI(2, 1, 0xFB, hv), InputError);                               // sender offline
  EXPECT_THROW(g.send_IPI(0, 3, 0xFB, hv), InputError);                               // >= nr_cpu_ids
  EXPECT_THROW(g.send_IPI_mask(0, Cpumask::of(128, {1}), 0xFB, hv), InputError);      // wrong NR_CPUS
  EXPECT_THROW(g.send_IPI_mask(0, Cpumask::of(64, {5}), 0xFB, hv), InputError);       // >= nr_cpu_ids
  EXPECT_THROW(g.send({SendHook::kSendIpiMask, 0, 0xFB, 0, std::nullopt}, hv), InputError);
  EXPECT_THROW(g.send({SendHook::kSendIpi, 0, 0xFB, 1, Cpumask(64)}, hv), InputError);
  Partition p(PartitionConfig::identity(1));
  EXPECT_THROW(run_on_partition(g, p, {SendHook::kSendIpi, 1, 0xFB, 0, std::nullopt}), InputError);  // no vCPU
}

}  // namespace
}  // namespace ipilab::hv
