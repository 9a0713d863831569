#include "hv/abi.h"

#include "common/le.h"

#include <algorithm>
#include <bit>
#include <cctype>
#include <cstring>
#include <stdexcept>
#include <string>

#include <fmt/format.h>

namespace ipilab::hv {
namespace {

using le::get_u32;
using le::get_u64;
using le::put_u32;
using le::put_u64;

struct StatusEntry {
  HvStatus status;
  std::string_view name;
};
constexpr StatusEntry kStatuses[] = {
    {HvStatus::HV_STATUS_SUCCESS, "HV_STATUS_SUCCESS"},
    {HvStatus::HV_STATUS_INVALID_HYPERCALL_CODE, "HV_STATUS_INVALID_HYPERCALL_CODE"},
    {HvStatus::HV_STATUS_INVALID_HYPERCALL_INPUT, "HV_STATUS_INVALID_HYPERCALL_INPUT"},
    {HvStatus::HV_STATUS_INVALID_ALIGNMENT, "HV_STATUS_INVALID_ALIGNMENT"},
    {HvStatus::HV_STATUS_INVALID_PARAMETER, "HV_STATUS_INVALID_PARAMETER"},
    {HvStatus::HV_STATUS_ACCESS_DENIED, "HV_STATUS_ACCESS_DENIED"},
    {HvStatus::HV_STATUS_INVALID_PARTITION_STATE, "HV_STATUS_INVALID_PARTITION_STATE"},
    {HvStatus::HV_STATUS_OPERATION_DENIED, "HV_STATUS_OPERATION_DENIED"},
    {HvStatus::HV_STATUS_INSUFFICIENT_MEMORY, "HV_STATUS_INSUFFICIENT_MEMORY"},
    {HvStatus::HV_STATUS_INVALID_PARTITION_ID, "HV_STATUS_INVALID_PARTITION_ID"},
    {HvStatus::HV_STATUS_INVALID_VP_INDEX, "HV_STATUS_INVALID_VP_INDEX"},
    {HvStatus::HV_STATUS_NOT_FOUND, "HV_STATUS_NOT_FOUND"},
    {HvStatus::HV_STATUS_INVALID_PORT_ID, "HV_STATUS_INVALID_PORT_ID"},
    {HvStatus::HV_STATUS_INVALID_CONNECTION_ID, "HV_STATUS_INVALID_CONNECTION_ID"},
    {HvStatus::HV_STATUS_INSUFFICIENT_BUFFERS, "HV_STATUS_INSUFFICIENT_BUFFERS"},
};

}  // namespace

std::string_view call_code_name(std::uint16_t code) noexcept {
  switch (code) {
    case HVCALL_FLUSH_VIRTUAL_ADDRESS_SPACE: return "HvCallFlushVirtualAddressSpace";
    case HVCALL_FLUSH_VIRTUAL_ADDRESS_LIST: return "HvCallFlushVirtualAddressList";
    case HVCALL_SEND_IPI: return "HvCallSendSyntheticClusterIpi";
    case HVCALL_FLUSH_VIRTUAL_ADDRESS_SPACE_EX: return "HvCallFlushVirtualAddressSpaceEx";
    case HVCALL_FLUSH_VIRTUAL_ADDRESS_LIST_EX: return "HvCallFlushVirtualAddressListEx";
    case HVCALL_SEND_IPI_EX: return "HvCallSendSyntheticClusterIpiEx";
    default: return "unknown";
  }
}

std::string status_name(std::uint16_t code) {
  for (const auto& e : kStatuses)
    if (static_cast<std::uint16_t>(e.status) == code) return std::string(e.name);
  return fmt::format("HV_STATUS_0x{:04X}", code);
}

std::optional<HvStatus> status_from_name(std::string_view name) noexcept {
  std::string upper(name.size(), '\0');
  std::transform(name.begin(), name.end(), upper.begin(),
                 [](char c) { return static_cast<char>(std::toupper(static_cast<unsigned char>(c))); });
  for (const auto& e : kStatuses) {
    if (upper == e.name || "HV_STATUS_" + upper == e.name) return e.status;
  }
  return std::nullopt;
}

std::uint64_t encode_control(const HypercallControl& c) {
  if (c.var_header_qwords > 0x3FF) throw std::invalid_argument("variable header size exceeds 10 bits");
  if (c.rep_count > 0xFFF) throw std::invalid_argument("rep count exceeds 12 bits");
  if (c.rep_start > 0xFFF) throw std::invalid_argument("rep start index exceeds 12 bits");
  if (c.reserved & ~HV_HYPERCALL_RSVD_MASK) throw std::invalid_argument("reserved bits outside the RsvdZ fields");
  return std::uint64_t{c.call_code} | (c.fast ? HV_HYPERCALL_FAST_BIT : 0) |
         (std::uint64_t{c.var_header_qwords} << HV_HYPERCALL_VARHEAD_OFFSET) |
         (std::uint64_t{c.rep_count} << HV_HYPERCALL_REP_COMP_OFFSET) |
         (std::uint64_t{c.rep_start} << HV_HYPERCALL_REP_START_OFFSET) | c.reserved;
}

HypercallControl decode_control(std::uint64_t word) noexcept {
  HypercallControl c;
  c.call_code = static_cast<std::uint16_t>(word & 0xFFFF);
  c.fast = (word & HV_HYPERCALL_FAST_BIT) != 0;
  c.var_header_qwords = static_cast<std::uint16_t>((word & HV_HYPERCALL_VARHEAD_MASK) >> HV_HYPERCALL_VARHEAD_OFFSET);
  c.rep_count = static_cast<std::uint16_t>((word & HV_HYPERCALL_REP_COMP_MASK) >> HV_HYPERCALL_REP_COMP_OFFSET);
  c.rep_start = static_cast<std::uint16_t>((word & HV_HYPERCALL_REP_START_MASK) >> HV_HYPERCALL_REP_START_OFFSET);
  c.reserved = word & HV_HYPERCALL_RSVD_MASK;
  return c;
}

std::uint64_t encode_result(const HypercallResult& r) {
  if (r.reps_completed > 0xFFF) throw std::invalid_argument("reps completed exceeds 12 bits");
  return std::uint64_t{r.status} | (std::uint64_t{r.reps_completed} << 32);
}

HypercallResult decode_result(std::uint64_t rax) noexcept {
  return HypercallResult{static_cast<std::uint16_t>(rax & 0xFFFF), static_cast<std::uint16_t>((rax >> 32) & 0xFFF)};
}

std::array<std::uint8_t, HV_SEND_IPI_INPUT_BYTES> encode_send_ipi(const SendIpiInput& in) noexcept {
  std::array<std::uint8_t, HV_SEND_IPI_INPUT_BYTES> out{};
  put_u32(out.data(), in.vector);
  put_u32(out.data() + 4, in.reserved);
  put_u64(out.data() + 8, in.processor_mask);
  return out;
}

std::optional<SendIpiInput> decode_send_ipi(std::span<const std::uint8_t> bytes) noexcept {
  if (bytes.size() < HV_SEND_IPI_INPUT_BYTES) return std::nullopt;
  return SendIpiInput{get_u32(bytes.data()), get_u32(bytes.data() + 4), get_u64(bytes.data() + 8)};
}

FastRegs encode_send_ipi_fast(const SendIpiInput& in) noexcept {
  return FastRegs{std::uint64_t{in.vector} | (std::uint64_t{in.reserved} << 32), in.processor_mask};
}

SendIpiInput decode_send_ipi_fast(const FastRegs& regs) noexcept {
  return SendIpiInput{static_cast<std::uint32_t>(regs.rdx), static_cast<std::uint32_t>(regs.rdx >> 32), regs.r8};
}

VpSet vpset_from_vps(std::span<const std::uint32_t> vps) {
  std::array<std::uint64_t, HV_MAX_SPARSE_VCPU_BANKS> banks{};
  VpSet set;
  for (const std::uint32_t vp : vps) {
    if (vp > HV_MAX_VP_INDEX)
      throw std::invalid_argument(fmt::format("VP index {} cannot be expressed in an hv_vpset (max 4095)", vp));
    banks[vp / HV_VCPUS_PER_SPARSE_BANK] |= 1ull << (vp % HV_VCPUS_PER_SPARSE_BANK);
    set.valid_bank_mask |= 1ull << (vp / HV_VCPUS_PER_SPARSE_BANK);
  }
  for (unsigned b = 0; b < HV_MAX_SPARSE_VCPU_BANKS; ++b)
    if (set.valid_bank_mask & (1ull << b)) set.bank_contents.push_back(banks[b]);
  return set;
}

bool vpset_contains(const VpSet& set, std::uint32_t vp) noexcept {
  if (set.format == HV_GENERIC_SET_ALL) return true;
  const std::uint32_t bank = vp / HV_VCPUS_PER_SPARSE_BANK;
  if (bank >= HV_MAX_SPARSE_VCPU_BANKS) return false;
  if (!(set.valid_bank_mask & (1ull << bank))) return false;
  const auto index = static_cast<std::size_t>(std::popcount(set.valid_bank_mask & ((1ull << bank) - 1)));
  if (index >= set.bank_contents.size()) return false;
  return (set.bank_contents[index] >> (vp % HV_VCPUS_PER_SPARSE_BANK)) & 1;
}

std::vector<std::uint32_t> vpset_vps(const VpSet& set) {
  std::vector<std::uint32_t> out;
  if (set.format == HV_GENERIC_SET_ALL) return out;
  std::size_t index = 0;
  for (std::uint32_t bank = 0; bank < HV_MAX_SPARSE_VCPU_BANKS; ++bank) {
    if (!(set.valid_bank_mask & (1ull << bank))) continue;
    if (index >= set.bank_contents.size()) break;
    const std::uint64_t word = set.bank_contents[index++];
    for (std::uint32_t bit = 0; bit < 64; ++bit)
      if ((word >> bit) & 1) out.push_back(bank * HV_VCPUS_PER_SPARSE_BANK + bit);
  }
  return out;
}

unsigned vpset_bank_count(const VpSet& set) noexcept {
  return static_cast<unsigned>(std::popcount(set.valid_bank_mask));
}

std::vector<std::uint8_t> encode_send_ipi_ex(const SendIpiExInput& in) {
  std::vector<std::uint8_t> out(HV_SEND_IPI_EX_FIXED_BYTES + 8 * in.vp_set.bank_contents.size());
  put_u32(out.data(), in.vector);
  put_u32(out.data() + 4, in.reserved);
  put_u64(out.data() + 8, in.vp_set.format);
  put_u64(out.data() + 16, in.vp_set.valid_bank_mask);
  for (std::size_t i = 0; i < in.vp_set.bank_contents.size(); ++i)
    put_u64(out.data() + HV_SEND_IPI_EX_FIXED_BYTES + 8 * i, in.vp_set.bank_contents[i]);
  return out;
}

std::optional<SendIpiExInput> decode_send_ipi_ex(std::span<const std::uint8_t> bytes, std::size_t nbanks) {
  if (nbanks > (bytes.size() - std::min(bytes.size(), HV_SEND_IPI_EX_FIXED_BYTES)) / 8 ||
      bytes.size() < HV_SEND_IPI_EX_FIXED_BYTES)
    return std::nullopt;
  SendIpiExInput in;
  in.vector = get_u32(bytes.data());
  in.reserved = get_u32(bytes.data() + 4);
  in.vp_set.format = get_u64(bytes.data() + 8);
  in.vp_set.valid_bank_mask = get_u64(bytes.data() + 16);
  in.vp_set.bank_contents.resize(nbanks);
  for (std::size_t i = 0; i < nbanks; ++i)
    in.vp_set.bank_contents[i] = get_u64(bytes.data() + HV_SEND_IPI_EX_FIXED_BYTES + 8 * i);
  return in;
}

XmmFastInput encode_send_ipi_ex_xmm(const SendIpiExInput& in) {
  if (in.vp_set.bank_contents.size() > HV_XMM_EX_MAX_BANKS)
    throw std::invalid_argument(fmt::format("{} banks do not fit the XMM fast input (max {})",
                                            in.vp_set.bank_contents.size(), HV_XMM_EX_MAX_BANKS));
  XmmFastInput x;
  x.rdx = std::uint64_t{in.vector} | (std::uint64_t{in.reserved} << 32);
  x.r8 = in.vp_set.format;
  // The QWORD stream after R8: valid_bank_mask, bank[0], bank[1], ... laid into XMM0.lo, XMM0.hi, ...
  std::size_t slot = 0;
  auto put = [&](std::uint64_t v) {
    x.xmm[slot / 2][slot % 2] = v;
    ++slot;
  };
  put(in.vp_set.valid_bank_mask);
  for (const std::uint64_t bank : in.vp_set.bank_contents) put(bank);
  return x;
}

std::optional<SendIpiExInput> decode_send_ipi_ex_xmm(const XmmFastInput& x, std::size_t nbanks) noexcept {
  if (nbanks > HV_XMM_EX_MAX_BANKS) return std::nullopt;
  SendIpiExInput in;
  in.vector = static_cast<std::uint32_t>(x.rdx);
  in.reserved = static_cast<std::uint32_t>(x.rdx >> 32);
  in.vp_set.format = x.r8;
  in.vp_set.valid_bank_mask = x.xmm[0][0];
  in.vp_set.bank_contents.reserve(nbanks);
  for (std::size_t i = 0; i < nbanks; ++i) {
    const std::size_t slot = i + 1;
    in.vp_set.bank_contents.push_back(x.xmm[slot / 2][slot % 2]);
  }
  return in;
}

}  // namespace ipilab::hv
