// ipilab/gic/its_command.h — the 32-byte ITS commands used for GICv4.1 vPEs and vSGIs (pure codec).
//
// An ITS command is 32 bytes: four little-endian 64-bit doublewords DW0..DW3; the command number is
// DW0[7:0] and GICv4 commands are the physical opcode | 0x20 (Linux arm-gic-v3.h GITS_CMD_*).
// Field positions are those Linux's its_encode_* helpers use (irq-gic-v3-its.c; Arm IHI 0069H.b §5.3):
//
//   SYNC    0x05  DW2[51:16] RDbase
//   VMOVP   0x22  DW0[47:32] SequenceNumber, DW1[15:0] ITSList, DW1[47:32] vPEID, DW2[51:16] RDbase,
//                 DW2[63] DB (v4.1), DW3[31:0] Default_DB (v4.1)
//   VSGI    0x23  DW0[8] Enable, DW0[9] Clear, DW0[10] Group, DW0[23:20] Priority (prio >> 4),
//                 DW0[35:32] vINTID, DW1[47:32] vPEID
//   VSYNC   0x25  DW1[47:32] vPEID
//   VMAPP   0x29  DW0[8] Alloc, DW0[9] PTZ, DW0[51:16] VCONF_addr >> 16, DW1[31:0] Default_DB,
//                 DW1[47:32] vPEID, DW2[51:16] RDbase, DW2[63] V, DW3[4:0] VPT_size, DW3[51:16] VPT_addr >> 16
//   VINVALL 0x2D  DW1[47:32] vPEID
//   INVDB   0x2E  DW1[47:32] vPEID (v4.1 only)
//
// Every bit outside these fields (and the opcode) is treated as reserved: decoding reports it as an
// error. RDbase is kept as the raw field value because its meaning depends on GITS_TYPER.PTA: with
// PTA = 1 it is the redistributor's physical address >> 16, with PTA = 0 the processor number
// (GICR_TYPER.Processor_Number). Addresses (VCONF_addr, VPT_addr) are kept as byte addresses, which
// must be 64 KiB aligned and below 2^52.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace ipilab::gic {

/// Command numbers (DW0[7:0]) of the modelled commands (Linux arm-gic-v3.h GITS_CMD_*).
enum class ItsOpcode : std::uint8_t {
  Sync = 0x05,
  Vmovp = 0x22,
  Vsgi = 0x23,
  Vsync = 0x25,
  Vmapp = 0x29,
  Vinvall = 0x2D,
  Invdb = 0x2E,
};

/// SYNC: wait for the effects of earlier commands on one redistributor.
struct SyncCmd {
  std::uint64_t rdbase = 0;  ///< DW2[51:16] raw (PA >> 16 when PTA = 1, processor number when PTA = 0)
  friend bool operator==(const SyncCmd&, const SyncCmd&) = default;
};

/// VSYNC: wait for the effects of earlier commands on one vPE.
struct VsyncCmd {
  std::uint16_t vpeid = 0;  ///< DW1[47:32]
  friend bool operator==(const VsyncCmd&, const VsyncCmd&) = default;
};

/// VMAPP, GICv4.1 form (GITS_TYPER.VMAPP = 1): map (V = 1) or unmap (V = 0) a vPE to a redistributor.
struct VmappCmd {
  bool alloc = false;            ///< DW0[8]  v4.1: first map / last unmap of this vPE in the system
  bool ptz = false;              ///< DW0[9]  v4.1: VPT known to be zero (Linux always 0)
  std::uint64_t vconf_pa = 0;    ///< DW0[51:16] << 16: the VM's vLPI configuration table (v4.1)
  std::uint32_t default_db = 0;  ///< DW1[31:0] v4.1 default doorbell pINTID (1023 = none)
  std::uint16_t vpeid = 0;       ///< DW1[47:32]
  std::uint64_t rdbase = 0;      ///< DW2[51:16] raw, see file comment
  bool valid = false;            ///< DW2[63] V
  std::uint8_t vpt_size = 0;     ///< DW3[4:0] number of vLPI ID bits - 1
  std::uint64_t vpt_pa = 0;      ///< DW3[51:16] << 16: the vPE's virtual pending table
  friend bool operator==(const VmappCmd&, const VmappCmd&) = default;
};

/// VMOVP: move a vPE to another redistributor.
struct VmovpCmd {
  std::uint16_t sequence_number = 0;  ///< DW0[47:32] (used when GITS_TYPER.VMOVP = 0)
  std::uint16_t its_list = 0;         ///< DW1[15:0]  ITSs that have the vPE mapped (VMOVP = 0 form)
  std::uint16_t vpeid = 0;            ///< DW1[47:32]
  std::uint64_t rdbase = 0;           ///< DW2[51:16] raw, see file comment
  bool db = false;                    ///< DW2[63] v4.1: Default_DB is valid (Linux sets 1)
  std::uint32_t default_db = 0;       ///< DW3[31:0] v4.1
  friend bool operator==(const VmovpCmd&, const VmovpCmd&) = default;
};

/// VSGI (v4.1): configure one vSGI of a vPE (Clear = 0) or clear its pending bit (Clear = 1).
struct VsgiCmd {
  bool enable = false;        ///< DW0[8]
  bool clear = false;         ///< DW0[9]
  bool group = false;         ///< DW0[10] group 1 when set
  std::uint8_t priority = 0;  ///< 8-bit priority; only the top 4 bits are encoded (DW0[23:20] = priority >> 4),
                              ///< so the low nibble must be 0
  std::uint8_t vintid = 0;    ///< DW0[35:32] 0..15
  std::uint16_t vpeid = 0;    ///< DW1[47:32]
  friend bool operator==(const VsgiCmd&, const VsgiCmd&) = default;
};

/// INVDB (v4.1): invalidate cached doorbell state of a vPE.
struct InvdbCmd {
  std::uint16_t vpeid = 0;  ///< DW1[47:32]
  friend bool operator==(const InvdbCmd&, const InvdbCmd&) = default;
};

/// VINVALL: invalidate all cached vLPI configuration of a vPE.
struct VinvallCmd {
  std::uint16_t vpeid = 0;  ///< DW1[47:32]
  friend bool operator==(const VinvallCmd&, const VinvallCmd&) = default;
};

/// One ITS command, tagged by its type.
using ItsCommand = std::variant<SyncCmd, VsyncCmd, VmappCmd, VmovpCmd, VsgiCmd, InvdbCmd, VinvallCmd>;

inline constexpr std::size_t kItsCommandSize = 32;  ///< bytes per command (queue slot)
using CommandBytes = std::array<std::uint8_t, kItsCommandSize>;
using CommandDwords = std::array<std::uint64_t, 4>;

/// The opcode of a command.
ItsOpcode opcode_of(const ItsCommand& cmd);
/// Upper-case mnemonic ("VSGI") of a modelled opcode.
std::string_view opcode_name(ItsOpcode op);
/// Mnemonic of any DW0[7:0] value: modelled, known-but-not-modelled (e.g. "MAPD", "VMAPTI"), or "".
std::string_view any_opcode_name(std::uint8_t op);
/// The vPEID a command names, or nullopt for SYNC.
std::optional<std::uint16_t> vpeid_of(const ItsCommand& cmd);

/// Encodes to DW0..DW3. Throws InputError("<CMD>.<field>", reason) when a field does not fit its bit
/// range (e.g. VSGI vINTID 16, VMAPP VPT_addr not 64 KiB aligned, VSGI priority with a low nibble).
CommandDwords encode_its_dwords(const ItsCommand& cmd);
/// Encodes to 32 bytes, little-endian doublewords (memory order of a queue slot). Same errors.
CommandBytes encode_its_command(const ItsCommand& cmd);

/// Why a byte string is not a modelled command.
enum class CommandDecodeErrorKind {
  WrongLength,        ///< not exactly 32 bytes
  UnknownOpcode,      ///< DW0[7:0] is no ITS command number at all
  UnsupportedOpcode,  ///< a real ITS command this model does not implement (MAPD, VMAPTI, ...)
  ReservedBitsSet,    ///< a bit outside every field of the command is set
};

struct CommandDecodeError {
  CommandDecodeErrorKind kind = CommandDecodeErrorKind::WrongLength;
  std::uint8_t opcode = 0;     ///< DW0[7:0] when at least one byte was given
  int dword = -1;              ///< ReservedBitsSet: which DW holds the first reserved bit set
  std::uint64_t bits = 0;      ///< ReservedBitsSet: the reserved bits set in that DW
  std::size_t byte_offset = 0; ///< first offending byte (WrongLength: the length given)
  std::string message;         ///< one sentence for people ("DW1 has reserved bits 0x... set")
};

/// Either a command or an error; exactly one is set.
struct CommandDecode {
  std::optional<ItsCommand> command;
  std::optional<CommandDecodeError> error;
  bool ok() const { return command.has_value(); }
};

/// Decodes any bytes (total: never throws, never reads outside `bytes`).
CommandDecode decode_its_command(std::span<const std::uint8_t> bytes);
/// Decodes four doublewords (same checks except length).
CommandDecode decode_its_dwords(const CommandDwords& dw);

/// One field of a command layout, for display and generic encoding: DW<dword>[hi:lo]; the value shown
/// to people is field << shift (shift = 16 for addresses stored as PA >> 16, 4 for VSGI Priority).
struct CommandField {
  std::string_view name;  ///< spec name: "vPEID", "RDbase", "Default_DB", ...
  std::uint8_t dword, hi, lo, shift;
  std::string_view meaning;
};

/// The field layout of an opcode (its_encode_*), in DW then bit order, without the opcode itself.
std::span<const CommandField> command_layout(ItsOpcode op);

/// A field of a concrete command with its raw and display values.
struct FieldValue {
  const CommandField* field;
  std::uint64_t raw;      ///< bits [hi:lo] shifted down
  std::uint64_t value;    ///< raw << shift
};
/// Every field of `cmd` in layout order (encodes it first; same errors as encode_its_dwords).
std::vector<FieldValue> describe(const ItsCommand& cmd);

/// Builds DW0..DW3 from named display values (names as in command_layout, case-insensitive; missing
/// fields are 0), then decodes them. Throws InputError(name, reason) for an unknown field name or a
/// value that does not fit; used by `ipilab gic encode`.
ItsCommand build_command(ItsOpcode op, std::span<const std::pair<std::string, std::uint64_t>> fields);

}  // namespace ipilab::gic
