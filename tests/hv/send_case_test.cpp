// One Linux guest send per kernel version (src/hv/send_case.h) against the modelled KVM host: the
// exact hypercalls (control word, RDX/R8, input QWORDs), the native fallback and its argument, the
// inner __send_ipi_* return value and the oracle's verdict. Each case names the code it follows:
// arch/x86/hyperv/hv_apic.c at v5.4, the seed patch v2 (LKML 25 Oct 2019), b264f57fde0c (v5.5..v5.12),
// dfb5c1e12c28 without f5c20e4a5f18, mainline (6.12); include/asm-generic/mshyperv.h
// (__cpumask_to_vpset, hv_do_rep_hypercall); KVM arch/x86/kvm/hyperv.c per kvm_version.h.
#include "hv/send_case.h"

#include <gtest/gtest.h>

#include "common/error.h"
#include "common/le.h"

namespace ipilab::hv {
namespace {

constexpr std::uint32_t kCallFunctionSingle = 0xFB;  // CALL_FUNCTION_SINGLE_VECTOR
constexpr std::uint32_t kReschedule = 0xFD;          // RESCHEDULE_VECTOR
using U = std::vector<unsigned>;
using Q = std::vector<std::uint64_t>;

SendCase one(LinuxVersion v, std::vector<std::uint32_t> vps, unsigned self, unsigned target) {
  SendCase c;
  c.linux_version = v;
  c.cpu_vp = std::move(vps);
  c.hook = SendHook::kSendIpi;
  c.self = self;
  c.target_cpu = target;
  c.vector = kCallFunctionSingle;
  return c;
}
SendCase hook(LinuxVersion v, std::vector<std::uint32_t> vps, SendHook h, U mask = {}) {
  SendCase c;
  c.linux_version = v;
  c.cpu_vp = std::move(vps);
  c.hook = h;
  c.mask = std::move(mask);
  c.vector = kReschedule;
  return c;
}
Q qwords(const IssuedHypercall& h) {
  Q q;
  for (std::size_t i = 0; i + 8 <= h.input.size(); i += 8) q.push_back(le::get_u64(h.input.data() + i));
  return q;
}

// ---- v5.4: __send_ipi_one builds a cpumask (CPU_MASK_NONE) ----------------------------------------
TEST(SendV54, SendIpiOne_StackCpumaskThenFastSendIpi) {
  const auto r = run_send_case(one(LinuxVersion::kV5_4, {0, 1}, 0, 1));
  ASSERT_EQ(r.send.hypercalls.size(), 1u);
  EXPECT_EQ(r.send.hypercalls[0].regs.rcx, 0x1000Bu);  // HVCALL_SEND_IPI | HV_HYPERCALL_FAST_BIT
  EXPECT_EQ(r.send.hypercalls[0].regs.rdx, 0xFBu);
  EXPECT_EQ(r.send.hypercalls[0].regs.r8, 0x2u);
  EXPECT_EQ(r.send.work.stack_cpumask_bytes_zeroed, 1024u);  // NR_CPUS 8192 / 8
  EXPECT_EQ(r.send.hv_function, "__send_ipi_one");
  EXPECT_EQ(r.send.hv_returned, true);
  EXPECT_FALSE(r.send.native);
  ASSERT_TRUE(r.oracle);
  EXPECT_TRUE(r.oracle->ok());
  EXPECT_EQ(r.oracle->delivered, U{1});
}

TEST(SendV54, VpIndex4096_CpumaskToVpsetReturns0_MeansSetAllToEveryone) {
  // v5.4 __send_ipi_mask_ex: `if (!nr_bank) ipi_arg->vp_set.format = HV_GENERIC_SET_ALL;`
  const auto r = run_send_case(one(LinuxVersion::kV5_4, {0, 1, 4096}, 0, 2));
  ASSERT_EQ(r.send.hypercalls.size(), 1u);
  EXPECT_EQ(r.send.hypercalls[0].regs.rcx, 0x15u);  // varhead 0
  EXPECT_EQ(qwords(r.send.hypercalls[0]), (Q{0xFB, HV_GENERIC_SET_ALL, 0}));
  ASSERT_TRUE(r.oracle);
  EXPECT_EQ(r.oracle->extra, (U{0, 1}));  // misdelivered to everyone
  EXPECT_EQ(r.oracle->missing, U{2});     // no KVM vCPU can have VP 4096 (noted)
  ASSERT_EQ(r.host_map.beyond_cpus, U{2});
  EXPECT_NE(r.notes.at(0).find("VP index >= 4096"), std::string::npos);
}

TEST(SendMainline, VpIndex4096_FallsBackToNative) {
  // mainline: `if (nr_bank <= 0 || ...) goto ipi_mask_ex_done;` -> false -> orig_apic.send_IPI
  const auto r = run_send_case(one(LinuxVersion::kMainline, {0, 1, 4096}, 0, 2));
  EXPECT_TRUE(r.send.hypercalls.empty());
  EXPECT_EQ(r.send.hv_returned, false);
  ASSERT_TRUE(r.send.native);
  EXPECT_EQ(r.send.native->hook, SendHook::kSendIpi);
  EXPECT_EQ(r.send.native->argument, U{2});
  EXPECT_TRUE(r.oracle->ok());
}

// ---- the seed patch: VP number vs CPU number ------------------------------------------------------
TEST(SendV510, Vp70_ExWithTwoDenseBanks) {
  const auto r = run_send_case(one(LinuxVersion::kV5_10, {0, 70, 2, 3}, 0, 1));
  ASSERT_EQ(r.send.hypercalls.size(), 1u);
  EXPECT_EQ(r.send.hypercalls[0].regs.rcx, 0x40015u);  // SEND_IPI_EX, varhead 2
  EXPECT_EQ(r.send.hypercalls[0].regs.rdx, r.guest.input_page_gpa(0));
  EXPECT_EQ(qwords(r.send.hypercalls[0]), (Q{0xFB, 0, 0x3, 0, 1ull << 6}));
  EXPECT_EQ(r.host.at(0)->status, HvStatus::HV_STATUS_SUCCESS);
  EXPECT_TRUE(r.oracle->ok());
  EXPECT_EQ(r.oracle->delivered, U{1});
}

TEST(SendSeedV2, CpuBelow64WithVp70_WrapsToVp6) {
  const auto r = run_send_case(one(LinuxVersion::kSeedV2, {0, 70, 2, 3, 4, 5, 6, 7}, 0, 1));
  ASSERT_EQ(r.send.hypercalls.size(), 1u);
  EXPECT_EQ(r.send.hypercalls[0].regs.r8, 1ull << 6);  // BIT_ULL(70): x86 SHL counts mod 64
  EXPECT_EQ(r.oracle->missing, U{1});
  EXPECT_EQ(r.oracle->extra, U{6});
  EXPECT_EQ(r.send.hv_returned, true);  // the guest believes it worked
}

TEST(SendSeedV2, VpInval_NoCheck_ShiftsByMinusOne) {
  // seed v2 has no VP_INVAL check: BIT_ULL((int)VP_INVAL = -1) -> 1 << 63 on x86.
  const auto v2 = run_send_case(one(LinuxVersion::kSeedV2, {0, VP_INVAL}, 0, 1));
  ASSERT_EQ(v2.send.hypercalls.size(), 1u);
  EXPECT_EQ(v2.send.hypercalls[0].regs.r8, 1ull << 63);
  EXPECT_EQ(v2.oracle->missing, U{1});
  // v3 (b264f57fde0c): `if (!hv_hypercall_pg || (vp == VP_INVAL)) return false;` -> native.
  const auto v3 = run_send_case(one(LinuxVersion::kV5_10, {0, VP_INVAL}, 0, 1));
  EXPECT_TRUE(v3.send.hypercalls.empty());
  EXPECT_EQ(v3.send.hv_returned, false);
  EXPECT_EQ(v3.send.native->argument, U{1});
  EXPECT_TRUE(v3.oracle->ok());
  EXPECT_EQ(v3.host_map.inval_cpus, U{1});
}

// ---- exclude_self (dfb5c1e12c28) and its fix (f5c20e4a5f18) --------------------------------------------
TEST(SendExcludeSelf, Unfixed_AllButSelfWithMaskEqualPresent_SetAllHitsSelf) {
  auto c = hook(LinuxVersion::kExcludeSelfUnfixed, {0, 1, 2, 70}, SendHook::kSendIpiAllButSelf);
  const auto r = run_send_case(c);
  ASSERT_EQ(r.send.hypercalls.size(), 1u);
  EXPECT_EQ(r.send.hypercalls[0].regs.rcx, 0x15u);
  EXPECT_EQ(qwords(r.send.hypercalls[0]), (Q{0xFD, HV_GENERIC_SET_ALL, 0}));
  EXPECT_EQ(r.oracle->extra, U{0});  // the sender
  EXPECT_FALSE(r.oracle->ok());
}

TEST(SendExcludeSelf, Fixed_AndV54_SparseWithoutSelf) {
  // mainline: `!cpumask_equal(mask, cpu_present_mask) || exclude_self` -> sparse, self skipped.
  // v5.4: the stack copy without self is not equal to present -> sparse too.
  for (const auto v : {LinuxVersion::kMainline, LinuxVersion::kV5_4}) {
    const auto r = run_send_case(hook(v, {0, 1, 2, 70}, SendHook::kSendIpiAllButSelf));
    ASSERT_EQ(r.send.hypercalls.size(), 1u);
    EXPECT_EQ(r.send.hypercalls[0].regs.rcx, 0x40015u);
    EXPECT_EQ(qwords(r.send.hypercalls[0]), (Q{0xFD, 0, 0x3, 0x6, 1ull << 6}));
    EXPECT_TRUE(r.oracle->ok());
    EXPECT_EQ(r.oracle->delivered, (U{1, 2, 3}));
    EXPECT_EQ(r.send.work.stack_cpumask_bytes, v == LinuxVersion::kV5_4 ? 1024u : 0u);  // cpumask_copy
  }
}

TEST(SendExcludeSelf, MaskOfOnlySelf_NothingSent) {
  const auto r = run_send_case(hook(LinuxVersion::kMainline, {0, 1}, SendHook::kSendIpiMaskAllButSelf, {0}));
  EXPECT_TRUE(r.send.hypercalls.empty());
  EXPECT_EQ(r.send.hv_returned, true);  // weight == 1 && cpumask_test_cpu(this_cpu)
  EXPECT_FALSE(r.send.native);
  EXPECT_TRUE(r.oracle->ok());
}

// ---- each version's handling of the 64-bit result ------------------------------------------------------
struct StatusCase {
  LinuxVersion version;
  std::uint64_t rax;
  bool success;
};

TEST(SendResultBits, OneWordManyVerdicts) {
  // __send_ipi_one: v5.4 goes through __send_ipi_mask (int: bits 31:0), v5.10 tests !status (63:0),
  // mainline hv_result_success (15:0).
  const std::vector<StatusCase> cases = {
      {LinuxVersion::kV5_4, 0x1'0000'0000ull, true},   {LinuxVersion::kV5_10, 0x1'0000'0000ull, false},
      {LinuxVersion::kMainline, 0x1'0000'0000ull, true}, {LinuxVersion::kV5_4, 0x1'0000ull, false},
      {LinuxVersion::kV5_10, 0x1'0000ull, false},       {LinuxVersion::kMainline, 0x1'0000ull, true},
      {LinuxVersion::kSeedV2, 0x1'0000'0000ull, false}, {LinuxVersion::kExcludeSelfUnfixed, 0x1'0000ull, true},
      {LinuxVersion::kMainline, 0x3, false},            {LinuxVersion::kV5_4, 0x3, false},
  };
  for (const auto& sc : cases) {
    auto c = one(sc.version, {0, 1}, 0, 1);
    c.hypercall_status = sc.rax;
    const auto r = run_send_case(c);
    SCOPED_TRACE(std::string(linux_version_info(sc.version).name) + " " + std::to_string(sc.rax));
    ASSERT_EQ(r.send.hypercalls.size(), 1u);
    EXPECT_EQ(r.send.hypercalls[0].result, sc.rax);
    EXPECT_EQ(r.send.hypercalls[0].judged_success, sc.success);
    EXPECT_EQ(r.send.hv_returned, sc.success);
    EXPECT_EQ(r.send.native.has_value(), !sc.success);
    ASSERT_TRUE(r.oracle);
    // status 15:0 == 0 -> the host delivered; a fallback then delivers again (duplicated)
    const bool host_counts = (sc.rax & 0xFFFF) == 0;
    EXPECT_EQ(r.oracle->duplicated, host_counts && !sc.success ? U{1} : U{});
    EXPECT_TRUE(r.oracle->missing.empty());
  }
}

TEST(SendResultBits, ExPathJudgedAsIntInV54) {
  // __send_ipi_mask_ex in v5.4: `int ret = hv_do_rep_hypercall(...)`; reps completed (43:32) are cut off.
  auto c = one(LinuxVersion::kV5_4, {0, 70}, 0, 1);
  c.hypercall_status = 0x5'0000'0000ull;
  EXPECT_EQ(run_send_case(c).send.hv_returned, true);
  c.linux_version = LinuxVersion::kV5_10;  // v5.10's Ex call is in __send_ipi_mask_ex too: int
  EXPECT_EQ(run_send_case(c).send.hv_returned, true);
}

// ---- vectors, features, masks --------------------------------------------------------------------------
TEST(SendVectors, OutOfRangeVectorsGoNativeWithoutHypercall) {
  for (const std::uint32_t v : {0x02u, 0x0Fu, 0x100u, 0x1FBu, 0xFFFFFFFFu}) {
    for (const auto lv : {LinuxVersion::kV5_4, LinuxVersion::kSeedV2, LinuxVersion::kMainline}) {
      auto c = one(lv, {0, 1}, 0, 1);
      c.vector = v;
      const auto r = run_send_case(c);
      EXPECT_TRUE(r.send.hypercalls.empty()) << v;
      ASSERT_TRUE(r.send.native);
      EXPECT_EQ(r.send.native->vector, v);
      EXPECT_EQ(r.send.hv_returned, false);
    }
  }
  auto c = one(LinuxVersion::kMainline, {0, 1}, 0, 1);
  c.vector = 0x10;  // HV_IPI_LOW_VECTOR
  EXPECT_EQ(run_send_case(c).send.hypercalls.size(), 1u);
}

TEST(SendFeatures, NoClusterIpi_NativeCallbackDirectly) {
  auto c = hook(LinuxVersion::kMainline, {0, 1, 2, 3}, SendHook::kSendIpiMask, {2, 3});
  c.cluster_ipi = false;
  const auto r = run_send_case(c);
  EXPECT_TRUE(r.send.hypercalls.empty());
  EXPECT_FALSE(r.send.hv_returned.has_value());
  EXPECT_TRUE(r.send.hv_function.empty());
  EXPECT_EQ(r.send.native->hook, SendHook::kSendIpiMask);
  EXPECT_EQ(r.send.native->argument, (U{2, 3}));
  EXPECT_EQ(r.send.work.tracepoint_sites, 0u);
  c.hook = SendHook::kSendIpiAll;
  const auto all = run_send_case(c);
  EXPECT_EQ(all.send.native->hook, SendHook::kSendIpiAll);
  EXPECT_FALSE(all.send.native->argument.has_value());
  EXPECT_EQ(all.send.native->cpus, (U{0, 1, 2, 3}));
}

TEST(SendFeatures, NoExMasksOrNoPage_Native) {
  auto c = one(LinuxVersion::kMainline, {0, 70}, 0, 1);
  c.ex_processor_masks = false;
  auto r = run_send_case(c);
  EXPECT_TRUE(r.send.hypercalls.empty());
  EXPECT_EQ(r.send.hv_returned, false);
  c = one(LinuxVersion::kMainline, {0, 1}, 0, 1);
  c.hypercall_page = false;
  r = run_send_case(c);
  EXPECT_TRUE(r.send.hypercalls.empty());
  EXPECT_EQ(r.send.native->hook, SendHook::kSendIpi);
}

TEST(SendMasks, SendIpiAll_SetAllOnlyWhenOnlineEqualsPresent) {
  auto c = hook(LinuxVersion::kMainline, {0, 1, 2, 70}, SendHook::kSendIpiAll);
  auto r = run_send_case(c);
  EXPECT_EQ(qwords(r.send.hypercalls.at(0)), (Q{0xFD, HV_GENERIC_SET_ALL, 0}));
  EXPECT_TRUE(r.oracle->ok());
  c.online = U{0, 1, 3};  // CPU 2 present, offline
  r = run_send_case(c);
  EXPECT_EQ(qwords(r.send.hypercalls.at(0)), (Q{0xFD, 0, 0x3, 0x3, 1ull << 6}));
  EXPECT_EQ(r.oracle->delivered, (U{0, 1, 3}));
}

TEST(SendMasks, EmptyMask_TrueWithoutHypercall) {
  const auto r = run_send_case(hook(LinuxVersion::kV5_4, {0, 1}, SendHook::kSendIpiMask, {}));
  EXPECT_TRUE(r.send.hypercalls.empty());
  EXPECT_EQ(r.send.hv_returned, true);
  EXPECT_TRUE(r.oracle->ok());
}

TEST(SendMasks, VpInvalInMask_WholeMaskFallsBack) {
  const auto r = run_send_case(hook(LinuxVersion::kV5_4, {0, 1, VP_INVAL}, SendHook::kSendIpiMask, {1, 2}));
  EXPECT_TRUE(r.send.hypercalls.empty());
  EXPECT_EQ(r.send.native->argument, (U{1, 2}));
  EXPECT_TRUE(r.oracle->ok());
}

TEST(SendMaxVpIndex, Override4096_MainlineNativeV54SetAll) {
  auto c = one(LinuxVersion::kMainline, {0, 70}, 0, 1);
  c.max_vp_index = 4096;  // hv_max_vp_index / 64 >= 64 -> __cpumask_to_vpset returns 0
  EXPECT_EQ(run_send_case(c).send.native->hook, SendHook::kSendIpi);
  c.linux_version = LinuxVersion::kV5_4;
  EXPECT_EQ(qwords(run_send_case(c).send.hypercalls.at(0)), (Q{0xFB, HV_GENERIC_SET_ALL, 0}));
  c.linux_version = LinuxVersion::kMainline;
  c.max_vp_index = 200;  // banks 0..3 cleared, set built over 2
  const auto r = run_send_case(c);
  EXPECT_EQ(r.send.work.vpset_banks_cleared, 4u);
  EXPECT_EQ(qwords(r.send.hypercalls.at(0)), (Q{0xFB, 0, 0x3, 0, 1ull << 6}));
}

// ---- the host side of a send -----------------------------------------------------------------------
TEST(SendOnOldKvm, SetAllOnKvmV515_DeliversNothing_AllLost) {
  auto c = hook(LinuxVersion::kMainline, {0, 1, 2, 70}, SendHook::kSendIpiAll);
  c.kvm_version = KvmVersion::kV5_15;  // before 3244867af8c0
  const auto r = run_send_case(c);
  EXPECT_EQ(r.host.at(0)->status, HvStatus::HV_STATUS_SUCCESS);
  EXPECT_TRUE(r.host.at(0)->delivered.empty());
  EXPECT_EQ(r.send.hv_returned, true);
  EXPECT_EQ(r.oracle->missing, (U{0, 1, 2, 3}));
}

TEST(SendDuplicateVp, TwoCpusOneVp_BothReceive) {
  const auto r = run_send_case(one(LinuxVersion::kMainline, {0, 5, 5}, 0, 1));
  EXPECT_EQ(r.send.hypercalls.at(0).regs.r8, 1ull << 5);
  EXPECT_EQ(r.oracle->delivered, (U{1, 2}));
  EXPECT_EQ(r.oracle->extra, U{2});
  EXPECT_TRUE(r.oracle->duplicated.empty());
}

TEST(SendSenderWithoutVcpu, NeedsAForcedStatus) {
  auto c = one(LinuxVersion::kMainline, {VP_INVAL, 1}, 0, 1);
  EXPECT_THROW(run_send_case(c), InputError);
  c.hypercall_status = 0;
  const auto r = run_send_case(c);
  EXPECT_FALSE(r.oracle.has_value());
  EXPECT_FALSE(r.oracle_reason.empty());
  EXPECT_FALSE(r.host.at(0).has_value());
  c.vector = 2;  // no hypercall at all: the oracle runs
  EXPECT_TRUE(run_send_case(c).oracle->ok());
}

TEST(SendBadInput, NamesTheField) {
  auto place = [](SendCase c) -> std::string {
    try {
      run_send_case(c);
    } catch (const InputError& e) {
      return e.place();
    }
    return "no error";
  };
  EXPECT_EQ(place(one(LinuxVersion::kMainline, {0, 0x80000000u}, 0, 1)), "cpu_vp[1]");
  auto c = one(LinuxVersion::kMainline, {0, 1}, 0, 1);
  c.max_vp_index = 0;
  EXPECT_EQ(place(c), "max_vp_index");
  c = one(LinuxVersion::kMainline, {0, 1}, 0, 1);
  c.online = U{0, 1};
  c.present = U{0};
  EXPECT_EQ(place(c), "online");
  c = one(LinuxVersion::kMainline, {0, 1}, 1, 1);
  c.online = U{0};
  EXPECT_EQ(place(c), "self");
  EXPECT_EQ(place(one(LinuxVersion::kMainline, {0, 1}, 0, 2)), "target_cpu");
  EXPECT_EQ(place(hook(LinuxVersion::kMainline, {0, 1}, SendHook::kSendIpiMask, {5})), "mask");
  c = one(LinuxVersion::kMainline, {0, 1, 2}, 0, 1);
  c.nr_cpus = 2;
  EXPECT_EQ(place(c), "cpu_vp");
  c.cpu_vp.clear();
  c.nr_cpus = 64;
  EXPECT_EQ(place(c), "cpu_vp");
}

}  // namespace
}  // namespace ipilab::hv
