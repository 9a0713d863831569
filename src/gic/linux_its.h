// ipilab/gic/linux_its.h — the Linux host driver (drivers/irqchip/irq-gic-v3-its.c) for GICv4.1, as a
// model that programs a GicSystem through its registers the way Linux does and answers "which ITS does
// this CPU write?".
//
// Bring-up, in the order Linux runs it:
//  1. its_probe_one() for every ITS in firmware order. its_alloc_tables() programs GITS_BASER2 (vPE
//     table) of every GICv4 ITS: its_probe_baser_psz() tries 64K, 16K, 4K pages until one reads back;
//     a v4.1 ITS with SVPET != 0 copies the GITS_BASER2 value of a sibling already in its_nodes
//     (find_sibling_its: same compute_its_aff, BASER2 valid), so they share one table; otherwise
//     its_parse_indirect_baser() asks for a two-level table when a flat one would exceed two pages
//     (entry size << ITS_MAX_VPEID_BITS > 2 x page), and its_setup_baser() writes Valid | Indirect |
//     Type | Entry_Size | RaWaWb | InnerShareable | Page_Size | Size = pages - 1 | address. Then
//     GITS_CBASER (a 64 KiB queue: Size = 15, RaWaWb, InnerShareable, Valid), GITS_CWRITER = 0 and
//     GITS_CTLR.Enabled (| ImDe on v4). list_add() puts the ITS at the HEAD of its_nodes, so its_nodes
//     is in reverse firmware order.
//  2. its_init(): has_v4 / has_v4_1 over all ITSs; has_rvpeid = every RD has GICR_TYPER.RVPEID, cleared
//     when no ITS is v4.1.
//  3. Per CPU in boot order (default: CPU number order), when has_rvpeid: allocate_vpe_l1_table() writes
//     GICR_VPROPBASER: inherit_vpe_l1_table_from_rd() (the first already-booted CPU, in CPU-number
//     order, with the same compute_common_aff: its GICR_VPROPBASER with Z cleared), else
//     inherit_vpe_l1_table_from_its() (the first v4.1 ITS in its_nodes with SVPET != 0, equal
//     affinity and a valid BASER2: Valid | Indirect | Page_Size | address | Shareability | InnerCache
//     | Size = BASER2 pages - 1), else a private table (page size probed by writing 64K; Indirect when
//     one page holds fewer than ITS_MAX_VPEID entries; RaWb, InnerShareable, Z, Valid). The seed
//     patch f1a3fac4095c records the ITS in the per-CPU local_4_1_its (copied from the CPU inherited
//     from, set to the ITS inherited from, NULL for a private table).
//
// find_4_1_its(): PreSeed = the first v4.1 ITS in its_nodes (the LAST one firmware reported);
// PostSeed = this CPU's local_4_1_its, else the first v4.1 ITS in its_nodes (not cached).
// VMOVP: when every GICv4 ITS has GITS_TYPER.VMOVP = 1, one VMOVP to list_first_entry(its_nodes)
// (whatever the policy); otherwise a sequence-numbered VMOVP to every GICv4 ITS in its_nodes order.
//
// Sending (BUILD_SINGLE_CMD_FUNC): each its_send_*() is one batch — the command and, when the builder
// returns a sync object, a VSYNC — written at the driver's own cmd_write (waiting while the queue is
// full, its_allocate_entry), then GITS_CREADR is read, GITS_CWRITER written, and the CPU waits for
// completion (its_wait.h). Version-dependent rules (Behaviour):
//  * the wait predicate (its_wait.h; a050fa5476d4);
//  * its_vpe_set_affinity() refuses (-EINVAL) a VMOVP for a vPE whose vmapp_count is 0 (1442ee001198,
//    CVE-2024-50192, v6.12); before it the VMOVP and its VSYNC went out naming an unmapped vPE;
//  * an unmapping VMAPP on v4.1 is self-synchronising, no VSYNC (80e9963fb3b5, v6.9); before it a VSYNC
//    naming the just-unmapped vPE followed.
// The model refuses the other calls that would emit a VSYNC for a vPE mapped on no ITS (configure_vsgi,
// clear_vsgi_pending, send_invdb): Linux cannot reach them then (the vPE's SGIs are activated only
// after the vPE is), so issuing them would be inventing traffic.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "common/enum_names.h"
#include "gic/gic_system.h"
#include "gic/its_command.h"
#include "gic/its_wait.h"

namespace ipilab::gic {

/// Linux compute_common_aff(): the part of GICR_TYPER.Affinity that RDs sharing LPI/vPE configuration
/// have in common: Affinity & ~(0xFFFFFFFF >> (8 * CommonLPIAff)). 0 when CommonLPIAff = 0.
std::uint32_t compute_common_aff(std::uint64_t gicr_typer);
/// Linux compute_its_aff(): compute_common_aff of a GICR_TYPER built with CommonLPIAff := SVPET and
/// Affinity := GITS_MPIDR.
std::uint32_t compute_its_aff(std::uint64_t gits_typer, std::uint32_t gits_mpidr);

/// Which find_4_1_its() runs: before or after the seed patch f1a3fac4095c.
enum class Find41Policy { PreSeed, PostSeed };
/// find_4_1_its's two behaviours as parameters, scripts and reports name them: "pre-seed" (the first
/// v4.1 ITS of its_nodes, i.e. the last one firmware reported) and "post-seed" (the per-CPU
/// local_4_1_its of f1a3fac4095c, "irqchip/gic-v4.1: Use local 4_1 ITS to generate VSGI").
inline constexpr EnumName<Find41Policy> kFind41PolicyNames[] = {{Find41Policy::PreSeed, "pre-seed"},
                                                                {Find41Policy::PostSeed, "post-seed"}};
/// "pre-seed" / "post-seed" (kFind41PolicyNames).
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
  std::uint64_t vpropbaser = 0;         ///< the GICR_VPROPBASER value written (read back)
  int mask_id = -1;                     ///< identity of the vpe_table_mask cpumask this CPU joined
  std::optional<int> local_4_1_its;     ///< the seed patch's per-CPU pointer (nullopt = NULL)
  /// gic_data_rdist()->vpe_l1_base as a PA: the table's base for every RD since 8b718d403c5c; before
  /// it only for a Private table (nullopt = NULL, what an inheriting RD had).
  std::optional<std::uint64_t> vpe_l1_base;
  std::uint64_t l1_bytes_allocated = 0; ///< Private: the bytes alloc_pages() gave the L1 table (0 otherwise)
};

/// One command Linux issued, and where.
struct IssuedCommand {
  int its = -1;
  ItsCommand command;
};

/// What one driver call did: the commands it issued, and the completion wait of each batch.
struct ItsCall {
  std::vector<IssuedCommand> commands;      ///< in issue order
  std::vector<ItsWaitTicket> tickets;       ///< one per posted batch (its_send_single_(v)command)
  std::vector<ItsWaitResult> waits;         ///< one per waited batch (empty when waits are deferred)
  std::optional<std::string> refused;       ///< the driver returned an error and issued nothing
  std::vector<std::string> notes;           ///< driver-side remarks (queue not draining, cmd_write != CWRITER)
  // Sequence access to `commands` (what the calls returned before they returned an ItsCall).
  std::size_t size() const { return commands.size(); }
  bool empty() const { return commands.empty(); }
  const IssuedCommand& operator[](std::size_t i) const { return commands[i]; }
  auto begin() const { return commands.begin(); }
  auto end() const { return commands.end(); }
  /// Sums over `waits`, for pricing.
  std::uint64_t waited_commands() const;
  std::uint64_t waited_bytes() const;
  std::uint64_t polls() const;
  /// Every wait completed (true when nothing was waited for).
  bool all_completed() const;
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
  /// Version-dependent behaviour (see file comment). Defaults: current mainline.
  struct Behaviour {
    WaitPredicate wait = WaitPredicate::Linear;  ///< Offsets = before a050fa5476d4 (v5.2)
    bool refuse_vmovp_unmapped = true;           ///< false = before 1442ee001198 (CVE-2024-50192, v6.12)
    bool vsync_after_unmap = false;              ///< true = before 80e9963fb3b5 (v6.9)
    /// While a CPU waits on an ITS in ItsProcessing::Manual, the ITS executes this many commands per
    /// udelay(1) (a model parameter, not a measured rate; 0 = the ITS makes no progress).
    std::uint64_t its_commands_per_poll = 1;
  };
  struct Options {
    std::vector<int> boot_order;               ///< CPUs in bring-up order; empty = 0, 1, ..., N-1
    std::uint64_t queue_pa = 0x4000'0000;      ///< command queue of ITS i at queue_pa + i * 64 KiB
    std::uint64_t table_pa = 0x5000'0000;      ///< vPE tables are allocated upwards from here (naturally aligned)
    std::uint64_t vpt_pa = 0x8000'0000;        ///< VPT of vPE v at vpt_pa + v * 64 KiB (placeholder)
    std::uint64_t vconf_pa = 0x7000'0000;      ///< the VM's VCONF table (placeholder)
    std::uint32_t doorbell_base = 8192;        ///< default doorbell of vPE v = doorbell_base + v (an LPI)
    std::uint8_t vpt_size = 15;                ///< LPI_NRBITS - 1
    unsigned max_vpeid_bits = 16;              ///< ITS_MAX_VPEID_BITS (16 unless GICD_TYPER2.VIL)
    /// false: allocate_vpe_l1_table() as in Linux v5.6-rc1, before e88bd316e597 ("irqchip/gic-v4.1:
    /// Fix programming of GICR_VPROPBASER_4_1_SIZE": Size was written as the page count, not count - 1,
    /// so the register claims one L1 page more than was allocated) and 8b718d403c5c ("irqchip/gic-v4.1:
    /// Set vpe_l1_base for all redistributors": an RD that inherits its table kept vpe_l1_base NULL).
    bool vpe_l1_fixes = true;
    Behaviour behaviour;
  };

  /// Runs the whole bring-up on `sys` (which must outlive the driver): programs vPE tables and command
  /// queues through the registers. Throws InputError on a bad boot order (not a permutation of the CPUs).
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
  /// The ITS that allocated the vPE table `its` uses: itself, or the sibling whose GITS_BASER2
  /// find_sibling_its() copied (it stays the owner: the memory is its its->tables[2]); nullopt when
  /// the ITS has no valid GITS_BASER2.
  std::optional<int> its_vpe_table_owner(int its) const;
  /// The ITS that allocated the vPE table `cpu`'s redistributor uses (through
  /// inherit_vpe_l1_table_from_its, directly or via an earlier RD); nullopt when the RDs allocated
  /// it themselves (VpeTableSource::Private) or no table was set up.
  std::optional<int> rd_vpe_table_owner(int cpu) const;
  /// The GITS_BASER2 value its_alloc_tables() left on `its` (0 when the ITS is not GICv4).
  std::uint64_t its_baser2(int its) const;
  /// Notes from bring-up (a BASER value that did not stick, no page size accepted, ...); empty when clean.
  const std::vector<std::string>& bringup_notes() const { return bringup_notes_; }

  /// find_4_1_its() on `cpu` under `policy`; nullopt when no v4.1 ITS exists.
  std::optional<int> find_4_1_its(int cpu, Find41Policy policy) const;
  /// find_4_1_its() plus sockets, for pricing.
  ItsChoice choose_sgir_its(int sender_cpu, Find41Policy policy) const;
  /// ITSs a VMOVP goes to, in order (its_send_vmovp).
  std::vector<int> vmovp_targets() const;

  Behaviour& behaviour() { return options_.behaviour; }
  const Behaviour& behaviour() const { return options_.behaviour; }
  /// When true, calls post their batches but do not wait; wait() each ItsCall::tickets entry later.
  void defer_waits(bool defer) { defer_waits_ = defer; }
  /// its_wait_for_range_completion() for a posted batch, with the behaviour's predicate (or `predicate`).
  ItsWaitResult wait(const ItsWaitTicket& ticket, std::optional<WaitPredicate> predicate = std::nullopt);

  // --- what KVM asks the driver to do; each returns what it issued (command errors: sys.command_errors()) ---
  /// its_vpe_irq_domain_activate (eager mapping on v4.1): VMAPP(V=1) + VSYNC, VINVALL + VSYNC on every
  /// GICv4 ITS in its_nodes order. Alloc = 1 on the first map of the vPE anywhere (vmapp_count 0 -> 1).
  ItsCall map_vpe(std::uint16_t vpeid, int cpu);
  /// The same on one chosen ITS only (Linux maps eagerly on all; this models a vPE mapped on one ITS).
  ItsCall map_vpe_on(std::uint16_t vpeid, int cpu, int its);
  /// VMAPP(V=0) on every ITS the vPE is mapped on, in its_nodes order (no VSYNC on v4.1 unless
  /// Behaviour::vsync_after_unmap); Alloc = 1 on the last unmap (vmapp_count 1 -> 0).
  ItsCall unmap_vpe(std::uint16_t vpeid);
  /// its_vpe_set_affinity -> its_send_vmovp: VMOVP (+ VSYNC) to vmovp_targets(). Refused when the vPE
  /// is mapped on no ITS (see Behaviour); nothing is sent when the vPE is already on `cpu`.
  ItsCall move_vpe(std::uint16_t vpeid, int cpu);
  /// its_configure_sgi(clear = false): VSGI + VSYNC to find_4_1_its(sender_cpu).
  ItsCall configure_vsgi(Find41Policy policy, int sender_cpu, std::uint16_t vpeid, std::uint8_t vintid,
                         const VsgiConfig& config);
  /// its_configure_sgi(clear = true): VSGI(Clear = 1) + VSYNC to find_4_1_its(sender_cpu).
  ItsCall clear_vsgi_pending(Find41Policy policy, int sender_cpu, std::uint16_t vpeid, std::uint8_t vintid);
  /// its_vpe_4_1_send_inv: INVDB + VSYNC to find_4_1_its(sender_cpu).
  ItsCall send_invdb(Find41Policy policy, int sender_cpu, std::uint16_t vpeid);
  /// Other CPUs' traffic on `its`: `count` SYNC commands naming `cpu`'s RD, posted as one batch (the sync
  /// objects of physical-LPI commands; used to place CREADR/CWRITER and to load the queue). Not waited.
  ItsCall post_sync_traffic(int its, int cpu, std::size_t count);
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
  /// Linux's vpe->vmapp_count (VMAPP V=1 minus V=0 issued for the vPE, over all ITSs).
  int vmapp_count(std::uint16_t vpeid) const;
  /// The ITSs the driver has mapped `vpeid` on, ascending.
  std::vector<int> mapped_on(std::uint16_t vpeid) const;
  /// Every vPE the driver has mapped (or tried to move) so far, ascending.
  std::vector<std::uint16_t> known_vpes() const;
  /// The driver's its->cmd_write offset for `its` (where its next command goes).
  std::uint32_t cmd_write(int its) const;

 private:
  struct Batch {
    std::vector<ItsCommand> cmds;  // the command, then its sync object (if any)
    std::string builder;
  };
  void send(ItsCall& call, int its, Batch batch);
  bool allocate_entry(ItsCall& call, int its);
  std::optional<int> first_v4_1() const;
  std::uint64_t alloc_pa(std::uint64_t bytes);
  void alloc_its_vpe_table(int its);
  void allocate_vpe_l1_table(int cpu, std::vector<bool>& booted, int& next_mask);
  ItsCall refuse_unmapped(std::uint16_t vpeid, std::string_view what) const;
  ItsCall vsgi_command(Find41Policy policy, int sender_cpu, const VsgiCmd& c);

  GicSystem* sys_;
  Options options_;
  std::vector<int> its_nodes_;
  bool has_v4_ = false, has_v4_1_ = false, has_rvpeid_ = false;
  std::vector<CpuVpeTable> cpus_;
  std::map<int, std::vector<int>> masks_;       // mask id -> CPUs
  std::map<std::uint16_t, int> vpe_cpu_;        // vPEID -> col_idx
  std::map<std::uint16_t, int> vmapp_count_;    // vPEID -> vpe->vmapp_count
  std::map<std::uint16_t, std::set<int>> mapped_on_;  // vPEID -> ITSs with a VMAPP(V=1) outstanding
  std::uint16_t vmovp_seq_ = 0;
  std::map<int, int> its_list_nr_;              // ITS -> ITSList bit (VMOVP = 0 ITSs only)
  std::vector<std::uint32_t> cmd_write_;        // its->cmd_write offset per ITS
  std::vector<std::uint64_t> cmd_base_pa_;      // its->cmd_base per ITS
  std::vector<std::uint64_t> baser2_;           // its->tables[2].val per ITS
  std::vector<int> its_owner_;                  // ITS -> the ITS that allocated its BASER2 table (-1: none)
  std::uint64_t next_pa_ = 0;
  bool defer_waits_ = false;
  std::vector<std::string> bringup_notes_;
};

}  // namespace ipilab::gic
