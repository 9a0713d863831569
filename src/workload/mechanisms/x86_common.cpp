#include "workload/mechanisms/x86_common.h"
#include "workload/counters.h"

#include <algorithm>
#include <optional>

#include <fmt/format.h>

#include "x86/cpumask.h"
#include "x86/kvm_icr.h"
#include "x86/kvm_pv_ipi.h"

namespace ipilab::workload {

using namespace cost::keys;

x86::X86Vm x86_view(const topology::Vm& vm) { return x86::X86Vm::identity(static_cast<std::uint32_t>(vm.size())); }

namespace {

constexpr std::string_view kSender = "sender";

// What AVIC's hardware sends without an exit: fixed delivery, edge-triggered, any destination form
// (AMD64 APM Vol. 2, AVIC "Interprocessor Interrupts"; KVM avic_incomplete_ipi_interception emulates
// the others: AVIC_IPI_FAILURE_INVALID_INT_TYPE).
bool avic_accelerates(std::uint32_t icr_low) {
  return (icr_low & x86::icr_bits::kModeMask) == x86::icr_bits::kDmFixed && (icr_low & x86::icr_bits::kLevelTrig) == 0;
}

// One send's deliveries: the interconnect step from the sender's node to each target node is looked
// up once per node (Pricer labels are registered in the order first needed, as before).
class Deliveries {
 public:
  Deliveries(SendPlan& p, Pricer& pr, const topology::Host& host, const topology::Vm& vm, unsigned sender,
             std::span<const int> node_of_cpu)
      : p_(p), pr_(pr), host_(host), vm_(vm), node_of_cpu_(node_of_cpu), from_(node(sender)),
        hop_(static_cast<std::size_t>(std::max(host.nodes, 1))) {}
  void add(unsigned target, bool intended) {
    PlannedDelivery d;
    d.target_cpu = static_cast<int>(target);
    d.after_sender_step = p_.sender.empty() ? 0 : static_cast<std::uint32_t>(p_.sender.size() - 1);
    d.intended = intended;
    const int to = node(target);
    if (to >= 0 && static_cast<std::size_t>(to) < hop_.size()) {
      Hop& h = hop_[static_cast<std::size_t>(to)];
      if (!h.known) {
        h.step = interconnect_step(pr_, host_, from_, to, "interrupt notification to the target's CPU");
        h.known = true;
      }
      if (h.step) d.path.push_back(*h.step);
    } else if (auto st = interconnect_step(pr_, host_, from_, to, "interrupt notification to the target's CPU")) {
      d.path.push_back(*st);
    }
    p_.deliveries.push_back(std::move(d));
  }

 private:
  struct Hop {
    bool known = false;
    std::optional<PlanStep> step;
  };
  int node(unsigned cpu) const {
    return cpu < node_of_cpu_.size() ? node_of_cpu_[cpu] : host_.cpu(vm_.pcpu_of(static_cast<int>(cpu))).node;
  }
  SendPlan& p_;
  Pricer& pr_;
  const topology::Host& host_;
  const topology::Vm& vm_;
  std::span<const int> node_of_cpu_;
  int from_;
  std::vector<Hop> hop_;
};

// A step priced on first use and reused for the rest of the send.
class Lazy {
 public:
  Lazy(Pricer& pr, std::string_view what, cost::CostKey key, Lane lane = Lane::Exit)
      : pr_(pr), what_(what), key_(key), lane_(lane) {}
  const PlanStep& get() {
    if (!step_) step_ = pr_.step(kSender, what_, key_, 1, lane_);
    return *step_;
  }

 private:
  Pricer& pr_;
  std::string_view what_;
  cost::CostKey key_;
  Lane lane_;
  std::optional<PlanStep> step_;
};

// The sender's kvm_vcpu_kick of delivery target `vcpu` (X86SendOptions::kick): always, only if its
// thread is blocked when the send runs (the core decides: PlanStep::if_blocked), or never.
void push_kick(SendPlan& p, Lazy& kick, std::span<const KickWhen> when, unsigned vcpu) {
  const KickWhen k = vcpu < when.size() ? when[vcpu] : KickWhen::Never;
  if (k == KickWhen::Never) return;
  PlanStep s = kick.get();
  if (k == KickWhen::IfBlocked) s.if_blocked = static_cast<std::int32_t>(vcpu);
  p.sender.push_back(s);
}

// KVM_HC_SEND_IPI calls of a PV send, executed by KVM's kvm_pv_send_ipi; each delivery may also pay
// `kick` on the sender (push_kick).
void price_pv_hypercalls(SendPlan& p, Pricer& pr, const x86::X86Vm& xvm, const x86::GuestSend& gs, Deliveries& out,
                         std::vector<bool>& got, const std::vector<bool>& asked, std::span<const KickWhen> kicks,
                         Lazy& kick) {
  x86::KvmPvGuestState state;
  const x86::PvIpiExecution ex = x86::kvm_pv_execute(xvm, x86::KvmPvIpiHostState{}, true, gs, state);
  Lazy hc_exit(pr, "VM exit for KVM_HC_SEND_IPI", vm_exit_entry), hc_call(pr, "KVM_HC_SEND_IPI dispatch and bitmap walk", kvm_pv_send_ipi_call),
      hc_dest(pr, "kvm_apic_set_irq for one destination", kvm_pv_send_ipi_per_dest);
  for (const auto& call : ex.calls) {
    p.sender.push_back(hc_exit.get());
    p.sender.push_back(hc_call.get());
    for (const auto& t : call.ipi.targets) {
      if (!t.accepted) continue;
      p.sender.push_back(hc_dest.get());
      push_kick(p, kick, kicks, t.vcpu);
      out.add(t.vcpu, t.vcpu < asked.size() && asked[t.vcpu]);
      got[t.vcpu] = true;
    }
  }
  if (!ex.calls.empty()) {
    add_counter(p, pr, counters::hypercalls, ex.calls.size());
    add_counter(p, pr, per_call_counter("KVM_HC_SEND_IPI"), ex.calls.size());
    add_counter(p, pr, counters::vm_exits, ex.calls.size());
  }
}

// An xAPIC ICR write KVM handles: with APICv one APIC-write exit; without, each access is an MMIO
// exit: the idle wait's ICR read, the ICR2 and the ICR writes (__default_send_IPI_dest_field), or
// for a destination shorthand only the read and the ICR write (__default_send_IPI_shortcut: "No
// need to touch the target chip field"). Returns the exits.
std::uint64_t xapic_exit_steps(SendPlan& p, Lazy& exit, Lazy& mmio, Lazy& icr, bool apicv, bool shorthand) {
  const int exits = apicv ? 1 : shorthand ? 2 : 3;
  for (int i = 0; i < exits; ++i) {
    p.sender.push_back(exit.get());
    if (!apicv) p.sender.push_back(mmio.get());
  }
  p.sender.push_back(icr.get());
  return static_cast<std::uint64_t>(exits);
}

// AVIC: a write whose target is not running ends in AVIC_INCOMPLETE_IPI (the core decides, per write).
void avic_not_running(SendPlan& p, Pricer& pr) {
  p.not_running = {pr.step(kSender, "#VMEXIT(AVIC_INCOMPLETE_IPI): a target is not running", vm_exit_entry, 1, Lane::Exit),
                   pr.step(kSender, "avic_incomplete_ipi_interception -> avic_kick_target_vcpus", avic_incomplete_ipi, 1, Lane::Exit)};
  p.not_running_counters = {{pr.counters().id(counters::vm_exits), 1}, {pr.counters().id(counters::avic_incomplete_ipi_exits), 1}};
}

}  // namespace

std::vector<int> node_of_cpus(const topology::Host& host, const topology::Vm& vm) {
  std::vector<int> out;
  for (int cpu = 0; cpu < vm.size(); ++cpu) out.push_back(host.cpu(vm.pcpu_of(cpu)).node);
  return out;
}

void price_x86_send(SendPlan& p, Pricer& pr, const topology::Host& host, const topology::Vm& vm, const x86::X86Vm& xvm, unsigned sender,
                    const x86::GuestSend& gs, std::span<const unsigned> intended, std::span<const int> node_of_cpu,
                    const X86SendOptions& opt) {
  const std::uint64_t words = gs.work.cpumask_words_walked + gs.work.cpumask_words_written;
  if (words) p.sender.push_back(pr.step(kSender, "cpumask walk (find_next_bit)", guest_cpumask_word, static_cast<std::uint32_t>(words)));
  std::vector<bool> got(xvm.nr_vcpus(), false);
  std::vector<bool> asked(xvm.nr_vcpus(), false);
  for (unsigned cpu : intended)
    if (cpu < asked.size()) asked[cpu] = true;
  const auto was_asked = [&](unsigned cpu) { return cpu < asked.size() && asked[cpu]; };
  Deliveries out(p, pr, host, vm, sender, node_of_cpu);
  p.sender.reserve(p.sender.size() + 3 * gs.msr_writes.size() + 3 * gs.hypercalls.size() + intended.size());
  p.deliveries.reserve(p.deliveries.size() + intended.size());
  Lazy xapic_icr(pr, "KVM handles the xAPIC ICR write (kvm_lapic_reg_write -> kvm_apic_send_ipi)", xapic_icr_write_exit),
      xapic_mmio(pr, "MMIO exit: emulate one xAPIC register access", xapic_mmio_exit);
  Lazy icr_exit(pr, "VM exit for the ICR write", vm_exit_entry), icr_emulate(pr, "hypervisor emulates the ICR write", x2apic_icr_write_exit),
      icr_dest(pr, "deliver to one destination APIC", x2apic_icr_dest_per_target),
      kick(pr, "kvm_vcpu_kick wakes the blocked vCPU thread", vcpu_kick_blocked),
      icr_fast(pr, "KVM's IRQs-off fastpath handles the ICR write", x2apic_icr_write_fastpath),
      ipiv_write(pr, "ICR write virtualised by the CPU (IPIv): no exit", ipiv_icr_write, Lane::Guest),
      ipiv_post(pr, "the CPU posts into the target's PID and notifies it", ipiv_pid_post, Lane::Guest),
      native_write(pr, "x2APIC ICR write (WRMSR, no hypervisor)", x2apic_native_icr_write, Lane::Guest),
      avic_write(pr, "ICR write accelerated by AVIC: no exit", avic_icr_write, Lane::Guest),
      avic_bell(pr, "AVIC sets the vector in the target's backing page, rings its doorbell", avic_doorbell, Lane::Guest);
  std::uint64_t icr_writes = 0, exits = 0, fast = 0, virtualised = 0, by_avic = 0;
  x86::IcrWriteOutcome o;  // one per write, its storage reused
  for (const auto& w : gs.msr_writes) {
    if (w.msr != 0x830 && w.msr != 0x83F) continue;
    if (w.msr == 0x830)
      x86::kvm_x2apic_icr_write(xvm, sender, w.value, o);
    else
      x86::kvm_x2apic_self_ipi_write(xvm, sender, w.value, o);
    // IPIv virtualises what KVM's fastpath takes: fixed, physical, no shorthand, one destination
    // inside the PID-pointer table (Intel SDM Vol. 3C, "IPI Virtualization"); anything else is an
    // APIC-write exit emulated as without it.
    const bool by_cpu = opt.ipiv && o.fastpath && w.msr == 0x830;
    const bool by_fastpath = !by_cpu && opt.icr_fastpath && o.fastpath && w.msr == 0x830;
    const bool avic = opt.avic && w.msr == 0x830 && avic_accelerates(static_cast<std::uint32_t>(o.effective_icr));
    ++icr_writes;
    if (avic) {
      p.sender.push_back(avic_write.get());
      ++by_avic;
    } else if (opt.native) {
      p.sender.push_back(native_write.get());
    } else if (by_cpu) {
      p.sender.push_back(ipiv_write.get());
      ++virtualised;
    } else {
      p.sender.push_back(icr_exit.get());
      p.sender.push_back(by_fastpath ? icr_fast.get() : icr_emulate.get());
      ++exits;
      if (by_fastpath) ++fast;
    }
    for (const auto& t : o.targets) {
      if (!t.accepted) continue;
      if (avic) p.sender.push_back(avic_bell.get());
      else if (by_cpu) p.sender.push_back(ipiv_post.get());
      else if (!opt.native) {
        p.sender.push_back(icr_dest.get());
        push_kick(p, kick, opt.kick, t.vcpu);
      }
      out.add(t.vcpu, was_asked(t.vcpu));
      got[t.vcpu] = true;
    }
  }
  for (const auto& w : gs.mmio_writes) {
    x86::kvm_xapic_icr_write(xvm, opt.xapic_driver, sender, w, o);
    const bool avic = opt.avic && avic_accelerates(w.icr);
    ++icr_writes;
    if (avic) {
      p.sender.push_back(avic_write.get());
      ++by_avic;
    } else {
      const bool shorthand = (w.icr & x86::icr_bits::kShortMask) != 0;
      exits += xapic_exit_steps(p, icr_exit, xapic_mmio, xapic_icr, opt.xapic_apicv, shorthand);
    }
    for (const auto& t : o.targets) {
      if (!t.accepted) continue;
      p.sender.push_back(avic ? avic_bell.get() : icr_dest.get());
      if (!avic) push_kick(p, kick, opt.kick, t.vcpu);  // __apic_accept_irq -> kvm_vcpu_kick, as for x2APIC
      out.add(t.vcpu, was_asked(t.vcpu));
      got[t.vcpu] = true;
    }
  }
  if (by_avic) avic_not_running(p, pr);
  // The plan's counters are sums per name: added once per send, in the order they first appeared.
  if (icr_writes) add_counter(p, pr, counters::icr_writes, icr_writes);
  if (exits) add_counter(p, pr, counters::vm_exits, exits);
  if (fast) add_counter(p, pr, counters::icr_fastpath_exits, fast);
  if (virtualised) add_counter(p, pr, counters::ipiv_icr_writes, virtualised);
  if (by_avic) add_counter(p, pr, counters::avic_icr_writes, by_avic);
  if (!gs.hypercalls.empty()) price_pv_hypercalls(p, pr, xvm, gs, out, got, asked, opt.kick, kick);
  for (unsigned cpu : intended)
    if (cpu >= got.size() || !got[cpu]) p.lost.push_back({static_cast<int>(cpu), "the model delivered nothing to it"});
}

std::vector<cost::CostKey> x86_icr_cost_keys() {
  return joined({guest_ipi_path_call, guest_cpumask_word, vm_exit_entry, x2apic_icr_write_exit,
                 x2apic_icr_dest_per_target, vcpu_kick_blocked},
                x86_target_cost_keys());
}

std::vector<cost::CostKey> kvm_pv_cost_keys() { return {kvm_pv_send_ipi_call, kvm_pv_send_ipi_per_dest}; }

std::vector<cost::CostKey> joined(std::vector<cost::CostKey> keys, const std::vector<cost::CostKey>& more) {
  keys.insert(keys.end(), more.begin(), more.end());
  return keys;
}

std::function<std::unique_ptr<Mechanism>(MechanismContext&)> x86_native_make(std::string name, x86::X2apicMode mode,
                                                                             bool pv, X86SendOptions options) {
  return [name = std::move(name), mode, pv, options](MechanismContext& ctx) -> std::unique_ptr<Mechanism> {
    return std::make_unique<X86NativeMechanism>(ctx, name, mode, pv, options);
  };
}

MechanismInfo x2apic_mechanism_info(std::string_view name, std::string_view description, x86::X2apicMode mode) {
  return {name,
          Arch::X86,
          description,
          x86_mechanism_params(true),
          joined(x86_icr_cost_keys(), {cost::keys::x2apic_icr_write_fastpath}),
          x86_native_make(std::string(name), mode, false)};
}

X86NativeMechanism::X86NativeMechanism(MechanismContext& ctx, std::string name, x86::X2apicMode mode, bool pv,
                                       X86SendOptions options)
    : host_(&ctx.host), vm_(&ctx.vm), pricer_(&ctx.pricer), xvm_(x86_view(ctx.vm)), name_(std::move(name)), options_(options) {
  cfg_.x2apic_mode = mode;
  cfg_.pv_send_ipi = pv;
  cfg_.xapic = options_.xapic;
  if (options_.xapic) {
    options_.xapic_driver = read_xapic_driver(ctx.params, xvm_.nr_vcpus());
    cfg_.xapic_driver = options_.xapic_driver;
  }
  read_x86_send_params(ctx.params, cfg_, options_);
  arrival_ = options_.native ? x86_native_arrival(*pricer_) : x86_arrival(*pricer_, ctx.params, options_.inhibited);
  if (!options_.native) {
    x86_preempted_arrival(arrival_, *pricer_, ctx.vm);
    options_.kick = kick_vcpus(ctx.vm, arrival_);
  }
}

std::vector<KickWhen> kick_vcpus(const topology::Vm& vm, const ArrivalSteps& arrival) {
  std::vector<KickWhen> out(static_cast<std::size_t>(vm.size()), KickWhen::Never);
  const KickWhen halted = arrival.host_poll.enabled() || arrival.guest_poll.enabled() ? KickWhen::IfBlocked : KickWhen::Always;
  for (const auto& v : vm.vcpus)
    if (v.initial_state == topology::VcpuState::Halted) out[static_cast<std::size_t>(v.cpu)] = halted;
  return out;
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
    if (cfg_.ipi_shorthand && r.vector == 0xFC) {
      // smp_call_function_many's IPI: native_send_call_func_ipi, which takes the all-but-self
      // shorthand when the mask is every other online CPU.
      gs = x86::linux_send_call_func_ipi(xvm_, cfg_, r.sender, mask);
    } else {
      if (r.addressing == Addressing::MaskAllButSelf) mask.set(r.sender);
      gs = x86::linux_send_ipi_mask(xvm_, cfg_, r.sender, mask, v8, r.addressing == Addressing::MaskAllButSelf);
    }
  }
  if (node_of_cpu_.empty()) node_of_cpu_ = node_of_cpus(*host_, *vm_);
  price_x86_send(p, pr, *host_, *vm_, xvm_, r.sender, gs, r.targets, node_of_cpu_, options_);
  return p;
}

std::vector<std::string> X86NativeMechanism::notes() const {
  std::vector<std::string> out;
  if (options_.inhibited) out.push_back(options_.inhibit_reason);
  return out;
}

std::vector<std::pair<std::string, std::string>> X86NativeMechanism::settings() const {
  std::vector<std::pair<std::string, std::string>> s{{"mechanism", name_}};
  if (cfg_.ipi_shorthand) s.emplace_back("IPI shorthand", "on: a call-function IPI to every other CPU is one all-but-self ICR write");
  if (options_.icr_fastpath) s.emplace_back("ICR write fastpath", "on (KVM handle_fastpath_set_x2apic_icr_irqoff)");
  if (options_.pv_tlb_flush) s.emplace_back("PV TLB flush", "on: TLB-flush calls skip preempted vCPUs (kvm_flush_tlb_multi)");
  if (options_.avic) s.emplace_back("AVIC", "on: fixed ICR writes without an exit; AVIC_INCOMPLETE_IPI exit for a target not running");
  if (options_.inhibited) s.emplace_back("AVIC", "inhibited for this VM: every ICR write exits, no posted interrupts");
  if (options_.xapic) {
    s.emplace_back("APIC mode", fmt::format("xAPIC, Linux driver {}", x86::to_string(options_.xapic_driver)));
    if (!options_.avic)
      s.emplace_back("xAPIC ICR write", options_.xapic_apicv ? "APIC-write exit (APICv)" : "MMIO exits: ICR read, ICR2, ICR (a shorthand: ICR read, ICR)");
  }
  return s;
}

}  // namespace ipilab::workload
