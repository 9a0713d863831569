// Validation order and quirks of KVM's kvm_hv_hypercall / kvm_hv_send_ipi (arch/x86/kvm/hyperv.c), the
// stages of the KVM selftest hyperv_features (guest_test_hcalls_access), extra cases read from those two
// functions (in no selftest), the Xen viridian flavour (xen/arch/x86/hvm/viridian/viridian.c), VP index
// != vCPU number, configuration errors and hostile input.
#include <gtest/gtest.h>

#include <random>

#include "partition_cases.h"

namespace ipilab::hv {
namespace {

using testdata::ex_page;
using testdata::fast_ipi;
using testdata::ipi_page;
using testdata::kInputGpa;
using testdata::memory_with;
using testdata::slow;
using testdata::to_vec;
using testdata::vps_of;
using testdata::xmm_ex;

using testdata::INPUT;
using testdata::SUCCESS;
constexpr auto CODE = HvStatus::HV_STATUS_INVALID_HYPERCALL_CODE;
constexpr auto PARAM = HvStatus::HV_STATUS_INVALID_PARAMETER;
constexpr auto DENIED = HvStatus::HV_STATUS_ACCESS_DENIED;

const Partition& selftest_partition() {
  static const Partition p(testdata::selftest_config());
  return p;
}
Partition xen_partition() {
  auto c = testdata::selftest_config();
  c.flavor = ErrorFlavor::XenViridian;
  return Partition(c);
}

// ---- selftest hyperv_features guest_test_hcalls_access (enforce-CPUID mode, zeroed input page) -----
PartitionConfig features_config(bool cluster_ipi, bool ex_masks, bool xmm) {
  auto c = PartitionConfig::identity(2);
  c.enforce_cpuid = true;
  c.cluster_ipi_recommended = cluster_ipi;
  c.ex_processor_masks_recommended = ex_masks;
  c.xmm_input_available = xmm;
  return c;
}
const std::vector<std::uint8_t> kZeroPage(0x1000, 0);

TEST(KvmHypervFeatures, Stage0UnknownCode0xBEEFIsInvalidHypercallCode) {
  const Partition p(features_config(false, false, false));
  const auto o = p.execute(0, slow(0xBEEF), memory_with(kZeroPage));
  EXPECT_EQ(o.status, CODE);
  EXPECT_EQ(o.rax, 0x2u);
  EXPECT_EQ(o.rejected_by, "unknown call code");
  EXPECT_TRUE(o.modelled);
}

TEST(KvmHypervFeatures, Stage12SendIpiWithoutClusterIpiCpuidIsAccessDenied) {
  const Partition p(features_config(false, true, false));  // Ex masks exposed since stage 11
  const auto o = p.execute(0, slow(HVCALL_SEND_IPI), memory_with(kZeroPage));
  EXPECT_EQ(o.status, DENIED);
  EXPECT_EQ(o.work.guest_reads, 0u);  // rejected before reading the input
}

TEST(KvmHypervFeatures, Stage13SendIpiVectorZeroIsInvalidHypercallInput) {
  const Partition p(features_config(true, true, false));
  const auto o = p.execute(0, slow(HVCALL_SEND_IPI), memory_with(kZeroPage));
  EXPECT_EQ(o.status, INPUT);
  EXPECT_EQ(o.rejected_by, "vector outside 0x10..0xFF");
}

TEST(KvmHypervFeatures, Stage14SparseExWithNoBanksSucceedsWithoutVectorCheck) {
  const Partition p(features_config(true, true, false));
  const auto o = p.execute(0, slow(HVCALL_SEND_IPI_EX), memory_with(kZeroPage));  // vector 0!
  EXPECT_EQ(o.status, SUCCESS);
  EXPECT_TRUE(o.delivered.empty());
  EXPECT_EQ(o.work.vcpus_scanned, 0u);  // returns before kvm_hv_send_ipi_to_many
}

TEST(KvmHypervFeatures, XmmFastExWithoutXmmInputCpuidIsUd) {  // analogue of stage 17
  const Partition p(features_config(true, true, false));
  const auto o = p.execute(0, xmm_ex({0xFE, 0, {0, 0x1, {1ull << 1}}}, 1), FlatGuestMemory{});
  EXPECT_TRUE(o.inject_ud);
  EXPECT_FALSE(o.success());
  EXPECT_TRUE(o.delivered.empty());
  EXPECT_EQ(o.work.xmm_registers_read, 0u);
}

TEST(KvmHypervFeatures, XmmFastExWithXmmInputCpuidDelivers) {  // analogue of stage 18
  const Partition p(features_config(true, true, true));
  const auto o = p.execute(0, xmm_ex({0xFE, 0, {0, 0x1, {1ull << 1}}}, 1), FlatGuestMemory{});
  EXPECT_FALSE(o.inject_ud);
  EXPECT_EQ(o.status, SUCCESS);
  EXPECT_EQ(vps_of(o), std::vector<std::uint32_t>{1});
}

TEST(KvmHypervFeatures, Stage17FlushFastWithoutXmmIsUdBeforeDispatch) {
  const Partition p(features_config(true, true, false));
  HypercallRegs r;
  r.rcx = encode_control({HVCALL_FLUSH_VIRTUAL_ADDRESS_SPACE, true, 0, 0, 0, 0});
  EXPECT_TRUE(p.execute(0, r, FlatGuestMemory{}).inject_ud);
}

TEST(KvmHypervFeatures, Stage18FlushWithXmmIsReportedAsNotModelled) {
  // KVM returns SUCCESS here; ipilab does not model flushes and says so.
  const Partition p(features_config(true, true, true));
  HypercallRegs r;
  r.rcx = encode_control({HVCALL_FLUSH_VIRTUAL_ADDRESS_SPACE, true, 0, 0, 0, 0});
  const auto o = p.execute(0, r, FlatGuestMemory{});
  EXPECT_FALSE(o.inject_ud);
  EXPECT_FALSE(o.modelled);
  EXPECT_EQ(o.status, CODE);
  EXPECT_EQ(o.rejected_by, "call code implemented by KVM but not modelled by ipilab");
}

TEST(KvmHypervFeatures, ExNeedsBothClusterIpiAndExMasks) {
  const auto page = memory_with(ex_page(0xFE, 0, 0x1, {0x2}));
  EXPECT_EQ(Partition(features_config(true, false, true)).execute(0, slow(HVCALL_SEND_IPI_EX, 1), page).status, DENIED);
  EXPECT_EQ(Partition(features_config(false, true, true)).execute(0, slow(HVCALL_SEND_IPI_EX, 1), page).status, DENIED);
  EXPECT_EQ(Partition(features_config(true, true, true)).execute(0, slow(HVCALL_SEND_IPI_EX, 1), page).status, SUCCESS);
}

TEST(KvmHypervFeatures, WithoutEnforceCpuidTheCpuidBitsAreNotChecked) {
  auto c = features_config(false, false, false);
  c.enforce_cpuid = false;
  const Partition p(c);
  EXPECT_EQ(p.execute(0, slow(HVCALL_SEND_IPI), memory_with(ipi_page(0xFE, 0x2))).status, SUCCESS);
  const auto o = p.execute(0, xmm_ex({0xFE, 0, {0, 0x1, {1ull << 1}}}, 1), FlatGuestMemory{});
  EXPECT_EQ(o.status, SUCCESS);  // XMM read regardless of the CPUID bit
  EXPECT_EQ(o.work.xmm_registers_read, 6u);
}

// ---- kvm_hv_hypercall front end --------------------------------------------------------------------
TEST(KvmHypercallFrontEnd, NonZeroCplIsUdAndTouchesNothing) {
  auto r = slow(HVCALL_SEND_IPI);
  r.cpl = 3;
  const auto o = selftest_partition().execute(0, r, memory_with(ipi_page(0xFE, 0x4)));
  EXPECT_TRUE(o.inject_ud);
  EXPECT_TRUE(o.delivered.empty());
  EXPECT_EQ(o.work, HostWork{});
}

TEST(KvmHypercallFrontEnd, RealModeIsUd) {
  auto r = slow(HVCALL_SEND_IPI);
  r.protected_mode = false;
  EXPECT_TRUE(selftest_partition().execute(0, r, memory_with(ipi_page(0xFE, 0x4))).inject_ud);
}

TEST(KvmHypercallFrontEnd, EachReservedControlBitIsInvalidInput) {
  const auto mem = memory_with(ipi_page(0xFE, 0x4));
  for (int bit : {27, 28, 29, 30, 31, 44, 45, 46, 47, 60, 61, 62, 63}) {
    auto r = slow(HVCALL_SEND_IPI);
    r.rcx |= 1ull << bit;
    const auto o = selftest_partition().execute(0, r, mem);
    EXPECT_EQ(o.status, INPUT) << "bit " << bit;
    EXPECT_EQ(o.rejected_by, "reserved control bits set (31:27, 47:44, 63:60)") << "bit " << bit;
  }
}

TEST(KvmHypercallFrontEnd, AccessCheckComesBeforeReservedBits) {
  auto c = features_config(false, false, true);
  auto r = slow(HVCALL_SEND_IPI);
  r.rcx |= 1ull << 31;
  EXPECT_EQ(Partition(c).execute(0, r, FlatGuestMemory{}).status, DENIED);
}

TEST(KvmHypercallFrontEnd, ReservedBitsComeBeforeTheXmmGate) {
  auto r = xmm_ex({0xFE, 0, {0, 0x1, {0x2}}}, 1);
  r.rcx |= 1ull << 60;
  const auto o = Partition(features_config(true, true, false)).execute(0, r, FlatGuestMemory{});
  EXPECT_FALSE(o.inject_ud);
  EXPECT_EQ(o.status, INPUT);
}

// ---- extra cases (kvm_hv_hypercall / kvm_hv_send_ipi; in no selftest) -------------------------------
TEST(KvmSendIpi, VarheadNotEqualPopcountIsInvalidInput) {
  const auto o = selftest_partition().execute(0, slow(HVCALL_SEND_IPI_EX, 1),
                                              memory_with(ex_page(0xFE, 0, 0x3, {0x4, 0x2})));
  EXPECT_EQ(o.status, INPUT);
  EXPECT_EQ(o.rejected_by, "varhead != popcount(valid_bank_mask)");
  EXPECT_TRUE(o.delivered.empty());
}

TEST(KvmSendIpi, SetAllWithNonZeroVarheadIsInvalidInput) {
  const auto mem = memory_with(ex_page(0xFE, HV_GENERIC_SET_ALL, 0x0, {}));
  EXPECT_EQ(selftest_partition().execute(0, slow(HVCALL_SEND_IPI_EX, 1), mem).status, INPUT);
  // SET_ALL with valid_bank_mask 0x1 and varhead 1 passes: the popcount rule, not the format, decides.
  const auto mem2 = memory_with(ex_page(0xFE, HV_GENERIC_SET_ALL, 0x1, {0}));
  const auto o = selftest_partition().execute(0, slow(HVCALL_SEND_IPI_EX, 1), mem2);
  EXPECT_EQ(o.status, SUCCESS);
  EXPECT_EQ(vps_of(o), (std::vector<std::uint32_t>{0, 2, 65}));
}

TEST(KvmSendIpi, SendIpiWithVarheadIsInvalidInput) {
  const auto o = selftest_partition().execute(0, slow(HVCALL_SEND_IPI, 1), memory_with(ipi_page(0xFE, 0x4)));
  EXPECT_EQ(o.status, INPUT);
  EXPECT_EQ(o.rejected_by, "SEND_IPI with a variable header (varhead != 0)");
}

TEST(KvmSendIpi, RepCountOrRepStartIsInvalidInputForBothCalls) {
  const auto mem = memory_with(ipi_page(0xFE, 0x4));
  for (const std::uint16_t code : {HVCALL_SEND_IPI, HVCALL_SEND_IPI_EX}) {
    HypercallRegs r = slow(code);
    r.rcx = encode_control({code, false, 0, 1, 0, 0});
    EXPECT_EQ(selftest_partition().execute(0, r, mem).status, INPUT) << code;
    r.rcx = encode_control({code, false, 0, 0, 1, 0});
    EXPECT_EQ(selftest_partition().execute(0, r, mem).status, INPUT) << code;
  }
}

TEST(KvmSendIpi, FastSendIpiWithHighRdxIsInvalidInput) {
  const auto o = selftest_partition().execute(0, fast_ipi(0x1'0000'00FEull, 0x4), FlatGuestMemory{});
  EXPECT_EQ(o.status, INPUT);
  EXPECT_EQ(o.rejected_by, "fast SEND_IPI: RDX[63:32] (TargetVtl/reserved) != 0");
}

TEST(KvmSendIpi, SlowSendIpiIgnoresTargetVtlAndPadding) {
  const auto o = selftest_partition().execute(0, slow(HVCALL_SEND_IPI),
                                              memory_with(ipi_page(0xFE, 0x4, 0xFFFFFFFFu)));
  EXPECT_EQ(o.status, SUCCESS);
  EXPECT_EQ(vps_of(o), std::vector<std::uint32_t>{2});
}

TEST(KvmSendIpi, ExIgnoresTargetVtlInBothForms) {
  const auto o = selftest_partition().execute(0, slow(HVCALL_SEND_IPI_EX, 1),
                                              memory_with(ex_page(0xFE, 0, 0x1, {0x4}, 0x01)));
  EXPECT_EQ(o.status, SUCCESS);
  auto r = xmm_ex({0xFE, 0xDEAD, {0, 0x1, {0x4}}}, 1);  // RDX[63:32] = 0xDEAD: unchecked for Ex
  EXPECT_EQ(selftest_partition().execute(0, r, FlatGuestMemory{}).status, SUCCESS);
}

TEST(KvmSendIpi, XmmExWithTwelveBanksIsInvalidInputElevenIsFine) {
  // 11 banks: VP 643 (bank 10, bit 3) is reachable; 12 banks do not fit 2*6-1 XMM halves.
  PartitionConfig c;
  c.vp_index_of_vcpu = {0, 643};
  const Partition p(c);
  std::vector<std::uint64_t> eleven(11, 0);
  eleven[10] = 1ull << 3;
  auto o = p.execute(0, xmm_ex({0xFE, 0, {0, 0x7FF, eleven}}, 11), FlatGuestMemory{});
  EXPECT_EQ(o.status, SUCCESS);
  EXPECT_EQ(vps_of(o), std::vector<std::uint32_t>{643});
  HypercallRegs r = xmm_ex({0xFE, 0, {0, 0x7FF, eleven}}, 11);
  r.xmm[0][0] = 0xFFF;  // valid_bank_mask with 12 banks
  r.rcx = encode_control({HVCALL_SEND_IPI_EX, true, 12, 0, 0, 0});
  o = p.execute(0, r, FlatGuestMemory{});
  EXPECT_EQ(o.status, INPUT);
  EXPECT_EQ(o.rejected_by, "XMM fast SEND_IPI_EX: varhead > 11 banks");
}

TEST(KvmSendIpi, VectorBoundaries) {
  for (const auto& [vector, status] : std::vector<std::pair<std::uint32_t, HvStatus>>{
           {0x0F, INPUT}, {0x100, INPUT}, {0x10, SUCCESS}, {0xFF, SUCCESS}, {0x2, INPUT}, {0xFFFFFFFF, INPUT}}) {
    const auto a = selftest_partition().execute(0, fast_ipi(vector, 0x4), FlatGuestMemory{});
    const auto b = selftest_partition().execute(0, slow(HVCALL_SEND_IPI_EX, 1),
                                                memory_with(ex_page(vector, 0, 0x2, {0x2})));
    EXPECT_EQ(a.status, status) << vector;
    EXPECT_EQ(b.status, status) << vector;
    if (status == SUCCESS) {
      EXPECT_EQ(a.delivered, (std::vector<Delivery>{{1, 2, vector}}));
      EXPECT_EQ(b.delivered, (std::vector<Delivery>{{2, 65, vector}}));
    } else {
      EXPECT_TRUE(a.delivered.empty());
      EXPECT_TRUE(b.delivered.empty());
    }
  }
}

TEST(KvmSendIpi, BadVectorTogetherWithBadVarheadReportsTheVarhead) {
  const auto o = selftest_partition().execute(0, slow(HVCALL_SEND_IPI_EX, 2),
                                              memory_with(ex_page(0x02, 0, 0x1, {0x4})));
  EXPECT_EQ(o.rejected_by, "varhead != popcount(valid_bank_mask)");
}

TEST(KvmSendIpi, SetAllChecksTheVector) {
  const auto o = selftest_partition().execute(0, slow(HVCALL_SEND_IPI_EX, 0),
                                              memory_with(ex_page(0x0F, HV_GENERIC_SET_ALL, 0, {})));
  EXPECT_EQ(o.status, INPUT);
  EXPECT_EQ(o.rejected_by, "vector outside 0x10..0xFF");
}

TEST(KvmSendIpi, MaskBitsForNonexistentVpsSucceedWithoutDelivery) {
  // VPs 1, 3, 63 do not exist; an all-zero mask is a successful no-op too.
  for (const std::uint64_t mask : {0x0ull, 0x2ull, (1ull << 63) | 0x8}) {
    const auto o = selftest_partition().execute(0, fast_ipi(0xFE, mask), FlatGuestMemory{});
    EXPECT_EQ(o.status, SUCCESS);
    EXPECT_TRUE(o.delivered.empty());
    EXPECT_EQ(o.work.vcpus_scanned, 3u);
  }
  // Ex: bank 63 names VPs 4032..4095, none present.
  const auto o = selftest_partition().execute(0, slow(HVCALL_SEND_IPI_EX, 1),
                                              memory_with(ex_page(0xFE, 0, 1ull << 63, {~0ull})));
  EXPECT_EQ(o.status, SUCCESS);
  EXPECT_TRUE(o.delivered.empty());
}

TEST(KvmSendIpi, FormatTwoIsTreatedAsSparse) {
  const auto o = selftest_partition().execute(0, slow(HVCALL_SEND_IPI_EX, 1),
                                              memory_with(ex_page(0xFE, 2, 0x2, {0x2})));
  EXPECT_EQ(o.status, SUCCESS);
  EXPECT_EQ(vps_of(o), std::vector<std::uint32_t>{65});
  // and format 2 with no banks is the "nothing in sparse banks" SUCCESS, vector unchecked
  EXPECT_EQ(selftest_partition().execute(0, slow(HVCALL_SEND_IPI_EX, 0), memory_with(ex_page(0, 2, 0, {}))).status,
            SUCCESS);
}

TEST(KvmSendIpi, NoInKernelLapicIsInvalidInput) {
  auto c = testdata::selftest_config();
  c.lapic_in_kernel = false;
  const auto o = Partition(c).execute(0, fast_ipi(0xFE, 0x4), FlatGuestMemory{});
  EXPECT_EQ(o.status, INPUT);
  EXPECT_EQ(o.rejected_by, "no in-kernel LAPIC");
}

TEST(KvmSendIpi, UnreadableInputIsInvalidInput) {
  const Partition& p = selftest_partition();
  const auto mem = memory_with({});
  auto r = slow(HVCALL_SEND_IPI);
  r.rdx = 0x3000;  // just past the end of guest memory
  EXPECT_EQ(p.execute(0, r, mem).rejected_by, "slow SEND_IPI: 16-byte input at RDX not readable");
  r.rdx = 0x2FF8;  // 8 of the 16 bytes backed
  EXPECT_EQ(p.execute(0, r, mem).status, INPUT);
  r = slow(HVCALL_SEND_IPI_EX, 1);
  r.rdx = 0xFFFF'FFFF'FFFF'FFF0ull;  // gpa + 24 overflows
  EXPECT_EQ(p.execute(0, r, mem).rejected_by, "slow SEND_IPI_EX: 24-byte header at RDX not readable");
}

TEST(KvmSendIpi, HeaderReadableButBanksNotIsInvalidInput) {
  FlatGuestMemory mem(0, std::vector<std::uint8_t>(0x1018, 0));  // ends right after the 24-byte header
  mem.write(kInputGpa, ex_page(0xFE, 0, 0x1, {}));
  const auto o = selftest_partition().execute(0, slow(HVCALL_SEND_IPI_EX, 1), mem);
  EXPECT_EQ(o.status, INPUT);
  EXPECT_EQ(o.rejected_by, "slow SEND_IPI_EX: sparse banks at RDX + 24 not readable");
  EXPECT_EQ(o.work.guest_reads, 2u);
  EXPECT_EQ(o.work.guest_bytes_read, 24u);
}

TEST(KvmSendIpi, SlowBankReadIsCappedAtMaxVcpusOver64) {
  // valid_bank_mask 0x3, varhead 2, but only bank[0] is backed. KVM_MAX_VCPUS = 64 -> only one
  // bank is read (bank 1 cannot hold a legal VP) -> SUCCESS; with 4096 both are read -> failure.
  FlatGuestMemory mem(0, std::vector<std::uint8_t>(0x1020, 0));
  mem.write(kInputGpa, ex_page(0xFE, 0, 0x3, {0x2}));
  auto c = PartitionConfig::identity(2);
  c.max_vcpus = 64;
  const auto o = Partition(c).execute(0, slow(HVCALL_SEND_IPI_EX, 2), mem);
  EXPECT_EQ(o.status, SUCCESS);
  EXPECT_EQ(o.work.banks_read, 1u);
  EXPECT_EQ(vps_of(o), std::vector<std::uint32_t>{1});
  c.max_vcpus = 4096;
  EXPECT_EQ(Partition(c).execute(0, slow(HVCALL_SEND_IPI_EX, 2), mem).status, INPUT);
  // DIV_ROUND_UP: max_vcpus 65 reads two banks.
  c.max_vcpus = 65;
  EXPECT_EQ(Partition(c).execute(0, slow(HVCALL_SEND_IPI_EX, 2), mem).status, INPUT);
}

TEST(KvmSendIpi, AlignmentAndPageCrossingAreNotEnforced) {
  // TLFS would say HV_STATUS_INVALID_ALIGNMENT; KVM reads wherever the bytes are.
  FlatGuestMemory mem(0, std::vector<std::uint8_t>(0x3000, 0));
  const auto page = ipi_page(0xFE, 0x4);
  for (const std::uint64_t gpa : {0x1003ull, 0x1FF8ull}) {
    mem.write(gpa, page);
    auto r = slow(HVCALL_SEND_IPI);
    r.rdx = gpa;
    EXPECT_EQ(selftest_partition().execute(0, r, mem).status, SUCCESS) << gpa;
  }
}

TEST(KvmSendIpi, DisabledApicDropsTheIpiSilently) {
  auto c = testdata::selftest_config();
  c.apic_enabled = {true, false, true};
  const auto o = Partition(c).execute(0, slow(HVCALL_SEND_IPI_EX, 2),
                                      memory_with(ex_page(0xFE, 0, 0x3, {0x4, 0x2})));
  EXPECT_EQ(o.status, SUCCESS);
  EXPECT_EQ(vps_of(o), std::vector<std::uint32_t>{65});
  EXPECT_EQ(o.dropped_vcpus, std::vector<std::uint32_t>{1});
  EXPECT_EQ(o.work.apic_set_irq_calls, 2u);
}

TEST(KvmSendIpi, NotModelledAndUnknownCodes) {
  for (const std::uint16_t code : {0x0002, 0x0003, 0x0013, 0x0014, 0x0008, 0x005C, 0x005D, 0x8001, 0x8041}) {
    const auto o = selftest_partition().execute(0, slow(code), FlatGuestMemory{});
    EXPECT_EQ(o.status, CODE) << code;
    EXPECT_FALSE(o.modelled) << code;
  }
  for (const std::uint16_t code : {0x0000, 0x000A, 0x000C, 0x0016, 0x8000, 0x8042, 0xFFFF}) {
    const auto o = selftest_partition().execute(0, slow(code), FlatGuestMemory{});
    EXPECT_EQ(o.status, CODE) << code;
    EXPECT_TRUE(o.modelled) << code;
    EXPECT_EQ(o.rejected_by, "unknown call code");
  }
}

TEST(KvmSendIpi, RaxCarriesTheStatusWithZeroRepsCompleted) {
  const auto o = selftest_partition().execute(0, slow(HVCALL_SEND_IPI, 1), FlatGuestMemory{});
  EXPECT_EQ(o.rax, 0x3u);
  EXPECT_EQ(decode_result(o.rax), (HypercallResult{0x3, 0}));
}

// ---- VP index != vCPU number (guest: hv_common_cpu_init; host: HV_X64_MSR_VP_INDEX, kvm_hv_set_msr) --
TEST(VpIndexMap, DeliveryFollowsTheVpIndexNotTheVcpuNumber) {
  PartitionConfig c;
  c.vp_index_of_vcpu = {5, 0, 64, 1};
  const Partition p(c);
  EXPECT_EQ(p.vcpu_of_vp(64), 2u);
  EXPECT_FALSE(p.vcpu_of_vp(2).has_value());
  auto o = p.execute(0, fast_ipi(0xFE, (1ull << 5) | (1ull << 1)), FlatGuestMemory{});
  EXPECT_EQ(o.delivered, (std::vector<Delivery>{{0, 5, 0xFE}, {3, 1, 0xFE}}));
  // bit 2 means VP 2, which no vCPU has, although vCPU 2 exists
  o = p.execute(0, fast_ipi(0xFE, 1ull << 2), FlatGuestMemory{});
  EXPECT_TRUE(o.delivered.empty());
  o = p.execute(0, xmm_ex({0xFE, 0, {0, 0x2, {0x1}}}, 1), FlatGuestMemory{});
  EXPECT_EQ(o.delivered, (std::vector<Delivery>{{2, 64, 0xFE}}));
}

TEST(VpIndexMap, HighestVpIndex4095IsReachableThroughBank63) {
  PartitionConfig c;
  c.vp_index_of_vcpu = {0, 4095};
  const Partition p(c);
  const auto o = p.execute(0, slow(HVCALL_SEND_IPI_EX, 1), memory_with(ex_page(0xFE, 0, 1ull << 63, {1ull << 63})));
  EXPECT_EQ(o.delivered, (std::vector<Delivery>{{1, 4095, 0xFE}}));
}

TEST(PartitionConfigErrors, AreRejectedAtConstruction) {
  PartitionConfig c;
  EXPECT_THROW(Partition{c}, std::invalid_argument);  // no vCPUs
  c.vp_index_of_vcpu = {0, 2, 2};
  EXPECT_NO_THROW(Partition{c});  // duplicate: legal in KVM (partition_kvm_version_test.cpp)
  c.vp_index_of_vcpu = {0, 4096};
  EXPECT_THROW(Partition{c}, std::invalid_argument);  // >= max_vcpus
  c.vp_index_of_vcpu = {0, 100};
  c.max_vcpus = 64;
  EXPECT_THROW(Partition{c}, std::invalid_argument);
  c.max_vcpus = 4097;
  EXPECT_THROW(Partition{c}, std::invalid_argument);
  c.max_vcpus = 4096;
  c.apic_enabled = {true};
  EXPECT_THROW(Partition{c}, std::invalid_argument);
  c.apic_enabled = {};
  EXPECT_NO_THROW(Partition{c});
  EXPECT_THROW(Partition(c).execute(2, HypercallRegs{}, FlatGuestMemory{}), std::out_of_range);
  EXPECT_EQ(PartitionConfig::identity(3).vp_index_of_vcpu, (std::vector<std::uint32_t>{0, 1, 2}));
}

// ---- Xen viridian flavour (viridian.c hvcall_ipi, hvcall_ipi_ex) ------------------------------------
TEST(XenViridian, EveryIpiInputErrorIsInvalidParameter) {
  const Partition p = xen_partition();
  EXPECT_EQ(p.execute(0, fast_ipi(0x0F, 0x4), FlatGuestMemory{}).status, PARAM);              // vector
  EXPECT_EQ(p.execute(0, fast_ipi(0x1'0000'00FEull, 0x4), FlatGuestMemory{}).status, PARAM);  // RDX hi
  EXPECT_EQ(p.execute(0, slow(HVCALL_SEND_IPI), FlatGuestMemory{}).status, PARAM);             // read
  EXPECT_EQ(p.execute(0, slow(HVCALL_SEND_IPI), memory_with(ipi_page(0xFE, 0x4, 0x1))).status, PARAM);  // VTL
  EXPECT_EQ(p.execute(0, slow(HVCALL_SEND_IPI_EX, 1), memory_with(ex_page(0xFE, 0, 0x1, {0x4}, 0x100))).status,
            PARAM);  // padding
  EXPECT_EQ(p.execute(0, slow(HVCALL_SEND_IPI_EX, 1), memory_with(ex_page(0xFE, 2, 0x1, {0x4}))).status,
            PARAM);  // format 2
  const auto o = p.execute(0, xmm_ex({0xFE, 0, {0, 0x1, {0x4}}}, 1), FlatGuestMemory{});
  EXPECT_EQ(o.status, PARAM);
  EXPECT_EQ(o.rejected_by, "fast SEND_IPI_EX (Xen accepts only the memory form)");
  EXPECT_EQ(o.work.xmm_registers_read, 0u);
  EXPECT_EQ(p.execute(0, slow(0xBEEF), FlatGuestMemory{}).status, CODE);
}

TEST(XenViridian, ChecksTheVectorEvenWithNoBanks) {  // KVM: SUCCESS (stage 14)
  const auto o = xen_partition().execute(0, slow(HVCALL_SEND_IPI_EX), memory_with(kZeroPage));
  EXPECT_EQ(o.status, PARAM);
  EXPECT_EQ(o.rejected_by, "vector outside 0x10..0xFF");
}

TEST(XenViridian, DoesNotValidateVarheadRepOrReservedControlBits) {
  const Partition p = xen_partition();
  // varhead 0 but two banks announced by valid_bank_mask: Xen reads popcount banks anyway.
  auto o = p.execute(0, slow(HVCALL_SEND_IPI_EX, 0), memory_with(ex_page(0xFE, 0, 0x3, {0x4, 0x2})));
  EXPECT_EQ(o.status, SUCCESS);
  EXPECT_EQ(vps_of(o), (std::vector<std::uint32_t>{2, 65}));
  auto r = fast_ipi(0xFE, 0x4);
  r.rcx = encode_control({HVCALL_SEND_IPI, true, 3, 7, 1, 0}) | (1ull << 31) | (1ull << 63);
  o = p.execute(0, r, FlatGuestMemory{});
  EXPECT_EQ(o.status, SUCCESS);
  EXPECT_EQ(vps_of(o), std::vector<std::uint32_t>{2});
}

TEST(XenViridian, DeliversInVpIndexOrder) {
  PartitionConfig c;
  c.vp_index_of_vcpu = {5, 0, 3};
  c.flavor = ErrorFlavor::XenViridian;
  const auto o = Partition(c).execute(0, fast_ipi(0xFE, 0x29), FlatGuestMemory{});
  EXPECT_EQ(o.delivered, (std::vector<Delivery>{{1, 0, 0xFE}, {2, 3, 0xFE}, {0, 5, 0xFE}}));
}

// ---- hostile input -------------------------------------------------------------------------------
TEST(HostileInput, RandomRegistersAndMemoryNeverThrowAndKeepInvariants) {
  std::mt19937_64 rng(20251107);
  PartitionConfig c;
  c.vp_index_of_vcpu = {0, 2, 65, 130, 4095};
  const Partition kvm(c);
  c.flavor = ErrorFlavor::XenViridian;
  const Partition xen(c);
  std::vector<std::uint8_t> bytes(0x600);
  for (auto& b : bytes) b = static_cast<std::uint8_t>(rng());
  const FlatGuestMemory mem(0x1000, bytes);
  int successes = 0;
  for (int i = 0; i < 20000; ++i) {
    HypercallRegs r;
    const std::uint16_t codes[] = {HVCALL_SEND_IPI, HVCALL_SEND_IPI_EX, static_cast<std::uint16_t>(rng())};
    r.rcx = (rng() & ~0xFFFFull & (rng() | rng())) | codes[rng() % 3];  // mostly few high bits set
    if (rng() % 2) r.rcx &= ~HV_HYPERCALL_RSVD_MASK;
    if (rng() % 2) r.rcx &= ~(HV_HYPERCALL_REP_COMP_MASK | HV_HYPERCALL_REP_START_MASK);
    const unsigned pick = rng() % 4;
    r.rdx = pick == 0 ? rng() : pick == 1 ? rng() % 0x120 : 0x1000 + rng() % 0x600;  // GPA or vector
    r.r8 = rng() % 2 ? rng() : rng() % 3;
    for (auto& x : r.xmm) x = {rng() & rng() & rng(), rng()};
    for (const Partition* p : {&kvm, &xen}) {
      const auto o = p->execute(static_cast<std::uint32_t>(rng() % 5), r, mem);
      if (!o.success()) {
        ASSERT_TRUE(o.delivered.empty());
        ASSERT_TRUE(o.inject_ud || !o.rejected_by.empty());
      } else {
        ++successes;
      }
      ASSERT_EQ(o.rax, o.inject_ud ? 0u : o.status_code());
      for (const auto& d : o.delivered) {
        ASSERT_LT(d.vcpu, 5u);
        ASSERT_EQ(p->vp_index(d.vcpu), d.vp_index);
        ASSERT_TRUE(ipi_vector_valid(d.vector));
      }
    }
  }
  EXPECT_GT(successes, 200) << successes;
}

}  // namespace
}  // namespace ipilab::hv
