// ipilab/gic/its_script.h — `ipilab gic its SCRIPT`: a script of ITS / redistributor register writes,
// guest-memory writes, ITS commands and Linux host-driver calls, run step by step against a GicSystem
// (gic_system.h) and a LinuxItsDriver (linux_its.h), with the state after every step.
//
// The format is documented in docs/gic-its.md (the contract); in short, one statement per line, `#`
// starts a comment, numbers are decimal or 0x-hex (`_` allowed between digits), words are
// case-insensitive except names given with `as=`:
//
//   system sockets=2 cpus_per_socket=2 [common_lpi_aff=0..3] [socket_aff=2|3] [cluster=16] [svpet=0..3]
//          [vmovp=1] [pta=0] [vpeid_bits=16] [vpe_entry_bytes=32] [processing=eager|manual]
//          [on_error=skip|stall] [boot=linux|none] [linux=mainline|v5.6-rc1]  (first statement, once)
//   its N [virtual=] [vmapp=] [vsgi=] [vmovp=] [svpet=] [mpidr=] [socket=] [page_sizes=4k,16k,64k]
//         [indirect=] [entry_bytes=]                                    (before the first step)
//   driver [wait=linear|offsets] [vmovp_unmapped=refuse|send] [unmap_vsync=0|1]
//          [find41=post-seed|pre-seed] [its_rate=N]
//   write itsN|rdN REGISTER (VALUE | FIELD=VALUE...)
//   mem ADDRESS (COMMAND FIELD=VALUE... | bytes HEX...)
//   push itsN COMMAND FIELD=VALUE... [count=N]
//   run itsN [N]            mode itsN eager|manual
//   linux map|unmap|move|vsgi|clear|invdb|sgi|schedule|deschedule|traffic|wait ...
//   expect TARGET KEY=VALUE...
//
// Parsing is strict and complete before anything runs: every error is an InputError whose place is
// "FILE:LINE" (and the reason names the word), so the CLI exits 2 with nothing printed. Running never
// throws for what the hardware or the driver refuses: those are events of the step.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "gic/gic_system.h"
#include "gic/its_command.h"
#include "gic/its_wait.h"
#include "gic/linux_its.h"

namespace ipilab::gic {

// ------------------------------------------------------------------------------------------------
// The parsed script

struct ScriptSystem {
  int sockets = 1;
  int cpus_per_socket = 2;
  int socket_aff = 2;                      ///< affinity level holding the socket number (2 or 3)
  int cluster = 16;                        ///< CPUs per Aff1 cluster (Aff1 = index / cluster, Aff0 = index % cluster)
  std::optional<int> common_lpi_aff;       ///< default: 2 with socket_aff 2, 1 with socket_aff 3
  std::optional<int> svpet;                ///< default: common_lpi_aff, or 1 when that is 0
  bool vmovp = true;
  bool pta = false;
  unsigned vpeid_bits = 16;
  int vpe_entry_bytes = 32;
  ItsProcessing processing = ItsProcessing::Eager;
  CommandErrorPolicy on_error = CommandErrorPolicy::Skip;
  bool boot_linux = true;
  bool linux_vpe_l1_fixes = true;          ///< linux=mainline (default) | v5.6-rc1 (LinuxItsDriver::Options::vpe_l1_fixes)
};

struct ScriptItsOverride {
  int its = 0;
  std::optional<bool> vlpis, vmapp, vsgi, vmovp, indirect;
  std::optional<int> svpet, socket, entry_bytes;
  std::optional<std::uint32_t> mpidr;
  std::optional<std::uint8_t> page_sizes;
};

/// `driver ...`: changes of LinuxItsDriver::Behaviour and of the find_4_1_its policy.
struct ScriptDriver {
  std::optional<WaitPredicate> wait;
  std::optional<bool> refuse_vmovp_unmapped;
  std::optional<bool> vsync_after_unmap;
  std::optional<Find41Policy> find41;
  std::optional<std::uint64_t> its_rate;
};

enum class ScriptRegister {
  GitsCtlr, GitsCbaser, GitsCwriter, GitsBaser, GitsSgir,   // ITS
  GicrVpropbaser, GicrVpendbaser,                           // RD
};

struct ScriptWrite {
  bool rd = false;       ///< target is rdN (else itsN)
  int index = 0;         ///< ITS or CPU number
  ScriptRegister reg = ScriptRegister::GitsCtlr;
  int baser_n = 0;       ///< GITS_BASER<n>
  std::uint64_t value = 0;
};

struct ScriptMem {
  std::uint64_t pa = 0;
  std::vector<std::uint8_t> bytes;
};

struct ScriptPush {
  int its = 0;
  CommandBytes bytes{};
  std::uint32_t count = 1;
};

struct ScriptRun {
  int its = 0;
  std::optional<std::uint64_t> max;  ///< nullopt: all that can run
};

struct ScriptMode {
  int its = 0;
  ItsProcessing mode = ItsProcessing::Eager;
};

enum class LinuxOp { Map, Unmap, Move, Vsgi, Clear, Invdb, Sgi, Schedule, Deschedule, Traffic, Wait };

struct ScriptLinux {
  LinuxOp op = LinuxOp::Map;
  std::uint16_t vpe = 0;
  int cpu = -1;            ///< map/move target CPU, schedule/deschedule CPU, traffic RD
  int sender = -1;         ///< vsgi/clear/invdb/sgi: the sending pCPU (find_4_1_its runs there)
  std::optional<int> its;  ///< map: one chosen ITS; traffic: the ITS
  std::uint8_t vintid = 0;
  VsgiConfig config;       ///< vsgi
  bool flag = false;       ///< deschedule: db; schedule: unused
  bool g0 = true, g1 = true;  ///< schedule
  std::uint32_t count = 0; ///< traffic
  std::string as;          ///< post without waiting, the batches are waited with `linux wait NAME`
  std::optional<WaitPredicate> predicate;  ///< wait
};

/// `expect TARGET KEY=VALUE...`: each key compared after the step before it.
struct ScriptExpect {
  enum class Target { Its, Rd, Vpe, Wait, Step, System } target = Target::Its;
  int index = 0;           ///< ITS / CPU / vPE number
  std::string name;        ///< wait NAME
  std::vector<std::pair<std::string, std::string>> keys;  ///< lower-case key, value text as written
};

using ScriptAction = std::variant<ScriptDriver, ScriptWrite, ScriptMem, ScriptPush, ScriptRun, ScriptMode, ScriptLinux,
                                  ScriptExpect>;

struct ScriptStep {
  int line = 0;
  std::string text;  ///< the statement as written (comment stripped, spaces trimmed)
  ScriptAction action;
};

struct ItsScript {
  std::string file;
  int system_line = 0;
  ScriptSystem system;
  std::vector<ScriptItsOverride> its_overrides;
  std::vector<ScriptStep> steps;
};

/// Parses a whole script. Throws InputError("FILE:LINE", reason) at the first problem.
ItsScript parse_its_script(std::string_view text, std::string_view file);

/// The GicSystemConfig a `system` line (and `its` lines) describe.
GicSystemConfig script_system_config(const ScriptSystem& system, const std::vector<ScriptItsOverride>& overrides);

// ------------------------------------------------------------------------------------------------
// Running it

struct ItsView {
  int its = 0;
  std::uint32_t ctlr = 0;
  std::uint64_t cbaser = 0, cwriter = 0, creadr = 0, baser2 = 0;
  bool enabled = false, stalled = false;
  std::size_t pending = 0;             ///< commands between CREADR and CWRITER
  std::uint64_t executed = 0;          ///< ItsStats::commands
  std::uint64_t errors = 0;            ///< command errors on this ITS so far
  ItsProcessing processing = ItsProcessing::Eager;
  std::optional<std::uint32_t> driver_cmd_write;  ///< Linux's its->cmd_write (boot=linux)
  std::optional<VpeTableId> table;
  std::vector<std::pair<std::uint16_t, int>> vpes;  ///< vPEID -> RD CPU in this ITS's table
};

struct RdView {
  int cpu = 0;
  std::uint64_t vpropbaser = 0, vpendbaser = 0;
  std::optional<VpeTableId> table;
  std::optional<int> local_4_1_its;  ///< boot=linux
  std::optional<std::uint64_t> vpe_l1_base;  ///< boot=linux: the driver's vpe_l1_base (nullopt = NULL)
  std::uint64_t l1_bytes_allocated = 0;      ///< boot=linux: bytes of a private L1 table
  bool linux_driver = false;                 ///< boot=linux: the two fields above are the driver's
};

struct VpeView {
  std::uint16_t vpeid = 0;
  std::optional<int> cpu;            ///< the driver's vpe->col_idx
  int vmapp_count = 0;
  std::vector<int> mapped_on;        ///< ITSs the driver mapped it on
  std::vector<int> in_tables_of;     ///< ITSs whose vPE table has an entry for it
  std::uint16_t pending = 0;         ///< vSGI pending bits
  std::uint16_t enabled = 0;         ///< vSGI enable bits
  std::optional<int> resident_on;    ///< RD where GICR_VPENDBASER names it
};

struct StateView {
  std::vector<ItsView> its;
  std::vector<RdView> rds;
  std::vector<VpeView> vpes;
  std::size_t command_errors = 0;
};

struct NamedWait {
  std::string name;
  ItsWaitResult result;
};

struct StepResult {
  int line = 0;
  std::string text;
  std::string kind;                         ///< "system", "write", "mem", "push", "run", "mode", "driver", "linux", "expect"
  std::vector<CommandError> command_errors; ///< raised during this step
  std::vector<RegisterNote> register_notes; ///< raised during this step
  std::optional<std::string> refused;       ///< the driver refused the call
  std::vector<std::string> notes;           ///< driver remarks, run counts, what the step did
  std::vector<IssuedCommand> issued;        ///< commands the driver posted
  std::vector<NamedWait> waits;             ///< completion waits that ran in this step
  std::vector<std::string> posted_as;       ///< batches posted without waiting, under which name
  std::optional<SgirWriteResult> sgir;      ///< GITS_SGIR writes (write itsN GITS_SGIR / linux sgi)
  std::vector<std::string> expect_failures; ///< expect: "its0 CREADR: expected 0x40, got 0x60"
  StateView state;                          ///< after the step
};

struct ItsScriptResult {
  std::string file;
  std::string system_summary;               ///< one line: sockets, CPUs, ITS features, CommonLPIAff, SVPET, processing
  std::vector<StepResult> steps;            ///< steps[0] is the system bring-up
  std::vector<std::string> bringup_notes;
  std::size_t expectations = 0;             ///< expect keys checked
  std::size_t expectations_failed = 0;
  std::vector<std::string> cpu_sources;     ///< boot=linux: VpeTableSource name per CPU
};

/// Runs a parsed script. Throws only on internal errors (a parsed script cannot fail to run).
ItsScriptResult run_its_script(const ItsScript& script);

std::string_view its_processing_name(ItsProcessing mode);

}  // namespace ipilab::gic
