// ipilab/hv/abi.h — the Hyper-V TLFS hypercall ABI used by enlightened IPIs, as pure functions.
//
// Everything here is a codec: no state, no allocation beyond the returned values, no exceptions on
// hostile bytes (decoders of untrusted input return std::nullopt / a DecodeError; encoders of
// programmer-supplied values throw std::invalid_argument when a field does not fit).
// All multi-byte values are little-endian. Sources: TLFS "Hypercall Interface" (control and result
// words, register conventions), HvCallSendSyntheticClusterIpi / HvCallSendSyntheticClusterIpiEx pages,
// HV_VP_SET datatype; Linux include/asm-generic/hyperv-tlfs.h (names and masks); KVM
// arch/x86/kvm/hyperv.c (kvm_hv_hypercall, kvm_hv_send_ipi) where KVM's reading matters. Each block
// below names its own source (Linux and KVM as of v6.12).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace ipilab::hv {

// ---- Call codes (TLFS hypercall pages; Linux hyperv-tlfs.h HVCALL_*) -----------------------------
inline constexpr std::uint16_t HVCALL_FLUSH_VIRTUAL_ADDRESS_SPACE = 0x0002;
inline constexpr std::uint16_t HVCALL_FLUSH_VIRTUAL_ADDRESS_LIST = 0x0003;
inline constexpr std::uint16_t HVCALL_SEND_IPI = 0x000B;  ///< HvCallSendSyntheticClusterIpi
inline constexpr std::uint16_t HVCALL_FLUSH_VIRTUAL_ADDRESS_SPACE_EX = 0x0013;
inline constexpr std::uint16_t HVCALL_FLUSH_VIRTUAL_ADDRESS_LIST_EX = 0x0014;
inline constexpr std::uint16_t HVCALL_SEND_IPI_EX = 0x0015;  ///< HvCallSendSyntheticClusterIpiEx

/// Human name of a call code ("HvCallSendSyntheticClusterIpi"), or "unknown".
std::string_view call_code_name(std::uint16_t code) noexcept;

// ---- Limits (Linux hyperv-tlfs.h; HV_HYPERCALL_MAX_XMM_REGISTERS: arch/x86/include/asm/hyperv-tlfs.h)
inline constexpr std::uint32_t HV_IPI_LOW_VECTOR = 0x10;
inline constexpr std::uint32_t HV_IPI_HIGH_VECTOR = 0xFF;
inline constexpr std::uint32_t HV_VCPUS_PER_SPARSE_BANK = 64;
inline constexpr std::uint32_t HV_MAX_SPARSE_VCPU_BANKS = 64;  ///< => highest VP index 4095
inline constexpr std::uint32_t HV_MAX_VP_INDEX = HV_VCPUS_PER_SPARSE_BANK * HV_MAX_SPARSE_VCPU_BANKS - 1;
inline constexpr std::size_t HV_HYPERCALL_MAX_XMM_REGISTERS = 6;
/// Banks an XMM-fast Ex call can carry: 2*6 - 1 = 11 (XMM0.lo holds valid_bank_mask) — KVM
/// kvm_hv_send_ipi (arch/x86/kvm/hyperv.c).
inline constexpr std::size_t HV_XMM_EX_MAX_BANKS = 2 * HV_HYPERCALL_MAX_XMM_REGISTERS - 1;
/// Linux's "no VP index known for this CPU" (hv_vp_index[] initial value, U32_MAX) — Linux
/// drivers/hv/hv_common.c hv_common_init.
inline constexpr std::uint32_t VP_INVAL = 0xFFFFFFFFu;

/// True when `vector` is a legal IPI vector for the IPI hypercalls (0x10..0xFF, TLFS
/// HvCallSendSyntheticClusterIpi).
constexpr bool ipi_vector_valid(std::uint64_t vector) noexcept {
  return vector >= HV_IPI_LOW_VECTOR && vector <= HV_IPI_HIGH_VECTOR;
}

// ---- HV_STATUS (TLFS datatypes/hv_status; Linux hyperv-tlfs.h HV_STATUS_*) -----------------------
enum class HvStatus : std::uint16_t {
  HV_STATUS_SUCCESS = 0x0,
  HV_STATUS_INVALID_HYPERCALL_CODE = 0x2,
  HV_STATUS_INVALID_HYPERCALL_INPUT = 0x3,
  HV_STATUS_INVALID_ALIGNMENT = 0x4,
  HV_STATUS_INVALID_PARAMETER = 0x5,
  HV_STATUS_ACCESS_DENIED = 0x6,
  HV_STATUS_INVALID_PARTITION_STATE = 0x7,
  HV_STATUS_OPERATION_DENIED = 0x8,
  HV_STATUS_INSUFFICIENT_MEMORY = 0xB,
  HV_STATUS_INVALID_PARTITION_ID = 0xD,
  HV_STATUS_INVALID_VP_INDEX = 0xE,
  HV_STATUS_NOT_FOUND = 0x10,
  HV_STATUS_INVALID_PORT_ID = 0x11,
  HV_STATUS_INVALID_CONNECTION_ID = 0x12,
  HV_STATUS_INSUFFICIENT_BUFFERS = 0x13,
};

/// "HV_STATUS_SUCCESS" etc.; for a code not in the enum, "HV_STATUS_0x00NN".
std::string status_name(std::uint16_t code);
inline std::string status_name(HvStatus s) { return status_name(static_cast<std::uint16_t>(s)); }
/// Accepts "HV_STATUS_INVALID_HYPERCALL_INPUT" or the short "INVALID_HYPERCALL_INPUT" (any case).
std::optional<HvStatus> status_from_name(std::string_view name) noexcept;

// ---- Hypercall input value, the "control word" (RCX) — TLFS "Hypercall Interface"; Linux HV_HYPERCALL_*
//  15:0 call code | 16 fast | 26:17 variable header size (QWORDs) | 31:27 RsvdZ (31 = Linux
//  HV_HYPERCALL_NESTED) | 43:32 rep count | 47:44 RsvdZ | 59:48 rep start index | 63:60 RsvdZ
inline constexpr std::uint64_t HV_HYPERCALL_FAST_BIT = 1ull << 16;
inline constexpr unsigned HV_HYPERCALL_VARHEAD_OFFSET = 17;
inline constexpr std::uint64_t HV_HYPERCALL_VARHEAD_MASK = 0x3FFull << 17;
inline constexpr unsigned HV_HYPERCALL_REP_COMP_OFFSET = 32;
inline constexpr std::uint64_t HV_HYPERCALL_REP_COMP_MASK = 0xFFFull << 32;
inline constexpr unsigned HV_HYPERCALL_REP_START_OFFSET = 48;
inline constexpr std::uint64_t HV_HYPERCALL_REP_START_MASK = 0xFFFull << 48;
/// Bits 31:27, 47:44 and 63:60: KVM rejects any of them set (bit 31 included) — kvm_hv_hypercall
/// (arch/x86/kvm/hyperv.c, HV_HYPERCALL_RSVD_MASK).
inline constexpr std::uint64_t HV_HYPERCALL_RSVD_MASK =
    (0x1Full << 27) | (0xFull << 44) | (0xFull << 60);

struct HypercallControl {
  std::uint16_t call_code = 0;
  bool fast = false;
  std::uint16_t var_header_qwords = 0;  ///< 10 bits
  std::uint16_t rep_count = 0;          ///< 12 bits
  std::uint16_t rep_start = 0;          ///< 12 bits
  std::uint64_t reserved = 0;           ///< the RsvdZ bits exactly where they sit in the word
  friend bool operator==(const HypercallControl&, const HypercallControl&) = default;
};

/// Encodes the control word. Throws std::invalid_argument when varhead > 0x3FF, rep_count or
/// rep_start > 0xFFF, or `reserved` has bits outside HV_HYPERCALL_RSVD_MASK.
std::uint64_t encode_control(const HypercallControl& c);
/// Decodes any 64-bit value (total: every bit lands in exactly one field). decode(encode(x)) == x.
HypercallControl decode_control(std::uint64_t word) noexcept;

// ---- Hypercall result value (RAX) — TLFS "Hypercall Interface" ------------------------------------
//  15:0 HV_STATUS | 31:16 reserved | 43:32 reps completed (absolute) | 63:44 reserved
struct HypercallResult {
  std::uint16_t status = 0;
  std::uint16_t reps_completed = 0;  ///< 12 bits
  friend bool operator==(const HypercallResult&, const HypercallResult&) = default;
};
std::uint64_t encode_result(const HypercallResult& r);  ///< throws if reps_completed > 0xFFF
HypercallResult decode_result(std::uint64_t rax) noexcept;  ///< reserved bits are dropped
/// Linux hv_result_success() (include/asm-generic/mshyperv.h): only bits 15:0 count
/// (HV_HYPERCALL_RESULT_MASK).
constexpr bool hv_result_success(std::uint64_t rax) noexcept { return (rax & 0xFFFF) == 0; }

// ---- hv_send_ipi (HvCallSendSyntheticClusterIpi input), 16 bytes — TLFS; Linux struct hv_send_ipi --
//  +0 u32 vector | +4 u8 TargetVtl + 3 bytes padding (Linux/KVM: one u32 "reserved") | +8 u64 mask
inline constexpr std::size_t HV_SEND_IPI_INPUT_BYTES = 16;
struct SendIpiInput {
  std::uint32_t vector = 0;
  std::uint32_t reserved = 0;        ///< TargetVtl in bits 7:0, padding above
  std::uint64_t processor_mask = 0;  ///< bit n = VP index n (VPs 0..63 only)
  friend bool operator==(const SendIpiInput&, const SendIpiInput&) = default;
};
std::array<std::uint8_t, HV_SEND_IPI_INPUT_BYTES> encode_send_ipi(const SendIpiInput& in) noexcept;
/// Needs at least 16 bytes (extra bytes are ignored); nullopt when shorter.
std::optional<SendIpiInput> decode_send_ipi(std::span<const std::uint8_t> bytes) noexcept;

/// Fast (register) form: RDX = vector | reserved << 32, R8 = mask (TLFS register conventions).
struct FastRegs {
  std::uint64_t rdx = 0;
  std::uint64_t r8 = 0;
  friend bool operator==(const FastRegs&, const FastRegs&) = default;
};
FastRegs encode_send_ipi_fast(const SendIpiInput& in) noexcept;
SendIpiInput decode_send_ipi_fast(const FastRegs& regs) noexcept;

// ---- hv_vpset (HV_VP_SET) — TLFS HV_VP_SET datatype; Linux struct hv_vpset ------------------------
inline constexpr std::uint64_t HV_GENERIC_SET_SPARSE_4K = 0;
inline constexpr std::uint64_t HV_GENERIC_SET_ALL = 1;

/// A VP set as it travels: format, valid_bank_mask and the *compact* bank array (one QWORD per set
/// bit of valid_bank_mask, ascending bank order; a present element may be zero).
struct VpSet {
  std::uint64_t format = HV_GENERIC_SET_SPARSE_4K;
  std::uint64_t valid_bank_mask = 0;
  std::vector<std::uint64_t> bank_contents;
  friend bool operator==(const VpSet&, const VpSet&) = default;
};

/// Builds the minimal compact sparse set holding exactly `vps` (only banks with a VP are valid).
/// Throws std::invalid_argument for a VP index > 4095.
VpSet vpset_from_vps(std::span<const std::uint32_t> vps);
/// Membership as KVM decodes it (kvm_hv_send_ipi_to_many, hv_is_vp_in_sparse_set): ALL (format == 1)
/// holds every VP; otherwise bank = vp/64 must be < 64 and valid, element index = popcount of the
/// lower valid bits, then bit vp%64. A bank_contents shorter than popcount(valid_bank_mask) reads
/// missing elements as absent.
bool vpset_contains(const VpSet& set, std::uint32_t vp) noexcept;
/// The VP indices a sparse set names, ascending (ALL is not expanded: returns empty).
std::vector<std::uint32_t> vpset_vps(const VpSet& set);
/// popcount(valid_bank_mask): the varhead (QWORDs) a well-formed Ex call carries (TLFS
/// HvCallSendSyntheticClusterIpiEx; KVM checks var_cnt against it).
unsigned vpset_bank_count(const VpSet& set) noexcept;

// ---- hv_send_ipi_ex (HvCallSendSyntheticClusterIpiEx input) — TLFS; Linux struct hv_send_ipi_ex ----
//  +0 u32 vector | +4 u32 reserved (TargetVtl + padding) | +8 u64 format | +16 u64 valid_bank_mask
//  | +24 u64 bank_contents[nbanks]. Fixed header = 24 bytes; varhead = number of bank QWORDs.
inline constexpr std::size_t HV_SEND_IPI_EX_FIXED_BYTES = 24;
struct SendIpiExInput {
  std::uint32_t vector = 0;
  std::uint32_t reserved = 0;
  VpSet vp_set;
  friend bool operator==(const SendIpiExInput&, const SendIpiExInput&) = default;
};
/// 24 + 8 * bank_contents.size() bytes.
std::vector<std::uint8_t> encode_send_ipi_ex(const SendIpiExInput& in);
/// Decodes the fixed header plus exactly `nbanks` bank QWORDs (the varhead the control word
/// announced). nullopt when `bytes` is too short for that.
std::optional<SendIpiExInput> decode_send_ipi_ex(std::span<const std::uint8_t> bytes, std::size_t nbanks);

/// XMM fast input block (x64): RDX, R8, then XMM0..XMM5 each {low QWORD, high QWORD} — TLFS
/// "XMM Fast Hypercalls"; KVM kvm_hv_hypercall_read_xmm.
struct XmmFastInput {
  std::uint64_t rdx = 0;
  std::uint64_t r8 = 0;
  std::array<std::array<std::uint64_t, 2>, HV_HYPERCALL_MAX_XMM_REGISTERS> xmm{};
  friend bool operator==(const XmmFastInput&, const XmmFastInput&) = default;
};
/// Ex call in XMM-fast form as KVM reads it: RDX = vector | reserved << 32, R8 = format,
/// XMM0.lo = valid_bank_mask, banks from XMM0.hi onwards. Throws std::invalid_argument for more
/// than 11 banks (HV_XMM_EX_MAX_BANKS).
XmmFastInput encode_send_ipi_ex_xmm(const SendIpiExInput& in);
/// Reads `nbanks` banks from the XMM block; nullopt when nbanks > 11.
std::optional<SendIpiExInput> decode_send_ipi_ex_xmm(const XmmFastInput& in, std::size_t nbanks) noexcept;

}  // namespace ipilab::hv
