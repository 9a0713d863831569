// The target side of every x86 mechanism: its parameters (APICv, KVM's host halt-polling, the guest's
// cpuidle-haltpoll) and the arrival steps by target state (target_path.h names the paths).
#include <algorithm>
#include <limits>
#include <optional>

#include <fmt/format.h>

#include "common/error.h"

#include "workload/mechanisms/x86_common.h"

namespace ipilab::workload {

using namespace cost::keys;

namespace {

constexpr std::int64_t kMaxNs = 1'000'000'000;  // 1 s
const BoolParam kApicv{"apicv", true,
                       "posted interrupts for running targets (KVM enable_apicv): true = PIR + notification vector, no "
                       "exit on the target (apic.interrupt_injection); false = the target is kicked out of the guest "
                       "and KVM injects the vector at its next entry (vm.exit_entry + apic.event_injection)"};
const IntParam kHaltPoll{"halt_poll_ns", 0, 0, kMaxNs,
                         "KVM host halt-polling maximum, ns (module parameter halt_poll_ns, per VM with "
                         "KVM_CAP_HALT_POLL): after a HLT exit KVM polls up to the vCPU's window before blocking its "
                         "thread, a wake-up caught costs vcpu.halt_poll_wakeup instead of vcpu.halt_wakeup; 0 = no "
                         "polling (the default here; KVM's x86 default is 200000)"};
const IntParam kHaltPollGrow{"halt_poll_ns_grow", 2, 0, 1000, "factor grow_halt_poll_ns multiplies the window by (0: never grows)"};
const IntParam kHaltPollGrowStart{"halt_poll_ns_grow_start", 10000, 1, kMaxNs,
                                  "ns: the window grows from 0 to at least this; shrunk below it, it is 0"};
const IntParam kHaltPollShrink{"halt_poll_ns_shrink", 0, 0, 1000,
                               "divisor shrink_halt_poll_ns divides the window by after a long block (0: reset to 0)"};
const IntParam kGuestPoll{"guest_halt_poll_ns", 0, 0, kMaxNs,
                          "cpuidle-haltpoll in the guest, ns (guest_halt_poll_ns): before HLT the guest polls up to its "
                          "adaptive limit; an interrupt meanwhile finds it in guest mode (a running target's path); "
                          "it turns host halt-polling off (MSR_KVM_POLL_CONTROL). 0 = not loaded (default)"};
const IntParam kGuestPollGrow{"guest_halt_poll_grow", 2, 0, 1000, "factor the guest's poll limit grows by"};
const IntParam kGuestPollGrowStart{"guest_halt_poll_grow_start", 50000, 1, kMaxNs,
                                   "ns: the guest's limit grows from 0 to at least this; shrunk below it, it is 0"};
const IntParam kGuestPollShrink{"guest_halt_poll_shrink", 2, 0, 1000,
                                "divisor of the guest's limit after an idle period above guest_halt_poll_ns (0: to 0)"};
const BoolParam kGuestPollAllowShrink{"guest_halt_poll_allow_shrink", true, "the guest's limit may shrink"};

std::uint64_t u(std::int64_t v) { return static_cast<std::uint64_t>(v); }

const BoolParam kShorthand{"shorthand", false,
                           "IPI destination shorthands (apic_use_ipi_shorthand, Linux >= 5.4 once every present CPU "
                           "was online, unless no_ipi_broadcast=1): a call-function IPI to every other online CPU is "
                           "ONE ICR write with the all-but-self shorthand (native_send_call_func_ipi), even with PV "
                           "send-IPI; false = explicit masks, as the 4.19 guests of the shipped x86 fits"};
const BoolParam kIcrFastpath{"icr_fastpath", false,
                             "KVM takes a fixed, physical, single-destination x2APIC ICR write in the exit's IRQs-off "
                             "fastpath (handle_fastpath_set_x2apic_icr_irqoff, commit 1e9e2622a149, Linux >= 5.5): "
                             "x2apic.icr_write_fastpath instead of x2apic.icr_write_exit; false = the full exit path "
                             "(Linux < 5.5 hosts, the shipped x86 fits)"};

/// auto (no value: as Linux picks), or one of the x86 model's drivers.
constexpr EnumName<std::optional<x86::XapicDriver>> kDrivers[] = {
    {std::nullopt, "auto"},
    {x86::XapicDriver::Flat, name_of(x86::kXapicDriverNames, x86::XapicDriver::Flat)},
    {x86::XapicDriver::Physflat, name_of(x86::kXapicDriverNames, x86::XapicDriver::Physflat)}};
const EnumParam<std::optional<x86::XapicDriver>> kXapicDriver{"apic_driver", std::nullopt, kDrivers,
                               "the guest's xAPIC driver (arch/x86/kernel/apic/apic_flat_64.c): flat = logical flat, one "
                               "ICR write for up to 8 CPUs (LDR 1 << cpu); physflat = one physical ICR write per target; "
                               "auto = as Linux picks (physflat_probe: physflat above 8 possible CPUs)"};

}  // namespace

ParamInfo xapic_driver_param() { return info(kXapicDriver); }

x86::XapicDriver read_xapic_driver(const Params& params, std::uint32_t n) {
  const std::optional<x86::XapicDriver> d = params.get(kXapicDriver);
  if (n > 255)
    throw InputError(params.place("mechanism"),
                     fmt::format("a {}-vCPU VM cannot run in xAPIC mode (8-bit APIC IDs, 0xFF is the broadcast): use an "
                                 "x2APIC mechanism (x2apic-physical, x2avic, ipiv)", n));
  if (d == x86::XapicDriver::Flat && n > 8)
    throw InputError(params.place("apic_driver"),
                     fmt::format("the flat driver addresses 8 CPUs (one LDR bit each); this VM has {} vCPUs: use "
                                 "\"physflat\" or \"auto\"", n));
  return d ? *d : x86::linux_xapic_driver(n);
}

std::vector<ParamInfo> x86_target_params_posted() {
  std::vector<ParamInfo> v = x86_target_params();
  v.erase(v.begin());  // apicv
  return v;
}

std::vector<ParamInfo> x86_target_params() {
  return {info(kApicv),          info(kHaltPoll),          info(kHaltPollGrow),     info(kHaltPollGrowStart),
          info(kHaltPollShrink), info(kGuestPoll),         info(kGuestPollGrow),    info(kGuestPollGrowStart),
          info(kGuestPollShrink), info(kGuestPollAllowShrink)};
}

std::vector<ParamInfo> x86_mechanism_params(bool fastpath) { return x86_mechanism_params(fastpath, {}, false); }

std::vector<ParamInfo> x86_mechanism_params(bool fastpath, std::vector<ParamInfo> own, bool posted) {
  std::vector<ParamInfo> v = x86_send_params(fastpath);
  for (auto& p : own) v.push_back(std::move(p));
  for (auto& p : posted ? x86_target_params_posted() : x86_target_params()) v.push_back(std::move(p));
  return v;
}

std::vector<ParamInfo> x86_send_params(bool fastpath) {
  std::vector<ParamInfo> v{info(kShorthand)};
  if (fastpath) v.push_back(info(kIcrFastpath));
  return v;
}

void read_x86_send_params(const Params& params, x86::LinuxKvmGuestConfig& cfg, X86SendOptions& options) {
  // A mechanism whose guest may be either (kvm-pv's xapic) declares both; the one that cannot apply
  // is refused, not ignored.
  if (!options.xapic && params.has(kXapicDriver.name))
    throw InputError(params.place(kXapicDriver.name), "the xAPIC driver of an x2APIC guest: set xapic = true, or drop it");
  if (options.xapic && params.has(kIcrFastpath.name))
    throw InputError(params.place(kIcrFastpath.name),
                     "KVM's ICR fastpath takes x2APIC ICR writes (WRMSR) only, not an xAPIC guest's MMIO writes");
  cfg.ipi_shorthand = params.get(kShorthand);
  if (!options.ipiv && !options.native && !options.xapic && !options.avic) options.icr_fastpath = params.get(kIcrFastpath);
  if (options.xapic && !options.avic) options.xapic_apicv = params.get(kApicv);
}

ArrivalSteps x86_native_arrival(Pricer& pr) {
  ArrivalSteps a;
  a.native = true;
  a.halted = {pr.step("target", "leave the C-state (HLT/MWAIT exit latency)", cpu_idle_exit, 1, Lane::Guest)};
  return a;
}

void x86_preempted_arrival(ArrivalSteps& a, Pricer& pr, const topology::Vm& vm) {
  a.models_preempted = true;
  const bool any = std::any_of(vm.vcpus.begin(), vm.vcpus.end(),
                               [](const topology::Vcpu& v) { return v.initial_state == topology::VcpuState::Preempted; });
  if (!any) return;
  a.preempted = {pr.step("target", "preempted: wait for the host to run the vCPU thread again", vcpu_preempted_wait, 1, Lane::Wire)};
  if (a.posted)
    a.preempted.push_back(pr.step("target", "the posted interrupt synced at the entry (PIR -> vIRR)", apic_interrupt_injection, 1, Lane::Wire));
  else
    a.preempted.push_back(pr.step("target", "KVM injects the vector at VM entry", apic_event_injection, 1, Lane::TargetHv));
}

std::vector<cost::CostKey> x86_target_cost_keys() {
  return {apic_interrupt_injection, apic_event_injection, vcpu_halt_wakeup, vcpu_halt_poll_wakeup, vcpu_preempted_wait};
}

ArrivalSteps x86_arrival(Pricer& pr, const Params& params, bool force_exit) {
  ArrivalSteps a;
  a.posted = !force_exit && params.get(kApicv);
  if (a.posted) {
    a.running = {pr.step("target", "interrupt a running vCPU (posted interrupt)", apic_interrupt_injection, 1, Lane::Wire)};
  } else {
    a.running = {pr.step("target", "kicked out of the guest (external-interrupt exit)", vm_exit_entry, 1, Lane::TargetHv),
                 pr.step("target", "KVM injects the vector at VM entry", apic_event_injection, 1, Lane::TargetHv)};
  }
  a.halted = {pr.step("target", "wake the halted vCPU", vcpu_halt_wakeup, 1, Lane::TargetHv)};
  a.host_poll.max_ns = u(params.get(kHaltPoll));
  a.host_poll.grow = u(params.get(kHaltPollGrow));
  a.host_poll.grow_start = u(params.get(kHaltPollGrowStart));
  a.host_poll.shrink = u(params.get(kHaltPollShrink));
  a.guest_poll.max_ns = u(params.get(kGuestPoll));
  a.guest_poll.grow = u(params.get(kGuestPollGrow));
  a.guest_poll.grow_start = u(params.get(kGuestPollGrowStart));
  a.guest_poll.shrink = u(params.get(kGuestPollShrink));
  a.guest_poll.allow_shrink = params.get(kGuestPollAllowShrink);
  if (a.host_poll.enabled() && !a.guest_poll.enabled())
    a.host_polled = {pr.step("target", "halt-polling sees the interrupt, re-entry", vcpu_halt_poll_wakeup, 1, Lane::TargetHv)};
  return a;
}

}  // namespace ipilab::workload
