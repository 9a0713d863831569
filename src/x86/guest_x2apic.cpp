#include "x86/guest_x2apic.h"

#include <fmt/format.h>

#include <stdexcept>
#include <unordered_map>

namespace ipilab::x86 {

namespace {

void write_x2apic_icr(GuestSend& out, std::uint32_t dest, std::uint32_t low) {
  out.msr_writes.push_back(MsrWrite{kMsrX2apicIcr, (static_cast<std::uint64_t>(dest) << 32) | low});
  ++out.work.icr_writes;
}

GuestSend send_mask_physical(const X86Vm& vm, std::uint32_t this_cpu, const Cpumask& mask,
                             std::uint8_t vector, bool exclude_self) {
  GuestSend out;
  const std::uint32_t low = linux_prepare_icr(0, vector, /*dest_logical=*/false);
  std::uint64_t words = 0;
  for (std::uint32_t cpu = mask.find_next(0, &words); cpu < mask.nbits();
       cpu = mask.find_next(cpu + 1, &words)) {
    ++out.work.cpus_visited;
    if (exclude_self && cpu == this_cpu) continue;
    write_x2apic_icr(out, vm.apic_id(cpu), low);
  }
  out.work.cpumask_words_walked = words;
  return out;
}

GuestSend send_mask_cluster(const X86Vm& vm, std::uint32_t this_cpu, const Cpumask& mask,
                            std::uint8_t vector, bool exclude_self) {
  GuestSend out;
  const std::uint32_t low = linux_prepare_icr(0, vector, /*dest_logical=*/true);

  // cluster_masks: every CPU of the VM grouped by x2APIC cluster (LDR[31:16]); the VM's own when the
  // mask has its size, else built here at the mask's size (the walks count words of that size).
  std::unordered_map<std::uint32_t, Cpumask> clusters;
  const bool vm_masks = mask.nbits() == vm.nr_vcpus();
  if (!vm_masks)
    for (std::uint32_t cpu = 0; cpu < vm.nr_vcpus(); ++cpu) {
      auto [it, _] = clusters.try_emplace(x2apic_cluster_id(vm.apic_id(cpu)), mask.nbits());
      it->second.set(cpu);
    }

  Cpumask tmp = mask;  // cpumask_copy(tmpmsk, mask)
  out.work.cpumask_words_written += tmp.words();
  if (exclude_self) tmp.clear(this_cpu);

  std::uint64_t words = 0;
  for (std::uint32_t cpu = tmp.find_next(0, &words); cpu < tmp.nbits();
       cpu = tmp.find_next(cpu + 1, &words)) {
    ++out.work.cpus_visited;
    const Cpumask& cmsk = vm_masks ? vm.cluster_mask(cpu) : clusters.at(x2apic_cluster_id(vm.apic_id(cpu)));
    std::uint32_t dest = 0;
    for (std::uint32_t c = tmp.find_next_and(cmsk, 0, &words); c < tmp.nbits();
         c = tmp.find_next_and(cmsk, c + 1, &words)) {
      dest |= x2apic_logical_id(vm.apic_id(c));
    }
    if (dest == 0) continue;
    write_x2apic_icr(out, dest, low);
    tmp.andnot(cmsk);
    out.work.cpumask_words_written += tmp.words();
  }
  out.work.cpumask_words_walked = words;
  return out;
}

}  // namespace

GuestSend x2apic_send_ipi_mask(const X86Vm& vm, X2apicMode mode, std::uint32_t this_cpu,
                               const Cpumask& mask, std::uint8_t vector, bool exclude_self) {
  vm.check_send(this_cpu, mask);
  return mode == X2apicMode::Physical ? send_mask_physical(vm, this_cpu, mask, vector, exclude_self)
                                      : send_mask_cluster(vm, this_cpu, mask, vector, exclude_self);
}

GuestSend x2apic_send_ipi_one(const X86Vm& vm, X2apicMode mode, std::uint32_t cpu,
                              std::uint8_t vector) {
  if (cpu >= vm.nr_vcpus()) {
    throw std::invalid_argument(fmt::format("CPU {} is not a CPU of this {}-vCPU VM", cpu,
                                            vm.nr_vcpus()));
  }
  GuestSend out;
  const bool logical = mode == X2apicMode::Cluster;
  const std::uint32_t dest = logical ? x2apic_logical_id(vm.apic_id(cpu)) : vm.apic_id(cpu);
  write_x2apic_icr(out, dest, linux_prepare_icr(0, vector, logical));
  return out;
}

GuestSend x2apic_send_ipi_shorthand(std::uint8_t vector, Shorthand which) {
  std::uint32_t bits = 0;
  switch (which) {
    case Shorthand::Self: bits = icr_bits::kShortSelf; break;
    case Shorthand::AllIncludingSelf: bits = icr_bits::kShortAllInc; break;
    case Shorthand::AllExcludingSelf: bits = icr_bits::kShortAllBut; break;
    case Shorthand::None:
    default: throw std::invalid_argument("x2apic_send_ipi_shorthand needs a shorthand");
  }
  GuestSend out;
  write_x2apic_icr(out, 0, linux_prepare_icr(bits, vector, false));
  return out;
}

GuestSend x2apic_send_ipi_self(std::uint8_t vector) {
  GuestSend out;
  out.msr_writes.push_back(MsrWrite{kMsrX2apicSelfIpi, vector});
  ++out.work.self_ipi_writes;
  return out;
}

}  // namespace ipilab::x86
