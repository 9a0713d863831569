#include "workload/counters.h"

#include <algorithm>
#include <array>

namespace ipilab::workload {

namespace {

using namespace counters;
constexpr std::string_view kAll = "every workload (the whole-VM core)";
constexpr std::string_view kHv = "mechanism hyperv";
constexpr std::string_view kItsCmd = "mechanism gicv4.1-vsgi under workload its_commands";

constexpr CounterInfo kCatalog[] = {
    {sends.name, "sends", "send-hook invocations (apic->send_IPI*, the SGI write, a kick)", kAll},
    {ipis_delivered.name, "interrupts", "interrupts taken by their targets (one merged into a pending interrupt counts too)", kAll},
    {deliveries.name, "requests", "requests served: a CSD or wake entry run on its target, or a raw IPI's handler (by its own interrupt, coalesced behind another, or from the idle loop)", kAll},
    {coalesced.name, "interrupts", "interrupts merged into one already pending at the target", kAll},
    {polling_skips.name, "wake-ups", "wake-ups of a target polling in idle that needed no IPI (sched_wake_idle_without_ipi)", kAll},
    {misdelivered.name, "interrupts", "interrupts that reached a CPU the sender did not ask for", kAll},
    {lost.name, "targets", "intended targets that received nothing (the model says why in the run's notes)", kAll},
    {ipis_sent.name, "IPIs", "intended IPIs the mechanism sent (lost ones included, misdelivered copies not)", kAll},
    {ipis_in_flight_at_start.name, "IPIs", "IPIs sent before the measured window and not yet taken when it began", kAll},
    {ipis_in_flight_at_end.name, "IPIs", "IPIs sent and not yet taken when the measured window ended", kAll},
    {requests.name, "requests", "CSDs, wake entries and raw IPIs' targets (served by their own IPI, coalesced, by a polling flush, or lost)", kAll},
    {requests_lost.name, "requests", "requests lost, CSDs withdrawn behind a lost IPI included", kAll},
    {requests_pending_at_start.name, "requests", "requests queued (CSDs) or in flight (raw IPIs) when the measured window began", kAll},
    {requests_pending_at_end.name, "requests", "requests queued (CSDs) or in flight (raw IPIs) when the measured window ended", kAll},
    {hypercalls.name, "hypercalls", "hypercalls issued by the guest's send path (all kinds)",
     "mechanisms hyperv, kvm-pv (0 for the others)"},
    {"hypercalls.<call>", "hypercalls",
     "hypercalls of one kind, by call name (HvCallSendSyntheticClusterIpi, HvCallSendSyntheticClusterIpiEx, KVM_HC_SEND_IPI, ...)",
     "mechanisms hyperv, kvm-pv"},
    {hypercalls_failed.name, "hypercalls", "hypercalls the host answered with a status other than HV_STATUS_SUCCESS", kHv},
    {native_fallbacks.name, "sends", "sends the guest completed through the APIC instead of a hypercall",
     "mechanism hyperv (0 for the others)"},
    {duplicated.name, "interrupts", "a CPU reached twice by one send (by the hypercall and again by the fallback)", kHv},
    {vm_exits.name, "VM exits", "exits to the hypervisor on the send path (ICR writes, hypercalls, SGI traps, CPUID)",
     "mechanisms hyperv, x2apic-physical, x2apic-cluster, kvm-pv, gicv3-emulated-sgi, gicv4.1-vsgi; workload kvm_bench"},
    {icr_writes.name, "MSR writes", "x2APIC ICR writes (one per destination or per cluster)",
     "mechanisms x2apic-physical, x2apic-cluster, hyperv (native fallback)"},
    {icr_fastpath_exits.name, "VM exits", "ICR-write exits KVM handled in its irq-off exit fastpath (handle_fastpath_set_msr_irqoff)",
     "mechanisms x2apic-physical, x2apic-cluster (icr_fastpath = true)"},
    {pv_tlb_flush_skips.name, "targets", "TLB-flush call targets KVM PV TLB flush skipped as preempted (KVM_VCPU_FLUSH_TLB set in their steal-time record instead of a CSD and an IPI)", "mechanism kvm-pv (pv_tlb_flush = true, vm.preempted)"},
    {avic_icr_writes.name, "ICR writes", "ICR writes AVIC / x2AVIC sent without an exit on the sender", "mechanisms avic, x2avic"},
    {avic_incomplete_ipi_exits.name, "VM exits", "#VMEXIT(AVIC_INCOMPLETE_IPI) on the sender: an accelerated write found a target not running (also counted in vm_exits)", "mechanisms avic, x2avic"},
    {ipiv_icr_writes.name, "MSR writes", "ICR writes the CPU virtualised with IPI virtualisation (no exit on the sender)", "mechanism ipiv"},
    {"target_path.running_guest_posted", "interrupts", "interrupts taken by a target running guest code, posted (PIR + notification vector, no exit)", kAll},
    {"target_path.running_guest_exit", "interrupts", "interrupts taken by a target running guest code without posted interrupts (kick, exit, injection at entry)", kAll},
    {"target_path.running_host", "interrupts", "interrupts that reached a target in an exit (injected at the next entry)", kAll},
    {"target_path.polling_idle", "interrupts", "interrupts taken by a target polling in idle (idle=poll or TIF_POLLING_NRFLAG)", kAll},
    {"target_path.halted_guest_poll", "interrupts", "interrupts taken in the guest's halt-poll window (cpuidle-haltpoll) before HLT", kAll},
    {"target_path.halt_entry", "interrupts", "interrupts that reached a target on its way into HLT (seen pending before the thread blocked)", kAll},
    {"target_path.halted_host_poll", "interrupts", "interrupts found by KVM's halt-polling loop before the vCPU thread blocked", kAll},
    {"target_path.halted_blocked", "interrupts", "interrupts that woke a halted vCPU whose thread was blocked (host scheduler wake-up)", kAll},
    {"target_path.running_native", "interrupts", "bare metal: interrupts taken by a CPU running code", kAll},
    {"target_path.preempted", "interrupts", "interrupts that reached a preempted vCPU (its thread scheduled out: the host runs it again, then injects), in runs with vm.preempted", kAll},
    {"target_path.halted_native", "interrupts", "bare metal: interrupts that woke a CPU idling in HLT/MWAIT", kAll},
    {kicks.name, "kicks", "kvm_vcpu_kick() of a target vCPU (one per target of the SGI)", "mechanism gicv3-emulated-sgi"},
    {sgi1r_writes.name, "system register writes", "bare metal ICC_SGI1R_EL1 writes (one per 16-CPU Aff1 group of targets)", "mechanism native-gicv3"},
    {sgir_writes.name, "MMIO writes", "GITS_SGIR writes (one per target vPE)", "mechanism gicv4.1-vsgi"},
    {its_local.name, "GITS_SGIR writes", "vSGIs sent through an ITS on the sender's own socket", "mechanism gicv4.1-vsgi"},
    {its_remote.name, "GITS_SGIR writes", "vSGIs sent through an ITS on another socket", "mechanism gicv4.1-vsgi"},
    {its_commands.name, "ITS commands", "commands written to the ITS command queues", kItsCmd},
    {its_batches.name, "batches", "GITS_CWRITER updates (each posts a batch of commands)", kItsCmd},
    {its_creadr_reads.name, "MMIO reads", "GITS_CREADR reads (queue-space checks and completion-wait polls)", kItsCmd},
    {its_wait_polls.name, "polls", "polls of GITS_CREADR in the completion wait (its_wait_for_range_completion)", kItsCmd},
    {its_lock_waits.name, "batches", "batches that found its->lock taken by another CPU", kItsCmd},
    {its_waits_completed_early.name, "waits", "completion waits the predicate ended before the ITS had consumed the batch", kItsCmd},
    {its_waits_spun_after_completion.name, "waits", "completion waits with a poll after the batch ran that the predicate did not see (the offsets predicate on a queue wrap)",
     kItsCmd},
    {its_waits_timed_out.name, "waits", "completion waits that gave up after 1,000,000 polls with the batch not consumed (ITS disabled, stalled or slow)",
     kItsCmd},
    {its_waits_timed_out_after_completion.name, "waits",
     "completion waits that gave up after 1,000,000 polls although the batch had been consumed (the predicate missed it)", kItsCmd},
};

// The call names of "hypercalls.<call>": hv::call_code_name()'s (Hyper-V TLFS) and KVM's.
constexpr std::array<std::string_view, 7> kCalls = {
    "HvCallSendSyntheticClusterIpi",   "HvCallSendSyntheticClusterIpiEx",  "HvCallFlushVirtualAddressSpace",
    "HvCallFlushVirtualAddressList",   "HvCallFlushVirtualAddressSpaceEx", "HvCallFlushVirtualAddressListEx",
    "KVM_HC_SEND_IPI"};

}  // namespace

std::string per_call_counter(std::string_view call) { return std::string(kPerCallPrefix) + std::string(call); }

std::span<const CounterInfo> counter_catalog() { return kCatalog; }

std::span<const std::string_view> per_call_names() { return kCalls; }

const CounterInfo* find_counter(std::string_view name) {
  if (name.starts_with(kPerCallPrefix)) {
    const std::string_view call = name.substr(kPerCallPrefix.size());
    if (std::find(kCalls.begin(), kCalls.end(), call) == kCalls.end()) return nullptr;
    name = "hypercalls.<call>";
  }
  for (const auto& c : kCatalog)
    if (c.name == name) return &c;
  return nullptr;
}

std::vector<std::string> counter_names() {
  std::vector<std::string> out;
  for (const auto& c : kCatalog) {
    if (c.name.starts_with(kPerCallPrefix)) {
      for (auto call : kCalls) out.push_back(per_call_counter(call));
    } else {
      out.emplace_back(c.name);
    }
  }
  return out;
}

}  // namespace ipilab::workload
