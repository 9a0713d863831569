// Shared test data: the ten cases of the KVM selftest hyperv_ipi (Linux 6.12
// tools/testing/selftests/kvm/x86_64/hyperv_ipi.c, x86/hyperv_ipi.c since 6.13), built with the abi.h
// encoders.
// Used by partition_selftest_test.cpp and cli_hv_call_test.cpp.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "hv/abi.h"
#include "hv/hypercall.h"
#include "hv/partition.h"

namespace ipilab::hv::testdata {

/// The selftest's input page GPA in our model (any backed GPA works; the CLI's default too).
inline constexpr std::uint64_t kInputGpa = 0x1000;
/// Guest memory of the model: [0, 0x3000), the input page is page 1, the output page page 2.
inline constexpr std::size_t kMemoryBytes = 0x3000;
inline constexpr std::uint32_t kVector = 0xFE;  ///< IPI_VECTOR of the selftest

/// Sender vCPU 0 = VP 0, R1 = vCPU 1 with VP 2, R2 = vCPU 2 with VP 65 (bank 1), as in the selftest.
inline PartitionConfig selftest_config() {
  PartitionConfig c;
  c.vp_index_of_vcpu = {0, 2, 65};
  return c;
}

struct SelftestCase {
  int number;                       ///< 1..10 in the selftest's order
  std::string what;
  HypercallControl control;
  HypercallRegs regs;               ///< rcx = encode_control(control); rdx = kInputGpa for slow calls
  std::vector<std::uint8_t> page;   ///< input page bytes at kInputGpa (slow calls), else empty
  std::vector<std::uint32_t> expect_vps;  ///< VP indices that receive kVector, vCPU order
};

inline SelftestCase slow_case(int n, std::string what, std::uint16_t code, std::uint16_t varhead,
                              std::vector<std::uint8_t> page, std::vector<std::uint32_t> vps) {
  SelftestCase c{n, std::move(what), {code, false, varhead, 0, 0, 0}, {}, std::move(page), std::move(vps)};
  c.regs.rcx = encode_control(c.control);
  c.regs.rdx = kInputGpa;
  c.regs.r8 = kInputGpa + 0x1000;  // output page (unused by IPIs)
  return c;
}

inline SelftestCase xmm_case(int n, std::string what, std::uint16_t varhead, const SendIpiExInput& in,
                             std::vector<std::uint32_t> vps) {
  SelftestCase c{n, std::move(what), {HVCALL_SEND_IPI_EX, true, varhead, 0, 0, 0}, {}, {}, std::move(vps)};
  const XmmFastInput x = encode_send_ipi_ex_xmm(in);
  c.regs.rcx = encode_control(c.control);
  c.regs.rdx = x.rdx;
  c.regs.r8 = x.r8;
  c.regs.xmm = x.xmm;
  return c;
}

inline std::vector<std::uint8_t> to_vec(const auto& bytes) { return {bytes.begin(), bytes.end()}; }

inline std::vector<SelftestCase> selftest_cases() {
  const SendIpiExInput vp2{kVector, 0, {HV_GENERIC_SET_SPARSE_4K, 0x1, {1ull << 2}}};
  const SendIpiExInput vp65{kVector, 0, {HV_GENERIC_SET_SPARSE_4K, 0x2, {1ull << 1}}};
  const SendIpiExInput both{kVector, 0, {HV_GENERIC_SET_SPARSE_4K, 0x3, {1ull << 2, 1ull << 1}}};
  const SendIpiExInput all{kVector, 0, {HV_GENERIC_SET_ALL, 0x0, {}}};
  std::vector<SelftestCase> v;
  v.push_back(slow_case(1, "SEND_IPI slow, mask 1<<2", HVCALL_SEND_IPI, 0,
                        to_vec(encode_send_ipi({kVector, 0, 1ull << 2})), {2}));
  {
    SelftestCase c{2, "SEND_IPI fast, RDX=0xFE R8=1<<2", {HVCALL_SEND_IPI, true, 0, 0, 0, 0}, {}, {}, {2}};
    c.regs.rcx = encode_control(c.control);
    c.regs.rdx = kVector;
    c.regs.r8 = 1ull << 2;
    v.push_back(c);
  }
  v.push_back(slow_case(3, "SEND_IPI_EX slow, valid_bank_mask 0x1, bank[0]=1<<2", HVCALL_SEND_IPI_EX, 1,
                        encode_send_ipi_ex(vp2), {2}));
  v.push_back(xmm_case(4, "SEND_IPI_EX XMM fast, XMM0={0x1,1<<2}", 1, vp2, {2}));
  v.push_back(slow_case(5, "SEND_IPI_EX slow, valid_bank_mask 0x2 (compact), bank[0]=1<<1", HVCALL_SEND_IPI_EX,
                        1, encode_send_ipi_ex(vp65), {65}));
  v.push_back(xmm_case(6, "SEND_IPI_EX XMM fast, XMM0={0x2,1<<1}", 1, vp65, {65}));
  v.push_back(slow_case(7, "SEND_IPI_EX slow, valid_bank_mask 0x3, banks {1<<2, 1<<1}", HVCALL_SEND_IPI_EX, 2,
                        encode_send_ipi_ex(both), {2, 65}));
  v.push_back(xmm_case(8, "SEND_IPI_EX XMM fast, XMM0={0x3,1<<2} XMM1={1<<1,0}", 2, both, {2, 65}));
  v.push_back(slow_case(9, "SEND_IPI_EX slow, format ALL", HVCALL_SEND_IPI_EX, 0, encode_send_ipi_ex(all),
                        {0, 2, 65}));
  v.push_back(xmm_case(10, "SEND_IPI_EX XMM fast, R8=1 (ALL)", 0, all, {0, 2, 65}));
  return v;
}

/// Guest memory [0, kMemoryBytes) with `page` written at kInputGpa.
inline FlatGuestMemory memory_with(const std::vector<std::uint8_t>& page) {
  FlatGuestMemory m(0, std::vector<std::uint8_t>(kMemoryBytes, 0));
  m.write(kInputGpa, page);
  return m;
}

// ---- small builders for hand-written cases ----
inline constexpr auto SUCCESS = HvStatus::HV_STATUS_SUCCESS;
inline constexpr auto INPUT = HvStatus::HV_STATUS_INVALID_HYPERCALL_INPUT;

inline std::vector<std::uint32_t> vps_of(const HypercallOutcome& o) {
  std::vector<std::uint32_t> v;
  for (const auto& d : o.delivered) v.push_back(d.vp_index);
  return v;
}

inline HypercallRegs slow(std::uint16_t code, std::uint16_t varhead = 0) {
  HypercallRegs r;
  r.rcx = encode_control({code, false, varhead, 0, 0, 0});
  r.rdx = kInputGpa;
  return r;
}
inline HypercallRegs fast_ipi(std::uint64_t rdx, std::uint64_t r8) {
  HypercallRegs r;
  r.rcx = encode_control({HVCALL_SEND_IPI, true, 0, 0, 0, 0});
  r.rdx = rdx;
  r.r8 = r8;
  return r;
}
inline HypercallRegs xmm_ex(const SendIpiExInput& in, std::uint16_t varhead) {
  const XmmFastInput x = encode_send_ipi_ex_xmm(in);
  HypercallRegs r;
  r.rcx = encode_control({HVCALL_SEND_IPI_EX, true, varhead, 0, 0, 0});
  r.rdx = x.rdx;
  r.r8 = x.r8;
  r.xmm = x.xmm;
  return r;
}
inline std::vector<std::uint8_t> ipi_page(std::uint32_t vector, std::uint64_t mask, std::uint32_t reserved = 0) {
  return to_vec(encode_send_ipi({vector, reserved, mask}));
}
inline std::vector<std::uint8_t> ex_page(std::uint32_t vector, std::uint64_t format, std::uint64_t vbm,
                                  std::vector<std::uint64_t> banks, std::uint32_t reserved = 0) {
  return encode_send_ipi_ex({vector, reserved, {format, vbm, std::move(banks)}});
}

}  // namespace ipilab::hv::testdata
