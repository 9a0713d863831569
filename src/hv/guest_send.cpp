// The Linux Hyper-V IPI send paths as a state machine (see guest_send.h for sources and the hook table).
#include "hv/guest_send.h"

#include <algorithm>
#include <array>
#include <stdexcept>
#include <string>
#include <utility>

#include "common/error.h"
#include "hv/guest_vpset.h"

namespace ipilab::hv {

std::string_view hook_name(SendHook h) noexcept {
  switch (h) {
    case SendHook::kSendIpi: return "send_IPI";
    case SendHook::kSendIpiMask: return "send_IPI_mask";
    case SendHook::kSendIpiMaskAllButSelf: return "send_IPI_mask_allbutself";
    case SendHook::kSendIpiAllButSelf: return "send_IPI_allbutself";
    case SendHook::kSendIpiAll: return "send_IPI_all";
    case SendHook::kSendIpiSelf: return "send_IPI_self";
  }
  return "?";
}

WorkRecord& WorkRecord::operator+=(const WorkRecord& o) noexcept {
  stack_cpumask_bytes += o.stack_cpumask_bytes;
  stack_cpumask_bytes_zeroed += o.stack_cpumask_bytes_zeroed;
  cpumask_words += o.cpumask_words;
  vp_lookups += o.vp_lookups;
  vpset_banks_cleared += o.vpset_banks_cleared;
  vpset_banks_built += o.vpset_banks_built;
  irq_save_restore += o.irq_save_restore;
  hypercalls.send_ipi_fast += o.hypercalls.send_ipi_fast;
  hypercalls.send_ipi_slow += o.hypercalls.send_ipi_slow;
  hypercalls.send_ipi_ex_slow += o.hypercalls.send_ipi_ex_slow;
  hypercalls.send_ipi_ex_xmm += o.hypercalls.send_ipi_ex_xmm;
  hypercalls.failed += o.hypercalls.failed;
  varhead_qwords += o.varhead_qwords;
  slow_input_bytes += o.slow_input_bytes;
  tracepoint_sites += o.tracepoint_sites;
  tracepoints_emitted += o.tracepoints_emitted;
  native_fallbacks += o.native_fallbacks;
  return *this;
}

namespace {

// hv_send_ipi_ex field offsets in the input page (TLFS HvCallSendSyntheticClusterIpiEx; Linux struct
// hv_send_ipi_ex).
constexpr std::uint64_t kExVector = 0;
constexpr std::uint64_t kExReserved = 4;
constexpr std::uint64_t kExFormat = 8;
constexpr std::uint64_t kExValidBankMask = 16;
constexpr std::int32_t kVpInvalAsInt = -1;  // (int)VP_INVAL, what hv_cpu_number_to_vp_number returns

void put(FlatGuestMemory& page, std::uint64_t gpa, std::uint64_t v, unsigned bytes) {
  std::array<std::uint8_t, 8> b{};
  for (unsigned i = 0; i < bytes; ++i) b[i] = static_cast<std::uint8_t>(v >> (8 * i));
  if (!page.write(gpa, std::span<const std::uint8_t>(b.data(), bytes))) {
    throw std::logic_error("guest send: write outside the input page");
  }
}

std::vector<unsigned> without(std::vector<unsigned> cpus, unsigned cpu) {
  cpus.erase(std::remove(cpus.begin(), cpus.end(), cpu), cpus.end());
  return cpus;
}

}  // namespace

struct LinuxHvGuest::Ctx {
  unsigned self;
  std::uint32_t vector;
  SendResult& out;
  const HypervisorCall& hv;
  CpumaskOps ops;
};

LinuxHvGuest::LinuxHvGuest(GuestConfig config, GuestPolicy policy)
    : config_((config.validate(), std::move(config))),
      policy_(policy),
      present_(config_.present_mask()),
      online_(config_.online_mask()),
      max_vp_index_(config_.max_vp_index()),
      pages_(config_.nr_cpu_ids) {}

FlatGuestMemory& LinuxHvGuest::page_of(unsigned cpu) {
  auto& slot = pages_.at(cpu);
  if (!slot) slot.emplace(config_.input_page_gpa(cpu), std::vector<std::uint8_t>(kHvInputPageBytes, 0));
  return *slot;
}

const FlatGuestMemory& LinuxHvGuest::input_page(unsigned cpu) {
  if (cpu >= config_.nr_cpu_ids) throw InputError("input_page: cpu", "CPU " + std::to_string(cpu) + " >= nr_cpu_ids");
  return page_of(cpu);
}

bool LinuxHvGuest::hypercall_page_usable() const noexcept {
  if (config_.hypercall_page) return true;
  // Mainline: "A fully enlightened TDX VM uses GHCI rather than hv_hypercall_pg."
  return policy_.mask_path == MaskPathVersion::kMainline && config_.fully_enlightened_tdx;
}

void LinuxHvGuest::trace_one(Ctx& c) {
  // trace_hyperv_send_ipi_one(cpu, vector): TP_fast_assign copies two ints, no cpumask work.
  ++c.out.work.tracepoint_sites;
  if (config_.tracepoints_enabled) ++c.out.work.tracepoints_emitted;
}

void LinuxHvGuest::trace_mask(Ctx& c, const Cpumask& mask) {
  // trace_hyperv_send_ipi_mask(mask, vector): TP_fast_assign sets ncpus = cpumask_weight(mask).
  ++c.out.work.tracepoint_sites;
  if (config_.tracepoints_enabled) {
    ++c.out.work.tracepoints_emitted;
    (void)c.ops.weight(mask);
  }
}

// The mask paths (`one` false): v5.4 `int ret = hv_do_...(); return ret == 0;` (low 32 bits), later
// hv_result_success (low 16). __send_ipi_one (`one` true): the seed patch (v5.5)
// `return !hv_do_fast_hypercall16(...)` (all 64 bits), later hv_result_success.
bool LinuxHvGuest::judge_status(Ctx& c, std::uint64_t status, bool one) {
  const bool ok = judges_success(policy_, one, status);
  c.out.hypercalls.back().judged_success = ok;
  c.out.hypercalls.back().judged_by = success_rule(policy_, one);
  if (!ok) ++c.out.work.hypercalls.failed;
  return ok;
}

std::uint64_t LinuxHvGuest::fast_hypercall16(Ctx& c, std::uint16_t code, std::uint64_t in1, std::uint64_t in2) {
  IssuedHypercall call;
  call.regs.rcx = static_cast<std::uint64_t>(code) | HV_HYPERCALL_FAST_BIT;
  call.regs.rdx = in1;
  call.regs.r8 = in2;
  if (code == HVCALL_SEND_IPI) ++c.out.work.hypercalls.send_ipi_fast;
  call.result = c.hv(c.self, call.regs, page_of(c.self));
  c.out.hypercalls.push_back(std::move(call));
  return c.out.hypercalls.back().result;
}

std::uint64_t LinuxHvGuest::rep_hypercall(Ctx& c, std::uint16_t code, std::uint16_t rep_count, std::uint16_t varhead) {
  FlatGuestMemory& page = page_of(c.self);
  std::uint64_t control = code;
  control |= static_cast<std::uint64_t>(varhead) << HV_HYPERCALL_VARHEAD_OFFSET;
  control |= static_cast<std::uint64_t>(rep_count) << HV_HYPERCALL_REP_COMP_OFFSET;
  std::uint64_t status = 0;
  std::uint16_t rep_comp = 0;
  do {
    IssuedHypercall call;
    call.regs.rcx = control;
    call.regs.rdx = page.base_gpa();  // virt_to_phys(input)
    call.regs.r8 = 0;                 // output == NULL
    const std::size_t in_bytes = HV_SEND_IPI_EX_FIXED_BYTES + 8u * varhead;
    call.input.resize(in_bytes);
    if (!page.read(page.base_gpa(), call.input)) throw std::logic_error("guest send: input beyond the page");
    if (code == HVCALL_SEND_IPI_EX) ++c.out.work.hypercalls.send_ipi_ex_slow;
    if (code == HVCALL_SEND_IPI) ++c.out.work.hypercalls.send_ipi_slow;
    c.out.work.varhead_qwords += varhead;
    c.out.work.slow_input_bytes += static_cast<std::uint32_t>(in_bytes);
    status = c.hv(c.self, call.regs, page);
    call.result = status;
    c.out.hypercalls.push_back(std::move(call));
    if ((status & 0xFFFF) != 0) return status;  // HV_HYPERCALL_RESULT_MASK != HV_STATUS_SUCCESS
    rep_comp = static_cast<std::uint16_t>((status & HV_HYPERCALL_REP_COMP_MASK) >> HV_HYPERCALL_REP_COMP_OFFSET);
    control &= ~HV_HYPERCALL_REP_START_MASK;
    control |= static_cast<std::uint64_t>(rep_comp) << HV_HYPERCALL_REP_START_OFFSET;
  } while (rep_comp < rep_count);
  return status;
}

bool LinuxHvGuest::send_ipi_mask_ex(Ctx& c, const Cpumask& mask, std::uint32_t vector, bool exclude_self) {
  if (!config_.ex_processor_masks_recommended) return false;
  ++c.out.work.irq_save_restore;  // local_irq_save ... local_irq_restore
  if (!config_.input_page_present) return false;  // status stays HV_STATUS_INVALID_PARAMETER (v5.4: ret = 1)

  FlatGuestMemory& page = page_of(c.self);
  const std::uint64_t base = page.base_gpa();
  put(page, base + kExVector, vector, 4);
  put(page, base + kExReserved, 0, 4);
  put(page, base + kExValidBankMask, 0, 8);
  const std::uint64_t vpset = base + kExFormat;
  const std::optional<unsigned> skip = exclude_self ? std::optional<unsigned>(c.self) : std::nullopt;

  int nr_bank = 0;
  if (policy_.mask_path == MaskPathVersion::kMainline) {
    // if (!cpumask_equal(mask, cpu_present_mask) || exclude_self) { sparse; nr_bank <= 0 -> fail }
    // else SET_ALL.
    const bool equal = c.ops.equal(mask, present_);
    if (!equal || exclude_self) {
      put(page, base + kExFormat, HV_GENERIC_SET_SPARSE_4K, 8);
      nr_bank = cpumask_to_vpset(page, vpset, mask, skip, config_, max_vp_index_, c.ops, c.out.work);
      if (nr_bank <= 0) return false;
    } else {
      put(page, base + kExFormat, HV_GENERIC_SET_ALL, 8);
    }
  } else {
    // v5.4 and Sep 2021: if (!cpumask_equal(mask, cpu_present_mask)) { sparse; build } ;
    // nr_bank < 0 -> fail; nr_bank == 0 -> SET_ALL (also when exclude_self: the 2021 regression).
    if (!c.ops.equal(mask, present_)) {
      put(page, base + kExFormat, HV_GENERIC_SET_SPARSE_4K, 8);
      nr_bank = cpumask_to_vpset(page, vpset, mask, skip, config_, max_vp_index_, c.ops, c.out.work);
    }
    if (nr_bank < 0) return false;
    if (nr_bank == 0) put(page, base + kExFormat, HV_GENERIC_SET_ALL, 8);
  }
  const std::uint64_t status = rep_hypercall(c, HVCALL_SEND_IPI_EX, 0, static_cast<std::uint16_t>(nr_bank));
  return judge_status(c, status, false);
}

bool LinuxHvGuest::send_ipi_mask(Ctx& c, const Cpumask& mask, std::uint32_t vector, bool exclude_self) {
  trace_mask(c, mask);
  if (policy_.mask_path == MaskPathVersion::kV54) {
    if (c.ops.empty(mask)) return true;
  } else {
    const unsigned weight = c.ops.weight(mask);
    if (weight == 0 || (exclude_self && weight == 1 && c.ops.test_cpu(c.self, mask))) return true;
  }
  if (!hypercall_page_usable()) return false;
  if (!ipi_vector_valid(vector)) return false;

  // Shortcut on the highest CPU of the whole mask (self included); VP_INVAL (-1) does not trigger it.
  const unsigned last = c.ops.last(mask);
  ++c.out.work.vp_lookups;
  if (config_.vp_number(last) >= 64) return send_ipi_mask_ex(c, mask, vector, exclude_self);

  std::uint64_t cpu_mask = 0;
  for (unsigned cpu = c.ops.next(-1, mask); cpu < config_.nr_cpu_ids; cpu = c.ops.next(static_cast<int>(cpu), mask)) {
    if (exclude_self && cpu == c.self) continue;
    ++c.out.work.vp_lookups;
    const std::int32_t vcpu = config_.vp_number(cpu);
    if (vcpu == kVpInvalAsInt) return false;
    if (vcpu >= 64) return send_ipi_mask_ex(c, mask, vector, exclude_self);
    cpu_mask |= 1ull << vcpu;  // __set_bit(vcpu, &ipi_arg.cpu_mask)
  }
  const std::uint64_t status = fast_hypercall16(c, HVCALL_SEND_IPI, vector, cpu_mask);
  return judge_status(c, status, false);
}

bool LinuxHvGuest::send_ipi_one(Ctx& c, unsigned cpu, std::uint32_t vector) {
  switch (policy_.send_ipi_one) {
    case SendIpiOneVersion::kPreSeed: {
      // struct cpumask mask = CPU_MASK_NONE; cpumask_set_cpu(cpu, &mask); return __send_ipi_mask(&mask, vector);
      Cpumask mask(config_.nr_cpus);
      c.out.work.stack_cpumask_bytes += mask.size_bytes();
      c.out.work.stack_cpumask_bytes_zeroed += mask.size_bytes();
      c.ops.set_cpu(cpu, mask);
      return send_ipi_mask(c, mask, vector, false);
    }
    case SendIpiOneVersion::kSeedV2: {
      trace_one(c);
      if (!config_.hypercall_page || !ipi_vector_valid(vector)) return false;
      if (cpu >= 64) return send_ipi_mask_ex(c, Cpumask::of(config_.nr_cpus, {cpu}), vector, false);
      ++c.out.work.vp_lookups;
      const std::int32_t vp = config_.vp_number(cpu);
      // BIT_ULL(vp) with vp outside 0..63 is undefined in C; x86-64 SHL masks the count to 6 bits.
      const std::uint64_t bit = 1ull << (static_cast<std::uint32_t>(vp) & 63u);
      return judge_status(c, fast_hypercall16(c, HVCALL_SEND_IPI, vector, bit), true);
    }
    case SendIpiOneVersion::kSeedV3: {
      ++c.out.work.vp_lookups;
      const std::int32_t vp = config_.vp_number(cpu);
      trace_one(c);
      if (vp == kVpInvalAsInt || !hypercall_page_usable()) return false;
      if (!ipi_vector_valid(vector)) return false;
      if (vp >= 64) return send_ipi_mask_ex(c, Cpumask::of(config_.nr_cpus, {cpu}), vector, false);
      return judge_status(c, fast_hypercall16(c, HVCALL_SEND_IPI, vector, 1ull << vp), true);
    }
  }
  return false;
}

void LinuxHvGuest::native(Ctx& c, SendHook hook, std::vector<unsigned> cpus,
                          std::optional<std::vector<unsigned>> argument) {
  ++c.out.work.native_fallbacks;
  c.out.native = NativeSend{hook, std::move(cpus), c.vector, std::move(argument)};
}

void LinuxHvGuest::hv_send_ipi_mask_allbutself(Ctx& c, const Cpumask& mask, std::uint32_t vector) {
  if (policy_.mask_path == MaskPathVersion::kV54) {
    // struct cpumask new_mask; cpumask_copy(&new_mask, mask); cpumask_clear_cpu(this_cpu, &new_mask);
    Cpumask new_mask(config_.nr_cpus);
    c.out.work.stack_cpumask_bytes += new_mask.size_bytes();
    c.ops.copy(new_mask, mask);
    c.ops.clear_cpu(c.self, new_mask);
    c.out.hv_function = "__send_ipi_mask";
    c.out.hv_returned = send_ipi_mask(c, new_mask, vector, false);
    if (!*c.out.hv_returned) native(c, SendHook::kSendIpiMaskAllButSelf, without(mask.cpus(), c.self), mask.cpus());
    return;
  }
  c.out.hv_function = "__send_ipi_mask";
  c.out.hv_returned = send_ipi_mask(c, mask, vector, true);
  if (!*c.out.hv_returned) native(c, SendHook::kSendIpiMaskAllButSelf, without(mask.cpus(), c.self), mask.cpus());
}

SendResult LinuxHvGuest::send(const SendRequest& r, const HypervisorCall& hv) {
  if (r.sender_cpu >= config_.nr_cpu_ids || !online_.test(r.sender_cpu)) {
    throw InputError("send: sender_cpu", "CPU " + std::to_string(r.sender_cpu) + " is not online");
  }
  const bool mask_hook = r.hook == SendHook::kSendIpiMask || r.hook == SendHook::kSendIpiMaskAllButSelf;
  if (mask_hook) {
    if (!r.mask) throw InputError("send: mask", std::string(hook_name(r.hook)) + " needs a mask");
    if (r.mask->nr_cpus() != config_.nr_cpus) {
      throw InputError("send: mask", "mask has " + std::to_string(r.mask->nr_cpus()) + " bits, NR_CPUS is " +
                                         std::to_string(config_.nr_cpus));
    }
    if (r.mask->end() > config_.nr_cpu_ids) {
      throw InputError("send: mask", "CPU " + std::to_string(r.mask->end() - 1) + " >= nr_cpu_ids " +
                                         std::to_string(config_.nr_cpu_ids));
    }
  } else if (r.mask) {
    throw InputError("send: mask", std::string(hook_name(r.hook)) + " takes no mask");
  }
  if (r.hook == SendHook::kSendIpi && r.target_cpu >= config_.nr_cpu_ids) {
    throw InputError("send: target_cpu", "CPU " + std::to_string(r.target_cpu) + " >= nr_cpu_ids " +
                                             std::to_string(config_.nr_cpu_ids));
  }

  SendResult out;
  out.hook = r.hook;
  out.sender_cpu = r.sender_cpu;
  out.vector = r.vector;
  Ctx c{r.sender_cpu, r.vector, out, hv, CpumaskOps(config_.scan_bits(), config_.copy_bits(), out.work.cpumask_words)};

  switch (r.hook) {
    case SendHook::kSendIpi: out.intended_cpus = {r.target_cpu}; break;
    case SendHook::kSendIpiMask: out.intended_cpus = r.mask->cpus(); break;
    case SendHook::kSendIpiMaskAllButSelf: out.intended_cpus = without(r.mask->cpus(), r.sender_cpu); break;
    case SendHook::kSendIpiAllButSelf: out.intended_cpus = without(online_.cpus(), r.sender_cpu); break;
    case SendHook::kSendIpiAll: out.intended_cpus = online_.cpus(); break;
    case SendHook::kSendIpiSelf: out.intended_cpus = {r.sender_cpu}; break;
  }

  if (!config_.cluster_ipi_recommended) {
    // hv_apic_init installed no hooks: `apic->send_IPI*` is the native callback itself.
    std::optional<std::vector<unsigned>> arg;
    if (r.hook == SendHook::kSendIpi) arg = std::vector<unsigned>{r.target_cpu};
    if (mask_hook) arg = r.mask->cpus();
    native(c, r.hook, out.intended_cpus, std::move(arg));
    return out;
  }

  switch (r.hook) {
    case SendHook::kSendIpi:
      out.hv_function = "__send_ipi_one";
      out.hv_returned = send_ipi_one(c, r.target_cpu, r.vector);
      if (!*out.hv_returned) native(c, SendHook::kSendIpi, {r.target_cpu}, std::vector<unsigned>{r.target_cpu});
      break;
    case SendHook::kSendIpiMask:
      out.hv_function = "__send_ipi_mask";
      out.hv_returned = send_ipi_mask(c, *r.mask, r.vector, false);
      if (!*out.hv_returned) native(c, SendHook::kSendIpiMask, r.mask->cpus(), r.mask->cpus());
      break;
    case SendHook::kSendIpiMaskAllButSelf:
      hv_send_ipi_mask_allbutself(c, *r.mask, r.vector);
      break;
    case SendHook::kSendIpiAllButSelf:
      hv_send_ipi_mask_allbutself(c, online_, r.vector);
      break;
    case SendHook::kSendIpiAll:
      out.hv_function = "__send_ipi_mask";
      out.hv_returned = send_ipi_mask(c, online_, r.vector, false);
      if (!*out.hv_returned) native(c, SendHook::kSendIpiAll, online_.cpus(), std::nullopt);
      break;
    case SendHook::kSendIpiSelf:
      out.hv_function = "__send_ipi_one";
      out.hv_returned = send_ipi_one(c, r.sender_cpu, r.vector);
      if (!*out.hv_returned) native(c, SendHook::kSendIpiSelf, {r.sender_cpu}, std::nullopt);
      break;
  }
  return out;
}

SendResult LinuxHvGuest::send_IPI(unsigned sender, unsigned cpu, std::uint32_t vector, const HypervisorCall& hv) {
  return send({SendHook::kSendIpi, sender, vector, cpu, std::nullopt}, hv);
}
SendResult LinuxHvGuest::send_IPI_mask(unsigned sender, const Cpumask& mask, std::uint32_t vector,
                                       const HypervisorCall& hv) {
  return send({SendHook::kSendIpiMask, sender, vector, 0, mask}, hv);
}
SendResult LinuxHvGuest::send_IPI_mask_allbutself(unsigned sender, const Cpumask& mask, std::uint32_t vector,
                                                  const HypervisorCall& hv) {
  return send({SendHook::kSendIpiMaskAllButSelf, sender, vector, 0, mask}, hv);
}
SendResult LinuxHvGuest::send_IPI_allbutself(unsigned sender, std::uint32_t vector, const HypervisorCall& hv) {
  return send({SendHook::kSendIpiAllButSelf, sender, vector, 0, std::nullopt}, hv);
}
SendResult LinuxHvGuest::send_IPI_all(unsigned sender, std::uint32_t vector, const HypervisorCall& hv) {
  return send({SendHook::kSendIpiAll, sender, vector, 0, std::nullopt}, hv);
}
SendResult LinuxHvGuest::send_IPI_self(unsigned sender, std::uint32_t vector, const HypervisorCall& hv) {
  return send({SendHook::kSendIpiSelf, sender, vector, 0, std::nullopt}, hv);
}

}  // namespace ipilab::hv
