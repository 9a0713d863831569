#include "gic/its_command.h"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include "common/error.h"
#include "gic/bits.h"

namespace ipilab::gic {
namespace {

// Field layouts: Linux its_encode_* (drivers/irqchip/irq-gic-v3-its.c), Arm IHI 0069H.b §5.3. Order: DW, then bit.
constexpr CommandField kSync[] = {
    {"RDbase", 2, 51, 16, 0, "target redistributor: PA >> 16 (GITS_TYPER.PTA=1) or processor number (PTA=0)"},
};
constexpr CommandField kVsync[] = {
    {"vPEID", 1, 47, 32, 0, "vPE to synchronise"},
};
constexpr CommandField kVmapp[] = {
    {"Alloc", 0, 8, 8, 0, "v4.1: first map / last unmap of the vPE in the system"},
    {"PTZ", 0, 9, 9, 0, "v4.1: virtual pending table is zero (Linux: always 0)"},
    {"VCONF_addr", 0, 51, 16, 16, "v4.1: vLPI configuration table address (64 KiB aligned)"},
    {"Default_DB", 1, 31, 0, 0, "v4.1: default doorbell pINTID (1023 = none)"},
    {"vPEID", 1, 47, 32, 0, "vPE being mapped"},
    {"RDbase", 2, 51, 16, 0, "target redistributor: PA >> 16 (PTA=1) or processor number (PTA=0)"},
    {"V", 2, 63, 63, 0, "1 = map, 0 = unmap"},
    {"VPT_size", 3, 4, 0, 0, "vLPI ID bits - 1"},
    {"VPT_addr", 3, 51, 16, 16, "virtual pending table address (64 KiB aligned)"},
};
constexpr CommandField kVmovp[] = {
    {"SequenceNumber", 0, 47, 32, 0, "VMOVP sequence number (GITS_TYPER.VMOVP=0 form)"},
    {"ITSList", 1, 15, 0, 0, "ITSs with the vPE mapped (GITS_TYPER.VMOVP=0 form)"},
    {"vPEID", 1, 47, 32, 0, "vPE being moved"},
    {"RDbase", 2, 51, 16, 0, "new redistributor: PA >> 16 (PTA=1) or processor number (PTA=0)"},
    {"DB", 2, 63, 63, 0, "v4.1: Default_DB is valid"},
    {"Default_DB", 3, 31, 0, 0, "v4.1: default doorbell pINTID"},
};
constexpr CommandField kVsgi[] = {
    {"Enable", 0, 8, 8, 0, "vSGI enabled (Clear=0 only)"},
    {"Clear", 0, 9, 9, 0, "1 = clear the pending bit, leave the configuration"},
    {"Group", 0, 10, 10, 0, "1 = group 1"},
    {"Priority", 0, 23, 20, 4, "priority (top 4 bits of the 8-bit priority)"},
    {"vINTID", 0, 35, 32, 0, "virtual SGI number 0..15"},
    {"vPEID", 1, 47, 32, 0, "target vPE"},
};
constexpr CommandField kInvdb[] = {
    {"vPEID", 1, 47, 32, 0, "vPE whose doorbell state is invalidated"},
};
constexpr CommandField kVinvall[] = {
    {"vPEID", 1, 47, 32, 0, "vPE whose vLPI configuration is invalidated"},
};

struct OpName {
  std::uint8_t op;
  std::string_view name;
};
// Known ITS command numbers that this model does not implement (Linux arm-gic-v3.h GITS_CMD_*).
constexpr OpName kOtherOpcodes[] = {
    {0x01, "MOVI"},  {0x03, "INT"},    {0x04, "CLEAR"}, {0x08, "MAPD"},  {0x09, "MAPC"},
    {0x0A, "MAPTI"}, {0x0B, "MAPI"},   {0x0C, "INV"},   {0x0D, "INVALL"}, {0x0E, "MOVALL"},
    {0x0F, "DISCARD"}, {0x21, "VMOVI"}, {0x2A, "VMAPTI"}, {0x2B, "VMAPI"},
};

bool is_modelled(std::uint8_t op) {
  switch (static_cast<ItsOpcode>(op)) {
    case ItsOpcode::Sync:
    case ItsOpcode::Vmovp:
    case ItsOpcode::Vsgi:
    case ItsOpcode::Vsync:
    case ItsOpcode::Vmapp:
    case ItsOpcode::Vinvall:
    case ItsOpcode::Invdb:
      return true;
  }
  return false;
}

// Writes fields into doublewords, checking each value fits; errors name "<CMD>.<field>".
class Encoder {
 public:
  explicit Encoder(ItsOpcode op) : op_(op) { dw_[0] = static_cast<std::uint8_t>(op); }
  Encoder& field(std::string_view name, std::uint64_t value) {
    const CommandField& f = find(name);
    if (f.shift != 0 && (value & bits::mask(f.shift - 1, 0)) != 0)
      throw InputError(place(name), fmt::format("{:#x} must be a multiple of {:#x} (DW{}[{}:{}] holds value >> {})",
                                                value, std::uint64_t{1} << f.shift, f.dword, f.hi, f.lo, f.shift));
    const std::uint64_t raw = value >> f.shift;
    if (!bits::fits(raw, f.hi, f.lo))
      throw InputError(place(name), fmt::format("{:#x} does not fit in DW{}[{}:{}]", value, f.dword, f.hi, f.lo));
    dw_[f.dword] |= bits::put(raw, f.hi, f.lo);
    return *this;
  }
  CommandDwords done() const { return dw_; }

 private:
  const CommandField& find(std::string_view name) const {
    for (const CommandField& f : command_layout(op_))
      if (f.name == name) return f;
    throw std::logic_error("gic: no field " + std::string(name));  // programming error, not input
  }
  std::string place(std::string_view name) const { return fmt::format("{}.{}", opcode_name(op_), name); }
  ItsOpcode op_;
  CommandDwords dw_{};
};

std::uint64_t raw_field(const CommandDwords& dw, const CommandField& f) { return bits::get(dw[f.dword], f.hi, f.lo); }

std::uint64_t value_of(const CommandDwords& dw, ItsOpcode op, std::string_view name) {
  for (const CommandField& f : command_layout(op))
    if (f.name == name) return raw_field(dw, f) << f.shift;
  throw std::logic_error("gic: no field " + std::string(name));
}

CommandDecode fail(CommandDecodeErrorKind kind, std::uint8_t op, std::size_t offset, std::string message,
                   int dword = -1, std::uint64_t bits_set = 0) {
  CommandDecode out;
  out.error = CommandDecodeError{kind, op, dword, bits_set, offset, std::move(message)};
  return out;
}

}  // namespace

std::string_view opcode_name(ItsOpcode op) {
  switch (op) {
    case ItsOpcode::Sync: return "SYNC";
    case ItsOpcode::Vmovp: return "VMOVP";
    case ItsOpcode::Vsgi: return "VSGI";
    case ItsOpcode::Vsync: return "VSYNC";
    case ItsOpcode::Vmapp: return "VMAPP";
    case ItsOpcode::Vinvall: return "VINVALL";
    case ItsOpcode::Invdb: return "INVDB";
  }
  return "";
}

std::string_view any_opcode_name(std::uint8_t op) {
  if (is_modelled(op)) return opcode_name(static_cast<ItsOpcode>(op));
  for (const OpName& o : kOtherOpcodes)
    if (o.op == op) return o.name;
  return "";
}

std::span<const CommandField> command_layout(ItsOpcode op) {
  switch (op) {
    case ItsOpcode::Sync: return kSync;
    case ItsOpcode::Vmovp: return kVmovp;
    case ItsOpcode::Vsgi: return kVsgi;
    case ItsOpcode::Vsync: return kVsync;
    case ItsOpcode::Vmapp: return kVmapp;
    case ItsOpcode::Vinvall: return kVinvall;
    case ItsOpcode::Invdb: return kInvdb;
  }
  return {};
}

ItsOpcode opcode_of(const ItsCommand& cmd) {
  struct V {
    ItsOpcode operator()(const SyncCmd&) const { return ItsOpcode::Sync; }
    ItsOpcode operator()(const VsyncCmd&) const { return ItsOpcode::Vsync; }
    ItsOpcode operator()(const VmappCmd&) const { return ItsOpcode::Vmapp; }
    ItsOpcode operator()(const VmovpCmd&) const { return ItsOpcode::Vmovp; }
    ItsOpcode operator()(const VsgiCmd&) const { return ItsOpcode::Vsgi; }
    ItsOpcode operator()(const InvdbCmd&) const { return ItsOpcode::Invdb; }
    ItsOpcode operator()(const VinvallCmd&) const { return ItsOpcode::Vinvall; }
  };
  return std::visit(V{}, cmd);
}

std::optional<std::uint16_t> vpeid_of(const ItsCommand& cmd) {
  return std::visit(
      [](const auto& c) -> std::optional<std::uint16_t> {
        if constexpr (requires { c.vpeid; }) return c.vpeid;
        else return std::nullopt;
      },
      cmd);
}

CommandDwords encode_its_dwords(const ItsCommand& cmd) {
  struct V {
    CommandDwords operator()(const SyncCmd& c) const { return Encoder(ItsOpcode::Sync).field("RDbase", c.rdbase).done(); }
    CommandDwords operator()(const VsyncCmd& c) const { return Encoder(ItsOpcode::Vsync).field("vPEID", c.vpeid).done(); }
    CommandDwords operator()(const VmappCmd& c) const {
      return Encoder(ItsOpcode::Vmapp)
          .field("Alloc", c.alloc).field("PTZ", c.ptz).field("VCONF_addr", c.vconf_pa)
          .field("Default_DB", c.default_db).field("vPEID", c.vpeid).field("RDbase", c.rdbase)
          .field("V", c.valid).field("VPT_size", c.vpt_size).field("VPT_addr", c.vpt_pa)
          .done();
    }
    CommandDwords operator()(const VmovpCmd& c) const {
      return Encoder(ItsOpcode::Vmovp)
          .field("SequenceNumber", c.sequence_number).field("ITSList", c.its_list).field("vPEID", c.vpeid)
          .field("RDbase", c.rdbase).field("DB", c.db).field("Default_DB", c.default_db)
          .done();
    }
    CommandDwords operator()(const VsgiCmd& c) const {
      return Encoder(ItsOpcode::Vsgi)
          .field("Enable", c.enable).field("Clear", c.clear).field("Group", c.group)
          .field("Priority", c.priority).field("vINTID", c.vintid).field("vPEID", c.vpeid)
          .done();
    }
    CommandDwords operator()(const InvdbCmd& c) const { return Encoder(ItsOpcode::Invdb).field("vPEID", c.vpeid).done(); }
    CommandDwords operator()(const VinvallCmd& c) const {
      return Encoder(ItsOpcode::Vinvall).field("vPEID", c.vpeid).done();
    }
  };
  return std::visit(V{}, cmd);
}

CommandBytes encode_its_command(const ItsCommand& cmd) {
  const CommandDwords dw = encode_its_dwords(cmd);
  CommandBytes out{};
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = static_cast<std::uint8_t>(dw[i / 8] >> (8 * (i % 8)));
  return out;
}

CommandDecode decode_its_dwords(const CommandDwords& dw) {
  const auto op = static_cast<std::uint8_t>(dw[0] & 0xFF);
  if (!is_modelled(op)) {
    const std::string_view known = any_opcode_name(op);
    if (!known.empty())
      return fail(CommandDecodeErrorKind::UnsupportedOpcode, op, 0,
                  fmt::format("opcode {:#04x} is {}, an ITS command this model does not implement", op, known));
    return fail(CommandDecodeErrorKind::UnknownOpcode, op, 0,
                fmt::format("opcode {:#04x} (DW0[7:0]) is not an ITS command number", op));
  }
  const auto opcode = static_cast<ItsOpcode>(op);
  std::array<std::uint64_t, 4> defined{bits::mask(7, 0), 0, 0, 0};
  for (const CommandField& f : command_layout(opcode)) defined[f.dword] |= bits::mask(f.hi, f.lo);
  for (int i = 0; i < 4; ++i) {
    const std::uint64_t reserved = dw[i] & ~defined[i];
    if (reserved != 0) {
      const int low_bit = __builtin_ctzll(reserved);
      return fail(CommandDecodeErrorKind::ReservedBitsSet, op, static_cast<std::size_t>(8 * i + low_bit / 8),
                  fmt::format("{}: DW{} has reserved bits {:#018x} set (first: bit {})", opcode_name(opcode), i,
                              reserved, low_bit),
                  i, reserved);
    }
  }
  auto v = [&](std::string_view name) { return value_of(dw, opcode, name); };
  CommandDecode out;
  switch (opcode) {
    case ItsOpcode::Sync: out.command = SyncCmd{v("RDbase")}; break;
    case ItsOpcode::Vsync: out.command = VsyncCmd{static_cast<std::uint16_t>(v("vPEID"))}; break;
    case ItsOpcode::Invdb: out.command = InvdbCmd{static_cast<std::uint16_t>(v("vPEID"))}; break;
    case ItsOpcode::Vinvall: out.command = VinvallCmd{static_cast<std::uint16_t>(v("vPEID"))}; break;
    case ItsOpcode::Vmapp: {
      VmappCmd c;
      c.alloc = v("Alloc") != 0;
      c.ptz = v("PTZ") != 0;
      c.vconf_pa = v("VCONF_addr");
      c.default_db = static_cast<std::uint32_t>(v("Default_DB"));
      c.vpeid = static_cast<std::uint16_t>(v("vPEID"));
      c.rdbase = v("RDbase");
      c.valid = v("V") != 0;
      c.vpt_size = static_cast<std::uint8_t>(v("VPT_size"));
      c.vpt_pa = v("VPT_addr");
      out.command = c;
      break;
    }
    case ItsOpcode::Vmovp: {
      VmovpCmd c;
      c.sequence_number = static_cast<std::uint16_t>(v("SequenceNumber"));
      c.its_list = static_cast<std::uint16_t>(v("ITSList"));
      c.vpeid = static_cast<std::uint16_t>(v("vPEID"));
      c.rdbase = v("RDbase");
      c.db = v("DB") != 0;
      c.default_db = static_cast<std::uint32_t>(v("Default_DB"));
      out.command = c;
      break;
    }
    case ItsOpcode::Vsgi: {
      VsgiCmd c;
      c.enable = v("Enable") != 0;
      c.clear = v("Clear") != 0;
      c.group = v("Group") != 0;
      c.priority = static_cast<std::uint8_t>(v("Priority"));
      c.vintid = static_cast<std::uint8_t>(v("vINTID"));
      c.vpeid = static_cast<std::uint16_t>(v("vPEID"));
      out.command = c;
      break;
    }
  }
  return out;
}

CommandDecode decode_its_command(std::span<const std::uint8_t> bytes) {
  if (bytes.size() != kItsCommandSize)
    return fail(CommandDecodeErrorKind::WrongLength, bytes.empty() ? 0 : bytes[0], bytes.size(),
                fmt::format("an ITS command is 32 bytes, got {}", bytes.size()));
  CommandDwords dw{};
  for (std::size_t i = 0; i < kItsCommandSize; ++i) dw[i / 8] |= std::uint64_t{bytes[i]} << (8 * (i % 8));
  return decode_its_dwords(dw);
}

std::vector<FieldValue> describe(const ItsCommand& cmd) {
  const CommandDwords dw = encode_its_dwords(cmd);
  std::vector<FieldValue> out;
  for (const CommandField& f : command_layout(opcode_of(cmd))) {
    const std::uint64_t raw = raw_field(dw, f);
    out.push_back(FieldValue{&f, raw, raw << f.shift});
  }
  return out;
}

ItsCommand build_command(ItsOpcode op, std::span<const std::pair<std::string, std::uint64_t>> fields) {
  auto lower = [](std::string_view s) {
    std::string r(s);
    std::transform(r.begin(), r.end(), r.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return r;
  };
  Encoder enc(op);
  for (const auto& [name, value] : fields) {
    const CommandField* match = nullptr;
    for (const CommandField& f : command_layout(op))
      if (lower(f.name) == lower(name)) match = &f;
    if (match == nullptr) {
      std::string known;
      for (const CommandField& f : command_layout(op)) known += (known.empty() ? "" : ", ") + std::string(f.name);
      throw InputError(std::string(name), fmt::format("{} has no field '{}' (fields: {})", opcode_name(op), name, known));
    }
    enc.field(match->name, value);
  }
  CommandDecode d = decode_its_dwords(enc.done());
  if (!d.ok()) throw InputError(std::string(opcode_name(op)), d.error->message);  // unreachable: fields only
  return *d.command;
}

}  // namespace ipilab::gic
