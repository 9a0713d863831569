// hyperv: a Linux guest's Hyper-V enlightened IPIs (arch/x86/hyperv/hv_apic.c, the policies of
// src/hv/guest_send.h per kernel version) against the partition's host side (src/hv/partition.h, KVM's
// validation order). Native fallbacks go out as x2APIC physical ICR writes (orig_apic of a Hyper-V
// guest). The guest's view of the VM (VP indexes, NR_CPUS) comes from topology::Vm.
//
// Pricing (cost keys, src/cost/catalog.h):
//   every send        guest.ipi_path_call
//   guest work        guest.cpumask_word per on-stack cpumask word zeroed (CPU_MASK_NONE), per cpumask
//                     word scanned, per vpset bank word cleared/built; guest.vp_index_lookup;
//                     guest.irq_save_restore (WorkRecord, src/hv/guest_record.h)
//   a hypercall       vm.exit_entry + hv.hypercall_entry_exit, then fast: hv.fast_input_decode, or
//                     slow: hv.slow_input_map + hv.slow_input_copy_per_8b per input QWORD read +
//                     hv.vpset_bank_decode per bank read (HostWork); hv.ipi_post_per_target per
//                     delivered VP — each delivery leaves after its own post step (all on the sender's
//                     pCPU, Lane::Exit)
//   fallbacks         as x2apic-physical (x86_common.h)
#include <algorithm>

#include <fmt/format.h>

#include "common/error.h"
#include "hv/guest_send.h"
#include "hv/oracle.h"
#include "hv/partition.h"
#include "workload/mechanisms/builtin.h"
#include "workload/mechanisms/x86_common.h"

namespace ipilab::workload {
namespace {

using namespace cost::keys;
constexpr std::string_view kSender = "sender";

constexpr std::string_view kOneVersions[] = {"pre-seed", "seed-v2", "seed-v3", "mainline"};
constexpr std::string_view kMaskVersions[] = {"v5.4", "exclude-self-unfixed", "mainline"};

const ChoiceParam kSendIpiOne{"send_ipi_one", "mainline", kOneVersions,
                              "__send_ipi_one version: pre-seed (v5.4, cpumask on the stack), seed-v2 (tests the "
                              "CPU number), seed-v3 / mainline (tests the VP number)"};
const ChoiceParam kMaskPath{"mask_path", "mainline", kMaskVersions,
                            "__send_ipi_mask[_ex] version: v5.4, exclude-self-unfixed (Sep 2021), mainline",
                            "\"v5.4\" for pre-seed/seed-v2/seed-v3, else \"mainline\""};
const BoolParam kHypercallPage{"hypercall_page", true,
                               "hv_hypercall_pg present (false: every send falls back to the APIC)"};
const BoolParam kExMasks{"ex_processor_masks", true,
                         "HV_X64_EX_PROCESSOR_MASKS_RECOMMENDED (false: VP >= 64 falls back)"};
const BoolParam kOffstack{"cpumask_offstack", false, "CONFIG_CPUMASK_OFFSTACK (scans stop at nr_cpu_ids)",
                          "NR_CPUS > 512"};

void work_step(SendPlan& p, Pricer& pr, std::string_view what, cost::CostKey key, std::uint64_t n) {
  if (n == 0) return;
  p.sender.push_back(pr.step(kSender, what, key, static_cast<std::uint32_t>(n)));
}

std::string cpu_list(const std::vector<unsigned>& v) {
  std::string t;
  for (unsigned c : v) t += (t.empty() ? "" : ",") + std::to_string(c);
  return t;
}

class HyperV final : public Mechanism {
 public:
  explicit HyperV(MechanismContext& ctx)
      : host_(&ctx.host), vm_(&ctx.vm), pricer_(&ctx.pricer), xvm_(x86_view(ctx.vm)) {
    const topology::Vm& vm = ctx.vm;
    const Params& params = ctx.params;
    hv::GuestConfig cfg = hv::GuestConfig::identity(static_cast<unsigned>(vm.size()), static_cast<unsigned>(vm.nr_cpus));
    for (const auto& v : vm.vcpus) cfg.hv_vp_index[static_cast<std::size_t>(v.cpu)] = v.vp_index;
    cfg.hypercall_page = params.get(kHypercallPage);
    cfg.ex_processor_masks_recommended = params.get(kExMasks);
    if (params.has(kOffstack.name)) cfg.cpumask_offstack = params.get(kOffstack);
    one_ = params.get(kSendIpiOne);
    mask_ = params.get(kMaskPath, one_ == "mainline" ? "mainline" : "v5.4");
    hv::GuestPolicy policy;
    policy.send_ipi_one = one_ == "pre-seed"  ? hv::SendIpiOneVersion::kPreSeed
                          : one_ == "seed-v2" ? hv::SendIpiOneVersion::kSeedV2
                                              : hv::SendIpiOneVersion::kSeedV3;
    policy.mask_path = mask_ == "v5.4"                   ? hv::MaskPathVersion::kV54
                       : mask_ == "exclude-self-unfixed" ? hv::MaskPathVersion::kExcludeSelfUnfixed
                                                         : hv::MaskPathVersion::kMainline;
    try {
      guest_ = std::make_unique<hv::LinuxHvGuest>(cfg, policy);
    } catch (const InputError& e) {
      throw InputError(params.place("mechanism"), fmt::format("the Hyper-V guest configuration is invalid: {}", e.what()));
    }
    partition_ = std::make_unique<hv::Partition>(hv::partition_config_for(guest_->config()));
    offstack_ = guest_->config().cpumask_offstack;
    arrival_ = x86_arrival(*pricer_);
  }

  SendPlan plan(const SendRequest& r) override {
    Pricer& pr = *pricer_;
    hv::SendRequest req;
    req.sender_cpu = r.sender;
    req.vector = r.vector;
    if (r.addressing == Addressing::One) {
      req.hook = hv::SendHook::kSendIpi;
      req.target_cpu = r.targets[0];
    } else {
      hv::Cpumask m(static_cast<unsigned>(vm_->nr_cpus));
      for (unsigned t : r.targets) m.set(t);
      if (r.addressing == Addressing::MaskAllButSelf) m.set(r.sender);
      req.hook = r.addressing == Addressing::Mask ? hv::SendHook::kSendIpiMask : hv::SendHook::kSendIpiMaskAllButSelf;
      req.mask = m;
    }
    const hv::GuestHostSend s = hv::run_on_partition(*guest_, *partition_, req);
    const hv::WorkRecord& w = s.send.work;

    SendPlan p;
    p.sender.push_back(pr.step(kSender, "enter the apic->send_IPI* hook", guest_ipi_path_call));
    work_step(p, pr, "CPU_MASK_NONE: zero the on-stack cpumask", guest_cpumask_word, (w.stack_cpumask_bytes_zeroed + 7) / 8);
    work_step(p, pr, "cpumask helpers (empty/last/for_each/set...)", guest_cpumask_word, w.cpumask_words.total());
    work_step(p, pr, "hv_cpu_number_to_vp_number", guest_vp_index_lookup, w.vp_lookups);
    work_step(p, pr, "local_irq_save/restore", guest_irq_save_restore, w.irq_save_restore);
    work_step(p, pr, "cpumask_to_vpset: bank words cleared and built", guest_cpumask_word,
              w.vpset_banks_cleared + w.vpset_banks_built);

    std::vector<bool> got(static_cast<std::size_t>(vm_->size()), false);
    auto intended = [&](unsigned cpu) {
      return std::find(s.send.intended_cpus.begin(), s.send.intended_cpus.end(), cpu) != s.send.intended_cpus.end();
    };
    for (std::size_t i = 0; i < s.send.hypercalls.size() && i < s.outcomes.size(); ++i) {
      const hv::HypercallOutcome& o = s.outcomes[i];
      const std::string name(hv::call_code_name(o.control.call_code));
      p.sender.push_back(pr.step(kSender, "VM exit for the hypercall", vm_exit_entry, 1, Lane::Exit));
      p.sender.push_back(pr.step(kSender, "hypercall dispatch and return", hv_hypercall_entry_exit, 1, Lane::Exit));
      add_counter(p, pr, "hypercalls");
      add_counter(p, pr, "hypercalls." + name);
      add_counter(p, pr, "vm_exits");
      if (o.control.fast) {
        p.sender.push_back(pr.step(kSender, "fast hypercall: read inputs from registers", hv_fast_input_decode, 1, Lane::Exit));
      } else {
        p.sender.push_back(pr.step(kSender, "slow hypercall: map the input page", hv_slow_input_map, 1, Lane::Exit));
        if (o.work.guest_bytes_read / 8)
          p.sender.push_back(pr.step(kSender, "slow hypercall: read input QWORDs", hv_slow_input_copy_per_8b,
                                     static_cast<std::uint32_t>(o.work.guest_bytes_read / 8), Lane::Exit));
        if (o.work.banks_read)
          p.sender.push_back(pr.step(kSender, "decode sparse vpset banks", hv_vpset_bank_decode,
                                     static_cast<std::uint32_t>(o.work.banks_read), Lane::Exit));
      }
      if (!o.success()) add_counter(p, pr, "hypercalls_failed");
      for (const auto& d : o.delivered) {
        p.sender.push_back(pr.step(kSender, "post the vector to one target VP", hv_ipi_post_per_target, 1, Lane::Exit));
        const int cpu = vm_->cpu_of_vp_index(d.vp_index);
        if (cpu < 0) {
          add_counter(p, pr, "misdelivered");  // a VP no guest CPU owns: nobody gets it
          continue;
        }
        PlannedDelivery pd;
        pd.target_cpu = cpu;
        pd.after_sender_step = static_cast<std::uint32_t>(p.sender.size() - 1);
        pd.intended = intended(static_cast<unsigned>(cpu));
        const int from = host_->cpu(vm_->pcpu_of(static_cast<int>(r.sender))).node;
        const int to = host_->cpu(vm_->pcpu_of(cpu)).node;
        if (auto st = interconnect_step(pr, *host_, from, to, "interrupt notification to the target's CPU"))
          pd.path.push_back(*st);
        p.deliveries.push_back(std::move(pd));
        got[static_cast<std::size_t>(cpu)] = true;
      }
    }
    if (s.send.native) {
      add_counter(p, pr, "native_fallbacks");
      const hv::NativeSend& n = *s.send.native;
      std::vector<unsigned> cpus(n.cpus.begin(), n.cpus.end());
      x86::GuestSend gs;
      x86::LinuxKvmGuestConfig cfg;  // orig_apic of a Hyper-V guest: x2APIC physical, no PV
      if (n.hook == hv::SendHook::kSendIpi || n.hook == hv::SendHook::kSendIpiSelf) {
        gs = x86::linux_send_ipi(xvm_, cfg, cpus.empty() ? r.sender : cpus[0], static_cast<std::uint8_t>(n.vector));
      } else {
        x86::Cpumask m(xvm_.nr_vcpus());
        for (unsigned c : cpus) m.set(c);
        gs = x86::linux_send_ipi_mask(xvm_, cfg, r.sender, m, static_cast<std::uint8_t>(n.vector), false);
      }
      SendPlan native;
      price_x86_send(native, pr, *host_, *vm_, xvm_, r.sender, gs, {});
      const auto base = static_cast<std::uint32_t>(p.sender.size());
      for (auto& st : native.sender) p.sender.push_back(st);
      for (auto d : native.deliveries) {
        d.after_sender_step += base;
        d.intended = intended(static_cast<unsigned>(d.target_cpu));
        got[static_cast<std::size_t>(d.target_cpu)] = true;
        p.deliveries.push_back(std::move(d));
      }
      for (const auto& [id, v] : native.counters) {
        bool merged = false;
        for (auto& [cid, cv] : p.counters)
          if (cid == id) {
            cv += v;
            merged = true;
          }
        if (!merged) p.counters.emplace_back(id, v);
      }
    }
    std::string reason;
    if (!s.oracle.ok()) {
      std::vector<unsigned> miss(s.oracle.missing.begin(), s.oracle.missing.end());
      std::vector<unsigned> extra(s.oracle.extra.begin(), s.oracle.extra.end());
      std::vector<unsigned> targets(r.targets.begin(), r.targets.end());
      reason = fmt::format("oracle: CPU {} -> {{{}}}: lost {{{}}}, misdelivered {{{}}} (send_ipi_one = {})", r.sender,
                           cpu_list(targets), cpu_list(miss), cpu_list(extra), one_);
      p.notes.push_back(reason);
    }
    for (unsigned cpu : s.send.intended_cpus)
      if (!got[cpu]) p.lost.push_back({static_cast<int>(cpu), reason.empty() ? "no hypercall or fallback reached it" : reason});
    return p;
  }

  const ArrivalSteps& arrival() const override { return arrival_; }

  std::vector<std::pair<std::string, std::string>> settings() const override {
    return {{"mechanism", "hyperv"},
            {"send_ipi_one", one_},
            {"mask_path", mask_},
            {"NR_CPUS", std::to_string(vm_->nr_cpus)},
            {"CPUMASK_OFFSTACK", offstack_ ? "y" : "n"}};
  }

 private:
  const topology::Host* host_;
  const topology::Vm* vm_;
  Pricer* pricer_;
  x86::X86Vm xvm_;
  std::string one_, mask_;
  bool offstack_ = false;
  std::unique_ptr<hv::LinuxHvGuest> guest_;
  std::unique_ptr<hv::Partition> partition_;
  ArrivalSteps arrival_;
};

}  // namespace

MechanismInfo describe_hyperv() {
  std::vector<cost::CostKey> keys = x86_icr_cost_keys();
  for (cost::CostKey k : {guest_vp_index_lookup, guest_irq_save_restore, hv_hypercall_entry_exit, hv_fast_input_decode,
                          hv_slow_input_map, hv_slow_input_copy_per_8b, hv_vpset_bank_decode, hv_ipi_post_per_target})
    keys.push_back(k);
  return {"hyperv",
          Arch::X86,
          "Hyper-V enlightened IPIs: Linux hv_apic.c (per kernel version) -> HvCallSendSyntheticClusterIpi[Ex], "
          "falling back to x2APIC physical ICR writes",
          {info(kSendIpiOne), info(kMaskPath), info(kHypercallPage), info(kExMasks), info(kOffstack)},
          keys,
          [](MechanismContext& ctx) { return std::make_unique<HyperV>(ctx); }};
}

}  // namespace ipilab::workload
