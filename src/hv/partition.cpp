// Host side of Hyper-V enlightened IPIs, KVM semantics. See partition.h for the validation order and
// the sources (Linux 6.12 arch/x86/kvm/hyperv.c; Xen viridian.c for ErrorFlavor::XenViridian).
#include "hv/partition.h"

#include "common/le.h"

#include <algorithm>
#include <array>
#include <bit>
#include <limits>
#include <stdexcept>
#include <string>

#include <fmt/format.h>

namespace ipilab::hv {
namespace {

constexpr std::uint32_t kNoVcpu = std::numeric_limits<std::uint32_t>::max();

// Call codes KVM implements besides the two IPI calls (kvm_hv_hypercall's switch, Linux 6.12). They are
// recognised so that the outcome says "not modelled" instead of pretending KVM does not know them.
constexpr std::uint16_t HVCALL_NOTIFY_LONG_SPIN_WAIT = 0x0008;
constexpr std::uint16_t HVCALL_POST_MESSAGE = 0x005C;
constexpr std::uint16_t HVCALL_SIGNAL_EVENT = 0x005D;
constexpr std::uint16_t HVCALL_POST_DEBUG_DATA = 0x0069;
constexpr std::uint16_t HVCALL_RETRIEVE_DEBUG_DATA = 0x006A;
constexpr std::uint16_t HVCALL_RESET_DEBUG_SESSION = 0x006B;
constexpr std::uint16_t HV_EXT_CALL_QUERY_CAPABILITIES = 0x8001;
constexpr std::uint16_t HV_EXT_CALL_MAX = 0x8041;  // HV_EXT_CALL_QUERY_CAPABILITIES + 64 (KVM hyperv.c)

bool is_flush_code(std::uint16_t code) noexcept {
  return code == HVCALL_FLUSH_VIRTUAL_ADDRESS_SPACE || code == HVCALL_FLUSH_VIRTUAL_ADDRESS_LIST ||
         code == HVCALL_FLUSH_VIRTUAL_ADDRESS_SPACE_EX || code == HVCALL_FLUSH_VIRTUAL_ADDRESS_LIST_EX;
}

bool kvm_implements_unmodelled(std::uint16_t code) noexcept {
  switch (code) {
    case HVCALL_NOTIFY_LONG_SPIN_WAIT:
    case HVCALL_POST_MESSAGE:
    case HVCALL_SIGNAL_EVENT:
    case HVCALL_POST_DEBUG_DATA:
    case HVCALL_RETRIEVE_DEBUG_DATA:
    case HVCALL_RESET_DEBUG_SESSION:
      return true;
    default:
      return is_flush_code(code) || (code >= HV_EXT_CALL_QUERY_CAPABILITIES && code <= HV_EXT_CALL_MAX);
  }
}

bool xen_implements_unmodelled(std::uint16_t code) noexcept {
  return code == HVCALL_NOTIFY_LONG_SPIN_WAIT || is_flush_code(code);
}

/// is_xmm_fast_hypercall(): codes whose fast form carries input in XMM registers (KVM hyperv.c).
bool is_xmm_fast_code(std::uint16_t code) noexcept {
  return code == HVCALL_SEND_IPI_EX || is_flush_code(code);
}

// Rejection reasons: static strings, named after the check in the source.
namespace why {
constexpr std::string_view kCplOrMode = "CPL != 0 or not in protected mode (#UD)";
constexpr std::string_view kAccessDenied = "enforce_cpuid: Hyper-V CPUID does not expose this call";
constexpr std::string_view kReservedBits = "reserved control bits set (31:27, 47:44, 63:60)";
constexpr std::string_view kXmmUnavailable = "enforce_cpuid: XMM fast input without the XMM-input CPUID bit (#UD)";
constexpr std::string_view kSendIpiVarhead = "SEND_IPI with a variable header (varhead != 0)";
constexpr std::string_view kSendIpiRep = "SEND_IPI with rep count or rep start != 0";
constexpr std::string_view kSendIpiExRep = "SEND_IPI_EX with rep count or rep start != 0";
constexpr std::string_view kNotModelled = "call code implemented by KVM but not modelled by ipilab";
constexpr std::string_view kXenNotModelled = "call code implemented by Xen viridian but not modelled by ipilab";
constexpr std::string_view kUnknownCode = "unknown call code";
constexpr std::string_view kNoLapic = "no in-kernel LAPIC";
constexpr std::string_view kReadSendIpi = "slow SEND_IPI: 16-byte input at RDX not readable";
constexpr std::string_view kFastHighRdx = "fast SEND_IPI: RDX[63:32] (TargetVtl/reserved) != 0";
constexpr std::string_view kReadExHeader = "slow SEND_IPI_EX: 24-byte header at RDX not readable";
constexpr std::string_view kVarheadPopcount = "varhead != popcount(valid_bank_mask)";
constexpr std::string_view kVarheadOver64 = "varhead > 64 sparse banks";
constexpr std::string_view kXmmTooManyBanks = "XMM fast SEND_IPI_EX: varhead > 11 banks";
constexpr std::string_view kReadBanks = "slow SEND_IPI_EX: sparse banks at RDX + 24 not readable";
constexpr std::string_view kBadVector = "vector outside 0x10..0xFF";
constexpr std::string_view kXenReservedVtl = "TargetVtl or padding (input bytes 4..7) != 0";
constexpr std::string_view kXenFastEx = "fast SEND_IPI_EX (Xen accepts only the memory form)";
constexpr std::string_view kXenBadFormat = "vp_set.format is neither SPARSE_4K (0) nor ALL (1)";
constexpr std::string_view kOldFastEx =
    "fast SEND_IPI_EX (KVM before 47d3e5cdfe60 accepts only the memory form)";
}  // namespace why

using le::get_u32;
using le::get_u64;

/// kvm_read_guest / hvm_copy_from_guest_phys with the work accounted.
bool read_guest(const GuestMemory& memory, HostWork& work, std::uint64_t gpa, std::span<std::uint8_t> out) {
  ++work.guest_reads;
  if (!memory.read(gpa, out)) return false;
  work.guest_bytes_read += out.size();
  return true;
}

/// What the IPI handler concluded: a status, or a set to deliver to.
struct IpiDecision {
  HvStatus status = HvStatus::HV_STATUS_SUCCESS;
  std::string_view rejected_by;
  bool deliver = false;  ///< false: SUCCESS without delivery (KVM sparse, varhead 0)
  std::uint32_t vector = 0;
  bool all = false;
  VpSet set;  ///< sparse set (bank_contents = the banks actually read)
};

IpiDecision fail(HvStatus s, std::string_view why_) {
  IpiDecision d;
  d.status = s;
  d.rejected_by = why_;
  return d;
}

}  // namespace

PartitionConfig PartitionConfig::identity(std::uint32_t n) {
  PartitionConfig c;
  c.vp_index_of_vcpu.resize(n);
  for (std::uint32_t i = 0; i < n; ++i) c.vp_index_of_vcpu[i] = i;
  return c;
}

Partition::Partition(PartitionConfig config)
    : config_(std::move(config)), behaviour_(kvm_behaviour(config_.kvm_version)) {
  const auto n = config_.vp_index_of_vcpu.size();
  if (config_.max_vcpus == 0 || config_.max_vcpus > KVM_MAX_VCPUS_MAXSMP)
    throw std::invalid_argument(fmt::format("max_vcpus {} outside 1..{}", config_.max_vcpus, KVM_MAX_VCPUS_MAXSMP));
  if (n == 0) throw std::invalid_argument("a partition needs at least one vCPU");
  if (n > config_.max_vcpus)
    throw std::invalid_argument(fmt::format("{} vCPUs exceed max_vcpus {}", n, config_.max_vcpus));
  if (!config_.apic_enabled.empty() && config_.apic_enabled.size() != n)
    throw std::invalid_argument(
        fmt::format("apic_enabled has {} entries for {} vCPUs", config_.apic_enabled.size(), n));
  const bool xen = config_.flavor == ErrorFlavor::XenViridian;
  if (!xen && !config_.lapic_in_kernel && !behaviour_.lapic_in_kernel_checked)
    throw std::invalid_argument(fmt::format(
        "KVM {} has no in-kernel-LAPIC check: an IPI hypercall would dereference a NULL APIC in the host "
        "(fixed by \"KVM: x86: Reject Hyper-V's SEND_IPI hypercalls if local APIC isn't in-kernel\"); not modelled",
        kvm_version_name(config_.kvm_version)));
  vcpu_of_vp_.assign(config_.max_vcpus, kNoVcpu);
  for (std::uint32_t i = 0; i < n; ++i) {
    const std::uint32_t vp = config_.vp_index_of_vcpu[i];
    if (vp >= config_.max_vcpus)
      throw std::invalid_argument(
          fmt::format("vCPU {}: VP index {} is not below max_vcpus {}", i, vp, config_.max_vcpus));
    if (vcpu_of_vp_[vp] != kNoVcpu) {
      // KVM: HV_X64_MSR_VP_INDEX only checks the bound, duplicates are legal. Xen: VP index = vCPU id.
      if (xen)
        throw std::invalid_argument(fmt::format(
            "vCPU {}: VP index {} is already used by vCPU {} (Xen viridian: the VP index is the vCPU id)", i,
            vp, vcpu_of_vp_[vp]));
      continue;
    }
    vcpu_of_vp_[vp] = i;
  }
}

std::vector<std::uint32_t> Partition::vcpus_of_vp(std::uint32_t vp) const {
  std::vector<std::uint32_t> out;
  for (std::uint32_t v = 0; v < vcpu_count(); ++v)
    if (config_.vp_index_of_vcpu[v] == vp) out.push_back(v);
  return out;
}

std::optional<std::uint32_t> Partition::vcpu_of_vp(std::uint32_t vp) const noexcept {
  if (vp >= vcpu_of_vp_.size() || vcpu_of_vp_[vp] == kNoVcpu) return std::nullopt;
  return vcpu_of_vp_[vp];
}

namespace {

/// kvm_hv_send_ipi (Linux 6.12) steps a-d: validation and set parsing; delivery is done by the caller.
IpiDecision kvm_send_ipi(const PartitionConfig& cfg, const KvmBehaviour& kb, const HypercallControl& hc,
                         const HypercallRegs& regs, const GuestMemory& memory, HostWork& work,
                         DecodedInput& decoded) {
  constexpr auto kInput = HvStatus::HV_STATUS_INVALID_HYPERCALL_INPUT;
  // (Older versions without the check never get here without a LAPIC: the constructor refuses them.)
  if (!cfg.lapic_in_kernel) return fail(kInput, why::kNoLapic);

  IpiDecision d;
  if (hc.call_code == HVCALL_SEND_IPI) {
    SendIpiInput in;
    if (!hc.fast) {
      std::array<std::uint8_t, HV_SEND_IPI_INPUT_BYTES> buf{};
      if (!read_guest(memory, work, regs.rdx, buf)) return fail(kInput, why::kReadSendIpi);
      in = *decode_send_ipi(buf);  // 16 bytes: always decodes; bytes 4..7 unchecked
    } else {
      in = decode_send_ipi_fast({regs.rdx, regs.r8});
      decoded = in;
      if (regs.rdx >> 32 != 0) return fail(kInput, why::kFastHighRdx);
    }
    decoded = in;
    d.vector = in.vector;
    d.set.format = HV_GENERIC_SET_SPARSE_4K;
    d.set.valid_bank_mask = 1;  // the 64-bit mask is bank 0
    d.set.bank_contents = {in.processor_mask};
    work.banks_read = 1;
  } else {  // HVCALL_SEND_IPI_EX
    SendIpiExInput in;
    if (!hc.fast) {
      std::array<std::uint8_t, HV_SEND_IPI_EX_FIXED_BYTES> buf{};
      if (!read_guest(memory, work, regs.rdx, buf)) return fail(kInput, why::kReadExHeader);
      in.vector = get_u32(buf.data());
      in.reserved = get_u32(buf.data() + 4);
      in.vp_set.format = get_u64(buf.data() + 8);
      in.vp_set.valid_bank_mask = get_u64(buf.data() + 16);
    } else {
      in.vector = static_cast<std::uint32_t>(regs.rdx);
      in.reserved = static_cast<std::uint32_t>(regs.rdx >> 32);  // ignored by KVM
      in.vp_set.format = regs.r8;
      in.vp_set.valid_bank_mask = regs.xmm[0][0];
    }
    decoded = in;
    d.vector = in.vector;
    d.all = in.vp_set.format == HV_GENERIC_SET_ALL;
    d.set.format = in.vp_set.format;
    d.set.valid_bank_mask = in.vp_set.valid_bank_mask;
    const auto popcount = static_cast<std::uint32_t>(std::popcount(in.vp_set.valid_bank_mask));
    // bd1ba5732bb9: the bank count is var_cnt and must match the mask; before, popcount(mask).
    if (kb.banks_from_varhead && hc.var_header_qwords != popcount) return fail(kInput, why::kVarheadPopcount);
    const std::uint32_t var_cnt = kb.banks_from_varhead ? hc.var_header_qwords : popcount;
    if (!kb.set_all_ignores_bank_count && var_cnt == 0) {
      d.deliver = false;  // before 3244867af8c0: `if (!sparse_banks_len) goto ret_success;`, SET_ALL too
      return d;
    }
    if (!d.all) {
      if (var_cnt == 0) {
        d.deliver = false;  // "nothing in sparse banks": SUCCESS, vector unchecked
        return d;
      }
      // kvm_get_sparse_vp_set -> kvm_hv_get_hc_data
      if (kb.banks_from_varhead && var_cnt > HV_MAX_SPARSE_VCPU_BANKS) return fail(kInput, why::kVarheadOver64);
      const std::uint32_t cap = (cfg.max_vcpus + HV_VCPUS_PER_SPARSE_BANK - 1) / HV_VCPUS_PER_SPARSE_BANK;
      const std::uint32_t cnt = kb.sparse_reads_capped ? std::min(var_cnt, cap) : var_cnt;
      std::vector<std::uint64_t> banks(cnt);
      if (hc.fast) {
        constexpr std::uint32_t consumed_xmm_halves = 1;  // XMM0.lo = valid_bank_mask
        if (var_cnt > 2 * HV_HYPERCALL_MAX_XMM_REGISTERS - consumed_xmm_halves)
          return fail(kInput, why::kXmmTooManyBanks);
        for (std::uint32_t i = 0; i < cnt; ++i) {
          const std::uint32_t j = i + consumed_xmm_halves;
          banks[i] = regs.xmm[j / 2][j % 2];
        }
      } else {
        std::array<std::uint8_t, 8 * HV_MAX_SPARSE_VCPU_BANKS> buf{};  // cnt <= 64 (checked above, or a popcount)
        std::vector<std::uint8_t> more;
        if (cnt > HV_MAX_SPARSE_VCPU_BANKS) more.resize(static_cast<std::size_t>(cnt) * 8);
        const std::span<std::uint8_t> bytes = more.empty() ? std::span<std::uint8_t>(buf.data(), static_cast<std::size_t>(cnt) * 8)
                                                           : std::span<std::uint8_t>(more);
        if (!read_guest(memory, work, regs.rdx + HV_SEND_IPI_EX_FIXED_BYTES, bytes))
          return fail(kInput, why::kReadBanks);
        for (std::uint32_t i = 0; i < cnt; ++i) banks[i] = get_u64(bytes.data() + 8 * i);
      }
      work.banks_read = cnt;
      in.vp_set.bank_contents = banks;
      decoded = std::move(in);  // last use of `in`
      d.set.bank_contents = std::move(banks);
    }
  }
  if (!ipi_vector_valid(d.vector)) return fail(kInput, why::kBadVector);
  d.deliver = true;
  return d;
}

/// Xen viridian hvcall_ipi / hvcall_ipi_ex (xen/arch/x86/hvm/viridian/viridian.c). Every error is
/// INVALID_PARAMETER.
IpiDecision xen_send_ipi(const HypercallControl& hc, const HypercallRegs& regs, const GuestMemory& memory,
                         HostWork& work, DecodedInput& decoded) {
  constexpr auto kParam = HvStatus::HV_STATUS_INVALID_PARAMETER;
  IpiDecision d;
  if (hc.call_code == HVCALL_SEND_IPI) {
    SendIpiInput in;
    if (hc.fast) {
      in = decode_send_ipi_fast({regs.rdx, regs.r8});
      decoded = in;
      if (regs.rdx >> 32 != 0) return fail(kParam, why::kFastHighRdx);
    } else {
      std::array<std::uint8_t, HV_SEND_IPI_INPUT_BYTES> buf{};
      if (!read_guest(memory, work, regs.rdx, buf)) return fail(kParam, why::kReadSendIpi);
      in = *decode_send_ipi(buf);
      decoded = in;
      if (in.reserved != 0) return fail(kParam, why::kXenReservedVtl);
    }
    if (!ipi_vector_valid(in.vector)) return fail(kParam, why::kBadVector);
    d.vector = in.vector;
    d.set.valid_bank_mask = 1;
    d.set.bank_contents = {in.processor_mask};
    work.banks_read = 1;
  } else {
    if (hc.fast) return fail(kParam, why::kXenFastEx);
    std::array<std::uint8_t, HV_SEND_IPI_EX_FIXED_BYTES> buf{};
    if (!read_guest(memory, work, regs.rdx, buf)) return fail(kParam, why::kReadExHeader);
    SendIpiExInput in;
    in.vector = get_u32(buf.data());
    in.reserved = get_u32(buf.data() + 4);
    in.vp_set.format = get_u64(buf.data() + 8);
    in.vp_set.valid_bank_mask = get_u64(buf.data() + 16);
    decoded = in;
    if (in.reserved != 0) return fail(kParam, why::kXenReservedVtl);
    if (!ipi_vector_valid(in.vector)) return fail(kParam, why::kBadVector);
    d.vector = in.vector;
    d.set.format = in.vp_set.format;
    d.set.valid_bank_mask = in.vp_set.valid_bank_mask;
    if (in.vp_set.format == HV_GENERIC_SET_ALL) {
      d.all = true;
    } else if (in.vp_set.format == HV_GENERIC_SET_SPARSE_4K) {
      const auto nbanks = static_cast<std::size_t>(std::popcount(in.vp_set.valid_bank_mask));
      std::vector<std::uint8_t> bytes(nbanks * 8);
      if (nbanks != 0 && !read_guest(memory, work, regs.rdx + HV_SEND_IPI_EX_FIXED_BYTES, bytes))
        return fail(kParam, why::kReadBanks);
      std::vector<std::uint64_t> banks(nbanks);
      for (std::size_t i = 0; i < nbanks; ++i) banks[i] = get_u64(bytes.data() + 8 * i);
      work.banks_read = static_cast<std::uint32_t>(nbanks);
      in.vp_set.bank_contents = banks;
      decoded = in;
      d.set.bank_contents = std::move(banks);
    } else {
      return fail(kParam, why::kXenBadFormat);
    }
  }
  d.deliver = true;
  return d;
}

// hv_check_hypercall_access: the CPUID bits each modelled call needs (KVM_CAP_HYPERV_ENFORCE_CPUID).
bool hypercall_access_granted(const PartitionConfig& cfg, std::uint16_t code) {
  switch (code) {
    case HVCALL_SEND_IPI_EX:
      return cfg.ex_processor_masks_recommended && cfg.cluster_ipi_recommended;
    case HVCALL_SEND_IPI:
      return cfg.cluster_ipi_recommended;
    case HVCALL_FLUSH_VIRTUAL_ADDRESS_LIST_EX:
    case HVCALL_FLUSH_VIRTUAL_ADDRESS_SPACE_EX:
      return cfg.ex_processor_masks_recommended && cfg.remote_tlb_flush_recommended;
    case HVCALL_FLUSH_VIRTUAL_ADDRESS_LIST:
    case HVCALL_FLUSH_VIRTUAL_ADDRESS_SPACE:
      return cfg.remote_tlb_flush_recommended;
    default:
      return true;  // other codes: their CPUID bits are not part of PartitionConfig; granted
  }
}

// The vCPUs whose VP index is in the decided set, in vCPU order (KVM) or VP-index order (Xen).
std::vector<std::uint32_t> select_targets(const PartitionConfig& cfg, const IpiDecision& d, bool xen,
                                          HostWork& work) {
  const bool every = d.all || d.set.format == HV_GENERIC_SET_ALL;
  std::array<std::uint64_t, HV_MAX_SPARSE_VCPU_BANKS> bank_bits{};
  if (!every) {
    std::size_t index = 0;
    for (std::uint32_t bank = 0; bank < HV_MAX_SPARSE_VCPU_BANKS; ++bank) {
      if (!(d.set.valid_bank_mask & (1ull << bank))) continue;
      if (index < d.set.bank_contents.size()) bank_bits[bank] = d.set.bank_contents[index];
      ++index;
    }
  }
  std::vector<std::uint32_t> selected;
  const std::uint32_t n = static_cast<std::uint32_t>(cfg.vp_index_of_vcpu.size());
  selected.reserve(n);
  work.vcpus_scanned += n;
  for (std::uint32_t v = 0; v < n; ++v) {
    const std::uint32_t vp = cfg.vp_index_of_vcpu[v];
    const std::uint32_t bank = vp / HV_VCPUS_PER_SPARSE_BANK;
    if (every || (bank < HV_MAX_SPARSE_VCPU_BANKS && ((bank_bits[bank] >> (vp % HV_VCPUS_PER_SPARSE_BANK)) & 1)))
      selected.push_back(v);
  }
  if (xen) {  // for_each_vp: VP-index order
    std::sort(selected.begin(), selected.end(), [&cfg](std::uint32_t a, std::uint32_t b) {
      return cfg.vp_index_of_vcpu[a] < cfg.vp_index_of_vcpu[b];
    });
  }
  return selected;
}

}  // namespace

HypercallOutcome Partition::execute(std::uint32_t sender_vcpu, const HypercallRegs& regs,
                                    const GuestMemory& memory) const {
  if (sender_vcpu >= vcpu_count())
    throw std::out_of_range(fmt::format("sender vCPU {} does not exist ({} vCPUs)", sender_vcpu, vcpu_count()));

  HypercallOutcome out;
  const bool xen = config_.flavor == ErrorFlavor::XenViridian;
  auto finish = [&out](HvStatus s, std::string_view why_) -> HypercallOutcome {
    out.status = s;
    out.rejected_by = why_;
    out.rax = encode_result({static_cast<std::uint16_t>(s), 0});
    return std::move(out);  // the outcome is complete: moved out, not copied
  };

  // 2. decode (done first so the outcome always shows it; KVM reads RCX after step 1).
  const HypercallControl hc = decode_control(regs.rcx);
  out.control = hc;
  // 1. #UD outside CPL0 / protected mode.
  if (regs.cpl != 0 || !regs.protected_mode) {
    out.inject_ud = true;
    out.rejected_by = why::kCplOrMode;
    return out;
  }
  const bool rep = hc.rep_count != 0 || hc.rep_start != 0;
  const std::uint16_t code = hc.call_code;

  if (!xen) {
    // 3. hv_check_hypercall_access (only with KVM_CAP_HYPERV_ENFORCE_CPUID).
    if (config_.enforce_cpuid) {
      if (!hypercall_access_granted(config_, code))
        return finish(HvStatus::HV_STATUS_ACCESS_DENIED, why::kAccessDenied);
    }
    // 4. RsvdZ control bits (413af6601f76).
    if (behaviour_.reserved_control_bits_rejected && hc.reserved != 0)
      return finish(HvStatus::HV_STATUS_INVALID_HYPERCALL_INPUT, why::kReservedBits);
    // 5. XMM gate (SEND_IPI_EX is an XMM-fast code only since 47d3e5cdfe60).
    const bool xmm_code = is_xmm_fast_code(code) && (code != HVCALL_SEND_IPI_EX || behaviour_.xmm_fast_send_ipi_ex);
    if (hc.fast && xmm_code) {
      if (config_.enforce_cpuid && !config_.xmm_input_available) {
        out.inject_ud = true;
        out.rejected_by = why::kXmmUnavailable;
        return out;
      }
      out.work.xmm_registers_read = HV_HYPERCALL_MAX_XMM_REGISTERS;
    }
  }

  // 6. dispatch.
  if (code == HVCALL_SEND_IPI || code == HVCALL_SEND_IPI_EX) {
    if (!xen) {
      if (behaviour_.fixed_size_varhead_rejected && code == HVCALL_SEND_IPI && hc.var_header_qwords != 0)
        return finish(HvStatus::HV_STATUS_INVALID_HYPERCALL_INPUT, why::kSendIpiVarhead);
      // Before 47d3e5cdfe60: `case HVCALL_SEND_IPI_EX: if (unlikely(hc.fast || hc.rep))`.
      if (code == HVCALL_SEND_IPI_EX && hc.fast && !behaviour_.xmm_fast_send_ipi_ex)
        return finish(HvStatus::HV_STATUS_INVALID_HYPERCALL_INPUT, why::kOldFastEx);
      if (rep)
        return finish(HvStatus::HV_STATUS_INVALID_HYPERCALL_INPUT,
                      code == HVCALL_SEND_IPI ? why::kSendIpiRep : why::kSendIpiExRep);
    }
  } else if (xen ? xen_implements_unmodelled(code) : kvm_implements_unmodelled(code)) {
    out.modelled = false;
    return finish(HvStatus::HV_STATUS_INVALID_HYPERCALL_CODE, xen ? why::kXenNotModelled : why::kNotModelled);
  } else {
    return finish(HvStatus::HV_STATUS_INVALID_HYPERCALL_CODE, why::kUnknownCode);
  }

  // 7. the IPI handler.
  const IpiDecision d = xen ? xen_send_ipi(hc, regs, memory, out.work, out.input)
                            : kvm_send_ipi(config_, behaviour_, hc, regs, memory, out.work, out.input);
  if (d.status != HvStatus::HV_STATUS_SUCCESS) return finish(d.status, d.rejected_by);
  if (!d.deliver) return finish(HvStatus::HV_STATUS_SUCCESS, {});

  // 7e. kvm_hv_send_ipi_to_many: every vCPU, sender included, in vCPU order.
  // The set expanded once to one word per bank (what vpset_contains(d.set, vp) answers for every vp:
  // bank beyond the compact array or not valid -> 0), then tested per vCPU.
  const std::vector<std::uint32_t> selected = select_targets(config_, d, xen, out.work);
  out.delivered.reserve(selected.size());
  for (const std::uint32_t v : selected) {
    ++out.work.apic_set_irq_calls;
    const bool enabled = config_.apic_enabled.empty() || config_.apic_enabled[v];
    if (enabled)
      out.delivered.push_back({v, config_.vp_index_of_vcpu[v], d.vector});
    else
      out.dropped_vcpus.push_back(v);
  }
  return finish(HvStatus::HV_STATUS_SUCCESS, {});
}

}  // namespace ipilab::hv
