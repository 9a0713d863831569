// ipilab/gic/gic_system.h — the hardware side of GICv4.1 vSGI delivery: ITSs, redistributors, vPE
// tables, residency and per-vPE vSGI state. All GIC state of a simulated host lives here.
//
// What is modelled (fact sheet gicv41-vsgi.md):
//  * ITS nodes in firmware order (index = "ITS id"), each with GITS_TYPER, GITS_MPIDR affinity, the
//    socket it sits on, a vPEID width, and a command queue (its_queue.h) processed on demand (§1.5).
//  * One redistributor per physical CPU (index = pCPU number) with GICR_TYPER, its socket, its
//    physical address, and GICR_VPENDBASER (residency, §1.3).
//  * vPE tables (§1.4): GITS_BASER2 of an ITS and GICR_VPROPBASER of an RD each name a table (an id
//    the host driver chose: ITSs and RDs naming the same id share it). VMAPP/VMOVP write entries
//    (vPEID -> RD) into the table of the ITS that runs them; a GITS_SGIR write looks the vPE up in the
//    written ITS's table, so it reaches the vPE's RD from any ITS that shares the table (§1.3).
//  * VMOVP on an ITS with GITS_TYPER.VMOVP = 1 updates the vPE in every table that maps it (the
//    hardware keeps the ITSs coherent, which is what "one VMOVP to one ITS is enough" means); with
//    VMOVP = 0 only the executing ITS's table changes (software must send one per ITS).
//  * vSGI state per vPEID (16 pending bits, and enable / priority / group per vINTID), shared by all
//    ITSs: Linux gives a vPE the same VPT on every ITS, so the state is the vPE's, not an ITS's.
//  * Default doorbell (§1.1): armed when the vPE is descheduled with GICR_VPENDBASER.DB = 1, fired at
//    most once by a vSGI made pending while the vPE is not resident [verify, fact sheet §1.3].
// Command errors (unmapped vPE, vPEID beyond the ITS's width, unknown RD, malformed bytes, a command
// the ITS does not support) are recorded in command_errors(); the command has no effect and the ITS
// goes on (CommandErrorPolicy::Skip, default) or stalls (CommandErrorPolicy::Stall). Nothing throws
// on hostile queue contents. Bad configuration throws InputError naming the field ("its[1].vpeid_bits").
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gic/its_command.h"
#include "gic/its_queue.h"
#include "gic/registers.h"
#include "gic/sgir.h"

namespace ipilab::gic {

/// Configuration of one ITS node.
struct ItsConfig {
  GitsTyper typer;                ///< feature bits (VLPIS, PTA, VMOVP, VSGI, VMAPP, SVPET, ...)
  std::uint32_t mpidr = 0;        ///< GITS_MPIDR affinity, Aff3.Aff2.Aff1 in [31:8]; [7:0] must be 0
  int socket = 0;                 ///< physical package the ITS sits on (for pricing by the simulator)
  unsigned vpeid_bits = 16;       ///< vPEIDs accepted are 0 .. 2^vpeid_bits - 1 (1..16)
  std::uint64_t base_pa = 0;      ///< ITS control frame address; GITS_SGIR at base_pa + 0x20020
};

/// Configuration of the redistributor of one physical CPU.
struct RedistributorConfig {
  GicrTyper typer;                ///< Affinity, Processor_Number, CommonLPIAff, RVPEID, VSGI, ...
  int socket = 0;                 ///< physical package of the CPU and its RD
  std::uint64_t rd_pa = 0;        ///< RD_base address, 64 KiB aligned (RDbase = rd_pa >> 16 when PTA = 1)
};

/// What an ITS does after a command error.
enum class CommandErrorPolicy { Skip, Stall };

struct GicSystemConfig {
  std::vector<ItsConfig> its;                   ///< firmware (MADT / DT) order
  std::vector<RedistributorConfig> redistributors;  ///< index = physical CPU number
  CommandErrorPolicy on_command_error = CommandErrorPolicy::Skip;
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
  std::string message;
};

/// Outcome of a GITS_SGIR write.
enum class SgirOutcome {
  DeliveredResident,   ///< pending set; vPE resident on its RD with the group enabled: presented to the vCPU interface
  PendingNotResident,  ///< pending set; vPE not resident (or group disabled): doorbell candidate
  PendingDisabled,     ///< pending latched but the vSGI is disabled (VSGI Enable = 0): not presented
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
  std::uint64_t commands = 0;           ///< commands consumed (including refused ones)
  std::uint64_t command_errors = 0;
  std::map<ItsOpcode, std::uint64_t> by_opcode;  ///< executed without error
  std::uint64_t sgir_writes = 0;
};

class GicSystem {
 public:
  /// Validates the configuration (throws InputError naming the field) and builds the system: no vPE
  /// tables, every command queue disabled (CBASER.Valid = 0), no vPE resident.
  explicit GicSystem(GicSystemConfig config);

  std::size_t its_count() const { return config_.its.size(); }
  std::size_t cpu_count() const { return config_.redistributors.size(); }
  const ItsConfig& its_config(int its) const;
  const RedistributorConfig& rd_config(int cpu) const;
  std::uint64_t gits_typer(int its) const { return encode_gits_typer(its_config(its).typer); }
  std::uint64_t gicr_typer(int cpu) const { return encode_gicr_typer(rd_config(cpu).typer); }

  // --- vPE tables (programmed by the host driver through GITS_BASER2 / GICR_VPROPBASER) ---
  VpeTableId create_vpe_table();
  void set_its_vpe_table(int its, std::optional<VpeTableId> table);
  void set_rd_vpe_table(int cpu, std::optional<VpeTableId> table);
  std::optional<VpeTableId> its_vpe_table(int its) const;
  std::optional<VpeTableId> rd_vpe_table(int cpu) const;
  /// The entry of `vpeid` in the table of `its`, if mapped there.
  std::optional<VpeTableEntry> vpe_entry(int its, std::uint16_t vpeid) const;

  // --- ITS command queue ---
  ItsCommandQueue& queue(int its);
  const ItsCommandQueue& queue(int its) const;
  /// Executes commands from CREADR until the queue is empty or stalled, at most `max_commands`.
  /// Returns the number of commands consumed.
  std::size_t process_commands(int its, std::size_t max_commands = std::numeric_limits<std::size_t>::max());
  /// Driver helper: writes `cmds` into the queue of `its` (processing first whenever it is full, as
  /// Linux waits for CREADR), then processes everything. Returns the number of command errors it caused.
  std::size_t submit(int its, std::span<const ItsCommand> cmds);
  const std::vector<CommandError>& command_errors() const { return errors_; }
  const ItsStats& stats(int its) const;

  // --- direct vSGI generation ---
  /// A 64-bit write of `value` to GITS_SGIR of `its` (fact sheet §1.3 "What happens on a write").
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
  /// The RD (pCPU) that RDbase field `rdbase` names for `its` (PTA decides the encoding).
  std::optional<int> resolve_rdbase(int its, std::uint64_t rdbase) const;
  /// The RDbase field value `its` needs to name `cpu`'s RD.
  std::uint64_t rdbase_for(int its, int cpu) const;

 private:
  struct ItsState {
    ItsCommandQueue queue;
    std::optional<VpeTableId> vpe_table;
    ItsStats stats;
  };
  struct RdState {
    std::optional<VpeTableId> vpe_table;
    Vpendbaser vpendbaser;
  };
  void execute(int its, std::span<const std::uint8_t, kItsCommandSize> bytes, std::uint32_t offset);
  bool record_error(int its, std::uint32_t offset, std::uint8_t opcode, CommandErrorKind kind, std::string message);
  void set_pending(std::uint16_t vpeid, std::uint8_t vintid);

  GicSystemConfig config_;
  std::vector<ItsState> its_;
  std::vector<RdState> rds_;
  std::map<VpeTableId, std::map<std::uint16_t, VpeTableEntry>> tables_;
  VpeTableId next_table_ = 0;
  std::map<std::uint16_t, VpeVsgiState> vsgi_;
  std::vector<CommandError> errors_;
};

}  // namespace ipilab::gic
