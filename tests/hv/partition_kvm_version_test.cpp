// The host side per KVM version (src/hv/kvm_version.h): each upstream fix that changed an answer to
// a Hyper-V IPI hypercall, shown by the exact status, the bytes KVM read and who received the vector
// before and after it; and duplicate VP indices, which KVM allows (kvm_hv_set_msr checks only
// new_vp_index >= KVM_MAX_VCPUS) and delivers to every vCPU holding the index.
#include <gtest/gtest.h>

#include "hv/kvm_version.h"
#include "partition_cases.h"

namespace ipilab::hv {
namespace {

using testdata::ex_page;
using testdata::fast_ipi;
using testdata::kInputGpa;
using testdata::memory_with;
using testdata::slow;
using testdata::vps_of;
using testdata::xmm_ex;

using testdata::INPUT;
using testdata::SUCCESS;
constexpr std::uint32_t kV = 0xFE;

Partition selftest_on(KvmVersion v) {
  auto c = testdata::selftest_config();  // vCPUs 0, 1, 2 with VP indices 0, 2, 65
  c.kvm_version = v;
  return Partition(c);
}

// ---- names -----------------------------------------------------------------------------------------
TEST(KvmVersions, NamesRoundTripAndAliases) {
  ASSERT_EQ(kvm_versions().size(), 4u);
  for (const auto& i : kvm_versions()) EXPECT_EQ(kvm_version_from_name(i.name), i.version);
  EXPECT_EQ(kvm_version_name(KvmVersion::kV5_15), "v5.15");
  EXPECT_EQ(kvm_version_from_name("v5.17"), KvmVersion::kV5_16);
  EXPECT_EQ(kvm_version_from_name("v6.14"), KvmVersion::kMainline);
  EXPECT_FALSE(kvm_version_from_name("v5.14").has_value());
  EXPECT_EQ(kvm_behaviour(KvmVersion::kMainline), KvmBehaviour{});
  EXPECT_FALSE(kvm_behaviour(KvmVersion::kV5_18).lapic_in_kernel_checked);
  EXPECT_TRUE(kvm_behaviour(KvmVersion::kV5_18).xmm_fast_send_ipi_ex);
  EXPECT_TRUE(kvm_behaviour(KvmVersion::kV5_16).set_all_ignores_bank_count);
  EXPECT_FALSE(kvm_behaviour(KvmVersion::kV5_16).banks_from_varhead);
  EXPECT_FALSE(kvm_behaviour(KvmVersion::kV5_15).set_all_ignores_bank_count);
}

// ---- 3244867af8c0: SET_ALL with no banks -------------------------------------------------------------
// Linux's SET_ALL (hv_apic.c __send_ipi_mask_ex): format 1, valid_bank_mask 0, varhead 0.
TEST(Kvm3244867af8c0, SetAllWithoutBanks_V515SucceedsAndDeliversNothing) {
  const auto mem = memory_with(ex_page(kV, HV_GENERIC_SET_ALL, 0, {}));
  const auto old = selftest_on(KvmVersion::kV5_15).execute(0, slow(HVCALL_SEND_IPI_EX, 0), mem);
  EXPECT_EQ(old.status, SUCCESS);
  EXPECT_EQ(old.rax, 0u);
  EXPECT_TRUE(old.delivered.empty());  // `if (!sparse_banks_len) goto ret_success;`
  EXPECT_EQ(old.work.guest_bytes_read, 24u);
  EXPECT_EQ(old.work.vcpus_scanned, 0u);
  for (const auto v : {KvmVersion::kV5_16, KvmVersion::kV5_18, KvmVersion::kMainline}) {
    const auto o = selftest_on(v).execute(0, slow(HVCALL_SEND_IPI_EX, 0), mem);
    EXPECT_EQ(o.status, SUCCESS) << kvm_version_name(v);
    EXPECT_EQ(vps_of(o), (std::vector<std::uint32_t>{0, 2, 65})) << kvm_version_name(v);  // sender included
    EXPECT_EQ(o.work.guest_bytes_read, 24u);
  }
}

TEST(Kvm3244867af8c0, SetAllWithoutBanks_V515SkipsTheVectorCheck) {
  const auto mem = memory_with(ex_page(0x0F, HV_GENERIC_SET_ALL, 0, {}));  // vector 0x0F is illegal
  EXPECT_EQ(selftest_on(KvmVersion::kV5_15).execute(0, slow(HVCALL_SEND_IPI_EX, 0), mem).status, SUCCESS);
  const auto o = selftest_on(KvmVersion::kV5_16).execute(0, slow(HVCALL_SEND_IPI_EX, 0), mem);
  EXPECT_EQ(o.status, INPUT);
  EXPECT_EQ(o.rejected_by, "vector outside 0x10..0xFF");
}

TEST(Kvm3244867af8c0, SetAllWithAValidBankMask_V515DeliversToAllWithoutReadingBanks) {
  // valid_bank_mask 0x1 and varhead 0: before bd1ba5732bb9 varhead is not looked at, the bank count 1
  // is non-zero, and `!all_cpus && kvm_read_guest(...)` reads nothing for SET_ALL.
  const auto mem = memory_with(ex_page(kV, HV_GENERIC_SET_ALL, 0x1, {0}));
  const auto old = selftest_on(KvmVersion::kV5_15).execute(0, slow(HVCALL_SEND_IPI_EX, 0), mem);
  EXPECT_EQ(old.status, SUCCESS);
  EXPECT_EQ(vps_of(old), (std::vector<std::uint32_t>{0, 2, 65}));
  EXPECT_EQ(old.work.guest_bytes_read, 24u);
  EXPECT_EQ(old.work.banks_read, 0u);
  // mainline: varhead 0 != popcount(0x1) -> INVALID_HYPERCALL_INPUT even for SET_ALL (bd1ba5732bb9).
  const auto now = selftest_on(KvmVersion::kMainline).execute(0, slow(HVCALL_SEND_IPI_EX, 0), mem);
  EXPECT_EQ(now.status, INPUT);
  EXPECT_EQ(now.rejected_by, "varhead != popcount(valid_bank_mask)");
}

// ---- bd1ba5732bb9: bank count from VARHEAD ------------------------------------------------------------
TEST(KvmBd1ba5732bb9, VarheadZeroWithTwoBanks_V516ReadsPopcountBanks) {
  const auto mem = memory_with(ex_page(kV, HV_GENERIC_SET_SPARSE_4K, 0x3, {1ull << 2, 1ull << 1}));
  const auto old = selftest_on(KvmVersion::kV5_16).execute(0, slow(HVCALL_SEND_IPI_EX, 0), mem);
  EXPECT_EQ(old.status, SUCCESS);
  EXPECT_EQ(vps_of(old), (std::vector<std::uint32_t>{2, 65}));
  EXPECT_EQ(old.work.guest_bytes_read, 40u);  // 24-byte header + 2 banks
  EXPECT_EQ(old.work.banks_read, 2u);
  EXPECT_EQ(old.work.guest_reads, 2u);
  const auto now = selftest_on(KvmVersion::kV5_18).execute(0, slow(HVCALL_SEND_IPI_EX, 0), mem);
  EXPECT_EQ(now.status, INPUT);
  EXPECT_EQ(now.rejected_by, "varhead != popcount(valid_bank_mask)");
  EXPECT_EQ(now.work.guest_bytes_read, 24u);
}

TEST(KvmBd1ba5732bb9, VarheadTwoWithOneBank_V516IgnoresTheVarhead) {
  const auto mem = memory_with(ex_page(kV, HV_GENERIC_SET_SPARSE_4K, 0x1, {1ull << 2, 1ull << 1}));
  const auto old = selftest_on(KvmVersion::kV5_16).execute(0, slow(HVCALL_SEND_IPI_EX, 2), mem);
  EXPECT_EQ(old.status, SUCCESS);
  EXPECT_EQ(vps_of(old), std::vector<std::uint32_t>{2});  // only the one bank popcount announces
  EXPECT_EQ(old.work.guest_bytes_read, 32u);
  EXPECT_EQ(selftest_on(KvmVersion::kMainline).execute(0, slow(HVCALL_SEND_IPI_EX, 2), mem).status, INPUT);
}

TEST(Kvm79661c3766f8, SparseReadsCappedAtMaxVcpusBanks) {
  // KVM_MAX_VCPUS 64 -> one bank can hold a legal VP. The input ends right after bank 0, so bank 1
  // is not backed: capped KVM never reads it, KVM before 79661c3766f8 does and fails.
  const std::vector<std::uint8_t> page = ex_page(kV, HV_GENERIC_SET_SPARSE_4K, 0x3, {1ull << 2});
  const FlatGuestMemory mem(kInputGpa, page);  // exactly 32 bytes
  for (const auto v : {KvmVersion::kV5_16, KvmVersion::kV5_18}) {
    PartitionConfig c = testdata::selftest_config();
    c.vp_index_of_vcpu = {0, 2};
    c.max_vcpus = 64;
    c.kvm_version = v;
    // v5.16 ignores varhead; give mainline's consistent varhead 2 to both.
    const auto o = Partition(c).execute(0, slow(HVCALL_SEND_IPI_EX, 2), mem);
    if (v == KvmVersion::kV5_16) {
      EXPECT_EQ(o.status, INPUT);
      EXPECT_EQ(o.rejected_by, "slow SEND_IPI_EX: sparse banks at RDX + 24 not readable");
    } else {
      EXPECT_EQ(o.status, SUCCESS);
      EXPECT_EQ(vps_of(o), std::vector<std::uint32_t>{2});
      EXPECT_EQ(o.work.banks_read, 1u);
      EXPECT_EQ(o.work.guest_bytes_read, 32u);
    }
  }
}

TEST(Kvm40421f38f637, SendIpiWithVarhead_AcceptedBeforeRejectedAfter) {
  HypercallRegs r = fast_ipi(kV, 1ull << 2);
  r.rcx = encode_control({HVCALL_SEND_IPI, true, 1, 0, 0, 0});
  const auto old = selftest_on(KvmVersion::kV5_16).execute(0, r, FlatGuestMemory{});
  EXPECT_EQ(old.status, SUCCESS);
  EXPECT_EQ(vps_of(old), std::vector<std::uint32_t>{2});
  const auto now = selftest_on(KvmVersion::kV5_18).execute(0, r, FlatGuestMemory{});
  EXPECT_EQ(now.status, INPUT);
  EXPECT_EQ(now.rejected_by, "SEND_IPI with a variable header (varhead != 0)");
}

TEST(Kvm413af6601f76, ReservedControlBits_IgnoredBeforeRejectedAfter) {
  for (const std::uint64_t bit : {1ull << 27, 1ull << 31, 1ull << 44, 1ull << 63}) {
    HypercallRegs r = fast_ipi(kV, 1ull << 2);
    r.rcx |= bit;
    const auto old = selftest_on(KvmVersion::kV5_16).execute(0, r, FlatGuestMemory{});
    EXPECT_EQ(old.status, SUCCESS) << std::hex << bit;
    EXPECT_EQ(vps_of(old), std::vector<std::uint32_t>{2});
    const auto now = selftest_on(KvmVersion::kMainline).execute(0, r, FlatGuestMemory{});
    EXPECT_EQ(now.status, INPUT);
    EXPECT_EQ(now.rejected_by, "reserved control bits set (31:27, 47:44, 63:60)");
  }
}

// ---- 47d3e5cdfe60: SEND_IPI_EX as an XMM fast hypercall -----------------------------------------------
TEST(Kvm47d3e5cdfe60, XmmFastEx_RejectedBeforeWithoutReadingXmm) {
  const auto r = xmm_ex({kV, 0, {HV_GENERIC_SET_SPARSE_4K, 0x2, {1ull << 1}}}, 1);  // selftest case 6
  for (const auto v : {KvmVersion::kV5_15, KvmVersion::kV5_16}) {
    const auto o = selftest_on(v).execute(0, r, FlatGuestMemory{});
    EXPECT_EQ(o.status, INPUT) << kvm_version_name(v);
    EXPECT_EQ(o.rax, 0x3u);
    EXPECT_EQ(o.rejected_by, "fast SEND_IPI_EX (KVM before 47d3e5cdfe60 accepts only the memory form)");
    EXPECT_EQ(o.work.xmm_registers_read, 0u);
    EXPECT_TRUE(o.delivered.empty());
  }
  const auto o = selftest_on(KvmVersion::kV5_18).execute(0, r, FlatGuestMemory{});
  EXPECT_EQ(o.status, SUCCESS);
  EXPECT_EQ(vps_of(o), std::vector<std::uint32_t>{65});
  EXPECT_EQ(o.work.xmm_registers_read, 6u);
}

TEST(Kvm47d3e5cdfe60, XmmGateDidNotCoverEx_NoUdBeforeTheFix) {
  // enforce_cpuid without the XMM-input CPUID bit: mainline injects #UD (is_xmm_fast_hypercall);
  // before 47d3e5cdfe60 SEND_IPI_EX was not an XMM code, so the call reached the dispatch check.
  auto c = testdata::selftest_config();
  c.enforce_cpuid = true;
  c.xmm_input_available = false;
  const auto r = xmm_ex({kV, 0, {HV_GENERIC_SET_SPARSE_4K, 0x1, {1ull << 2}}}, 1);
  EXPECT_TRUE(Partition(c).execute(0, r, FlatGuestMemory{}).inject_ud);
  c.kvm_version = KvmVersion::kV5_16;
  const auto o = Partition(c).execute(0, r, FlatGuestMemory{});
  EXPECT_FALSE(o.inject_ud);
  EXPECT_EQ(o.status, INPUT);
}

// The ten hyperv_ipi selftest cases on every version: slow ones succeed everywhere; the XMM ones
// (4, 6, 8, 10) fail before 47d3e5cdfe60; case 9 (SET_ALL, no banks) delivers nothing on v5.15.
TEST(KvmVersions, SelftestCasesPerVersion) {
  for (const auto& info : kvm_versions()) {
    const Partition p = selftest_on(info.version);
    for (const auto& c : testdata::selftest_cases()) {
      const auto o = p.execute(0, c.regs, memory_with(c.page));
      const bool xmm = c.control.fast && c.control.call_code == HVCALL_SEND_IPI_EX;
      SCOPED_TRACE(std::string(info.name) + " case " + std::to_string(c.number));
      if (xmm && !p.behaviour().xmm_fast_send_ipi_ex) {
        EXPECT_EQ(o.status, INPUT);
        EXPECT_TRUE(o.delivered.empty());
      } else if (c.number == 9 && info.version == KvmVersion::kV5_15) {
        EXPECT_EQ(o.status, SUCCESS);
        EXPECT_TRUE(o.delivered.empty());
      } else {
        EXPECT_EQ(o.status, SUCCESS);
        EXPECT_EQ(vps_of(o), c.expect_vps);
      }
    }
  }
}

// ---- the 2025 in-kernel-LAPIC check ---------------------------------------------------------------
TEST(KvmLapicCheck, NoLapic_MainlineRejects_OlderVersionsAreRefusedAsAHostOops) {
  auto c = testdata::selftest_config();
  c.lapic_in_kernel = false;
  const auto o = Partition(c).execute(0, fast_ipi(kV, 1ull << 2), FlatGuestMemory{});
  EXPECT_EQ(o.status, INPUT);
  EXPECT_EQ(o.rejected_by, "no in-kernel LAPIC");
  for (const auto v : {KvmVersion::kV5_15, KvmVersion::kV5_16, KvmVersion::kV5_18}) {
    c.kvm_version = v;
    EXPECT_THROW(Partition{c}, std::invalid_argument) << kvm_version_name(v);
  }
  c.flavor = ErrorFlavor::XenViridian;  // the version is a KVM thing; Xen always has its vLAPIC
  EXPECT_NO_THROW(Partition{c});
}

// ---- duplicate VP indices (kvm_hv_set_msr HV_X64_MSR_VP_INDEX: only `>= KVM_MAX_VCPUS` refused) ---------
TEST(DuplicateVpIndex, EveryVcpuWithTheIndexReceives) {
  PartitionConfig c;
  c.vp_index_of_vcpu = {5, 5, 7};
  const Partition p(c);
  EXPECT_EQ(p.vcpu_of_vp(5), 0u);
  EXPECT_EQ(p.vcpus_of_vp(5), (std::vector<std::uint32_t>{0, 1}));
  EXPECT_EQ(p.vcpus_of_vp(6), std::vector<std::uint32_t>{});
  auto o = p.execute(2, fast_ipi(kV, 1ull << 5), FlatGuestMemory{});
  EXPECT_EQ(o.status, SUCCESS);
  EXPECT_EQ(o.delivered, (std::vector<Delivery>{{0, 5, kV}, {1, 5, kV}}));
  EXPECT_EQ(o.work.apic_set_irq_calls, 2u);
  o = p.execute(0, xmm_ex({kV, 0, {HV_GENERIC_SET_SPARSE_4K, 0x1, {(1ull << 5) | (1ull << 7)}}}, 1),
                FlatGuestMemory{});
  EXPECT_EQ(o.delivered, (std::vector<Delivery>{{0, 5, kV}, {1, 5, kV}, {2, 7, kV}}));
  for (const auto v : {KvmVersion::kV5_15, KvmVersion::kV5_16}) {  // every version walks all vCPUs
    c.kvm_version = v;
    EXPECT_EQ(vps_of(Partition(c).execute(2, fast_ipi(kV, 1ull << 5), FlatGuestMemory{})),
              (std::vector<std::uint32_t>{5, 5}));
  }
}

TEST(DuplicateVpIndex, XenRefusesThem) {
  PartitionConfig c;
  c.vp_index_of_vcpu = {5, 5, 7};
  c.flavor = ErrorFlavor::XenViridian;
  EXPECT_THROW(Partition{c}, std::invalid_argument);
}

}  // namespace
}  // namespace ipilab::hv
