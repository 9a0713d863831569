// Entry-point dispatch of a Linux x2APIC guest on KVM; see linux_kvm_guest.h for sources.
#include "x86/linux_kvm_guest.h"

#include <fmt/format.h>

#include <stdexcept>

#include "x86/kvm_pv_ipi.h"

namespace ipilab::x86 {

namespace {

constexpr std::uint8_t kCallFunctionVector = 0xFC;  // CALL_FUNCTION_VECTOR

Cpumask online_mask(const X86Vm& vm) { return Cpumask::first_n(vm.nr_vcpus(), vm.nr_vcpus()); }

void check_cpu(const X86Vm& vm, std::uint32_t cpu) {
  if (cpu >= vm.nr_vcpus()) {
    throw std::invalid_argument(
        fmt::format("CPU {} is not a CPU of this {}-vCPU VM", cpu, vm.nr_vcpus()));
  }
}

bool shorthand_on(const LinuxKvmGuestConfig& cfg) { return cfg.ipi_shorthand && !cfg.before_5_4; }

GuestSend send_shorthand(const LinuxKvmGuestConfig& cfg, std::uint8_t vector, Shorthand which) {
  return cfg.xapic ? xapic_send_ipi_shorthand(vector, which) : x2apic_send_ipi_shorthand(vector, which);
}

}  // namespace

GuestSend linux_send_ipi(const X86Vm& vm, const LinuxKvmGuestConfig& cfg, std::uint32_t cpu,
                         std::uint8_t vector) {
  if (cfg.xapic && cfg.pv_send_ipi && cfg.xapic_driver == XapicDriver::Flat) {
    check_cpu(vm, cpu);
    Cpumask one(vm.nr_vcpus());
    one.set(cpu);
    return kvm_guest_send_ipi_mask(vm, one, vector);
  }
  if (cfg.xapic) return xapic_send_ipi_one(vm, cfg.xapic_driver, cpu, vector);
  return x2apic_send_ipi_one(vm, cfg.x2apic_mode, cpu, vector);
}

GuestSend linux_send_ipi_mask(const X86Vm& vm, const LinuxKvmGuestConfig& cfg, std::uint32_t this_cpu,
                              const Cpumask& mask, std::uint8_t vector, bool exclude_self) {
  if (cfg.pv_send_ipi) {
    return exclude_self ? kvm_guest_send_ipi_mask_allbutself(vm, this_cpu, mask, vector)
                        : kvm_guest_send_ipi_mask(vm, mask, vector);
  }
  if (cfg.xapic) return xapic_send_ipi_mask(vm, cfg.xapic_driver, this_cpu, mask, vector, exclude_self);
  return x2apic_send_ipi_mask(vm, cfg.x2apic_mode, this_cpu, mask, vector, exclude_self);
}

GuestSend linux_send_ipi_allbutself(const X86Vm& vm, const LinuxKvmGuestConfig& cfg,
                                    std::uint32_t this_cpu, std::uint8_t vector) {
  check_cpu(vm, this_cpu);
  if (cfg.before_5_4) {
    // x2apic_send_IPI_allbutself / kvm_send_ipi_allbutself: a mask walk over cpu_online_mask.
    return linux_send_ipi_mask(vm, cfg, this_cpu, online_mask(vm), vector, true);
  }
  if (vm.nr_vcpus() < 2) return GuestSend{};
  if (shorthand_on(cfg)) return send_shorthand(cfg, vector, Shorthand::AllExcludingSelf);
  return linux_send_ipi_mask(vm, cfg, this_cpu, online_mask(vm), vector, true);
}

GuestSend linux_send_ipi_all(const X86Vm& vm, const LinuxKvmGuestConfig& cfg, std::uint32_t this_cpu,
                             std::uint8_t vector) {
  check_cpu(vm, this_cpu);
  if (shorthand_on(cfg)) return send_shorthand(cfg, vector, Shorthand::AllIncludingSelf);
  return linux_send_ipi_mask(vm, cfg, this_cpu, online_mask(vm), vector, false);
}

GuestSend linux_send_call_func_ipi(const X86Vm& vm, const LinuxKvmGuestConfig& cfg,
                                   std::uint32_t this_cpu, const Cpumask& mask) {
  check_cpu(vm, this_cpu);
  const Cpumask online = online_mask(vm);
  if (mask.nbits() != online.nbits()) {
    throw std::invalid_argument("linux_send_call_func_ipi: mask must have nr_vcpus bits");
  }
  Cpumask with_self = mask;
  with_self.set(this_cpu);
  if (cfg.before_5_4) {
    Cpumask all_but_self = online;
    all_but_self.clear(this_cpu);
    if (mask == all_but_self) return linux_send_ipi_allbutself(vm, cfg, this_cpu, kCallFunctionVector);
    return linux_send_ipi_mask(vm, cfg, this_cpu, mask, kCallFunctionVector, false);
  }
  if (shorthand_on(cfg) && with_self == online) {
    if (mask.test(this_cpu)) return linux_send_ipi_all(vm, cfg, this_cpu, kCallFunctionVector);
    if (vm.nr_vcpus() > 1) return linux_send_ipi_allbutself(vm, cfg, this_cpu, kCallFunctionVector);
    return GuestSend{};
  }
  return linux_send_ipi_mask(vm, cfg, this_cpu, mask, kCallFunctionVector, false);
}

}  // namespace ipilab::x86
