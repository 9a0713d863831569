// KVM_HC_SEND_IPI / KVM_HC_SCHED_YIELD per KVM version (see kvm_pv_version.h for the commits).
#include "x86/kvm_pv_version.h"

#include <algorithm>
#include <array>

#include "common/enum_names.h"

namespace ipilab::x86 {
namespace {

constexpr std::array<KvmPvVersionInfo, 7> kVersions{{
    {KvmPvVersion::kV4_19_rc2, "v4.19-rc2", "v4.19-rc1 .. v4.19-rc2", "4180bf1b655a, before bdf7ffc89922",
     "no bound on min + i: a set bit whose APIC ID is below 0 or above max_apic_id reads outside phys_map, "
     "an absent APIC ID dereferences a NULL phys_map entry (host memory-safety bugs; the model stops there)"},
    {KvmPvVersion::kV4_19, "v4.19", "v4.19-rc3 .. v4.19",
     "bdf7ffc89922, before \"Fix pv ipis use-before-initialization\"",
     "a VM without an APIC map dereferences the NULL map (host oops; the model stops there)"},
    {KvmPvVersion::kV5_1, "v5.1", "v4.20 .. v5.1", "before 715062970f37",
     "no KVM_HC_SCHED_YIELD: hypercall 11 returns -KVM_ENOSYS"},
    {KvmPvVersion::kV5_4, "v5.4", "v5.2 .. v5.4", "715062970f37, before the __pv_send_ipi helper (v5.5)",
     "a low half out of range (min > max_apic_id) returns before the high half is looked at"},
    {KvmPvVersion::kV6_16, "v6.16", "v5.5 .. v6.16 (the PV feature CPUID check from v5.10)", "before c87bd4dd43a6",
     "no array_index_nospec: a mispredicted bounds test lets the loop load phys_map past its end"},
    {KvmPvVersion::kNospecV1, "nospec-v1", "none (posted 24 Jul 2025, not merged)",
     "the first posting of c87bd4dd43a6",
     "array_index_nospec(min, max_apic_id): exclusive bound, so min == max_apic_id (and a yield to "
     "dest_id == max_apic_id) is clamped to 0 architecturally"},
    {KvmPvVersion::kMainline, "mainline", "v6.17 .. (and stable backports)", "c87bd4dd43a6",
     "the model's default: array_index_nospec(min, max_apic_id + 1) after each bounds test"},
}};

// array_index_nospec(index, size): index when index < size, else 0 (include/linux/nospec.h).
std::uint64_t nospec(std::uint64_t index, std::uint64_t size) { return index < size ? index : 0; }

std::uint64_t clamp_index(NospecClamp c, std::uint64_t index, std::uint32_t max_apic_id) {
  switch (c) {
    case NospecClamp::kNone: return index;
    case NospecClamp::kExclusive: return nospec(index, max_apic_id);
    case NospecClamp::kInclusive: return nospec(index, std::uint64_t{max_apic_id} + 1);
  }
  return index;
}

void deliver(const X86Vm& vm, std::uint32_t vcpu, std::uint32_t apic_id, const Icr& irq, KvmCallOutcome& out,
             std::int64_t& count) {
  ++out.work.set_irq_calls;
  const bool accepted =
      kvm_apic_accepts(vm.vcpu(vcpu), vm.smm_supported(), irq.delivery_mode, irq.level_assert, irq.trigger);
  out.targets.push_back(PvIpiTarget{vcpu, apic_id, accepted});
  if (accepted) ++count;
}

// 4180bf1b655a: for_each_set_bit(i, &bitmap, BITS_PER_LONG) vcpu = map->phys_map[min + i]->vcpu.
// Returns false at the first memory-safety fault (recorded in out.fault).
bool unchecked_half(const X86Vm& vm, std::uint64_t bitmap, std::int32_t min, const Icr& irq, KvmCallOutcome& out,
                    std::int64_t& count) {
  const std::uint32_t max_apic_id = vm.kvm_max_apic_id();
  out.work.bits_in_range += 64;
  for (std::uint64_t x = bitmap; x != 0; x &= x - 1) {
    const auto i = static_cast<std::int64_t>(__builtin_ctzll(x));
    ++out.work.set_bits_examined;
    // The kernel adds two ints; an overflow is itself undefined, the index below is what x86-64
    // code computes for it (sign-extended 32-bit sum).
    const auto index = static_cast<std::int64_t>(static_cast<std::int32_t>(
        static_cast<std::uint32_t>(min) + static_cast<std::uint32_t>(i)));
    if (index < 0 || index > static_cast<std::int64_t>(max_apic_id)) {
      out.fault = KvmHostFault{KvmHostFault::Kind::kPhysMapOutOfBounds, index, max_apic_id + 1};
      return false;
    }
    const auto vcpu = vm.vcpu_of_apic_id(static_cast<std::uint32_t>(index));
    if (!vcpu) {
      out.fault = KvmHostFault{KvmHostFault::Kind::kNullPhysMapEntry, index, max_apic_id + 1};
      return false;
    }
    deliver(vm, *vcpu, static_cast<std::uint32_t>(index), irq, out, count);
  }
  return true;
}

// The bounded half (bdf7ffc89922 and later), with the c87bd4dd43a6 clamp of `behaviour`.
// Returns false when the architectural bounds test skipped it.
bool checked_half(const X86Vm& vm, std::uint64_t bitmap, std::uint32_t min, int half, const Icr& irq,
                  NospecClamp clamp, KvmCallOutcome& out, std::int64_t& count) {
  const std::uint32_t max_apic_id = vm.kvm_max_apic_id();
  if (min > max_apic_id) {
    // Mispredicted: the clamp (if any) runs, then the loop with the same u32 arithmetic.
    KvmSpeculativeWindow w;
    w.half = half;
    w.min = min;
    w.effective_min = static_cast<std::uint32_t>(clamp_index(clamp, min, max_apic_id));
    const std::uint32_t range = std::min<std::uint32_t>(64, max_apic_id - w.effective_min + 1);
    const std::uint64_t in_range = range >= 64 ? bitmap : (bitmap & ((1ull << range) - 1));
    for (std::uint64_t x = in_range; x != 0; x &= x - 1) {
      // map->phys_map[min + i]: u32 + int is u32 arithmetic, so the index wraps at 2^32.
      const std::uint32_t index = w.effective_min + static_cast<std::uint32_t>(__builtin_ctzll(x));
      w.indices.push_back(index);
      if (index > max_apic_id) ++w.out_of_bounds;
    }
    if (!w.indices.empty()) out.speculation.push_back(std::move(w));
    return false;
  }
  const auto eff = static_cast<std::uint32_t>(clamp_index(clamp, min, max_apic_id));
  if (eff != min) out.clamped.push_back(KvmArchitecturalClamp{half, min, eff});
  const std::uint32_t range = std::min<std::uint32_t>(64, max_apic_id - eff + 1);
  out.work.bits_in_range += range;
  const std::uint64_t in_range = range >= 64 ? bitmap : (bitmap & ((1ull << range) - 1));
  for (std::uint64_t x = in_range; x != 0; x &= x - 1) {
    const auto i = static_cast<std::uint32_t>(__builtin_ctzll(x));
    ++out.work.set_bits_examined;
    const std::uint32_t apic_id = eff + i;
    if (const auto vcpu = vm.vcpu_of_apic_id(apic_id)) deliver(vm, *vcpu, apic_id, irq, out, count);
  }
  return true;
}

void send_ipi(const X86Vm& vm, const KvmCallHost& host, const KvmPvBehaviour& b, std::uint64_t a0,
              std::uint64_t a1, std::uint64_t a2, std::uint64_t a3, bool op_64_bit, KvmCallOutcome& out) {
  out.send_ipi_ran = true;
  if ((a3 & (icr_bits::kDestLogical | icr_bits::kShortMask)) != 0) {
    out.ret = -kKvmEinval;
    out.rejected_by = "icr: logical destination or shorthand (-KVM_EINVAL)";
    return;
  }
  const Icr irq = decode_x2apic_icr(a3 & 0xFFFFFFFFull);
  if (!host.apic_map_present) {
    if (!b.null_map_checked) {
      out.fault = KvmHostFault{KvmHostFault::Kind::kNullApicMap, 0, 0};
      return;
    }
    out.ret = -kKvmEopnotsupp;
    out.rejected_by = "no APIC map (-EOPNOTSUPP)";
    return;
  }
  const std::uint32_t cluster_size = op_64_bit ? 64u : 32u;
  std::int64_t count = 0;
  if (!b.bounds_checked) {
    auto min = static_cast<std::int32_t>(static_cast<std::uint32_t>(a2));  // `int min`
    if (unchecked_half(vm, a0, min, irq, out, count)) {
      min = static_cast<std::int32_t>(static_cast<std::uint32_t>(min) + cluster_size);
      unchecked_half(vm, a1, min, irq, out, count);
    }
    out.ret = count;
    return;
  }
  auto min = static_cast<std::uint32_t>(a2);
  const bool low_ran = checked_half(vm, a0, min, 0, irq, b.clamp, out, count);
  if (!low_ran && !b.halves_independent) {
    out.high_half_skipped = true;
  } else {
    min += cluster_size;  // u32: wraps
    checked_half(vm, a1, min, 1, irq, b.clamp, out, count);
  }
  out.ret = count;
}

void sched_yield(const X86Vm& vm, const KvmCallHost& host, const KvmPvBehaviour& b, std::uint64_t dest_id,
                 KvmCallOutcome& out) {
  out.sched_yield_ran = true;
  out.ret = 0;
  out.yield.dest_id = dest_id;
  const std::uint32_t max_apic_id = vm.kvm_max_apic_id();
  if (!host.apic_map_present || dest_id > max_apic_id) return;
  const auto index = static_cast<std::uint32_t>(clamp_index(b.clamp, dest_id, max_apic_id));
  out.yield.looked_up_apic_id = index;
  const auto vcpu = vm.vcpu_of_apic_id(index);
  if (!vcpu) return;
  out.yield.target_vcpu = *vcpu;
  out.yield.yield_attempted = *vcpu < host.vcpu_ready.size() && host.vcpu_ready[*vcpu];
}

}  // namespace

KvmPvBehaviour kvm_pv_behaviour(KvmPvVersion v) noexcept {
  KvmPvBehaviour b;
  switch (v) {
    case KvmPvVersion::kMainline: break;
    case KvmPvVersion::kNospecV1: b.clamp = NospecClamp::kExclusive; break;
    case KvmPvVersion::kV4_19_rc2:
      b.bounds_checked = false;
      [[fallthrough]];
    case KvmPvVersion::kV4_19:
      b.null_map_checked = false;
      [[fallthrough]];
    case KvmPvVersion::kV5_1:
      b.sched_yield = false;
      [[fallthrough]];
    case KvmPvVersion::kV5_4:
      b.halves_independent = false;
      b.pv_feature_cpuid_checked = false;
      [[fallthrough]];
    case KvmPvVersion::kV6_16:
      b.clamp = NospecClamp::kNone;
      break;
  }
  return b;
}

std::span<const KvmPvVersionInfo> kvm_pv_versions() noexcept { return kVersions; }

std::string_view kvm_pv_version_name(KvmPvVersion v) noexcept {
  return name_by<&KvmPvVersionInfo::version>(kVersions, v);
}

std::optional<KvmPvVersion> kvm_pv_version_from_name(std::string_view name) noexcept {
  if (const auto v = key_named<&KvmPvVersionInfo::version>(kVersions, name)) return v;
  if (name == "v6.17") return KvmPvVersion::kMainline;
  return std::nullopt;
}

std::vector<std::uint32_t> KvmCallOutcome::delivered_vcpus() const {
  std::vector<std::uint32_t> out;
  for (const auto& t : targets)
    if (t.accepted) out.push_back(t.vcpu);
  return out;
}

KvmCallOutcome kvm_emulate_pv_hypercall(const X86Vm& vm, const KvmCallHost& host, const KvmCallCaller& caller,
                                        const HypercallRegs& regs) {
  const KvmPvBehaviour b = kvm_pv_behaviour(host.version);
  KvmCallOutcome out;
  const HypercallRegs in = kvm_hypercall_args(regs, caller.op_64_bit);
  const std::uint64_t nr = in.rax, a0 = in.rbx, a1 = in.rcx, a2 = in.rdx, a3 = in.rsi;
  out.nr = nr;
  out.ret = -kKvmEnosys;
  if (caller.cpl != 0) {
    out.ret = -kKvmEperm;
    out.rejected_by = "CPL != 0 (-KVM_EPERM)";
  } else if (nr == kKvmHcSendIpi) {
    if (b.pv_feature_cpuid_checked && !caller.has_pv_send_ipi)
      out.rejected_by = "guest CPUID lacks KVM_FEATURE_PV_SEND_IPI (-KVM_ENOSYS)";
    else
      send_ipi(vm, host, b, a0, a1, a2, a3, caller.op_64_bit, out);
  } else if (nr == kKvmHcSchedYield && b.sched_yield) {
    if (b.pv_feature_cpuid_checked && !caller.has_pv_sched_yield)
      out.rejected_by = "guest CPUID lacks KVM_FEATURE_PV_SCHED_YIELD (-KVM_ENOSYS)";
    else
      sched_yield(vm, host, b, a0, out);
  } else if (nr == kKvmHcSchedYield) {
    out.rejected_by = "KVM_HC_SCHED_YIELD does not exist before 715062970f37 (v5.2) (-KVM_ENOSYS)";
  } else if (nr == 1 || nr == 5 || nr == 9 || nr == 12) {
    // KVM_HC_VAPIC_POLL_IRQ, KVM_HC_KICK_CPU, KVM_HC_CLOCK_PAIRING, KVM_HC_MAP_GPA_RANGE: real x86
    // KVM handles them (include/uapi/linux/kvm_para.h); their answer is not modelled here.
    out.modelled = false;
    out.rejected_by = "not modelled: x86 KVM implements this hypercall; ipilab models only 10 and 11";
  } else {
    out.rejected_by = "no such x86 KVM hypercall (-KVM_ENOSYS)";
  }
  out.rax = static_cast<std::uint64_t>(out.ret);
  if (!caller.op_64_bit) out.rax &= 0xFFFFFFFFull;
  return out;
}

}  // namespace ipilab::x86
