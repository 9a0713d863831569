#include "workload/send_path.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "common/error.h"
#include "gic/topology_builder.h"
#include "hv/guest_send.h"
#include "hv/oracle.h"
#include "hv/partition.h"
#include "x86/kvm_icr.h"
#include "x86/kvm_pv_ipi.h"
#include "x86/linux_kvm_guest.h"

namespace ipilab::workload {
namespace {

constexpr std::string_view kSender = "sender";

void add(std::map<std::string, std::uint64_t>& c, const std::string& k, std::uint64_t v) {
  if (v) c[k] += v;
}

/// Appends `n` x key as one sender step when n > 0.
void work_step(SendPlan& p, const Pricer& pr, std::string_view what, std::string_view key, std::uint64_t n) {
  if (n == 0) return;
  p.sender.push_back(pr.step(kSender, what, key, static_cast<std::uint32_t>(n)));
}

/// A delivery leaving after the last sender step so far.
void deliver_after_last(SendPlan& p, int target_cpu, bool intended) {
  PlannedDelivery d;
  d.target_cpu = target_cpu;
  d.after_sender_step = p.sender.empty() ? 0 : p.sender.size() - 1;
  d.intended = intended;
  p.deliveries.push_back(std::move(d));
}

// ------------------------------------------------------------------------------------------------
// x86 native and KVM PV: price the GuestSend records of src/x86 and KVM's host handling of them.

void price_x86_send(SendPlan& p, const Pricer& pr, const x86::X86Vm& xvm, unsigned sender, const x86::GuestSend& gs,
                    const std::vector<unsigned>& intended) {
  work_step(p, pr, "cpumask walk (find_next_bit)", "guest.cpumask_word",
            gs.work.cpumask_words_walked + gs.work.cpumask_words_written);
  std::vector<bool> got(xvm.nr_vcpus(), false);
  for (const auto& w : gs.msr_writes) {
    if (w.msr != 0x830 && w.msr != 0x83F) continue;
    p.sender.push_back(pr.step(kSender, "VM exit for the ICR write", "vm.exit_entry"));
    p.sender.push_back(pr.step(kSender, "hypervisor emulates the ICR write", "x2apic.icr_write_exit"));
    ++p.counters["icr_writes"];
    ++p.counters["vm_exits"];
    const x86::IcrWriteOutcome o = w.msr == 0x830 ? x86::kvm_x2apic_icr_write(xvm, sender, w.value)
                                                  : x86::kvm_x2apic_self_ipi_write(xvm, sender, w.value);
    for (const auto& t : o.targets) {
      if (!t.accepted) continue;
      p.sender.push_back(pr.step(kSender, "deliver to one destination APIC", "x2apic.icr_dest_per_target"));
      deliver_after_last(p, static_cast<int>(t.vcpu),
                         std::find(intended.begin(), intended.end(), t.vcpu) != intended.end());
      got[t.vcpu] = true;
    }
  }
  if (!gs.hypercalls.empty()) {
    x86::KvmPvGuestState state;
    const x86::PvIpiExecution ex = x86::kvm_pv_execute(xvm, x86::KvmPvIpiHostState{}, true, gs, state);
    for (const auto& call : ex.calls) {
      p.sender.push_back(pr.step(kSender, "VM exit for KVM_HC_SEND_IPI", "vm.exit_entry"));
      p.sender.push_back(pr.step(kSender, "KVM_HC_SEND_IPI dispatch and bitmap walk", "kvm.pv_send_ipi_call"));
      ++p.counters["hypercalls"];
      ++p.counters["hypercalls.KVM_HC_SEND_IPI"];
      ++p.counters["vm_exits"];
      for (const auto& t : call.ipi.targets) {
        if (!t.accepted) continue;
        p.sender.push_back(pr.step(kSender, "kvm_apic_set_irq for one destination", "kvm.pv_send_ipi_per_dest"));
        deliver_after_last(p, static_cast<int>(t.vcpu),
                           std::find(intended.begin(), intended.end(), t.vcpu) != intended.end());
        got[t.vcpu] = true;
      }
    }
  }
  for (unsigned cpu : intended)
    if (cpu >= got.size() || !got[cpu]) p.lost.push_back(static_cast<int>(cpu));
  for (const auto& d : p.deliveries)
    if (!d.intended) ++p.counters["misdelivered"];
  add(p.counters, "lost", p.lost.size());
}

class X86NativePath final : public SendPath {
 public:
  X86NativePath(const topology::Vm& vm, std::string mechanism)
      : xvm_(x86::X86Vm::identity(static_cast<std::uint32_t>(vm.size()))), mechanism_(std::move(mechanism)) {
    cfg_.x2apic_mode = mechanism_ == "x2apic-cluster" ? x86::X2apicMode::Cluster : x86::X2apicMode::Physical;
    cfg_.pv_send_ipi = mechanism_ == "kvm-pv";
    cfg_.ipi_shorthand = false;  // the workloads address explicit masks; shorthands are not modelled here
  }

  SendPlan plan(const Pricer& pr, unsigned sender, const std::vector<unsigned>& targets, Addressing addressing,
                std::uint32_t vector) override {
    SendPlan p;
    p.sender.push_back(pr.step(kSender, "enter the apic->send_IPI* hook", "guest.ipi_path_call"));
    x86::GuestSend gs;
    const auto v8 = static_cast<std::uint8_t>(vector);
    if (addressing == Addressing::One) {
      gs = x86::linux_send_ipi(xvm_, cfg_, targets.at(0), v8);
    } else {
      x86::Cpumask mask(xvm_.nr_vcpus());
      for (unsigned t : targets) mask.set(t);
      if (addressing == Addressing::MaskAllButSelf) mask.set(sender);
      gs = x86::linux_send_ipi_mask(xvm_, cfg_, sender, mask, v8, addressing == Addressing::MaskAllButSelf);
    }
    p.counters["sends"] = 1;
    price_x86_send(p, pr, xvm_, sender, gs, targets);
    return p;
  }

  std::vector<std::pair<std::string, std::string>> settings() const override { return {{"mechanism", mechanism_}}; }

 private:
  x86::X86Vm xvm_;
  std::string mechanism_;
  x86::LinuxKvmGuestConfig cfg_;
};

// ------------------------------------------------------------------------------------------------
// Hyper-V: Linux hv_apic.c policies against the KVM-semantics partition.

class HyperVPath final : public SendPath {
 public:
  HyperVPath(const Params& params, const topology::Vm& vm) : vm_(&vm), xvm_(x86::X86Vm::identity(vm.size())) {
    hv::GuestConfig cfg = hv::GuestConfig::identity(static_cast<unsigned>(vm.size()), static_cast<unsigned>(vm.nr_cpus));
    for (const auto& v : vm.vcpus) cfg.hv_vp_index[static_cast<std::size_t>(v.cpu)] = v.vp_index;
    cfg.hypercall_page = params.get_bool("hypercall_page", true);
    cfg.ex_processor_masks_recommended = params.get_bool("ex_processor_masks", true);
    if (params.has("cpumask_offstack")) cfg.cpumask_offstack = params.get_bool("cpumask_offstack", cfg.cpumask_offstack);
    one_ = params.get_choice("send_ipi_one", "mainline", {"pre-seed", "seed-v2", "seed-v3", "mainline"});
    mask_ = params.get_choice("mask_path", one_ == "mainline" ? "mainline" : "v5.4",
                              {"v5.4", "exclude-self-unfixed", "mainline"});
    hv::GuestPolicy policy;
    policy.send_ipi_one = one_ == "pre-seed"  ? hv::SendIpiOneVersion::kPreSeed
                          : one_ == "seed-v2" ? hv::SendIpiOneVersion::kSeedV2
                                              : hv::SendIpiOneVersion::kSeedV3;
    policy.mask_path = mask_ == "v5.4" ? hv::MaskPathVersion::kV54
                       : mask_ == "exclude-self-unfixed" ? hv::MaskPathVersion::kExcludeSelfUnfixed
                                                         : hv::MaskPathVersion::kMainline;
    try {
      guest_ = std::make_unique<hv::LinuxHvGuest>(cfg, policy);
    } catch (const InputError& e) {
      throw InputError(params.place("mechanism"), fmt::format("the Hyper-V guest configuration is invalid: {}", e.what()));
    }
    partition_ = std::make_unique<hv::Partition>(hv::partition_config_for(guest_->config()));
    offstack_ = guest_->config().cpumask_offstack;
  }

  SendPlan plan(const Pricer& pr, unsigned sender, const std::vector<unsigned>& targets, Addressing addressing,
                std::uint32_t vector) override {
    hv::SendRequest req;
    req.sender_cpu = sender;
    req.vector = vector;
    if (addressing == Addressing::One) {
      req.hook = hv::SendHook::kSendIpi;
      req.target_cpu = targets.at(0);
    } else {
      hv::Cpumask m(static_cast<unsigned>(vm_->nr_cpus));
      for (unsigned t : targets) m.set(t);
      if (addressing == Addressing::MaskAllButSelf) m.set(sender);
      req.hook = addressing == Addressing::Mask ? hv::SendHook::kSendIpiMask : hv::SendHook::kSendIpiMaskAllButSelf;
      req.mask = m;
    }
    const hv::GuestHostSend s = hv::run_on_partition(*guest_, *partition_, req);
    const hv::WorkRecord& w = s.send.work;

    SendPlan p;
    p.counters["sends"] = 1;
    p.sender.push_back(pr.step(kSender, "enter the apic->send_IPI* hook", "guest.ipi_path_call"));
    work_step(p, pr, "CPU_MASK_NONE: zero the on-stack cpumask", "guest.cpumask_word",
              (w.stack_cpumask_bytes_zeroed + 7) / 8);
    work_step(p, pr, "cpumask helpers (empty/last/for_each/set...)", "guest.cpumask_word", w.cpumask_words.total());
    work_step(p, pr, "hv_cpu_number_to_vp_number", "guest.vp_index_lookup", w.vp_lookups);
    work_step(p, pr, "local_irq_save/restore", "guest.irq_save_restore", w.irq_save_restore);
    work_step(p, pr, "cpumask_to_vpset: bank words cleared and built", "guest.cpumask_word",
              w.vpset_banks_cleared + w.vpset_banks_built);

    std::vector<bool> got(static_cast<std::size_t>(vm_->size()), false);
    auto intended = [&](unsigned cpu) {
      return std::find(s.send.intended_cpus.begin(), s.send.intended_cpus.end(), cpu) != s.send.intended_cpus.end();
    };
    for (std::size_t i = 0; i < s.send.hypercalls.size() && i < s.outcomes.size(); ++i) {
      const hv::HypercallOutcome& o = s.outcomes[i];
      const std::string name(hv::call_code_name(o.control.call_code));
      p.sender.push_back(pr.step(kSender, "VM exit for the hypercall", "vm.exit_entry"));
      p.sender.push_back(pr.step(kSender, "hypercall dispatch and return", "hv.hypercall_entry_exit"));
      ++p.counters["hypercalls"];
      ++p.counters["hypercalls." + name];
      ++p.counters["vm_exits"];
      if (o.control.fast) {
        p.sender.push_back(pr.step(kSender, "fast hypercall: read inputs from registers", "hv.fast_input_decode"));
      } else {
        p.sender.push_back(pr.step(kSender, "slow hypercall: map the input page", "hv.slow_input_map"));
        work_step(p, pr, "slow hypercall: read input QWORDs", "hv.slow_input_copy_per_8b", o.work.guest_bytes_read / 8);
        work_step(p, pr, "decode sparse vpset banks", "hv.vpset_bank_decode", o.work.banks_read);
      }
      if (!o.success()) ++p.counters["hypercalls_failed"];
      for (const auto& d : o.delivered) {
        p.sender.push_back(pr.step(kSender, "post the vector to one target VP", "hv.ipi_post_per_target"));
        const int cpu = vm_->cpu_of_vp_index(d.vp_index);
        if (cpu < 0) {
          ++p.counters["misdelivered"];  // a VP no guest CPU owns
          continue;
        }
        deliver_after_last(p, cpu, intended(static_cast<unsigned>(cpu)));
        got[static_cast<std::size_t>(cpu)] = true;
      }
    }
    if (s.send.native) {
      ++p.counters["native_fallbacks"];
      const hv::NativeSend& n = *s.send.native;
      std::vector<unsigned> cpus(n.cpus.begin(), n.cpus.end());
      x86::GuestSend gs;
      x86::LinuxKvmGuestConfig cfg;  // orig_apic of a Hyper-V guest: x2APIC physical, no PV
      if (n.hook == hv::SendHook::kSendIpi || n.hook == hv::SendHook::kSendIpiSelf) {
        gs = x86::linux_send_ipi(xvm_, cfg, cpus.empty() ? sender : cpus[0], static_cast<std::uint8_t>(n.vector));
      } else {
        x86::Cpumask m(xvm_.nr_vcpus());
        for (unsigned c : cpus) m.set(c);
        gs = x86::linux_send_ipi_mask(xvm_, cfg, sender, m, static_cast<std::uint8_t>(n.vector), false);
      }
      std::vector<unsigned> none;
      SendPlan native;
      price_x86_send(native, pr, xvm_, sender, gs, none);
      const std::size_t base = p.sender.size();
      for (auto& st : native.sender) p.sender.push_back(st);
      for (auto d : native.deliveries) {
        d.after_sender_step += base;
        d.intended = intended(static_cast<unsigned>(d.target_cpu));
        got[static_cast<std::size_t>(d.target_cpu)] = true;
        p.deliveries.push_back(d);
      }
      for (const auto& [k, v] : native.counters)
        if (k != "misdelivered" && k != "lost") p.counters[k] += v;
    }
    for (const auto& d : p.deliveries)
      if (!d.intended) ++p.counters["misdelivered"];
    for (unsigned cpu : s.send.intended_cpus)
      if (!got[cpu]) p.lost.push_back(static_cast<int>(cpu));
    add(p.counters, "lost", p.lost.size());
    if (!s.oracle.ok()) {
      std::string miss, extra;
      for (unsigned c : s.oracle.missing) miss += (miss.empty() ? "" : ",") + std::to_string(c);
      for (unsigned c : s.oracle.extra) extra += (extra.empty() ? "" : ",") + std::to_string(c);
      p.notes.push_back(fmt::format("oracle: CPU {} -> {{{}}}: lost {{{}}}, misdelivered {{{}}} (send_ipi_one = {})",
                                    sender, [&] {
                                      std::string t;
                                      for (unsigned c : targets) t += (t.empty() ? "" : ",") + std::to_string(c);
                                      return t;
                                    }(),
                                    miss, extra, one_));
    }
    return p;
  }

  std::vector<std::pair<std::string, std::string>> settings() const override {
    return {{"mechanism", "hyperv"},
            {"send_ipi_one", one_},
            {"mask_path", mask_},
            {"NR_CPUS", std::to_string(vm_->nr_cpus)},
            {"CPUMASK_OFFSTACK", offstack_ ? "y" : "n"}};
  }

 private:
  const topology::Vm* vm_;
  x86::X86Vm xvm_;
  std::string one_, mask_;
  bool offstack_ = false;
  std::unique_ptr<hv::LinuxHvGuest> guest_;
  std::unique_ptr<hv::Partition> partition_;
};

}  // namespace

const std::vector<std::string_view>& x86_mechanisms() {
  static const std::vector<std::string_view> m{"hyperv", "x2apic-physical", "x2apic-cluster", "kvm-pv"};
  return m;
}

std::vector<ParamInfo> x86_send_params() {
  return {
      {"mechanism", "string", "\"hyperv\"",
       "send path: hyperv (Linux hv_apic.c + Hyper-V host), x2apic-physical, x2apic-cluster, kvm-pv (KVM_HC_SEND_IPI)"},
      {"send_ipi_one", "string", "\"mainline\"",
       "hyperv: __send_ipi_one version: pre-seed (v5.4, cpumask on the stack), seed-v2 (tests the CPU number), "
       "seed-v3 / mainline (tests the VP number)"},
      {"mask_path", "string", "\"v5.4\" for pre-seed/seed-v2/seed-v3, else \"mainline\"",
       "hyperv: __send_ipi_mask[_ex] version: v5.4, exclude-self-unfixed (Sep 2021), mainline"},
      {"hypercall_page", "bool", "true", "hyperv: hv_hypercall_pg present (false: every send falls back to the APIC)"},
      {"ex_processor_masks", "bool", "true", "hyperv: HV_X64_EX_PROCESSOR_MASKS_RECOMMENDED (false: VP >= 64 falls back)"},
      {"cpumask_offstack", "bool", "NR_CPUS > 512", "hyperv: CONFIG_CPUMASK_OFFSTACK (scans stop at nr_cpu_ids)"},
  };
}

std::unique_ptr<SendPath> make_x86_send_path(const Params& params, const topology::Vm& vm) {
  const std::string mech = params.get_choice("mechanism", "hyperv", x86_mechanisms());
  if (mech == "hyperv") return std::make_unique<HyperVPath>(params, vm);
  for (const char* k : {"send_ipi_one", "mask_path", "hypercall_page", "ex_processor_masks", "cpumask_offstack"})
    if (params.has(k))
      throw InputError(params.place(k), fmt::format("only meaningful with mechanism = \"hyperv\" (this is \"{}\")", mech));
  return std::make_unique<X86NativePath>(vm, mech);
}

// ------------------------------------------------------------------------------------------------
// GICv4.1 vSGI

VsgiPath::VsgiPath(const topology::Host& host, const topology::Vm& vm, gic::Find41Policy policy)
    : host_(&host), vm_(&vm), policy_(policy) {
  if (host.its.empty())
    throw InputError(fmt::format("host '{}'", host.name), "has no ITS: GICv4.1 vSGI needs one (host.its)");
  const int per_socket = static_cast<int>(host.cpus.size()) / std::max(1, host.sockets);
  for (const auto& c : host.cpus)
    if (c.socket != c.id / per_socket)
      throw InputError(fmt::format("host '{}'", host.name),
                       "the GIC model needs CPUs numbered socket by socket with equal counts per socket");
  if (static_cast<int>(host.its.size()) != host.sockets)
    throw InputError(fmt::format("host '{}'", host.name), "the GIC model needs exactly one ITS per socket");
  for (std::size_t i = 0; i < host.its.size(); ++i)
    if (host.its[i].socket != static_cast<int>(i))
      throw InputError(fmt::format("host '{}': its[{}]", host.name, i),
                       "the GIC model expects firmware order = socket order (ITS i on socket i)");
  gic::SocketTopology t;
  t.sockets = host.sockets;
  t.cpus_per_socket = per_socket;
  const int aff = host.gic_common_lpi_aff.value_or(1);
  t.scope = aff == 0 ? gic::VpeTableScope::System : gic::VpeTableScope::PerSocket;
  t.level = aff == 1 ? gic::SocketAffinityLevel::Aff3 : gic::SocketAffinityLevel::Aff2;
  system_ = std::make_unique<gic::GicSystem>(gic::build_socket_topology(t));
  driver_ = std::make_unique<gic::LinuxItsDriver>(*system_);
  for (const auto& v : vm.vcpus) {
    const auto vpeid = static_cast<std::uint16_t>(v.cpu);
    driver_->map_vpe(vpeid, v.pcpu);
    driver_->schedule_vpe(v.pcpu, vpeid);
    for (std::uint8_t sgi = 0; sgi < 16; ++sgi)
      driver_->configure_vsgi(policy_, v.pcpu, vpeid, sgi, gic::VsgiConfig{true, 0xA0, true});
  }
}

gic::ItsChoice VsgiPath::choice(unsigned sender) const {
  return driver_->choose_sgir_its(vm_->pcpu_of(static_cast<int>(sender)), policy_);
}

int VsgiPath::its_count() const { return static_cast<int>(system_->its_count()); }

SendPlan VsgiPath::plan(const Pricer& pr, unsigned sender, unsigned target, std::uint8_t vintid) {
  SendPlan p;
  p.counters["sends"] = 1;
  const int spcpu = vm_->pcpu_of(static_cast<int>(sender));
  const gic::VsgiRoute r = driver_->send_vsgi(policy_, spcpu, static_cast<std::uint16_t>(target), vintid);
  p.sender.push_back(pr.step(kSender, "ICC_SGI1R_EL1 write traps to EL2", "gic.sgi_trap_entry"));
  p.sender.push_back(pr.step(kSender, "vgic_v3_dispatch_sgi -> its_sgi_set_irqchip_state", "gic.vgic_dispatch_sgi"));
  ++p.counters["vm_exits"];
  ++p.counters["sgir_writes"];
  if (r.its < 0 || !r.write.accepted()) {
    p.lost.push_back(static_cast<int>(target));
    p.counters["lost"] = 1;
    p.notes.push_back(fmt::format("GITS_SGIR write from pCPU {} was not accepted", spcpu));
    return p;
  }
  PlannedDelivery d;
  d.target_cpu = static_cast<int>(target);
  d.after_sender_step = p.sender.size() - 1;
  d.path.push_back(pr.step("in flight", r.its_local ? "GITS_SGIR write to the local ITS" : "GITS_SGIR write to a remote-socket ITS",
                           r.its_local ? "its.sgir_write_local" : "its.sgir_write_remote", 1, Lane::Wire));
  d.path.push_back(pr.step("ITS", "vPE table lookup, forward to the RD", "its.sgir_process", 1, Lane::ItsPort, r.its));
  d.path.push_back(pr.step("in flight", r.its_to_rd_local() ? "ITS -> redistributor, same socket" : "ITS -> redistributor, across sockets",
                           r.its_to_rd_local() ? "its.rd_hop_local" : "its.rd_hop_remote", 1, Lane::Wire));
  d.path.push_back(pr.step("RD", "vSGI pending -> vCPU interface", "gic.rd_vsgi_pending", 1, Lane::Wire));
  p.deliveries.push_back(std::move(d));
  p.sender.push_back(pr.step(kSender, "return from the trap, ERET to the guest", "gic.sgi_trap_return"));
  if (r.its_local) ++p.counters["its_local"];
  else ++p.counters["its_remote"];
  return p;
}

}  // namespace ipilab::workload
