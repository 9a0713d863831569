#include "cost/catalog.h"

#include <algorithm>

namespace ipilab::cost {

namespace {

using namespace keys;
constexpr UnitKind D = UnitKind::Duration;
constexpr std::string_view kAll = "every workload";
constexpr std::string_view kHv = "mechanism hyperv";
constexpr std::string_view kCsd = "the call-function IPIs (smp_call_function_single, multicast, storm, wakeup; kvm_bench's call-single)";
constexpr std::string_view kX86 = "mechanisms hyperv (native fallback), x2apic-physical, x2apic-cluster, kvm-pv";
constexpr std::string_view kPv = "mechanisms kvm-pv (and hyperv on KVM)";
constexpr std::string_view kVsgi = "mechanism gicv4.1-vsgi";
constexpr std::string_view kArm = "mechanisms gicv4.1-vsgi, gicv3-emulated-sgi";
constexpr std::string_view kEmu = "mechanism gicv3-emulated-sgi";
constexpr std::string_view kItsCmd = "mechanism gicv4.1-vsgi, when a workload issues ITS commands (its_commands)";
constexpr std::string_view kWake = "workload wakeup (remote wake-ups through the call-single queue)";
constexpr std::string_view kMem =
    "workload kvm_bench (line_transfer = profile/auto: its flag and CSD lines; ipilab measure writes it from its c2c pairs); "
    "every other line transfer is priced from the host latency matrix (ipilab topo --measure fills it)";
constexpr std::string_view kPoll = "targets idling in polling idle (vm.state = \"polling\") that skip the IPI";

// One line per key: name, unit kind, what it is (and per what), who reads it.
constexpr CostKeyInfo kCatalog[] = {
    // Guest (Linux inside the VM).
    {guest_bench_loop.name, D, "per iteration of the benchmark loop itself (rdtsc/counter reads, loop control)", "workloads smp_call_function_single, ipi_hw, multicast, kvm_bench"},
    {guest_counter_read.name, D, "one timestamp pair around a timed region (LFENCE; RDTSC; LFENCE at each end): once per sample, so once per iteration when each iteration is timed and once per batch otherwise", "workload kvm_bench (ipilab measure writes it; the other loops price their timing in guest.bench_loop)"},
    {guest_ipi_path_call.name, D, "entering the guest's send-IPI path once: indirect call through apic->send_IPI*, preempt/irq bookkeeping", kX86},
    {guest_irq_save_restore.name, D, "one local_irq_save() + local_irq_restore() pair around a send", kHv},
    {guest_cpumask_word.name, D, "touching one 64-bit word of a cpumask (clear, set or scan); walking NR_CPUS bits touches NR_CPUS/64 words", kX86},
    {guest_vp_index_lookup.name, D, "hv_cpu_number_to_vp_number() for one CPU (per-CPU hv_vp_index read)", kHv},
    {guest_csd_queue.name, D, "smp_call_function_*() sender, per target: lock the CSD, fill it, llist_add to the target's call_single_queue", kCsd},
    {guest_csd_unlock.name, D, "target releases the CSD after the callback (csd_unlock store), per CSD", kCsd},
    {guest_callback.name, D, "the function run on the target (the benchmark's empty callback), per call", kCsd},
    {guest_irq_entry.name, D, "guest interrupt entry: vector dispatch to the handler, irq_enter", kAll},
    {guest_irq_exit.name, D, "guest interrupt exit: irq_exit and return from the interrupt", kAll},
    {guest_eoi.name, D, "end of interrupt, per interrupt: x2APIC EOI write (virtualized or an exit) / ICC_EOIR1_EL1 write", kAll},
    {"guest.clock_read", D, "one ktime_get() in the guest (the clocksource read, kvm-clock's pvclock_clocksource_read with its RDTSC, and the timekeeping arithmetic), per call", "workload ipi_benchmark"},
    {"guest.ipi_bench_dry_run", D, "one iteration of the IPI benchmark module's loop without the send (its Dry-run case: send_ipi(DRY_RUN) with get_cpu/put_cpu, the loop and the sum)", "workload ipi_benchmark"},
    {guest_tlb_flush_handler.name, D, "target-side work of a TLB shootdown IPI (flush_tlb_func), per target", "workloads multicast, storm"},
    {guest_ttwu_queue.name, D, "try_to_wake_up() of a task on another CPU: select_task_rq + llist_add of the wake entry (ttwu_queue_wakelist)", kWake},
    {guest_ttwu_pending.name, D, "target: sched_ttwu_pending() for one queued wake entry (activate the task, check preemption)", kWake},
    {guest_context_switch.name, D, "schedule(): one switch between the idle task and a task (either way)", kWake},
    {"guest.schedule_idle", D, "do_idle: schedule_idle() after the idle loop ran its call_single_queue for need_resched (__schedule picking the idle task again, interrupts off, not polling), per idle-loop flush that does not wake a task", kPoll},
    {guest_idle_poll_exit.name, D, "polling idle (TIF_POLLING_NRFLAG): seeing need_resched and leaving the poll loop, up to flush_smp_call_function_queue", kPoll},
    // Generic VM exit/entry.
    {vm_exit_entry.name, D, "one VM exit plus the VM entry back (world switch and common exit path), excluding exit-specific handling", "mechanisms hyperv, x2apic-physical, x2apic-cluster, kvm-pv; workload kvm_bench (its cpuid-exit case)"},
    // Hyper-V.
    {hv_hypercall_entry_exit.name, D, "hypercall (VMCALL) dispatch and return in the hypervisor, per hypercall, excluding input processing and vm.exit_entry", kHv},
    {hv_fast_input_decode.name, D, "reading a fast hypercall's input from registers (RDX/R8, XMM), per hypercall", kHv},
    {hv_slow_input_map.name, D, "slow (memory-input) hypercall: translate and map the guest input page, per hypercall", kHv},
    {hv_slow_input_copy_per_8b.name, D, "slow hypercall: reading input, per 8-byte word (vpset header, valid_bank_mask, bank contents)", kHv},
    {hv_vpset_bank_decode.name, D, "sparse vpset (HV_GENERIC_SET_SPARSE_4K): decoding one bank present in valid_bank_mask", kHv},
    {hv_ipi_post_per_target.name, D, "HvCallSendSyntheticClusterIpi[Ex]: per destination VP, find it and make the vector pending", kHv},
    // x86 interrupt emulation and KVM.
    {x2apic_icr_write_exit.name, D, "handling one x2APIC ICR write (WRMSR 0x830) exit: decode and route, excluding vm.exit_entry", kX86},
    {x2apic_icr_dest_per_target.name, D, "per destination of one ICR write (one in physical mode, up to 16 in logical cluster mode)", kX86},
    {x2apic_icr_write_fastpath.name, D, "KVM handling an eligible x2APIC ICR write (fixed, physical, no shorthand, one destination) in the exit's IRQs-off fastpath, per write, after vm.exit_entry (replaces x2apic.icr_write_exit)", "x86 mechanisms with icr_fastpath = true"},
    {ipiv_icr_write.name, D, "a guest x2APIC ICR write virtualised by the CPU (Intel IPIv): no exit, per write", "mechanism ipiv"},
    {ipiv_pid_post.name, D, "IPIv: the sender's CPU sets the vector in the target's posted-interrupt descriptor (PID) and sends the notification, per destination", "mechanism ipiv"},
    {xapic_icr_write_exit.name, D, "KVM handling an xAPIC ICR write that sends (kvm_lapic_reg_write(APIC_ICR) -> kvm_apic_send_ipi, from the APIC-write exit with APICv or after the MMIO emulation without), per write, without the per-destination work", "mechanism xapic"},
    {xapic_mmio_exit.name, D, "without APICv: decoding and emulating one xAPIC register MMIO access (the ICR read of the idle wait, the ICR2 and ICR writes), per access, after vm.exit_entry", "mechanism xapic (apicv = false)"},
    {avic_icr_write.name, D, "AMD AVIC / x2AVIC: an ICR write the CPU sends without an exit (table lookups), per write", "mechanisms avic, x2avic"},
    {avic_doorbell.name, D, "AMD AVIC / x2AVIC: the sender's CPU setting the vector in one target's vAPIC backing page and ringing its doorbell (a running target), per destination", "mechanisms avic, x2avic"},
    {avic_incomplete_ipi.name, D, "AMD AVIC / x2AVIC: KVM handling #VMEXIT(AVIC_INCOMPLETE_IPI) for a target not running (avic_incomplete_ipi_interception -> avic_kick_target_vcpus), per exit, after vm.exit_entry", "mechanisms avic, x2avic (targets blocked or preempted)"},
    {x2apic_native_icr_write.name, D, "bare metal: one x2APIC ICR write (WRMSR 0x830), per write", "mechanism native-x86"},
    {cpu_idle_exit.name, D, "bare metal: a CPU idle in HLT/MWAIT (x86) or WFI (arm64) leaving its idle state for an interrupt (the state's exit latency), per wake-up", "mechanisms native-x86, native-gicv3 (targets idling in HLT/WFI)"},
    {apic_event_injection.name, D, "a running target without posted interrupts (apicv = false), after its kick exit: KVM injects the vector through the VM-entry interruption field (per interrupt)", "x86 mechanisms with apicv = false"},
    {apic_interrupt_injection.name, D, "making an interrupt pending on a RUNNING target vCPU (posted-interrupt update + notification) until its guest code takes it", kX86},
    {kvm_pv_send_ipi_call.name, D, "KVM_HC_SEND_IPI: per hypercall fixed work (decode the 128-bit bitmap and min APIC ID)", kPv},
    {kvm_pv_send_ipi_per_dest.name, D, "KVM_HC_SEND_IPI: per destination set in the bitmap (lookup + kvm_apic_set_irq)", kPv},
    // Arm GIC.
    {its_sgir_write.name, D, "posted 64-bit MMIO write to GITS_SGIR of an ITS, until the ITS accepts it, without socket crossings (those come from the host latency matrix)", kVsgi},
    {its_sgir_process.name, D, "ITS processing one GITS_SGIR write: vPE table lookup, forward to the target redistributor (the ITS serves one at a time)", kVsgi},
    {its_rd_hop.name, D, "ITS -> redistributor message, without socket crossings (those come from the host latency matrix)", kVsgi},
    {gic_rd_vsgi_pending.name, D, "redistributor makes the vSGI pending for the resident vPE and signals the CPU interface", kVsgi},
    {gic_ack_iar.name, D, "guest acknowledge of the (v)SGI: ICC_IAR1_EL1 read (the hardware CPU interface: no trap)", kArm},
    {gic_sgi_trap_entry.name, D, "guest ICC_SGI1R_EL1 write traps to EL2: exception entry until KVM's access_gic_sgi runs (the sender's critical path)", kArm},
    {gic_vgic_dispatch_sgi.name, D, "KVM vgic_v3_dispatch_sgi -> irq_set_irqchip_state -> its_sgi_set_irqchip_state up to issuing the GITS_SGIR write, per target (direct vSGI)", kVsgi},
    {gic_sgi_trap_return.name, D, "after the SGI is dispatched: return from the trap handler and ERET to the guest", kArm},
    {gic_vgic_queue_sgi.name, D, "vgic_v3_queue_sgi for one target: irq_lock, pending_latch, vgic_queue_irq_unlock (ap_list insert under the target's ap_list_lock)", kEmu},
    {gic_vcpu_kick.name, D, "kvm_vcpu_kick of a running target from EL2: the physical IPI (smp_send_reschedule) issued on the sender's pCPU", kEmu},
    {gic_native_sgi1r_write.name, D, "bare metal arm64: one ICC_SGI1R_EL1 write (up to 16 targets of one Aff1 group) and the ISB after it, per write", "mechanism native-gicv3"},
    {gic_kick_exit.name, D, "target vCPU: exit on the kick, vgic_flush_lr_state writes the SGI into a list register, re-entry, until the guest can take it", kEmu},
    {its_creadr_read.name, D, "one GITS_CREADR read (a non-posted MMIO read of the ITS, until the value is back) from a CPU on the ITS's node, without socket crossings (those come from the host latency matrix, there and back)", kItsCmd},
    {its_command_write.name, D, "writing one 32-byte command into the ITS command queue under its->lock (its_allocate_entry's slot, the builder, dsb(ishst)), per command", kItsCmd},
    {its_cwriter_write.name, D, "posted MMIO write to GITS_CWRITER, until the ITS sees it, without socket crossings", kItsCmd},
    {its_command_process.name, D, "the ITS executing one command from its queue (fetch the 32 bytes, decode, update tables, advance GITS_CREADR); one command at a time per ITS", kItsCmd},
    {its_wait_udelay.name, D, "udelay(1) between two GITS_CREADR reads in its_wait_for_range_completion", kItsCmd},
    {gic_vgic_mmio_trap.name, D, "a guest MMIO access to its vGIC handled in KVM, trap to return: data abort, decode, vgic MMIO dispatch (a write to the redistributor's SGI frame, GICR_ISENABLER0/ICENABLER0/IPRIORITYR, excluding the ITS commands it sends; a distributor read such as micro-bench mmio_read_vgic's GICD_IIDR)",
     "mechanism gicv4.1-vsgi, when a workload issues ITS commands (its_commands); workload mmio_read_vgic"},
    // Cache coherence.
    {mem_cacheline_smt.name, D, "one-way cache-line transfer between SMT siblings", kMem},
    {mem_cacheline_same_node.name, D, "one-way cache-line transfer between cores of one NUMA node", kMem},
    {mem_cacheline_same_socket.name, D, "one-way cache-line transfer between NUMA nodes of one socket", kMem},
    {mem_cacheline_cross_socket.name, D, "one-way cache-line transfer between sockets", kMem},
    // vCPU scheduling.
    {vcpu_halt_exit.name, D, "a vCPU executing HLT/WFI: the exit and the host putting the vCPU to sleep", "targets idling in HLT/WFI (vm.state = \"halted\")"},
    {vcpu_preempted_wait.name, D, "a preempted vCPU (its pCPU running another thread): from the interrupt being posted to the host scheduler running the vCPU thread again and entering the guest, per interrupt", "hosted x86 mechanisms (targets in vm.preempted)"},
    {vcpu_halt_wakeup.name, D, "waking a halted vCPU: from the interrupt being posted to the vCPU running guest code again", "targets idling in HLT/WFI (vm.state = \"halted\")"},
    {vcpu_kick_blocked.name, D, "the sender's side of reaching a blocked vCPU, per destination, inside the send's exit: kvm_vcpu_kick -> kvm_vcpu_wake_up wakes the vCPU thread sleeping in kvm_vcpu_block (try_to_wake_up on the sender's pCPU); a running or halt-polling target has no waiter and costs nothing here", "x86 mechanisms x2apic-physical, x2apic-cluster, kvm-pv (ICR-write exits and KVM_HC_SEND_IPI) to targets in HLT whose thread blocks (no halt-polling)"},
    {vcpu_halt_poll_wakeup.name, D, "a halted vCPU whose interrupt KVM's halt-polling loop sees (kvm_vcpu_check_block) before the thread blocks: from the interrupt being posted to the vCPU running guest code again", "x86 mechanisms with halt_poll_ns > 0 (targets in HLT)"},
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
