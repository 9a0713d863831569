// ipilab/cost/catalog.h — every cost key ipilab knows, declared once (SST-ELI style: sst-core's
// SST_ELI_DOCUMENT_PARAMS, each parameter with its unit, default and description).
//
// A cost key names one primitive operation the simulator prices ("hv.hypercall_entry_exit").
// Each key is a typed constant (cost::keys::hv_hypercall_entry_exit) that the code reading it names,
// so a key is spelled once; the catalog says what the operation is, the kind of unit it takes, and
// who reads it; `ipilab list --costs` prints it. A profile (profile.h) may only set keys of the
// catalog, so a typo in a profile is an error, not a silently unused value. Mechanisms and workloads
// declare the keys they read (workload/mechanism.h, workload/workload.h); a test checks that every
// catalog key has a reader. Adding a key = one constant here + one line in catalog.cpp.
//
// Naming: <layer>.<operation>[_<qualifier>], layers: guest (Linux in the VM), vm (generic VM
// exit/entry), hv (Hyper-V hypercall handling), x2apic / apic (x86 interrupt hardware emulation),
// kvm (KVM hypercalls), its / gic (Arm GIC), mem (cache coherence), vcpu (scheduling of vCPUs).
// Costs of crossing sockets are NOT keys: the simulator prices them from the host's latency matrix
// (topology/host.h: Host::c2c for cache lines, Host::hop for posted messages).
#pragma once

#include <span>
#include <string_view>

namespace ipilab::cost {

/// A cost key: the name a profile sets ([cost.<name>]) and the code reads.
struct CostKey {
  std::string_view name;
  constexpr operator std::string_view() const noexcept { return name; }
  friend constexpr bool operator==(CostKey a, CostKey b) noexcept { return a.name == b.name; }
};

namespace keys {
// Guest (Linux inside the VM).
inline constexpr CostKey guest_bench_loop{"guest.bench_loop"};
inline constexpr CostKey guest_counter_read{"guest.counter_read"};
inline constexpr CostKey guest_ipi_path_call{"guest.ipi_path_call"};
inline constexpr CostKey guest_irq_save_restore{"guest.irq_save_restore"};
inline constexpr CostKey guest_cpumask_word{"guest.cpumask_word"};
inline constexpr CostKey guest_vp_index_lookup{"guest.vp_index_lookup"};
inline constexpr CostKey guest_csd_queue{"guest.csd_queue"};
inline constexpr CostKey guest_csd_unlock{"guest.csd_unlock"};
inline constexpr CostKey guest_callback{"guest.callback"};
inline constexpr CostKey guest_irq_entry{"guest.irq_entry"};
inline constexpr CostKey guest_irq_exit{"guest.irq_exit"};
inline constexpr CostKey guest_eoi{"guest.eoi"};
inline constexpr CostKey guest_tlb_flush_handler{"guest.tlb_flush_handler"};
inline constexpr CostKey guest_ttwu_queue{"guest.ttwu_queue"};
inline constexpr CostKey guest_ttwu_pending{"guest.ttwu_pending"};
inline constexpr CostKey guest_context_switch{"guest.context_switch"};
inline constexpr CostKey guest_idle_poll_exit{"guest.idle_poll_exit"};
// Generic VM exit/entry.
inline constexpr CostKey vm_exit_entry{"vm.exit_entry"};
// Hyper-V hypercall handling (the Microsoft hypervisor, or KVM's Hyper-V emulation).
inline constexpr CostKey hv_hypercall_entry_exit{"hv.hypercall_entry_exit"};
inline constexpr CostKey hv_fast_input_decode{"hv.fast_input_decode"};
inline constexpr CostKey hv_slow_input_map{"hv.slow_input_map"};
inline constexpr CostKey hv_slow_input_copy_per_8b{"hv.slow_input_copy_per_8b"};
inline constexpr CostKey hv_vpset_bank_decode{"hv.vpset_bank_decode"};
inline constexpr CostKey hv_ipi_post_per_target{"hv.ipi_post_per_target"};
// x86 interrupt emulation and KVM.
inline constexpr CostKey x2apic_icr_write_exit{"x2apic.icr_write_exit"};
inline constexpr CostKey x2apic_icr_dest_per_target{"x2apic.icr_dest_per_target"};
inline constexpr CostKey x2apic_icr_write_fastpath{"x2apic.icr_write_fastpath"};
inline constexpr CostKey x2apic_native_icr_write{"x2apic.native_icr_write"};
inline constexpr CostKey ipiv_icr_write{"ipiv.icr_write"};
inline constexpr CostKey ipiv_pid_post{"ipiv.pid_post"};
inline constexpr CostKey xapic_icr_write_exit{"xapic.icr_write_exit"};
inline constexpr CostKey xapic_mmio_exit{"xapic.mmio_exit"};
inline constexpr CostKey avic_icr_write{"avic.icr_write"};
inline constexpr CostKey avic_doorbell{"avic.doorbell"};
inline constexpr CostKey avic_incomplete_ipi{"avic.incomplete_ipi"};
inline constexpr CostKey cpu_idle_exit{"cpu.idle_exit"};
inline constexpr CostKey apic_interrupt_injection{"apic.interrupt_injection"};
inline constexpr CostKey apic_event_injection{"apic.event_injection"};
inline constexpr CostKey kvm_pv_send_ipi_call{"kvm.pv_send_ipi_call"};
inline constexpr CostKey kvm_pv_send_ipi_per_dest{"kvm.pv_send_ipi_per_dest"};
// Arm GIC: GICv4.1 direct vSGI and the GICv3 emulated SGI.
inline constexpr CostKey its_sgir_write{"its.sgir_write"};
inline constexpr CostKey its_sgir_process{"its.sgir_process"};
inline constexpr CostKey its_rd_hop{"its.rd_hop"};
inline constexpr CostKey gic_rd_vsgi_pending{"gic.rd_vsgi_pending"};
inline constexpr CostKey gic_ack_iar{"gic.ack_iar"};
inline constexpr CostKey gic_sgi_trap_entry{"gic.sgi_trap_entry"};
inline constexpr CostKey gic_vgic_dispatch_sgi{"gic.vgic_dispatch_sgi"};
inline constexpr CostKey gic_sgi_trap_return{"gic.sgi_trap_return"};
inline constexpr CostKey gic_vgic_queue_sgi{"gic.vgic_queue_sgi"};
inline constexpr CostKey gic_vcpu_kick{"gic.vcpu_kick"};
inline constexpr CostKey gic_kick_exit{"gic.kick_exit"};
inline constexpr CostKey gic_native_sgi1r_write{"gic.native_sgi1r_write"};
// Arm GIC: the host driver's ITS commands and their completion wait (workload its_commands).
inline constexpr CostKey its_creadr_read{"its.creadr_read"};
inline constexpr CostKey its_command_write{"its.command_write"};
inline constexpr CostKey its_cwriter_write{"its.cwriter_write"};
inline constexpr CostKey its_command_process{"its.command_process"};
inline constexpr CostKey its_wait_udelay{"its.wait_udelay"};
inline constexpr CostKey gic_vgic_mmio_trap{"gic.vgic_mmio_trap"};
// Cache coherence.
inline constexpr CostKey mem_cacheline_smt{"mem.cacheline_smt"};
inline constexpr CostKey mem_cacheline_same_node{"mem.cacheline_same_node"};
inline constexpr CostKey mem_cacheline_same_socket{"mem.cacheline_same_socket"};
inline constexpr CostKey mem_cacheline_cross_socket{"mem.cacheline_cross_socket"};
// vCPU scheduling.
inline constexpr CostKey vcpu_halt_exit{"vcpu.halt_exit"};
inline constexpr CostKey vcpu_halt_wakeup{"vcpu.halt_wakeup"};
inline constexpr CostKey vcpu_preempted_wait{"vcpu.preempted_wait"};
inline constexpr CostKey vcpu_halt_poll_wakeup{"vcpu.halt_poll_wakeup"};
inline constexpr CostKey vcpu_kick_blocked{"vcpu.kick_blocked"};
}  // namespace keys

/// The kind of quantity a key holds; decides which units a profile may use for it.
enum class UnitKind {
  Duration,  ///< a time: "cycles" (converted with the profile's clock_ghz), "ns", "ps" or "us"
};

struct CostKeyInfo {
  std::string_view name;
  UnitKind kind;
  std::string_view description;  ///< what the operation is, and per what it is counted
  std::string_view used_by;      ///< mechanisms / workloads that read it (or "recorded only: ...")
  /// True for a key the simulator never reads (kept so profiles that record it stay valid); the
  /// every-key-has-a-reader test skips these and `used_by` says who writes it.
  bool recorded_only = false;
};

/// All keys, in catalog order (grouped by layer).
std::span<const CostKeyInfo> catalog();
/// The key's entry, or nullptr.
const CostKeyInfo* find_cost_key(std::string_view name);
/// "cycles, ns, ps or us" — the units a kind accepts, for messages.
std::string_view units_of(UnitKind kind);

}  // namespace ipilab::cost
