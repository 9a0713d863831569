// Linux's x86-64 xAPIC send paths and KVM's handling of an xAPIC ICR write; see guest_xapic.h.
#include "x86/guest_xapic.h"

#include "x86/guest_x2apic.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace ipilab::x86 {

namespace {

void check_ids(const X86Vm& vm) {
  for (std::uint32_t v = 0; v < vm.nr_vcpus(); ++v)
    if (vm.apic_id(v) >= kXapicBroadcast)
      throw std::invalid_argument(fmt::format("vCPU {} has APIC ID {}: xAPIC addresses IDs 0..254 only (x2APIC beyond)", v,
                                              vm.apic_id(v)));
}

// __default_send_IPI_dest_field: ICR2 = SET_XAPIC_DEST_FIELD(dest), then ICR.
void write_xapic_icr(GuestSend& out, std::uint32_t dest, std::uint32_t low) {
  out.mmio_writes.push_back(XapicIcr{low, dest << 24});
  ++out.work.icr_writes;
}

}  // namespace

const char* to_string(XapicDriver d) { return d == XapicDriver::Flat ? "flat (logical)" : "physflat (physical)"; }

GuestSend xapic_send_ipi_one(const X86Vm& vm, XapicDriver d, std::uint32_t cpu, std::uint8_t vector) {
  check_ids(vm);
  if (cpu >= vm.nr_vcpus()) throw std::invalid_argument(fmt::format("CPU {} is not a CPU of this {}-vCPU VM", cpu, vm.nr_vcpus()));
  GuestSend out;
  if (d == XapicDriver::Flat) {
    if (cpu >= 8) throw std::invalid_argument(fmt::format("the flat xAPIC driver has no logical ID for CPU {} (8 CPUs at most)", cpu));
    write_xapic_icr(out, xapic_flat_ldr(cpu), linux_prepare_icr(0, vector, true));
  } else {
    write_xapic_icr(out, vm.apic_id(cpu), linux_prepare_icr(0, vector, false));
  }
  return out;
}

GuestSend xapic_send_ipi_mask(const X86Vm& vm, XapicDriver d, std::uint32_t this_cpu, const Cpumask& mask,
                              std::uint8_t vector, bool exclude_self) {
  check_ids(vm);
  vm.check_send(this_cpu, mask);
  GuestSend out;
  std::uint64_t words = 0;
  if (d == XapicDriver::Flat) {
    // cpumask_bits(mask)[0], the sender's bit cleared for _allbutself: one logical write.
    std::uint32_t dest = 0;
    for (std::uint32_t cpu = mask.find_next(0, &words); cpu < mask.nbits(); cpu = mask.find_next(cpu + 1, &words)) {
      if (cpu >= 8) throw std::invalid_argument(fmt::format("the flat xAPIC driver has no logical ID for CPU {} (8 CPUs at most)", cpu));
      if (!(exclude_self && cpu == this_cpu)) dest |= xapic_flat_ldr(cpu);
    }
    out.work.cpumask_words_walked = 1;  // the mask's first word, read once
    if (dest) write_xapic_icr(out, dest, linux_prepare_icr(0, vector, true));
    return out;
  }
  const std::uint32_t low = linux_prepare_icr(0, vector, false);
  for (std::uint32_t cpu = mask.find_next(0, &words); cpu < mask.nbits(); cpu = mask.find_next(cpu + 1, &words)) {
    ++out.work.cpus_visited;
    if (exclude_self && cpu == this_cpu) continue;
    write_xapic_icr(out, vm.apic_id(cpu), low);
  }
  out.work.cpumask_words_walked = words;
  return out;
}

GuestSend xapic_send_ipi_shorthand(std::uint8_t vector, Shorthand which) {
  // The same low word as x2APIC's __x2apic_send_IPI_shorthand, written with ICR2 = 0.
  const GuestSend x = x2apic_send_ipi_shorthand(vector, which);
  GuestSend out;
  write_xapic_icr(out, 0, static_cast<std::uint32_t>(x.msr_writes.at(0).value));
  return out;
}

void kvm_xapic_icr_write(const X86Vm& vm, XapicDriver driver, std::uint32_t sender, XapicIcr w, IcrWriteOutcome& out) {
  kvm_begin_icr_write(vm, sender, out);
  const Icr f = decode_xapic_icr(XapicIcr{w.icr & ~icr_bits::kBusy, w.icr2});
  out.effective_icr = (static_cast<std::uint64_t>(w.icr2) << 32) | (w.icr & ~icr_bits::kBusy);
  const auto matches = [&](std::uint32_t v) {
    if (const auto decided = kvm_match_shorthand_or_broadcast(vm, sender, v, f, kXapicBroadcast)) return *decided;
    if (f.dest_mode == DestMode::Physical) return f.destination == vm.apic_id(v);
    // Logical flat (APIC_DFR_FLAT): a common bit of the 8-bit destination and the LDR.
    return driver == XapicDriver::Flat && (xapic_flat_ldr(v) & f.destination) != 0;
  };
  std::vector<std::uint32_t> matched;
  for (std::uint32_t v = 0; v < vm.nr_vcpus(); ++v)
    if (matches(v)) matched.push_back(v);
  kvm_deliver_to_matched(vm, f, matched, out);
}

}  // namespace ipilab::x86
