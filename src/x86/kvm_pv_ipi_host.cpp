// Host side of KVM PV send-IPI: Linux arch/x86/kvm/lapic.c kvm_pv_send_ipi / __pv_send_ipi /
// __apic_accept_irq (acceptance only), arch/x86/kvm/x86.c ____kvm_emulate_hypercall (SEND_IPI only).
// Behaviour only; see kvm_pv_ipi.h for the rules and their versions.
#include <algorithm>

#include "x86/kvm_pv_ipi.h"

namespace ipilab::x86 {

std::vector<std::uint32_t> PvIpiHostResult::delivered_vcpus() const {
  std::vector<std::uint32_t> out;
  for (const auto& t : targets) {
    if (t.accepted) out.push_back(t.vcpu);
  }
  return out;
}

bool kvm_apic_accepts(const X86Vcpu& vcpu, bool smm_supported, DeliveryMode mode,
                      bool level_assert, TriggerMode trigger) {
  const bool level_trig = trigger == TriggerMode::Level;
  switch (mode) {
    case DeliveryMode::LowestPriority:
    case DeliveryMode::Fixed:
      if (level_trig && !level_assert) return false;
      return vcpu.apic_present && vcpu.apic_sw_enabled;
    case DeliveryMode::RemoteRead: return true;
    case DeliveryMode::Smi: return smm_supported;
    case DeliveryMode::Nmi: return true;
    case DeliveryMode::Init: return !level_trig || level_assert;
    case DeliveryMode::StartUp: return true;
    case DeliveryMode::ExtInt: return false;
  }
  return false;
}

namespace {

constexpr std::uint32_t kBitsPerLong = 64;  // host is x86-64

// __pv_send_ipi(&bitmap, map, irq, min): returns the accepted count, appends targets.
std::int64_t pv_send_ipi_half(const X86Vm& vm, std::uint64_t bitmap, std::uint32_t min,
                              const Icr& irq, PvIpiHostResult& out) {
  const std::uint32_t max_apic_id = vm.kvm_max_apic_id();
  if (min > max_apic_id) return 0;
  // min((u32)BITS_PER_LONG, max_apic_id - min + 1); the +1 cannot overflow since max_apic_id
  // < 0xFFFFFFFF (X86Vm rejects the broadcast ID) and min <= max_apic_id.
  const std::uint32_t range = std::min<std::uint32_t>(kBitsPerLong, max_apic_id - min + 1);
  out.work.bits_in_range += range;
  std::int64_t count = 0;
  const std::uint64_t in_range = range >= 64 ? bitmap : (bitmap & ((1ull << range) - 1));
  for (std::uint64_t x = in_range; x != 0; x &= x - 1) {
    const auto i = static_cast<std::uint32_t>(__builtin_ctzll(x));
    ++out.work.set_bits_examined;
    const std::uint32_t apic_id = min + i;  // <= max_apic_id, no wrap
    const auto vcpu = vm.vcpu_of_apic_id(apic_id);
    if (!vcpu) continue;
    ++out.work.set_irq_calls;
    const bool accepted = kvm_apic_accepts(vm.vcpu(*vcpu), vm.smm_supported(), irq.delivery_mode,
                                           irq.level_assert, irq.trigger);
    out.targets.push_back(PvIpiTarget{*vcpu, apic_id, accepted});
    if (accepted) ++count;
  }
  return count;
}

}  // namespace

PvIpiHostResult kvm_pv_send_ipi(const X86Vm& vm, const KvmPvIpiHostState& host,
                                std::uint64_t ipi_bitmap_low, std::uint64_t ipi_bitmap_high,
                                std::uint32_t min, std::uint64_t icr, bool op_64_bit) {
  PvIpiHostResult out;
  if ((icr & (icr_bits::kDestLogical | icr_bits::kShortMask)) != 0) {
    out.ret = -kKvmEinval;
    return out;
  }
  const Icr irq = decode_x2apic_icr(icr & 0xFFFFFFFFull);
  if (!host.apic_map_present) {
    out.ret = -kKvmEopnotsupp;  // -EOPNOTSUPP (95), not a KVM_E* constant, same value
    return out;
  }
  const std::uint32_t cluster_size = op_64_bit ? 64u : 32u;
  std::int64_t count = pv_send_ipi_half(vm, ipi_bitmap_low, min, irq, out);
  min += cluster_size;  // u32 arithmetic: wraps like the kernel's u32 min
  count += pv_send_ipi_half(vm, ipi_bitmap_high, min, irq, out);
  out.ret = count;
  return out;
}

HypercallOutcome kvm_emulate_send_ipi_hypercall(const X86Vm& vm, const KvmPvIpiHostState& host,
                                                const HypercallCaller& caller,
                                                const HypercallRegs& regs) {
  HypercallOutcome out;
  const HypercallRegs in = kvm_hypercall_args(regs, caller.op_64_bit);
  const std::uint64_t nr = in.rax, a0 = in.rbx, a1 = in.rcx, a2 = in.rdx, a3 = in.rsi;
  std::int64_t ret;
  if (caller.cpl != 0) {
    ret = -kKvmEperm;
  } else if (nr != kKvmHcSendIpi || !caller.has_pv_send_ipi) {
    ret = -kKvmEnosys;
  } else {
    out.send_ipi_ran = true;
    out.ipi = kvm_pv_send_ipi(vm, host, a0, a1, static_cast<std::uint32_t>(a2), a3, caller.op_64_bit);
    ret = out.ipi.ret;
  }
  out.ret = ret;
  out.rax = static_cast<std::uint64_t>(ret);
  if (!caller.op_64_bit) out.rax &= 0xFFFFFFFFull;
  return out;
}

PvIpiExecution kvm_pv_execute(const X86Vm& vm, const KvmPvIpiHostState& host,
                              bool guest_has_pv_send_ipi, const GuestSend& send,
                              KvmPvGuestState& guest) {
  PvIpiExecution out;
  HypercallCaller caller;
  caller.has_pv_send_ipi = guest_has_pv_send_ipi;
  for (const auto& hc : send.hypercalls) {
    HypercallRegs regs;
    regs.rbx = hc.a0;
    regs.rcx = hc.a1;
    regs.rdx = hc.a2;
    regs.rsi = hc.a3;
    HypercallOutcome r = kvm_emulate_send_ipi_hypercall(vm, host, caller, regs);
    // The guest reads RAX as a long.
    if (static_cast<std::int64_t>(r.rax) < 0) {
      ++out.failed_calls;
      if (!guest.warned) {
        guest.warned = true;
        out.warn_fired_now = true;
      }
    }
    for (auto v : r.ipi.delivered_vcpus()) out.delivered_vcpus.push_back(v);
    out.calls.push_back(std::move(r));
  }
  return out;
}

}  // namespace ipilab::x86
