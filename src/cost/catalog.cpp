#include "cost/catalog.h"

#include <algorithm>

namespace ipilab::cost {

namespace {

constexpr UnitKind D = UnitKind::Duration;
constexpr std::string_view kHv = "Hyper-V send paths (smp_call_function_single, multicast, kick)";
constexpr std::string_view kAll = "every workload";
constexpr std::string_view kScf = "smp_call_function_single";
constexpr std::string_view kGic = "ipi_hw (GICv4.1 vSGI)";
constexpr std::string_view kX86 = "x86 native send paths (x2APIC ICR, KVM PV send-IPI)";

// One line per key: name, unit kind, what it is (and per what), who needs it.
constexpr CostKeyInfo kCatalog[] = {
    // Guest (Linux inside the VM).
    {"guest.bench_loop", D, "per iteration of the benchmark loop itself (rdtsc/counter reads, loop control)", kAll},
    {"guest.counter_read", D, "one timestamp pair around a timed region (LFENCE; RDTSC; LFENCE at each end): once per sample, so once per iteration when each iteration is timed and once per batch otherwise", "ipilab measure cases (this-host)"},
    {"guest.ipi_path_call", D, "entering the guest's send-IPI path once: indirect call through apic->send_IPI*, preempt/irq bookkeeping", kAll},
    {"guest.irq_save_restore", D, "one local_irq_save() + local_irq_restore() pair around a send", kAll},
    {"guest.cpumask_word", D, "touching one 64-bit word of a cpumask (clear, set or scan); walking NR_CPUS bits touches NR_CPUS/64 words", "Hyper-V mask/Ex paths, multicast"},
    {"guest.vp_index_lookup", D, "hv_cpu_number_to_vp_number() for one CPU (per-CPU hv_vp_index read)", kHv},
    {"guest.csd_queue", D, "smp_call_function_single() sender: lock the CSD, fill it, llist_add to the target's call_single_queue", kScf},
    {"guest.csd_unlock", D, "target releases the CSD after the callback (csd_unlock store)", kScf},
    {"guest.callback", D, "the function run on the target (the benchmark's empty callback), per call", "smp_call_function_single, multicast"},
    {"guest.irq_entry", D, "guest interrupt entry: vector dispatch to the handler, irq_enter", kAll},
    {"guest.irq_exit", D, "guest interrupt exit: irq_exit and return from the interrupt", kAll},
    {"guest.eoi", D, "end of interrupt, per interrupt: x2APIC EOI write (virtualized or an exit) / ICC_EOIR1_EL1 write", kAll},
    {"guest.tlb_flush_handler", D, "target-side work of a TLB shootdown IPI (flush_tlb_func), per target", "multicast"},
    // Generic VM exit/entry.
    {"vm.exit_entry", D, "one VM exit plus the VM entry back (world switch and common exit path), excluding exit-specific handling", kAll},
    // Hyper-V hypervisor.
    {"hv.hypercall_entry_exit", D, "hypercall (VMCALL) dispatch and return in the hypervisor, per hypercall, excluding input processing and vm.exit_entry", kHv},
    {"hv.fast_input_decode", D, "reading a fast hypercall's input from registers (RDX/R8, XMM), per hypercall", kHv},
    {"hv.slow_input_map", D, "slow (memory-input) hypercall: translate and map the guest input page, per hypercall", kHv},
    {"hv.slow_input_copy_per_8b", D, "slow hypercall: reading input, per 8-byte word (vpset header, valid_bank_mask, bank contents)", kHv},
    {"hv.vpset_bank_decode", D, "sparse vpset (HV_GENERIC_SET_SPARSE_4K): decoding one bank present in valid_bank_mask", kHv},
    {"hv.ipi_post_per_target", D, "HvCallSendSyntheticClusterIpi[Ex]: per destination VP, find it and make the vector pending", kHv},
    // x86 interrupt emulation and KVM.
    {"x2apic.icr_write_exit", D, "handling one x2APIC ICR write (WRMSR 0x830) exit: decode and route, excluding vm.exit_entry", kX86},
    {"x2apic.icr_dest_per_target", D, "per destination of one ICR write in logical cluster mode (up to 16 per write)", kX86},
    {"apic.interrupt_injection", D, "making an interrupt pending on a target vCPU running on another pCPU: posted-interrupt update + notification, until the target sees it", kAll},
    {"kvm.pv_send_ipi_call", D, "KVM_HC_SEND_IPI: per hypercall fixed work (decode the 128-bit bitmap and min APIC ID)", kX86},
    {"kvm.pv_send_ipi_per_dest", D, "KVM_HC_SEND_IPI: per destination set in the bitmap (lookup + kvm_apic_set_irq)", kX86},
    // Arm GICv4.1.
    {"its.sgir_write_local", D, "MMIO write to GITS_SGIR of an ITS on the sender's socket, until the ITS accepts it", kGic},
    {"its.sgir_write_remote", D, "MMIO write to GITS_SGIR of an ITS on another socket (cross-socket posted write)", kGic},
    {"its.sgir_process", D, "ITS processing one GITS_SGIR write: vPE table lookup, forward to the target redistributor (serialized per ITS)", kGic},
    {"its.rd_hop_local", D, "ITS -> redistributor message, both on one socket", kGic},
    {"its.rd_hop_remote", D, "ITS -> redistributor message crossing sockets", kGic},
    {"gic.rd_vsgi_pending", D, "redistributor makes the vSGI pending for the resident vPE and signals the CPU interface", kGic},
    {"gic.ack_iar", D, "guest acknowledge of the vSGI: ICC_IAR1_EL1 read (no trap with GICv4.1)", kGic},
    {"gic.vpe_doorbell", D, "target vPE not resident: doorbell interrupt to the host, which schedules the vCPU", "ipi_hw, kick on GICv4.1"},
    {"gic.sgi_trap_entry", D, "guest ICC_SGI1R_EL1 write traps to EL2: exception entry until KVM's access_gic_sgi runs (the sender's critical path)", kGic},
    {"gic.vgic_dispatch_sgi", D, "KVM vgic_v3_dispatch_sgi -> irq_set_irqchip_state -> its_sgi_set_irqchip_state up to issuing the GITS_SGIR write (direct vSGI)", kGic},
    {"gic.sgi_trap_return", D, "after the GITS_SGIR write: return from the trap handler and ERET to the guest", kGic},
    {"gic.sgi_trap_exit", D, "GICv3 without direct vSGI: handling a trapped ICC_SGI1R_EL1 write in KVM, excluding vm.exit_entry", "ipi (trapped SGI baseline)"},
    // Cache coherence (used when the host has no latency matrix for the pair, or to override it).
    {"mem.cacheline_smt", D, "one-way cache-line transfer between SMT siblings", kAll},
    {"mem.cacheline_same_node", D, "one-way cache-line transfer between cores of one NUMA node", kAll},
    {"mem.cacheline_same_socket", D, "one-way cache-line transfer between NUMA nodes of one socket", kAll},
    {"mem.cacheline_cross_socket", D, "one-way cache-line transfer between sockets", kAll},
    // vCPU scheduling.
    {"vcpu.halt_exit", D, "a vCPU executing HLT/WFI: the exit and the host putting the vCPU to sleep", "kick, halted targets"},
    {"vcpu.halt_wakeup", D, "waking a halted vCPU: from the interrupt being posted to the vCPU running guest code again", "kick, halted targets"},
};

}  // namespace

std::span<const CostKeyInfo> catalog() { return kCatalog; }

const CostKeyInfo* find_cost_key(std::string_view name) {
  const auto it = std::find_if(std::begin(kCatalog), std::end(kCatalog), [&](const CostKeyInfo& k) { return k.name == name; });
  return it == std::end(kCatalog) ? nullptr : it;
}

std::string_view units_of(UnitKind kind) {
  switch (kind) {
    case UnitKind::Duration: return "cycles, ns, ps or us";
  }
  return "";
}

}  // namespace ipilab::cost
