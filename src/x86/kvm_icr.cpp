// KVM's handling of x2APIC ICR / SELF IPI writes (arch/x86/kvm/lapic.c, arch/x86/kvm/x86.c).
// Behaviour only; see kvm_icr.h for the rules and their versions.
#include "x86/kvm_icr.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <span>
#include <stdexcept>

namespace ipilab::x86 {

namespace {

constexpr std::uint64_t kX2apicIcrReservedBits = 0xFFF32000ull;  // GENMASK(31,20)|GENMASK(17,16)|BIT(13)

bool matches(const X86Vm& vm, std::uint32_t sender, std::uint32_t v, const Icr& f) {
  if (const auto decided = kvm_match_shorthand_or_broadcast(vm, sender, v, f, kX2apicBroadcast)) return *decided;
  const std::uint32_t id = vm.apic_id(v);
  if (f.dest_mode == DestMode::Physical) return f.destination == id;
  const std::uint32_t ldr = x2apic_logical_id(id);
  return (ldr >> 16) == (f.destination >> 16) && (ldr & f.destination & 0xFFFFu) != 0;
}

// The vCPUs matches() accepts, in vCPU order. A physical destination names at most one APIC and a
// logical one at most 16 of one cluster (when no APIC ID reaches 2^20, above which cluster IDs
// alias): those are found through the APIC-ID index, as KVM's apic map does
// (kvm_apic_map_get_dest_lapic), instead of testing every vCPU; the result is the same.
// Matched vCPUs: up to 16 (a physical or cluster destination) in place, more on the heap.
class Matched {
 public:
  void push_back(std::uint32_t v) {
    if (more_.empty() && n_ < few_.size()) {
      few_[n_++] = v;
      return;
    }
    if (more_.empty()) more_.assign(few_.begin(), few_.begin() + n_);
    more_.push_back(v);
  }
  std::uint32_t* begin() noexcept { return more_.empty() ? few_.data() : more_.data(); }
  std::uint32_t* end() noexcept { return begin() + size(); }
  std::size_t size() const noexcept { return more_.empty() ? n_ : more_.size(); }
  bool empty() const noexcept { return size() == 0; }
  void clear() noexcept {
    n_ = 0;
    more_.clear();
  }

 private:
  std::array<std::uint32_t, 16> few_{};
  std::size_t n_ = 0;
  std::vector<std::uint32_t> more_;
};

void match_all(const X86Vm& vm, std::uint32_t sender, const Icr& f, Matched& matched) {
  if (f.shorthand == Shorthand::None && f.destination != kX2apicBroadcast) {
    if (f.dest_mode == DestMode::Physical) {
      if (const auto v = vm.vcpu_of_apic_id(f.destination)) matched.push_back(*v);
      return;
    }
    if (vm.kvm_max_apic_id() < (1u << 20)) {
      const std::uint32_t base = (f.destination >> 16) << 4;
      for (std::uint32_t bits = f.destination & 0xFFFFu; bits != 0; bits &= bits - 1)
        if (const auto v = vm.vcpu_of_apic_id(base | static_cast<std::uint32_t>(__builtin_ctz(bits)))) matched.push_back(*v);
      std::sort(matched.begin(), matched.end());
      return;
    }
  }
  for (std::uint32_t v = 0; v < vm.nr_vcpus(); ++v) {
    if (matches(vm, sender, v, f)) matched.push_back(v);
  }
}

void deliver(const X86Vm& vm, std::uint32_t sender, const Icr& f, IcrWriteOutcome& out) {
  Matched matched;
  match_all(vm, sender, f, matched);
  kvm_deliver_to_matched(vm, f, std::span<const std::uint32_t>(matched.begin(), matched.size()), out);
}

}  // namespace

void kvm_begin_icr_write(const X86Vm& vm, std::uint32_t sender, IcrWriteOutcome& out) {
  if (sender >= vm.nr_vcpus())
    throw std::invalid_argument(fmt::format("sender vCPU {} is not a vCPU of this {}-vCPU VM", sender, vm.nr_vcpus()));
  std::vector<PvIpiTarget> keep = std::move(out.targets);
  keep.clear();
  out = IcrWriteOutcome{};
  out.targets = std::move(keep);
}

void kvm_deliver_to_matched(const X86Vm& vm, const Icr& f, std::span<const std::uint32_t> matched, IcrWriteOutcome& out) {
  std::uint32_t lowest = 0;
  if (f.delivery_mode == DeliveryMode::LowestPriority && f.shorthand != Shorthand::Self) {
    std::vector<std::uint32_t> cand;
    for (auto v : matched) {
      if (vm.vcpu(v).apic_sw_enabled) cand.push_back(v);
    }
    std::sort(cand.begin(), cand.end(), [&vm](std::uint32_t a, std::uint32_t b) {
      return vm.apic_id(a) < vm.apic_id(b);
    });
    if (cand.empty()) return;
    lowest = cand[f.vector % cand.size()];
    matched = std::span<const std::uint32_t>(&lowest, 1);
  }
  out.targets.reserve(out.targets.size() + matched.size());
  for (auto v : matched) {
    const bool ok = kvm_apic_accepts(vm.vcpu(v), vm.smm_supported(), f.delivery_mode, f.level_assert,
                                     f.trigger);
    out.targets.push_back(PvIpiTarget{v, vm.apic_id(v), ok});
    if (ok) ++out.accepted;
  }
}

bool kvm_x2apic_icr_fastpath_eligible(std::uint64_t icr) {
  const auto low = static_cast<std::uint32_t>(icr);
  return (low & icr_bits::kShortMask) == 0 && (low & icr_bits::kDestLogical) == 0 &&
         (low & icr_bits::kModeMask) == icr_bits::kDmFixed &&
         static_cast<std::uint32_t>(icr >> 32) != kX2apicBroadcast;
}

IcrWriteOutcome kvm_x2apic_icr_write(const X86Vm& vm, std::uint32_t sender, std::uint64_t icr) {
  IcrWriteOutcome out;
  kvm_x2apic_icr_write(vm, sender, icr, out);
  return out;
}

void kvm_x2apic_icr_write(const X86Vm& vm, std::uint32_t sender, std::uint64_t icr, IcrWriteOutcome& out) {
  kvm_begin_icr_write(vm, sender, out);
  if ((icr & kX2apicIcrReservedBits) != 0) {
    out.inject_gp = true;
    return;
  }
  out.effective_icr = icr & ~static_cast<std::uint64_t>(icr_bits::kBusy);
  out.fastpath = kvm_x2apic_icr_fastpath_eligible(out.effective_icr);
  deliver(vm, sender, decode_x2apic_icr(out.effective_icr), out);
}

IcrWriteOutcome kvm_x2apic_self_ipi_write(const X86Vm& vm, std::uint32_t sender, std::uint64_t value) {
  IcrWriteOutcome out;
  kvm_x2apic_self_ipi_write(vm, sender, value, out);
  return out;
}

void kvm_x2apic_self_ipi_write(const X86Vm& vm, std::uint32_t sender, std::uint64_t value, IcrWriteOutcome& out) {
  kvm_begin_icr_write(vm, sender, out);
  if ((value & ~static_cast<std::uint64_t>(icr_bits::kVectorMask)) != 0) {
    out.inject_gp = true;
    return;
  }
  out.effective_icr = icr_bits::kShortSelf | value;
  deliver(vm, sender, decode_x2apic_icr(out.effective_icr), out);
}

}  // namespace ipilab::x86
