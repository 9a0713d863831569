// Guest side of KVM PV send-IPI: Linux arch/x86/kernel/kvm.c __send_ipi_mask,
// kvm_send_ipi_mask_allbutself. Behaviour only; see kvm_pv_ipi.h for the rules.
#include <fmt/format.h>

#include <stdexcept>

#include "x86/kvm_pv_ipi.h"

namespace ipilab::x86 {

namespace {

// The 128-bit window as two words, with the shift Linux does on __uint128_t.
struct Bitmap128 {
  std::uint64_t lo = 0;
  std::uint64_t hi = 0;
  bool empty() const { return lo == 0 && hi == 0; }
  void shift_left(std::uint32_t n) {  // n < 128 by construction
    if (n == 0) return;
    if (n >= 64) {
      hi = lo << (n - 64);
      lo = 0;
    } else {
      hi = (hi << n) | (lo >> (64 - n));
      lo <<= n;
    }
  }
  void set(std::uint32_t bit) {  // bit < 128 by construction
    if (bit < 64) {
      lo |= 1ull << bit;
    } else {
      hi |= 1ull << (bit - 64);
    }
  }
};

void flush(GuestSend& out, const Bitmap128& bm, std::uint32_t min, std::uint32_t icr) {
  out.hypercalls.push_back(PvIpiHypercall{bm.lo, bm.hi, min, icr});
  ++out.work.hypercalls;
}

GuestSend send_ipi_mask(const X86Vm& vm, const Cpumask& mask, std::uint8_t vector) {
  GuestSend out;
  std::uint64_t words = 0;
  std::uint32_t cpu = mask.find_next(0, &words);  // cpumask_empty() and the first step of the walk
  if (cpu >= mask.nbits()) {
    out.work.cpumask_words_walked = words;
    return out;
  }
  // icr = APIC_DM_FIXED | vector, or APIC_DM_NMI for NMI_VECTOR (no shorthand, physical).
  const std::uint32_t icr = linux_prepare_icr(0, vector, false);
  Bitmap128 bm;
  std::uint32_t min = 0;
  std::uint32_t max = 0;
  for (; cpu < mask.nbits(); cpu = mask.find_next(cpu + 1, &words)) {
    ++out.work.cpus_visited;
    const std::uint32_t apic_id = vm.apic_id(cpu);
    if (bm.empty()) {
      min = max = apic_id;
    } else if (apic_id < min && max - apic_id < kKvmIpiClusterSize) {
      bm.shift_left(min - apic_id);
      min = apic_id;
    } else if (apic_id > min && static_cast<std::uint64_t>(apic_id) <
                                    static_cast<std::uint64_t>(min) + kKvmIpiClusterSize) {
      max = apic_id < max ? max : apic_id;
    } else {
      flush(out, bm, min, icr);
      min = max = apic_id;
      bm = Bitmap128{};
    }
    bm.set(apic_id - min);
  }
  if (!bm.empty()) flush(out, bm, min, icr);
  out.work.cpumask_words_walked = words;
  return out;
}

}  // namespace

GuestSend kvm_guest_send_ipi_mask(const X86Vm& vm, const Cpumask& mask, std::uint8_t vector) {
  vm.check_cpumask(mask);
  return send_ipi_mask(vm, mask, vector);
}

GuestSend kvm_guest_send_ipi_mask_allbutself(const X86Vm& vm, std::uint32_t this_cpu,
                                             const Cpumask& mask, std::uint8_t vector) {
  vm.check_cpumask(mask);
  if (this_cpu >= vm.nr_vcpus()) {
    throw std::invalid_argument(
        fmt::format("sending CPU {} is not a CPU of this {}-vCPU VM", this_cpu, vm.nr_vcpus()));
  }
  Cpumask local = mask;  // cpumask_copy(new_mask, mask) into the per-CPU __pv_cpu_mask
  local.clear(this_cpu);
  GuestSend out = send_ipi_mask(vm, local, vector);
  out.work.cpumask_words_written += local.words();
  return out;
}

}  // namespace ipilab::x86
