// ipilab/gic/linux_its.h — the Linux host driver's ITS choices for GICv4.1 (irq-gic-v3-its.c), as a
// model that programs a GicSystem the way Linux does and answers "which ITS does this CPU write?".
//
// Sources: fact sheet gicv41-vsgi.md §0 (the seed patch f1a3fac4095c), §1.4 (vPE table sharing,
// allocate_vpe_l1_table), §1.6 (VMOVP routing, VMAPP/VSGI usage), §2.1 (which ITS each operation
// uses), §2.3 (its_nodes order), §2.4 (post-seed logic), §6 (checklist).
//
// Bring-up, in the order Linux runs it:
//  1. its_probe_one() for every ITS in firmware order: its_alloc_tables() gives each GICv4 ITS a vPE
//     table (GITS_BASER2); a v4.1 ITS with SVPET != 0 reuses the table of a sibling already in
//     its_nodes (find_sibling_its: same compute_its_aff); then list_add() puts the ITS at the HEAD of
//     its_nodes, so its_nodes is in reverse firmware order. The queue gets a 64 KiB GITS_CBASER.
//  2. its_init(): has_v4 / has_v4_1 over all ITSs; has_rvpeid = every RD has GICR_TYPER.RVPEID, cleared
//     when no ITS is v4.1.
//  3. Per CPU in boot order (default: CPU number order), when has_rvpeid: allocate_vpe_l1_table():
//     inherit_vpe_l1_table_from_rd() (first already-booted CPU, in CPU-number order, with the same
//     compute_common_aff), else inherit_vpe_l1_table_from_its() (first v4.1 ITS in its_nodes with
//     SVPET != 0, equal affinity and a valid BASER2), else a private table. The seed patch records the
//     ITS in the per-CPU local_4_1_its (copied from the CPU inherited from, set to the ITS inherited
//     from, NULL for a private table).
//
// find_4_1_its(): PreSeed = the first v4.1 ITS in its_nodes (the LAST one firmware reported);
// PostSeed = this CPU's local_4_1_its, else the first v4.1 ITS in its_nodes (not cached).
// VMOVP: when every GICv4 ITS has GITS_TYPER.VMOVP = 1, one VMOVP to list_first_entry(its_nodes)
// (whatever the policy); otherwise a sequence-numbered VMOVP to every GICv4 ITS in its_nodes order.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string_view>
#include <vector>

#include "gic/gic_system.h"
#include "gic/its_command.h"

namespace ipilab::gic {

/// Linux compute_common_aff(): the part of GICR_TYPER.Affinity that RDs sharing LPI/vPE configuration
/// have in common: Affinity & ~(0xFFFFFFFF >> (8 * CommonLPIAff)) (fact sheet §1.4). 0 when CommonLPIAff = 0.
std::uint32_t compute_common_aff(std::uint64_t gicr_typer);
/// Linux compute_its_aff(): compute_common_aff of a GICR_TYPER built with CommonLPIAff := SVPET and
/// Affinity := GITS_MPIDR (fact sheet §1.4).
std::uint32_t compute_its_aff(std::uint64_t gits_typer, std::uint32_t gits_mpidr);

/// Which find_4_1_its() runs: before or after the seed patch f1a3fac4095c.
enum class Find41Policy { PreSeed, PostSeed };
std::string_view find41_policy_name(Find41Policy policy);

/// Where a CPU's vPE table came from in allocate_vpe_l1_table().
enum class VpeTableSource {
  NotAllocated,      ///< has_rvpeid is false: allocate_vpe_l1_table() does not run
  InheritedFromRd,   ///< inherit_vpe_l1_table_from_rd(): shares an earlier CPU's table
  InheritedFromIts,  ///< inherit_vpe_l1_table_from_its(): adopts an ITS's GITS_BASER2 table
  Private,           ///< allocated its own L1 table
};
std::string_view vpe_table_source_name(VpeTableSource source);

/// A CPU's result of allocate_vpe_l1_table().
struct CpuVpeTable {
  VpeTableSource source = VpeTableSource::NotAllocated;
  int from_cpu = -1;                    ///< InheritedFromRd: the CPU whose table is shared
  int from_its = -1;                    ///< InheritedFromIts: the ITS whose BASER2 is adopted
  std::optional<VpeTableId> table;      ///< the table (GICR_VPROPBASER)
  int mask_id = -1;                     ///< identity of the vpe_table_mask cpumask this CPU joined
  std::optional<int> local_4_1_its;     ///< the seed patch's per-CPU pointer (nullopt = NULL)
};

/// One command Linux issued, and where.
struct IssuedCommand {
  int its = -1;
  ItsCommand command;
};

/// The answer the simulator prices for one vSGI generation (GITS_SGIR write) by a sender pCPU.
struct VsgiRoute {
  Find41Policy policy = Find41Policy::PostSeed;
  int sender_cpu = -1;
  int sender_socket = -1;
  int its = -1;                  ///< ITS written (find_4_1_its on the sender), -1 if there is no v4.1 ITS
  int its_socket = -1;
  bool its_local = false;        ///< its_socket == sender_socket: the MMIO write stays on the sender's socket
  bool from_local_pointer = false; ///< PostSeed and the CPU's local_4_1_its was set (no fallback)
  SgirWriteResult write;         ///< what the ITS did: target_cpu, target_socket, outcome, doorbell
  int target_cpu() const { return write.target_cpu; }
  int target_socket() const { return write.target_socket; }
  bool resident() const { return write.resident(); }
  bool its_to_rd_local() const { return its_socket >= 0 && its_socket == write.target_socket; }
};

/// The ITS choice alone (no write): what find_4_1_its() returns on `sender_cpu`.
struct ItsChoice {
  int its = -1;                  ///< -1 when no v4.1 ITS exists (Linux: NULL)
  int its_socket = -1;
  int sender_socket = -1;
  bool its_local = false;
  bool from_local_pointer = false;
};

class LinuxItsDriver {
 public:
  struct Options {
    std::vector<int> boot_order;               ///< CPUs in bring-up order; empty = 0, 1, ..., N-1
    std::uint64_t queue_pa = 0x4000'0000;      ///< command queue of ITS i at queue_pa + i * 64 KiB
    std::uint64_t vpt_pa = 0x8000'0000;        ///< VPT of vPE v at vpt_pa + v * 64 KiB (placeholder)
    std::uint64_t vconf_pa = 0x7000'0000;      ///< the VM's VCONF table (placeholder)
    std::uint32_t doorbell_base = 8192;        ///< default doorbell of vPE v = doorbell_base + v (an LPI)
    std::uint8_t vpt_size = 15;                ///< LPI_NRBITS - 1
  };

  /// Runs the whole bring-up on `sys` (which must outlive the driver): programs vPE tables and command
  /// queues. Throws InputError on a bad boot order (not a permutation of the CPUs).
  explicit LinuxItsDriver(GicSystem& sys) : LinuxItsDriver(sys, Options{}) {}
  LinuxItsDriver(GicSystem& sys, Options options);

  /// its_nodes, head first (reverse firmware order).
  const std::vector<int>& its_nodes() const { return its_nodes_; }
  bool has_v4() const { return has_v4_; }
  bool has_v4_1() const { return has_v4_1_; }
  bool has_rvpeid() const { return has_rvpeid_; }
  const CpuVpeTable& cpu_vpe_table(int cpu) const;
  /// The CPUs in `cpu`'s vpe_table_mask, ascending (only CPUs brought up).
  std::vector<int> vpe_table_mask(int cpu) const;

  /// find_4_1_its() on `cpu` under `policy`; nullopt when no v4.1 ITS exists.
  std::optional<int> find_4_1_its(int cpu, Find41Policy policy) const;
  /// find_4_1_its() plus sockets, for pricing.
  ItsChoice choose_sgir_its(int sender_cpu, Find41Policy policy) const;
  /// ITSs a VMOVP goes to, in order (its_send_vmovp).
  std::vector<int> vmovp_targets() const;

  // --- what KVM asks the driver to do; each returns the commands it issued (errors: sys.command_errors()) ---
  /// its_vpe_irq_domain_activate (eager mapping on v4.1): VMAPP(V=1) + VSYNC, VINVALL + VSYNC on every
  /// GICv4 ITS in its_nodes order. Alloc = 1 on the first map of the vPE anywhere.
  std::vector<IssuedCommand> map_vpe(std::uint16_t vpeid, int cpu);
  /// VMAPP(V=0) on every GICv4 ITS (self-synchronising on v4.1: no VSYNC); Alloc = 1 on the last unmap.
  std::vector<IssuedCommand> unmap_vpe(std::uint16_t vpeid);
  /// its_vpe_set_affinity -> its_send_vmovp: VMOVP (+ VSYNC) to vmovp_targets().
  std::vector<IssuedCommand> move_vpe(std::uint16_t vpeid, int cpu);
  /// its_configure_sgi(clear = false): VSGI + VSYNC to find_4_1_its(sender_cpu).
  std::vector<IssuedCommand> configure_vsgi(Find41Policy policy, int sender_cpu, std::uint16_t vpeid,
                                            std::uint8_t vintid, const VsgiConfig& config);
  /// its_configure_sgi(clear = true): VSGI(Clear = 1) + VSYNC to find_4_1_its(sender_cpu).
  std::vector<IssuedCommand> clear_vsgi_pending(Find41Policy policy, int sender_cpu, std::uint16_t vpeid,
                                                std::uint8_t vintid);
  /// its_vpe_4_1_send_inv: INVDB (+ VSYNC [verify]) to find_4_1_its(sender_cpu).
  std::vector<IssuedCommand> send_invdb(Find41Policy policy, int sender_cpu, std::uint16_t vpeid);
  /// its_vpe_4_1_schedule: GICR_VPENDBASER = Valid | vGrp0En | vGrp1En | vPEID on `cpu`'s RD.
  void schedule_vpe(int cpu, std::uint16_t vpeid, bool vgrp0_en = true, bool vgrp1_en = true);
  /// its_vpe_4_1_deschedule: clear Valid, DB = `doorbell` (set when the vCPU is about to block).
  void deschedule_vpe(int cpu, bool doorbell);

  /// its_sgi_set_irqchip_state(PENDING, true) on `sender_cpu`: one GITS_SGIR write of
  /// (vpeid << 32 | vintid) to find_4_1_its(sender_cpu). With no v4.1 ITS, its = -1 and the write
  /// result is RejectedNoSgirFrame (Linux never gets here: no SGI domain exists then).
  VsgiRoute send_vsgi(Find41Policy policy, int sender_cpu, std::uint16_t vpeid, std::uint8_t vintid);

  /// The CPU whose RD hosts `vpeid` according to the driver (vpe->col_idx), if mapped.
  std::optional<int> vpe_cpu(std::uint16_t vpeid) const;

 private:
  std::vector<IssuedCommand> submit(int its, std::vector<ItsCommand> cmds);
  std::optional<int> first_v4_1() const;

  GicSystem* sys_;
  Options options_;
  std::vector<int> its_nodes_;
  bool has_v4_ = false, has_v4_1_ = false, has_rvpeid_ = false;
  std::vector<CpuVpeTable> cpus_;
  std::map<int, std::vector<int>> masks_;       // mask id -> CPUs
  std::map<std::uint16_t, int> vpe_cpu_;        // vPEID -> col_idx
  std::map<std::uint16_t, int> vmapp_count_;    // vPEID -> ITSs it is mapped on
  std::uint16_t vmovp_seq_ = 0;
  std::map<int, int> its_list_nr_;              // ITS -> ITSList bit (VMOVP = 0 ITSs only)
};

}  // namespace ipilab::gic
