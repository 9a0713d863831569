// hyperv: a Linux guest's Hyper-V enlightened IPIs (arch/x86/hyperv/hv_apic.c, the policies of
// src/hv/guest_send.h per kernel version) against the partition's host side (src/hv/partition.h, KVM's
// validation order per KVM version). Native fallbacks go out as x2APIC physical ICR writes (orig_apic
// of a Hyper-V guest). The guest's view of the VM (VP indexes, NR_CPUS) comes from topology::Vm.
//
// Versions: `linux` names the guest's hv_apic.c as `ipilab hv send --linux` does (v5.4, seed-v2,
// v5.10, exclude-self-unfixed, mainline; src/hv/guest_policy.h), `kvm` the host's hyperv.c as
// `ipilab hv call --kvm` does (v5.15, v5.16, v5.18, mainline; src/hv/kvm_version.h). The older
// parameters send_ipi_one / mask_path still work: each pair that is a named version maps onto it
// (pre-seed -> v5.4, seed-v2 -> seed-v2, seed-v3 -> v5.10, mainline -> mainline; mask_path
// exclude-self-unfixed -> exclude-self-unfixed); a pair no kernel ever had is refused.
//
// The host is the one `ipilab hv send` models (hv::guest_host_for): one KVM vCPU per guest CPU whose
// VP index a KVM host can hold. A CPU with VP_INVAL or a VP index >= 4096 has no vCPU there, so a
// hypercall never reaches it (only a native fallback does); if such a CPU issues a hypercall the
// host cannot run it, which is a bad input naming its vm.vp_index. Repeated VP indices: every vCPU
// holding a targeted index receives (kvm_hv_send_ipi_to_many), so the ones not asked for count as
// misdelivered.
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
//
// The first send the core plans is kept as the run's sample hypercall (RunResult::sample_hypercall):
// its exact registers and input QWORDs, rendered as `ipilab hv send` renders them, with the `hv send`
// command that reproduces it.
#include <algorithm>
#include <array>
#include <limits>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/error.h"
#include "hv/cpulist.h"
#include "hv/guest_send.h"
#include "hv/oracle.h"
#include "hv/partition.h"
#include "hv/send_case.h"
#include "hv/send_tool.h"
#include "topology/toml_read.h"
#include "workload/mechanisms/builtin.h"
#include "workload/mechanisms/x86_common.h"
#include "workload/counters.h"

namespace ipilab::workload {
namespace {

using namespace cost::keys;
constexpr std::string_view kSender = "sender";

const EnumParam<hv::LinuxVersion> kLinux{"linux", hv::LinuxVersion::kMainline, hv::kLinuxVersionNames,
                         "the guest's arch/x86/hyperv/hv_apic.c, named as `ipilab hv send --linux` names it (`ipilab hv "
                         "send --linux list`); excludes send_ipi_one / mask_path",
                         "\"mainline\" (or what send_ipi_one / mask_path say)"};
const EnumParam<hv::KvmVersion> kKvm{"kvm", hv::KvmVersion::kMainline, hv::kKvmVersionNames,
                       "the host's arch/x86/kvm/hyperv.c, named as `ipilab hv call --kvm` names it (`ipilab hv call --kvm "
                       "list`; v5.17 = v5.16, v6.14 = mainline)"};
/// Names a guest policy preset: its __send_ipi_one, and the default of mask_path.
const EnumParam<hv::GuestPolicy> kSendIpiOne{"send_ipi_one", hv::GuestPolicy::mainline(), hv::kGuestPolicyPresets,
                              "older spelling of linux, the __send_ipi_one version: pre-seed (= linux v5.4), seed-v2, "
                              "seed-v3 (= v5.10), mainline"};
const EnumParam<hv::MaskPathVersion> kMaskPath{"mask_path", hv::MaskPathVersion::kMainline, hv::kMaskPathNames,
                            "older spelling of linux, the __send_ipi_mask[_ex] version: v5.4, exclude-self-unfixed (Sep "
                            "2021), mainline; with send_ipi_one it must name a Linux version",
                            "\"v5.4\" for pre-seed/seed-v2/seed-v3, else \"mainline\""};
const BoolParam kHypercallPage{"hypercall_page", true,
                               "hv_hypercall_pg present (false: every send falls back to the APIC)"};
const BoolParam kExMasks{"ex_processor_masks", true,
                         "HV_X64_EX_PROCESSOR_MASKS_RECOMMENDED (false: VP >= 64 falls back)"};
const BoolParam kOffstack{"cpumask_offstack", false, "CONFIG_CPUMASK_OFFSTACK (scans stop at nr_cpu_ids)",
                          "NR_CPUS > 512"};
const ParamInfo kPresentInfo{"present", "cpulist",
                             "every vCPU",
                             "cpu_present_mask: a cpulist (\"0-3,8\", \"\" = none) or a list of guest CPUs"};
const ParamInfo kOnlineInfo{"online", "cpulist", "the present CPUs",
                            "cpu_online_mask (a subset of present); senders and targets must be online"};
const IntParam kMaxVp{"hv_max_vp_index", 0, 0, 0x7FFFFFFF,
                      "hv_max_vp_index (sizes the vpset: __cpumask_to_vpset gives up when it / 64 >= 64); at least "
                      "every VP index",
                      "the largest VP index"};

/// Adds `n` to the plan's counter `id` (as add_counter, by id).
void add_counter_id(SendPlan& p, CounterId id, std::uint64_t n = 1) {
  for (auto& [cid, v] : p.counters)
    if (cid == id) {
      v += n;
      return;
    }
  p.counters.emplace_back(id, n);
}

std::string cpu_list(const std::vector<unsigned>& v) { return hv::format_cpulist(v); }

/// The guest's Linux version from `linux`, or from the older send_ipi_one / mask_path pair.
hv::LinuxVersion resolve_linux(const Params& params) {
  const bool old = params.has(kSendIpiOne.name) || params.has(kMaskPath.name);
  if (params.has(kLinux.name)) {
    if (old)
      throw InputError(params.place(params.has(kSendIpiOne.name) ? kSendIpiOne.name : kMaskPath.name),
                       "give either linux or send_ipi_one / mask_path, not both (linux names both halves: e.g. "
                       "linux = \"v5.10\" is send_ipi_one = \"seed-v3\" with mask_path = \"v5.4\")");
    return params.get(kLinux);
  }
  const hv::GuestPolicy preset = params.get(kSendIpiOne);
  const hv::GuestPolicy policy{preset.send_ipi_one, params.get(kMaskPath, preset.mask_path)};
  for (const hv::LinuxVersionInfo* v = hv::linux_versions_begin(); v != hv::linux_versions_end(); ++v)
    if (v->policy == policy) return v->version;
  std::string named;
  for (const hv::LinuxVersionInfo* v = hv::linux_versions_begin(); v != hv::linux_versions_end(); ++v)
    named += fmt::format("{}{} = {} + {}", named.empty() ? "" : ", ", v->name, hv::to_string(v->policy.send_ipi_one),
                         hv::to_string(v->policy.mask_path));
  throw InputError(params.place(params.has(kMaskPath.name) ? kMaskPath.name : kSendIpiOne.name),
                   fmt::format("no Linux version has send_ipi_one \"{}\" with mask_path \"{}\" (the versions: {}); "
                               "name one with linux = \"...\"",
                               hv::policy_name(preset), hv::to_string(policy.mask_path), named));
}

/// A cpulist parameter (string in Linux notation, or a list of guest CPUs), ascending and unique.
std::optional<std::vector<unsigned>> cpus_param(const Params& params, std::string_view key, unsigned n) {
  if (!params.has(key)) return std::nullopt;
  const toml::node* node = params.table().get(key);
  std::vector<unsigned> out;
  if (node->is_string()) {
    out = hv::parse_cpulist(params.get_string(key, ""), n, params.place(key));
  } else if (node->is_array()) {
    for (std::int64_t c : params.get_int_list(key, {})) {
      if (c < 0 || c >= static_cast<std::int64_t>(n))
        throw InputError(params.place(key), fmt::format("CPU {} is not a guest CPU (0..{})", c, n - 1));
      out.push_back(static_cast<unsigned>(c));
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
  } else {
    throw InputError(params.place(key), fmt::format("expected a cpulist string (\"0-3,8\") or a list of CPUs, found {}",
                                                    toml_read::type_name(*node)));
  }
  return out;
}

std::string hex(std::uint64_t v) { return fmt::format("{:#x}", v); }

class HyperV final : public Mechanism {
 public:
  explicit HyperV(MechanismContext& ctx)
      : host_(&ctx.host), vm_(&ctx.vm), pricer_(&ctx.pricer), file_(ctx.params.file()), xvm_(x86_view(ctx.vm)) {
    const topology::Vm& vm = ctx.vm;
    const Params& params = ctx.params;
    const auto n = static_cast<unsigned>(vm.size());
    linux_ = resolve_linux(params);
    kvm_ = params.get(kKvm);
    const hv::LinuxVersionInfo& lv = hv::linux_version_info(linux_);

    // The guest, built the way hv::run_send_case builds it (so the sample's `hv send` command is exact).
    hv::GuestConfig& g = cfg_;
    if (vm.nr_cpus < 1 || vm.nr_cpus > static_cast<int>(hv::kMaxNrCpus))
      throw InputError(params.place("mechanism"),
                       fmt::format("the hyperv mechanism models CONFIG_NR_CPUS 1..{}; vm.nr_cpus is {}", hv::kMaxNrCpus, vm.nr_cpus));
    g.nr_cpus = static_cast<unsigned>(vm.nr_cpus);
    const bool kconfig_offstack = g.nr_cpus > 512;  // x86_64 Kconfig: NR_CPUS > 512 needs CPUMASK_OFFSTACK
    g.cpumask_offstack = params.has(kOffstack.name) ? params.get(kOffstack) : kconfig_offstack;
    offstack_as_kconfig_ = g.cpumask_offstack == kconfig_offstack;
    g.bits_rule = linux_ == hv::LinuxVersion::kMainline ? hv::CpumaskBitsRule::kSmallLarge : hv::CpumaskBitsRule::kNrCpumaskBits;
    g.nr_cpu_ids = n;
    g.hv_vp_index.resize(n);
    for (const auto& v : vm.vcpus) g.hv_vp_index[static_cast<std::size_t>(v.cpu)] = v.vp_index;
    std::uint32_t largest = 0;
    for (std::uint32_t vp : g.hv_vp_index)
      if (vp != hv::VP_INVAL) largest = std::max(largest, vp);
    if (params.has(kMaxVp.name)) {
      const auto m = static_cast<std::uint32_t>(params.get(kMaxVp));
      if (m < largest)
        throw InputError(params.place(kMaxVp.name),
                         fmt::format("{} is below the VP index {} of a vCPU: hv_common_cpu_init raises hv_max_vp_index to "
                                     "every VP index it reads",
                                     m, largest));
      g.hv_max_vp_index = m;
    }
    if (auto p = cpus_param(params, "present", n)) {
      g.present = *p;
      present_given_ = true;
    } else {
      for (unsigned c = 0; c < n; ++c) g.present.push_back(c);
    }
    if (auto o = cpus_param(params, "online", n)) {
      for (unsigned c : *o)
        if (!std::binary_search(g.present.begin(), g.present.end(), c))
          throw InputError(params.place("online"),
                           fmt::format("CPU {} is online but not present (cpu_online_mask is a subset of cpu_present_mask)", c));
      g.online = *o;
      online_given_ = true;
    } else {
      g.online = g.present;
    }
    g.hypercall_page = params.get(kHypercallPage);
    g.ex_processor_masks_recommended = params.get(kExMasks);
    online_place_ = params.place(online_given_ ? "online" : present_given_ ? "present" : "mechanism");
    online_bit_.assign(n, false);
    for (unsigned c : g.online)
      if (c < n) online_bit_[c] = true;
    try {
      g.validate();
      guest_ = std::make_unique<hv::LinuxHvGuest>(g, lv.policy);
    } catch (const InputError& e) {
      throw InputError(params.place("mechanism"), fmt::format("the Hyper-V guest configuration is invalid: {}", e.what()));
    }
    host_map_ = hv::guest_host_for(guest_->config(), kvm_);
    if (!host_map_.config.vp_index_of_vcpu.empty()) partition_.emplace(host_map_.config);
    arrival_ = x86_arrival(*pricer_, params);
    x86_preempted_arrival(arrival_, *pricer_, ctx.vm);
  }

  // Which guest CPUs one send reached so far, and which it was meant to reach.
  struct Reach {
    std::vector<bool> got, asked;
    bool intended(unsigned cpu) const { return cpu < asked.size() && asked[cpu]; }
  };
  // A CPU reached twice (hypercall and fallback) gets the second one as an extra interrupt.
  bool first_time(SendPlan& p, Reach& reach, unsigned cpu) {
    const bool first = !reach.got[cpu];
    reach.got[cpu] = true;
    if (!first) count(p, kDuplicated, counters::duplicated);
    return first;
  }

  SendPlan plan(const SendRequest& r) override {
    const hv::SendRequest req = guest_request(r);
    hv::GuestHostSend s = send(req);
    SendPlan p;
    price_guest_work(p, s.send.work);
    Reach reach{std::vector<bool>(static_cast<std::size_t>(vm_->size()), false),
                std::vector<bool>(static_cast<std::size_t>(vm_->size()), false)};
    for (unsigned cpu : s.send.intended_cpus)
      if (cpu < reach.asked.size()) reach.asked[cpu] = true;
    for (std::size_t i = 0; i < s.send.hypercalls.size() && i < s.outcomes.size(); ++i)
      price_hypercall(p, s.outcomes[i], r, reach);
    if (s.send.native) {
      count(p, kNative, counters::native_fallbacks);
      price_native_fallback(p, *s.send.native, r, reach);
    }
    note_oracle(p, r, s);
    if (!sample_) sample_.emplace(Sample{req, std::move(s)});
    return p;
  }

  // The guest side's request for the core's send: apic->send_IPI for one target, else a cpumask.
  hv::SendRequest guest_request(const SendRequest& r) {
    hv::SendRequest req;
    req.sender_cpu = r.sender;
    req.vector = r.vector;
    check_online(r.sender, "sends");
    for (unsigned t : r.targets) check_online(t, "is sent an IPI");
    if (r.addressing == Addressing::One) {
      req.hook = hv::SendHook::kSendIpi;
      req.target_cpu = r.targets[0];
    } else {
      hv::Cpumask& m = req.mask.emplace(static_cast<unsigned>(vm_->nr_cpus));
      for (unsigned t : r.targets) m.set(t);
      if (r.addressing == Addressing::MaskAllButSelf) m.set(r.sender);
      req.hook = r.addressing == Addressing::Mask ? hv::SendHook::kSendIpiMask : hv::SendHook::kSendIpiMaskAllButSelf;
    }
    return req;
  }

  // What the guest did before any hypercall (the WorkRecord's counts, priced per word or lookup).
  void price_guest_work(SendPlan& p, const hv::WorkRecord& w) {
    p.sender.push_back(site(kEnter, "enter the apic->send_IPI* hook", guest_ipi_path_call));
    work_step(p, kMaskNone, "CPU_MASK_NONE: zero the on-stack cpumask", guest_cpumask_word, (w.stack_cpumask_bytes_zeroed + 7) / 8);
    work_step(p, kHelpers, "cpumask helpers (empty/last/for_each/set...)", guest_cpumask_word, w.cpumask_words.total());
    work_step(p, kVpLookup, "hv_cpu_number_to_vp_number", guest_vp_index_lookup, w.vp_lookups);
    work_step(p, kIrq, "local_irq_save/restore", guest_irq_save_restore, w.irq_save_restore);
    work_step(p, kVpset, "cpumask_to_vpset: bank words cleared and built", guest_cpumask_word,
              w.vpset_banks_cleared + w.vpset_banks_built);
  }

  // One hypercall: the exit and dispatch, its input decoding, and one post per delivered VP.
  void price_hypercall(SendPlan& p, const hv::HypercallOutcome& o, const SendRequest& r, Reach& reach) {
    p.sender.push_back(site(kExit, "VM exit for the hypercall", vm_exit_entry, 1, Lane::Exit));
    p.sender.push_back(site(kDispatch, "hypercall dispatch and return", hv_hypercall_entry_exit, 1, Lane::Exit));
    count(p, kHypercalls, counters::hypercalls);
    add_counter_id(p, call_counter(o.control.call_code));
    count(p, kVmExits, counters::vm_exits);
    if (o.control.fast) {
      p.sender.push_back(site(kFast, "fast hypercall: read inputs from registers", hv_fast_input_decode, 1, Lane::Exit));
    } else {
      p.sender.push_back(site(kMap, "slow hypercall: map the input page", hv_slow_input_map, 1, Lane::Exit));
      if (o.work.guest_bytes_read / 8)
        p.sender.push_back(site(kCopy, "slow hypercall: read input QWORDs", hv_slow_input_copy_per_8b,
                                o.work.guest_bytes_read / 8, Lane::Exit));
      if (o.work.banks_read)
        p.sender.push_back(site(kBanks, "decode sparse vpset banks", hv_vpset_bank_decode, o.work.banks_read, Lane::Exit));
    }
    if (!o.success()) count(p, kFailed, counters::hypercalls_failed);
    // The post step and each target node's interconnect step are priced once per send, on first
    // use (so the breakdown registers its rows in the same order as pricing every delivery would).
    p.sender.reserve(p.sender.size() + o.delivered.size());
    p.deliveries.reserve(p.deliveries.size() + o.delivered.size());
    for (const auto& d : o.delivered) {
      p.sender.push_back(site(kPost, "post the vector to one target VP", hv_ipi_post_per_target, 1, Lane::Exit));
      const unsigned cpu = host_map_.cpu_of_vcpu.at(d.vcpu);  // every vCPU of the host is a guest CPU
      PlannedDelivery pd;
      pd.target_cpu = static_cast<int>(cpu);
      pd.after_sender_step = static_cast<std::uint32_t>(p.sender.size() - 1);
      pd.intended = first_time(p, reach, cpu) && reach.intended(cpu);
      if (const std::optional<PlanStep>& st = hop(r.sender, cpu)) pd.path.push_back(*st);
      p.deliveries.push_back(std::move(pd));
    }
  }

  // The APIC fallback, priced as x2apic-physical (the orig_apic of a Hyper-V guest).
  void price_native_fallback(SendPlan& p, const hv::NativeSend& n, const SendRequest& r, Reach& reach) {
    Pricer& pr = *pricer_;
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
      const auto cpu = static_cast<unsigned>(d.target_cpu);
      d.intended = first_time(p, reach, cpu) && reach.intended(cpu);
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

  // The oracle's verdict on a wrong send: a note, and the intended CPUs it lost.
  void note_oracle(SendPlan& p, const SendRequest& r, const hv::GuestHostSend& s) {
    std::string reason;
    if (!s.oracle.ok()) {
      std::vector<unsigned> targets(r.targets.begin(), r.targets.end());
      reason = fmt::format("oracle: CPU {} -> {{{}}}: lost {{{}}}, misdelivered {{{}}}{} (linux {}, KVM {})", r.sender,
                           cpu_list(targets), cpu_list(s.oracle.missing), cpu_list(s.oracle.extra),
                           s.oracle.duplicated.empty() ? "" : fmt::format(", twice {{{}}}", cpu_list(s.oracle.duplicated)),
                           hv::linux_version_info(linux_).name, hv::kvm_version_name(kvm_));
      p.notes.push_back(reason);
  }
  for (unsigned cpu : s.oracle.missing) p.lost.push_back({static_cast<int>(cpu), reason});
  }

  const ArrivalSteps& arrival() const override { return arrival_; }

  std::vector<std::pair<std::string, std::string>> settings() const override {
    std::vector<std::pair<std::string, std::string>> s{{"mechanism", "hyperv"},
                                                       {"linux", std::string(hv::linux_version_info(linux_).name)},
                                                       {"kvm", std::string(hv::kvm_version_name(kvm_))},
                                                       {"NR_CPUS", std::to_string(vm_->nr_cpus)},
                                                       {"CPUMASK_OFFSTACK", cfg_.cpumask_offstack ? "y" : "n"}};
    if (present_given_) s.emplace_back("present", cpu_list(cfg_.present));
    if (online_given_) s.emplace_back("online", cpu_list(cfg_.online));
    if (cfg_.hv_max_vp_index) s.emplace_back("hv_max_vp_index", std::to_string(*cfg_.hv_max_vp_index));
    return s;
  }

  std::vector<std::string> notes() const override {
    std::vector<std::string> out;
    if (!host_map_.inval_cpus.empty())
      out.push_back(fmt::format("CPU {} has VP_INVAL (vm.vp_index = \"inval\"): no KVM vCPU holds it, so a hypercall "
                                "cannot name it; Linux falls back to the native APIC for it",
                                cpu_list(host_map_.inval_cpus)));
    if (!host_map_.beyond_cpus.empty())
      out.push_back(fmt::format("CPU {}: VP index >= 4096, which no KVM vCPU can have (HV_X64_MSR_VP_INDEX must be below "
                                "KVM_MAX_VCPUS = 4096): a hypercall cannot reach it (a lost IPI to it is the KVM host's "
                                "limit, not the guest's doing)",
                                cpu_list(host_map_.beyond_cpus)));
    return out;
  }

  std::optional<SampleHypercall> sample_hypercall() const override {
    if (!sample_) return std::nullopt;
    const hv::SendRequest& req = sample_->request;
    // The equivalent `hv send` case (send_case.h): same guest, same host, same hook.
    hv::SendCase c;
    c.linux_version = linux_;
    c.kvm_version = kvm_;
    c.cpu_vp = cfg_.hv_vp_index;
    if (present_given_) c.present = cfg_.present;
    if (online_given_) c.online = cfg_.online;
    c.max_vp_index = cfg_.hv_max_vp_index;
    c.nr_cpus = cfg_.nr_cpus;
    c.ex_processor_masks = cfg_.ex_processor_masks_recommended;
    c.hypercall_page = cfg_.hypercall_page;
    c.hook = req.hook;
    c.self = req.sender_cpu;
    c.vector = req.vector;
    c.target_cpu = req.target_cpu;
    if (req.mask)
      for (unsigned cpu = 0; cpu < cfg_.nr_cpu_ids; ++cpu)
        if (req.mask->test(cpu)) c.mask.push_back(cpu);

    hv::SendCaseRun run;
    if (offstack_as_kconfig_) {
      // What `ipilab hv send` computes for the same case; it must be what the simulation sent.
      run = hv::run_send_case(c);
      const hv::SendResult& mine = sample_->result.send;
      bool same = run.send.hypercalls.size() == mine.hypercalls.size() && run.send.native.has_value() == mine.native.has_value() &&
                  run.send.work == mine.work;
      for (std::size_t i = 0; same && i < mine.hypercalls.size(); ++i)
        same = run.send.hypercalls[i].regs.rcx == mine.hypercalls[i].regs.rcx &&
               run.send.hypercalls[i].regs.rdx == mine.hypercalls[i].regs.rdx &&
               run.send.hypercalls[i].regs.r8 == mine.hypercalls[i].regs.r8 &&
               run.send.hypercalls[i].input == mine.hypercalls[i].input && run.send.hypercalls[i].result == mine.hypercalls[i].result;
      if (same && mine.native) same = run.send.native->cpus == mine.native->cpus && run.send.native->hook == mine.native->hook;
      if (!same)
        throw std::logic_error("hyperv: the sample send differs from what `ipilab hv send` computes for the same case");
    } else {
      run.guest = guest_->config();
      run.policy = guest_->policy();
      run.host_map = host_map_;
      run.send = sample_->result.send;
      for (const auto& o : sample_->result.outcomes) run.host.emplace_back(o);
      run.oracle = sample_->result.oracle;
      run.notes = notes();
    }

    SampleHypercall out;
    out.call = fmt::format("CPU {}: apic->{}", req.sender_cpu, hook_call(c));
    if (offstack_as_kconfig_) {
      out.command = fmt::format("ipilab hv send --linux {} --kvm {} --cpu-vp {}", hv::linux_version_info(linux_).name,
                                hv::kvm_version_name(kvm_), vp_list());
      if (present_given_) out.command += fmt::format(" --present '{}'", cpu_list(cfg_.present));
      if (online_given_) out.command += fmt::format(" --online '{}'", cpu_list(cfg_.online));
      if (cfg_.hv_max_vp_index) out.command += fmt::format(" --max-vp-index {}", *cfg_.hv_max_vp_index);
      if (cfg_.nr_cpus != 8192) out.command += fmt::format(" --nr-cpus {}", cfg_.nr_cpus);
      if (!cfg_.ex_processor_masks_recommended) out.command += " --no-ex-masks";
      if (!cfg_.hypercall_page) out.command += " --no-hypercall-page";
      out.command += fmt::format(" --self {} ", req.sender_cpu);
      switch (req.hook) {
        case hv::SendHook::kSendIpi: out.command += fmt::format("--send-ipi {}", req.target_cpu); break;
        case hv::SendHook::kSendIpiMask: out.command += fmt::format("--send-ipi-mask '{}'", cpu_list(c.mask)); break;
        default: out.command += fmt::format("--send-ipi-mask-allbutself '{}'", cpu_list(c.mask)); break;
      }
      out.command += fmt::format(" --vector {:x}", req.vector);
    } else {
      out.no_command_reason = "cpumask_offstack differs from NR_CPUS > 512, which `ipilab hv send` assumes";
    }
    out.text = hv::tool::send_text(c, run);
    nlohmann::ordered_json j;
    nlohmann::ordered_json send;
    send["sender"] = req.sender_cpu;
    send["hook"] = std::string(hv::hook_name(req.hook));
    if (req.hook == hv::SendHook::kSendIpi) send["cpus"] = std::vector<unsigned>{req.target_cpu};
    else send["cpus"] = c.mask;
    send["vector"] = hex(req.vector);
    j["call"] = send;
    j["linux"] = std::string(hv::linux_version_info(linux_).name);
    j["kvm"] = std::string(hv::kvm_version_name(kvm_));
    j["command"] = out.command.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(out.command);
    const nlohmann::ordered_json wire = hv::tool::send_json(run);
    for (auto it = wire.begin(); it != wire.end(); ++it) j[it.key()] = it.value();
    out.json = std::move(j);
    return out;
  }

 private:
  struct Sample {
    hv::SendRequest request;
    hv::GuestHostSend result;
  };

  static std::string hook_call(const hv::SendCase& c) {
    switch (c.hook) {
      case hv::SendHook::kSendIpi: return fmt::format("send_IPI(cpu {}, vector {:#x})", c.target_cpu, c.vector);
      case hv::SendHook::kSendIpiMask: return fmt::format("send_IPI_mask({{{}}}, vector {:#x})", cpu_list(c.mask), c.vector);
      default: return fmt::format("send_IPI_mask_allbutself({{{}}}, vector {:#x})", cpu_list(c.mask), c.vector);
    }
  }

  std::string vp_list() const {
    std::string s;
    for (std::uint32_t vp : cfg_.hv_vp_index) s += (s.empty() ? "" : ",") + topology::vp_index_text(vp);
    return s;
  }

  // plan()'s fixed call sites: each step is priced, each counter interned, on first use and kept
  // for the run (Pricer::step and Pricer::counter answer the same arguments with the same step and
  // id; the first use still goes through the Pricer, so rows and counters register in the same order).
  enum Site : std::uint8_t { kEnter, kMaskNone, kHelpers, kVpLookup, kIrq, kVpset, kExit, kDispatch, kFast, kMap, kCopy, kBanks, kPost, kSites };
  enum Count : std::uint8_t { kDuplicated, kHypercalls, kVmExits, kFailed, kNative, kCounts };
  PlanStep site(Site at, std::string_view what, cost::CostKey key, std::uint64_t count = 1, Lane lane = Lane::Guest) {
    std::optional<PlanStep>& c = sites_[at];
    if (!c) c = pricer_->step(kSender, what, key, 1, lane);
    PlanStep st = *c;
    st.count = static_cast<std::uint32_t>(count);
    return st;
  }
  /// A guest work step of `n` units; none when n is 0.
  void work_step(SendPlan& p, Site at, std::string_view what, cost::CostKey key, std::uint64_t n) {
    if (n) p.sender.push_back(site(at, what, key, n));
  }
  void count(SendPlan& p, Count c, std::string_view name) {
    std::optional<CounterId>& id = counts_[c];
    if (!id) id = pricer_->counter(name);
    add_counter_id(p, *id);
  }
  /// The counter "hypercalls.<call code name>".
  CounterId call_counter(std::uint16_t code) {
    for (const auto& [c, id] : call_counters_)
      if (c == code) return id;
    const CounterId id = pricer_->counter(per_call_counter(hv::call_code_name(code)));
    call_counters_.emplace_back(code, id);
    return id;
  }

  /// The interconnect step from `sender`'s node to `target`'s (nullopt: same node), priced the first
  /// time that pair of nodes is seen in the run (interconnect_step is a pure function of the nodes).
  const std::optional<PlanStep>& hop(unsigned sender, unsigned target) {
    const int from = node_of(sender), to = node_of(target);
    const auto nodes = static_cast<std::size_t>(std::max(host_->nodes, 1));
    if (from < 0 || to < 0 || static_cast<std::size_t>(from) >= nodes || static_cast<std::size_t>(to) >= nodes) {
      scratch_hop_ = interconnect_step(*pricer_, *host_, from, to, "interrupt notification to the target's CPU");
      return scratch_hop_;
    }
    if (hops_.empty()) hops_.resize(nodes * nodes);
    Hop& h = hops_[static_cast<std::size_t>(from) * nodes + static_cast<std::size_t>(to)];
    if (!h.known) {
      h.step = interconnect_step(*pricer_, *host_, from, to, "interrupt notification to the target's CPU");
      h.known = true;
    }
    return h.step;
  }

  /// The host node of guest CPU `cpu`'s pCPU (looked up once per CPU).
  int node_of(unsigned cpu) {
    if (node_.empty()) node_.assign(static_cast<std::size_t>(vm_->size()), kUnknownNode);
    if (cpu >= node_.size()) return host_->cpu(vm_->pcpu_of(static_cast<int>(cpu))).node;
    int& n = node_[cpu];
    if (n == kUnknownNode) n = host_->cpu(vm_->pcpu_of(static_cast<int>(cpu))).node;
    return n;
  }
  static constexpr int kUnknownNode = std::numeric_limits<int>::min();

  void check_online(unsigned cpu, std::string_view what) const {
    if (cpu < online_bit_.size() && online_bit_[cpu]) return;
    throw InputError(online_place_, fmt::format("the workload's CPU {} {}, but it is not online (online: {}): Linux "
                                                "sends IPIs only from and to online CPUs (smp_call_function_* mask "
                                                "with cpu_online_mask); give the workload online CPUs",
                                                cpu, what, cfg_.online.empty() ? "none" : cpu_list(cfg_.online)));
  }

  /// Runs the send on the modelled host. A sender with no vCPU there (VP_INVAL or >= 4096) that
  /// issues a hypercall is a bad input naming its vm.vp_index.
  hv::GuestHostSend send(const hv::SendRequest& req) {
    const std::uint32_t vp = cfg_.hv_vp_index[req.sender_cpu];
    const auto fail = [&] {
      return InputError(vm_->vp_index_place(static_cast<int>(req.sender_cpu), file_),
                        fmt::format("CPU {} issues a hypercall, but its VP index ({}) gives it no vCPU on the modelled "
                                    "KVM host ({}), which therefore cannot run it; give it a VP index below 4096, or "
                                    "keep it from sending",
                                    req.sender_cpu, topology::vp_index_text(vp),
                                    vp == hv::VP_INVAL ? "VP_INVAL: hv_cpu_init has not read HV_X64_MSR_VP_INDEX yet"
                                                       : "KVM refuses HV_X64_MSR_VP_INDEX >= KVM_MAX_VCPUS = 4096"));
    };
    if (!partition_ || !host_map_.vcpu_of_cpu(req.sender_cpu)) {
      const hv::HypervisorCall none = [&](unsigned, const hv::HypercallRegs&, const hv::GuestMemory&) -> std::uint64_t {
        throw fail();
      };
      hv::GuestHostSend s;
      s.send = guest_->send(req, none);
      s.oracle = hv::judge_send_cpus(s.send, {}, {});
      return s;
    }
    return hv::run_on_host(*guest_, *partition_, host_map_, req);
  }

  const topology::Host* host_;
  const topology::Vm* vm_;
  Pricer* pricer_;
  std::string file_;
  x86::X86Vm xvm_;
  hv::LinuxVersion linux_ = hv::LinuxVersion::kMainline;
  hv::KvmVersion kvm_ = hv::KvmVersion::kMainline;
  hv::GuestConfig cfg_;
  bool offstack_as_kconfig_ = true;
  bool present_given_ = false, online_given_ = false;
  std::string online_place_;
  std::unique_ptr<hv::LinuxHvGuest> guest_;
  hv::GuestHost host_map_;
  std::optional<hv::Partition> partition_;
  std::optional<Sample> sample_;
  ArrivalSteps arrival_;
  std::vector<bool> online_bit_;  // cfg_.online as a bitmap
  struct Hop {
    bool known = false;
    std::optional<PlanStep> step;
  };
  std::vector<Hop> hops_;  // by (from node, to node)
  std::vector<int> node_;  // host node of each guest CPU's pCPU
  std::array<std::optional<PlanStep>, kSites> sites_;
  std::array<std::optional<CounterId>, kCounts> counts_;
  std::vector<std::pair<std::uint16_t, CounterId>> call_counters_;
  std::optional<PlanStep> scratch_hop_;
};

}  // namespace

MechanismInfo describe_hyperv() {
  std::vector<cost::CostKey> keys = x86_icr_cost_keys();
  for (cost::CostKey k : {guest_vp_index_lookup, guest_irq_save_restore, hv_hypercall_entry_exit, hv_fast_input_decode,
                          hv_slow_input_map, hv_slow_input_copy_per_8b, hv_vpset_bank_decode, hv_ipi_post_per_target})
    keys.push_back(k);
  std::vector<ParamInfo> params{info(kLinux),  info(kKvm),   info(kSendIpiOne), info(kMaskPath), info(kHypercallPage),
                                info(kExMasks), info(kOffstack), kPresentInfo,   kOnlineInfo,     info(kMaxVp)};
  for (auto& p : x86_target_params()) params.push_back(std::move(p));
  return {"hyperv",
          Arch::X86,
          "Hyper-V enlightened IPIs: Linux hv_apic.c (per kernel version) -> HvCallSendSyntheticClusterIpi[Ex] on a KVM "
          "host (per KVM version), falling back to x2APIC physical ICR writes",
          std::move(params),
          keys,
          [](MechanismContext& ctx) { return std::make_unique<HyperV>(ctx); }};
}

}  // namespace ipilab::workload
