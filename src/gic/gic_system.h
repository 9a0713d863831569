// ipilab/gic/gic_system.h — the hardware side of GICv4.1 vSGI delivery: ITSs, redistributors, vPE
// tables, residency and per-vPE vSGI state. All GIC state of a simulated host lives here.
//
// What is modelled (Arm IHI 0069H.b; Linux drivers/irqchip/irq-gic-v3-its.c for what software does):
//  * ITS nodes in firmware order (index = "ITS id"), each with GITS_TYPER, GITS_MPIDR affinity, the
//    socket it sits on, a vPEID width, GITS_CTLR, GITS_BASER0..7 and a command queue (its_queue.h)
//    over guest memory (guest_memory.h, shared by every ITS and RD of the system).
//  * Command processing (§5.2, GITS_CTLR / GITS_CWRITER register descriptions): commands run only while
//    GITS_CTLR.Enabled = 1 and GITS_CBASER.Valid = 1, from CREADR towards CWRITER; disabling stops at
//    CREADR and re-enabling resumes there (nothing executed is replayed). ItsProcessing::Eager runs
//    them as soon as they can run (on a CWRITER write, on enable, on Retry), like QEMU's ITS does;
//    Manual runs them only when process_commands() is called, so a slow ITS can be modelled.
//  * Register writes the architecture calls UNPREDICTABLE (GITS_CBASER or GITS_BASER<n> while the ITS
//    is enabled, enabling with CBASER.Valid = 0, ITS_Number while enabled) are refused: the register
//    keeps its value and register_notes() says why. RO fields (BASER Type/Entry_Size, VPROPBASER
//    Entry_Size, CTLR.Quiescent) keep the hardware's value; an unsupported Page_Size reads back the
//    previous one (what Linux its_probe_baser_psz relies on).
//  * One redistributor per physical CPU (index = pCPU number) with GICR_TYPER, its socket, its
//    physical address, GICR_VPENDBASER (residency) and GICR_VPROPBASER (GICv4.1 form).
//  * vPE tables: GITS_BASER2 of an ITS and GICR_VPROPBASER of an RD each name a table by its physical
//    address; ITSs and RDs naming the same address share it (Linux find_sibling_its /
//    inherit_vpe_l1_table_from_*). VMAPP/VMOVP write entries (vPEID -> RD) into the table of the ITS
//    that runs them; a GITS_SGIR write looks the vPE up in the written ITS's table, so it reaches the
//    vPE's RD from any ITS that shares the table.
//  * VMOVP on an ITS with GITS_TYPER.VMOVP = 1 updates the vPE in every table that maps it (the
//    hardware keeps the ITSs coherent, which is what "one VMOVP to one ITS is enough" means); with
//    VMOVP = 0 only the executing ITS's table changes (software must send one per ITS).
//  * vSGI state per vPEID (16 pending bits, and enable / priority / group per vINTID), shared by all
//    ITSs: Linux gives a vPE the same VPT on every ITS, so the state is the vPE's, not an ITS's.
//  * Default doorbell: armed when the vPE is descheduled with GICR_VPENDBASER.DB = 1, fired at most once
//    by a vSGI made pending while the vPE is not resident (Linux its_vpe_4_1_deschedule comment).
// Command errors (unmapped vPE, vPEID beyond the ITS's width, unknown RD, malformed bytes, a command
// the ITS does not support) are recorded in command_errors() with the command and the vPE; the
// command has no effect and the ITS goes on (CommandErrorPolicy::Skip, default) or stalls
// (CommandErrorPolicy::Stall): the architecture lets an implementation ignore the command or stall,
// and report a system error (Linux 80e9963fb3b5: "VSYNC is allowed to deliver an SError when
// referencing a non existent VPE"). Nothing throws on hostile queue contents. Bad configuration
// throws InputError naming the field ("its[1].vpeid_bits").
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gic/guest_memory.h"
#include "gic/its_command.h"
#include "gic/its_queue.h"
#include "gic/registers.h"
#include "gic/sgir.h"
#include "gic/table_registers.h"

namespace ipilab::gic {

/// Page sizes a GITS_BASER<n> or GICR_VPROPBASER accepts: bit 0 = 4K, bit 1 = 16K, bit 2 = 64K.
inline constexpr std::uint8_t kAllPageSizes = 0b111;

/// Configuration of one ITS node.
struct ItsConfig {
  GitsTyper typer;                ///< feature bits (VLPIS, PTA, VMOVP, VSGI, VMAPP, SVPET, ...)
  std::uint32_t mpidr = 0;        ///< GITS_MPIDR affinity, Aff3.Aff2.Aff1 in [31:8]; [7:0] must be 0
  int socket = 0;                 ///< physical package the ITS sits on (for pricing by the simulator)
  unsigned vpeid_bits = 16;       ///< vPEIDs accepted are 0 .. 2^vpeid_bits - 1 (1..16)
  std::uint64_t base_pa = 0;      ///< ITS control frame address; GITS_SGIR at base_pa + 0x20020
  std::uint8_t vpe_entry_bytes = 32;  ///< GITS_BASER2.Entry_Size + 1 (RO, IMPLEMENTATION DEFINED), 1..32
  std::uint8_t baser_page_sizes = kAllPageSizes;  ///< GITS_BASER<n>.Page_Size values supported
  bool baser_indirect = true;     ///< GITS_BASER<n>.Indirect can be set (two-level tables)
};

/// Configuration of the redistributor of one physical CPU.
struct RedistributorConfig {
  GicrTyper typer;                ///< Affinity, Processor_Number, CommonLPIAff, RVPEID, VSGI, ...
  int socket = 0;                 ///< physical package of the CPU and its RD
  std::uint64_t rd_pa = 0;        ///< RD_base address, 64 KiB aligned (RDbase = rd_pa >> 16 when PTA = 1)
  std::uint8_t vpe_entry_bytes = 32;  ///< GICR_VPROPBASER.Entry_Size as bytes (RO): 8..64, a multiple of 8
  std::uint8_t vpropbaser_page_sizes = kAllPageSizes;  ///< GICR_VPROPBASER.Page_Size values supported
};

/// What an ITS does after a command error.
enum class CommandErrorPolicy { Skip, Stall };
/// When an ITS executes the commands software has posted (see file comment).
enum class ItsProcessing { Eager, Manual };

struct GicSystemConfig {
  std::vector<ItsConfig> its;                   ///< firmware (MADT / DT) order
  std::vector<RedistributorConfig> redistributors;  ///< index = physical CPU number
  CommandErrorPolicy on_command_error = CommandErrorPolicy::Skip;
  ItsProcessing processing = ItsProcessing::Eager;
};

using VpeTableId = int;

/// One vPE table entry as VMAPP/VMOVP leave it.
struct VpeTableEntry {
  int rd_cpu = -1;               ///< physical CPU whose redistributor hosts the vPE
  std::uint64_t vpt_pa = 0;
  std::uint64_t vconf_pa = 0;
  std::uint8_t vpt_size = 0;
  std::uint32_t default_db = 0;
};

/// Configuration of one vSGI (set by VSGI with Clear = 0). Linux's initial state: disabled, 0, group 0.
struct VsgiConfig {
  bool enable = false;
  std::uint8_t priority = 0;     ///< 8-bit priority (low nibble 0)
  bool group = false;            ///< group 1 when true
  friend bool operator==(const VsgiConfig&, const VsgiConfig&) = default;
};

/// vSGI state of one vPE.
struct VpeVsgiState {
  std::uint16_t pending = 0;               ///< bit n = vSGI n pending (GICR_VSGIPENDR.Pending)
  std::array<VsgiConfig, 16> config{};
  bool doorbell_armed = false;             ///< descheduled with DB = 1 and no doorbell fired since
};

enum class CommandErrorKind {
  Malformed,             ///< bytes that are no modelled command (unknown opcode, reserved bits)
  NotSupported,          ///< a virtual command on an ITS without VLPIS, or a v4.1 command without VMAPP
  VpeidOutOfRange,       ///< vPEID >= 2^vpeid_bits of this ITS
  UnmappedVpe,           ///< the vPE has no valid entry in this ITS's vPE table
  UnknownRedistributor,  ///< RDbase names no redistributor (address or processor number)
  NoVpeTable,            ///< the ITS has no vPE table (GITS_BASER2 not valid)
  QueueUnavailable,      ///< submit(): the queue is disabled or stalled and full, the command was dropped
};
std::string_view command_error_kind_name(CommandErrorKind kind);

/// A command the ITS refused; it had no effect.
struct CommandError {
  int its = -1;
  std::uint32_t queue_offset = 0;          ///< CREADR offset of the command
  std::uint8_t opcode = 0;                 ///< DW0[7:0]
  CommandErrorKind kind = CommandErrorKind::Malformed;
  std::string message;                     ///< "ITS 0: VMOVP at 0x00a0: vPE 0x5 is not mapped on this ITS"
  std::optional<std::uint16_t> vpeid;      ///< the vPE the command named, when it names one
};

/// A register write that was refused or changed on the way (RO field, unsupported value).
struct RegisterNote {
  std::string reg;          ///< "ITS 0 GITS_CBASER", "RD 3 GICR_VPROPBASER"
  bool applied = true;      ///< false: the register kept its previous value
  std::string message;
};

/// What a register write did.
struct RegisterWriteResult {
  bool applied = true;                 ///< false: refused, the register is unchanged
  std::vector<std::string> notes;      ///< why refused, or which fields did not take the written value
};

/// Outcome of a GITS_SGIR write.
enum class SgirOutcome {
  DeliveredResident,   ///< pending set; vPE resident on its RD with the group enabled: presented to the vCPU interface
  PendingNotResident,  ///< pending set; vPE not resident (or group disabled): doorbell candidate
  /// Pending latched but the vSGI is disabled (VSGI Enable = 0): not presented. A disabled interrupt keeps
  /// its pending state and is forwarded once enabled (IHI 0069 "Enabling the distribution of interrupts",
  /// §4.7 of the v3.0/v4.0 edition); KVM relies on it: vgic_v4_enable_vsgis() writes the pending state of
  /// all 16 vSGIs to the ITS (its_sgi_set_irqchip_state -> GITS_SGIR) whatever their enable.
  PendingDisabled,
  RejectedNoSgirFrame, ///< the ITS has GITS_TYPER.VSGI = 0: the write goes nowhere
  RejectedVpeidOutOfRange,
  RejectedNoVpeTable,
  RejectedUnmappedVpe, ///< the vPE is not mapped in this ITS's vPE table
};
std::string_view sgir_outcome_name(SgirOutcome outcome);

/// What a GITS_SGIR write did.
struct SgirWriteResult {
  int its = -1;                    ///< ITS written
  Sgir sgir;                       ///< decoded fields
  std::uint64_t res0_ignored = 0;  ///< RES0 bits the write carried (ignored by the ITS)
  SgirOutcome outcome = SgirOutcome::RejectedUnmappedVpe;
  int target_cpu = -1;             ///< pCPU of the vPE's RD (from the vPE table), -1 when rejected
  int target_socket = -1;          ///< socket of that RD, -1 when rejected
  bool doorbell = false;           ///< the vPE's default doorbell fired (DB armed, not resident)
  bool accepted() const { return outcome == SgirOutcome::DeliveredResident || outcome == SgirOutcome::PendingNotResident || outcome == SgirOutcome::PendingDisabled; }
  bool resident() const { return outcome == SgirOutcome::DeliveredResident; }
};

/// Per-ITS counters (for pricing and for tests).
struct ItsStats {
  std::uint64_t commands = 0;           ///< commands executed (refused ones included; a stalled one each retry)
  std::uint64_t consumed = 0;           ///< commands CREADR moved past (monotonic, across CBASER writes)
  std::uint64_t command_errors = 0;
  std::map<ItsOpcode, std::uint64_t> by_opcode;  ///< executed without error
  std::uint64_t sgir_writes = 0;
  std::uint64_t cbaser_writes = 0;      ///< GITS_CBASER writes that took effect
};

class GicSystem {
 public:
  /// Validates the configuration (throws InputError naming the field) and builds the system at reset:
  /// every ITS disabled (GITS_CTLR = Quiescent), GITS_CBASER = GITS_CWRITER = GITS_CREADR = 0,
  /// GITS_BASER<n> invalid (Type: 0 Device, 1 Collection, 2 vPE when GITS_TYPER.Virtual), every
  /// GICR_VPROPBASER and GICR_VPENDBASER 0, no vPE table, no vPE resident.
  explicit GicSystem(GicSystemConfig config);
  GicSystem(const GicSystem&) = delete;  // the queues share one guest memory
  GicSystem& operator=(const GicSystem&) = delete;

  std::size_t its_count() const { return config_.its.size(); }
  std::size_t cpu_count() const { return config_.redistributors.size(); }
  const ItsConfig& its_config(int its) const;
  const RedistributorConfig& rd_config(int cpu) const;
  std::uint64_t gits_typer(int its) const { return encode_gits_typer(its_config(its).typer); }
  std::uint64_t gicr_typer(int cpu) const { return encode_gicr_typer(rd_config(cpu).typer); }
  GuestMemory& guest_memory() { return *memory_; }
  const GuestMemory& guest_memory() const { return *memory_; }

  // --- ITS registers ---
  RegisterWriteResult write_gits_ctlr(int its, std::uint32_t value);
  std::uint32_t read_gits_ctlr(int its) const;
  bool its_enabled(int its) const;
  /// GITS_CBASER: refused while GITS_CTLR.Enabled = 1; else CREADR = 0, CWRITER and memory unchanged.
  RegisterWriteResult write_gits_cbaser(int its, std::uint64_t value);
  /// GITS_CWRITER: accepted at any time; with ItsProcessing::Eager the ITS then runs what it can.
  RegisterWriteResult write_gits_cwriter(int its, std::uint64_t value);
  std::uint64_t read_gits_cbaser(int its) const { return queue(its).read_cbaser(); }
  std::uint64_t read_gits_cwriter(int its) const { return queue(its).read_cwriter(); }
  std::uint64_t read_gits_creadr(int its) const { return queue(its).read_creadr(); }
  /// GITS_BASER<n>, n = 0..7 (throws InputError for another n). Only BASER2 (vPE) has an effect.
  RegisterWriteResult write_gits_baser(int its, int n, std::uint64_t value);
  std::uint64_t read_gits_baser(int its, int n) const;
  ItsProcessing processing(int its) const;
  void set_processing(int its, ItsProcessing mode);

  // --- RD registers ---
  /// GICR_VPROPBASER, GICv4.1 form (the RD needs GICR_TYPER.RVPEID): Valid = 1 binds the RD to the vPE
  /// table at Physical_Address.
  RegisterWriteResult write_gicr_vpropbaser(int cpu, std::uint64_t value);
  std::uint64_t read_gicr_vpropbaser(int cpu) const;
  /// Every refused or adjusted register write so far, in order.
  const std::vector<RegisterNote>& register_notes() const { return register_notes_; }

  // --- vPE tables ---
  /// A table not named by any register yet (an address in a region reserved for it, see .cpp).
  VpeTableId create_vpe_table();
  /// Binds `its` to `table` and writes GITS_BASER2 to name it (Valid, flat, one 64K (else 4K) page);
  /// nullopt clears Valid. Bypasses the "ITS enabled" check (host set-up helper).
  void set_its_vpe_table(int its, std::optional<VpeTableId> table);
  /// Binds `cpu`'s RD to `table` and writes GICR_VPROPBASER to name it; nullopt clears Valid.
  void set_rd_vpe_table(int cpu, std::optional<VpeTableId> table);
  std::optional<VpeTableId> its_vpe_table(int its) const;
  std::optional<VpeTableId> rd_vpe_table(int cpu) const;
  /// The physical address of a table's (level-1) memory.
  std::uint64_t vpe_table_pa(VpeTableId table) const;
  /// Every vPE mapped in `table`, by vPEID.
  const std::map<std::uint16_t, VpeTableEntry>& vpe_table_entries(VpeTableId table) const;
  /// The entry of `vpeid` in the table of `its`, if mapped there.
  std::optional<VpeTableEntry> vpe_entry(int its, std::uint16_t vpeid) const;

  // --- ITS command queue ---
  ItsCommandQueue& queue(int its);
  const ItsCommandQueue& queue(int its) const;
  /// Executes commands from CREADR while the ITS is enabled and the queue can be fetched from, at most
  /// `max_commands`. Returns the number of commands executed (a stalled command counts once).
  std::size_t process_commands(int its, std::size_t max_commands = std::numeric_limits<std::size_t>::max());
  /// Driver helper: writes `cmds` into the queue of `its` (processing first whenever it is full, as
  /// Linux waits for CREADR), then processes everything. Returns the number of command errors it caused.
  std::size_t submit(int its, std::span<const ItsCommand> cmds);
  const std::vector<CommandError>& command_errors() const { return errors_; }
  const ItsStats& stats(int its) const;

  // --- direct vSGI generation ---
  /// A 64-bit write of `value` to GITS_SGIR of `its` (IHI 0069H.b, GITS_SGIR register description).
  SgirWriteResult write_sgir(int its, std::uint64_t value);

  // --- redistributors ---
  /// GICR_VPENDBASER write on the RD of `cpu`: Valid = 1 makes vPEID resident there; clearing Valid
  /// deschedules, arming the vPE's doorbell when DB = 1.
  void write_vpendbaser(int cpu, std::uint64_t value);
  std::uint64_t read_vpendbaser(int cpu) const;
  /// The vPE resident on `cpu`'s RD, if any.
  std::optional<std::uint16_t> resident_vpe(int cpu) const;
  /// GICR_VSGIR + GICR_VSGIPENDR read at `cpu`'s RD: the pending bits of `vpeid` (Linux
  /// its_sgi_get_irqchip_state reads at the RD of the vPE's current CPU).
  std::uint16_t read_vsgi_pending(int cpu, std::uint16_t vpeid) const;
  /// Full vSGI state of a vPE (default state if it never had any).
  VpeVsgiState vsgi_state(std::uint16_t vpeid) const;
  /// Every vPE that has vSGI state, by vPEID.
  const std::map<std::uint16_t, VpeVsgiState>& vsgi_states() const { return vsgi_; }
  /// The RD (pCPU) that RDbase field `rdbase` names for `its` (PTA decides the encoding).
  std::optional<int> resolve_rdbase(int its, std::uint64_t rdbase) const;
  /// The RDbase field value `its` needs to name `cpu`'s RD.
  std::uint64_t rdbase_for(int its, int cpu) const;

 private:
  struct ItsState {
    explicit ItsState(std::shared_ptr<GuestMemory> mem) : queue(std::move(mem)) {}
    ItsCommandQueue queue;
    GitsCtlr ctlr;
    std::array<std::uint64_t, 8> baser{};
    std::optional<VpeTableId> vpe_table;
    ItsProcessing processing = ItsProcessing::Eager;
    ItsStats stats;
  };
  struct RdState {
    std::optional<VpeTableId> vpe_table;
    Vpendbaser vpendbaser;
    std::uint64_t vpropbaser = 0;
  };
  struct VpeTable {
    std::uint64_t pa = 0;
    std::map<std::uint16_t, VpeTableEntry> entries;
  };
  void execute(int its, std::span<const std::uint8_t, kItsCommandSize> bytes, std::uint32_t offset);
  void move_vpe(std::uint16_t vpeid, int cpu, const VmovpCmd& c, bool all_tables, VpeTableEntry& entry);
  void apply_vsgi(std::uint16_t vpeid, const VsgiCmd& c);
  bool record_error(int its, std::uint32_t offset, std::uint8_t opcode, CommandErrorKind kind, std::string message,
                    std::optional<std::uint16_t> vpeid = std::nullopt);
  void note(RegisterWriteResult& r, std::string reg, bool applied, std::string message);
  /// A queue/table register written while GITS_CTLR.Enabled = 1 is UNPREDICTABLE (IHI 0069 "The ITS
  /// command interface"; Linux its_force_quiescent disables the ITS first): noted as not applied,
  /// `unchanged` saying what keeps its value. True when refused.
  bool refused_while_enabled(const ItsState& s, RegisterWriteResult& r, const std::string& reg,
                             std::string_view unchanged);
  void set_pending(std::uint16_t vpeid, std::uint8_t vintid);
  VpeTableId table_at(std::uint64_t pa);
  void run_if_eager(int its);
  ItsState& its_state(int its);
  const ItsState& its_state(int its) const;

  GicSystemConfig config_;
  std::shared_ptr<GuestMemory> memory_;
  std::vector<ItsState> its_;
  std::vector<RdState> rds_;
  std::map<VpeTableId, VpeTable> tables_;
  VpeTableId next_table_ = 0;
  std::map<std::uint16_t, VpeVsgiState> vsgi_;
  std::vector<CommandError> errors_;
  std::vector<RegisterNote> register_notes_;
};

}  // namespace ipilab::gic
