#include "workload/mechanisms/x86_common.h"

#include <algorithm>

#include "x86/cpumask.h"
#include "x86/kvm_icr.h"
#include "x86/kvm_pv_ipi.h"

namespace ipilab::workload {

using namespace cost::keys;

x86::X86Vm x86_view(const topology::Vm& vm) { return x86::X86Vm::identity(static_cast<std::uint32_t>(vm.size())); }

namespace {

constexpr std::string_view kSender = "sender";

void deliver(SendPlan& p, Pricer& pr, const topology::Host& host, const topology::Vm& vm, unsigned sender, unsigned target, bool intended) {
  PlannedDelivery d;
  d.target_cpu = static_cast<int>(target);
  d.after_sender_step = p.sender.empty() ? 0 : static_cast<std::uint32_t>(p.sender.size() - 1);
  d.intended = intended;
  const int from = host.cpu(vm.pcpu_of(static_cast<int>(sender))).node;
  const int to = host.cpu(vm.pcpu_of(static_cast<int>(target))).node;
  if (auto s = interconnect_step(pr, host, from, to, "interrupt notification to the target's CPU")) d.path.push_back(*s);
  p.deliveries.push_back(std::move(d));
}

bool in(std::span<const unsigned> v, unsigned x) { return std::find(v.begin(), v.end(), x) != v.end(); }

}  // namespace

void price_x86_send(SendPlan& p, Pricer& pr, const topology::Host& host, const topology::Vm& vm, const x86::X86Vm& xvm, unsigned sender,
                    const x86::GuestSend& gs, std::span<const unsigned> intended) {
  const std::uint64_t words = gs.work.cpumask_words_walked + gs.work.cpumask_words_written;
  if (words) p.sender.push_back(pr.step(kSender, "cpumask walk (find_next_bit)", guest_cpumask_word, static_cast<std::uint32_t>(words)));
  std::vector<bool> got(xvm.nr_vcpus(), false);
  for (const auto& w : gs.msr_writes) {
    if (w.msr != 0x830 && w.msr != 0x83F) continue;
    p.sender.push_back(pr.step(kSender, "VM exit for the ICR write", vm_exit_entry, 1, Lane::Exit));
    p.sender.push_back(pr.step(kSender, "hypervisor emulates the ICR write", x2apic_icr_write_exit, 1, Lane::Exit));
    add_counter(p, pr, "icr_writes");
    add_counter(p, pr, "vm_exits");
    const x86::IcrWriteOutcome o = w.msr == 0x830 ? x86::kvm_x2apic_icr_write(xvm, sender, w.value)
                                                  : x86::kvm_x2apic_self_ipi_write(xvm, sender, w.value);
    for (const auto& t : o.targets) {
      if (!t.accepted) continue;
      p.sender.push_back(pr.step(kSender, "deliver to one destination APIC", x2apic_icr_dest_per_target, 1, Lane::Exit));
      deliver(p, pr, host, vm, sender, t.vcpu, in(intended, t.vcpu));
      got[t.vcpu] = true;
    }
  }
  if (!gs.hypercalls.empty()) {
    x86::KvmPvGuestState state;
    const x86::PvIpiExecution ex = x86::kvm_pv_execute(xvm, x86::KvmPvIpiHostState{}, true, gs, state);
    for (const auto& call : ex.calls) {
      p.sender.push_back(pr.step(kSender, "VM exit for KVM_HC_SEND_IPI", vm_exit_entry, 1, Lane::Exit));
      p.sender.push_back(pr.step(kSender, "KVM_HC_SEND_IPI dispatch and bitmap walk", kvm_pv_send_ipi_call, 1, Lane::Exit));
      add_counter(p, pr, "hypercalls");
      add_counter(p, pr, "hypercalls.KVM_HC_SEND_IPI");
      add_counter(p, pr, "vm_exits");
      for (const auto& t : call.ipi.targets) {
        if (!t.accepted) continue;
        p.sender.push_back(pr.step(kSender, "kvm_apic_set_irq for one destination", kvm_pv_send_ipi_per_dest, 1, Lane::Exit));
        deliver(p, pr, host, vm, sender, t.vcpu, in(intended, t.vcpu));
        got[t.vcpu] = true;
      }
    }
  }
  for (unsigned cpu : intended)
    if (cpu >= got.size() || !got[cpu]) p.lost.push_back({static_cast<int>(cpu), "the model delivered nothing to it"});
}

ArrivalSteps x86_arrival(Pricer& pr) {
  ArrivalSteps a;
  a.running = {pr.step("target", "interrupt a running vCPU (posted interrupt)", apic_interrupt_injection, 1, Lane::Wire)};
  a.halted = {pr.step("target", "wake the halted vCPU", vcpu_halt_wakeup, 1, Lane::TargetHv)};
  return a;
}

std::vector<cost::CostKey> x86_icr_cost_keys() {
  return {guest_ipi_path_call,        guest_cpumask_word,       vm_exit_entry, x2apic_icr_write_exit,
          x2apic_icr_dest_per_target, apic_interrupt_injection, vcpu_halt_wakeup};
}

std::vector<cost::CostKey> kvm_pv_cost_keys() { return {kvm_pv_send_ipi_call, kvm_pv_send_ipi_per_dest}; }

X86NativeMechanism::X86NativeMechanism(MechanismContext& ctx, std::string name, x86::X2apicMode mode, bool pv)
    : host_(&ctx.host), vm_(&ctx.vm), pricer_(&ctx.pricer), xvm_(x86_view(ctx.vm)), name_(std::move(name)) {
  cfg_.x2apic_mode = mode;
  cfg_.pv_send_ipi = pv;
  cfg_.ipi_shorthand = false;  // explicit masks: shorthands (send_IPI_allbutself) are not modelled here
  arrival_ = x86_arrival(*pricer_);
}

SendPlan X86NativeMechanism::plan(const SendRequest& r) {
  SendPlan p;
  Pricer& pr = *pricer_;
  p.sender.push_back(pr.step(kSender, "enter the apic->send_IPI* hook", guest_ipi_path_call));
  x86::GuestSend gs;
  const auto v8 = static_cast<std::uint8_t>(r.vector);
  if (r.addressing == Addressing::One) {
    gs = x86::linux_send_ipi(xvm_, cfg_, r.targets[0], v8);
  } else {
    x86::Cpumask mask(xvm_.nr_vcpus());
    for (unsigned t : r.targets) mask.set(t);
    if (r.addressing == Addressing::MaskAllButSelf) mask.set(r.sender);
    gs = x86::linux_send_ipi_mask(xvm_, cfg_, r.sender, mask, v8, r.addressing == Addressing::MaskAllButSelf);
  }
  price_x86_send(p, pr, *host_, *vm_, xvm_, r.sender, gs, r.targets);
  return p;
}

std::vector<std::pair<std::string, std::string>> X86NativeMechanism::settings() const { return {{"mechanism", name_}}; }

}  // namespace ipilab::workload
