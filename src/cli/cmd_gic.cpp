// ipilab gic decode / gic encode — read and write GICv4.1 ITS commands and GITS_SGIR values by hand.
// The codecs are src/gic/its_command.h and src/gic/sgir.h (fact sheet gicv41-vsgi.md §1.3, §1.6).
#include <algorithm>
#include <cctype>
#include <charconv>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "common/error.h"
#include "common/hex.h"
#include "gic/its_command.h"
#include "gic/sgir.h"

namespace ipilab::cli {
namespace {

using namespace ipilab::gic;
using nlohmann::ordered_json;

struct DecodeArgs {
  std::vector<std::string> hex;
  bool sgir = false;
  bool dwords = false;
  bool json = false;
};

struct EncodeArgs {
  std::string command;
  std::vector<std::string> fields;
  bool json = false;
};

std::string bit_range(unsigned hi, unsigned lo) {
  return hi == lo ? fmt::format("[{}]", hi) : fmt::format("[{}:{}]", hi, lo);
}

std::string hex_digits_only(std::string_view token) {
  std::string out;
  std::string_view t = token;
  if (t.size() >= 2 && t[0] == '0' && (t[1] == 'x' || t[1] == 'X')) t.remove_prefix(2);
  for (char c : t)
    if (c != '_' && c != '\'') out.push_back(c);
  return out;
}

bool starts_0x(std::string_view t) { return t.size() > 2 && t[0] == '0' && (t[1] == 'x' || t[1] == 'X'); }

void print_sgir(std::uint64_t value, bool json) {
  const SgirDecode d = decode_sgir(value);
  if (json) {
    ordered_json j;
    j["command"] = "GITS_SGIR";
    j["value"] = fmt::format("{:#018x}", value);
    j["offset_from_its_base"] = fmt::format("{:#x}", kGitsSgirOffset);
    j["fields"] = {{"vINTID", d.sgir.vintid}, {"vPEID", d.sgir.vpeid}};
    j["res0_set"] = fmt::format("{:#x}", d.res0_set);
    fmt::print("{}\n", j.dump(2));
    return;
  }
  fmt::print("GITS_SGIR {:#018x}  (write-only, ITS base + {:#x}; one posted 64-bit write)\n", value, kGitsSgirOffset);
  fmt::print("  {:<8} {:<8} {}\n", "vINTID", bit_range(3, 0), d.sgir.vintid);
  fmt::print("  {:<8} {:<8} {:#x} ({})\n", "vPEID", bit_range(47, 32), d.sgir.vpeid, d.sgir.vpeid);
  if (d.clean())
    fmt::print("  {:<8} {:<8} clear\n", "RES0", "other");
  else
    fmt::print("  {:<8} {:<8} {:#018x} SET (hardware ignores them; Linux never sets them)\n", "RES0", "other",
               d.res0_set);
}

void print_command(const ItsCommand& cmd, bool json) {
  const CommandDwords dw = encode_its_dwords(cmd);
  const CommandBytes bytes = encode_its_command(cmd);
  const ItsOpcode op = opcode_of(cmd);
  const auto fields = describe(cmd);
  if (json) {
    ordered_json j;
    j["command"] = std::string(opcode_name(op));
    j["opcode"] = static_cast<int>(op);
    j["opcode_hex"] = fmt::format("{:#04x}", static_cast<int>(op));
    j["dwords"] = ordered_json::array();
    for (std::uint64_t d : dw) j["dwords"].push_back(fmt::format("{:#018x}", d));
    j["bytes"] = format_hex_bytes(bytes.data(), bytes.size());
    j["fields"] = ordered_json::object();
    for (const FieldValue& f : fields) j["fields"][std::string(f.field->name)] = f.value;
    j["layout"] = ordered_json::array();
    for (const FieldValue& f : fields)
      j["layout"].push_back({{"name", std::string(f.field->name)},
                             {"dword", f.field->dword},
                             {"hi", f.field->hi},
                             {"lo", f.field->lo},
                             {"raw", f.raw},
                             {"value", f.value}});
    fmt::print("{}\n", j.dump(2));
    return;
  }
  fmt::print("{} (opcode {:#04x})\n", opcode_name(op), static_cast<int>(op));
  fmt::print("  DW0 {:#018x}  DW1 {:#018x}\n  DW2 {:#018x}  DW3 {:#018x}\n", dw[0], dw[1], dw[2], dw[3]);
  fmt::print("  bytes {}\n", format_hex_bytes(bytes.data(), bytes.size()));
  for (const FieldValue& f : fields) {
    std::string shown = f.value < 10 ? fmt::format("{}", f.value) : fmt::format("{:#x} ({})", f.value, f.value);
    if (f.field->shift != 0 && f.value != 0) shown += fmt::format(" [field {:#x} << {}]", f.raw, f.field->shift);
    fmt::print("  {:<15} DW{}{:<9} {:<28} {}\n", f.field->name, f.field->dword, bit_range(f.field->hi, f.field->lo),
               shown, f.field->meaning);
  }
}

void run_decode(const DecodeArgs& a) {
  std::string text;
  for (const std::string& t : a.hex) text += (text.empty() ? "" : " ") + t;
  const bool one_value = a.hex.size() == 1 && hex_digits_only(a.hex[0]).size() <= 16;
  if (a.sgir || (one_value && !a.dwords)) {
    if (a.hex.size() != 1)
      throw InputError("HEX", "--sgir takes one 64-bit value, e.g. 0x0000123400000005");
    print_sgir(parse_hex_u64(a.hex[0], "HEX"), a.json);
    return;
  }
  CommandDecode d;
  const bool four_values =
      a.hex.size() == 4 && std::all_of(a.hex.begin(), a.hex.end(), [](const std::string& t) { return starts_0x(t); });
  if (a.dwords || four_values) {
    if (a.hex.size() != 4)
      throw InputError("HEX", fmt::format("--dwords takes four 64-bit values DW0 DW1 DW2 DW3, got {}", a.hex.size()));
    CommandDwords dw{};
    for (std::size_t i = 0; i < 4; ++i) dw[i] = parse_hex_u64(a.hex[i], fmt::format("HEX (DW{})", i));
    d = decode_its_dwords(dw);
  } else {
    const std::vector<std::uint8_t> bytes = parse_hex_bytes(text, "HEX");
    if (bytes.size() != kItsCommandSize)
      throw InputError("HEX", fmt::format("got {} bytes; an ITS command is 32 bytes (DW0..DW3, little-endian), "
                                          "a GITS_SGIR value is one 64-bit number",
                                          bytes.size()));
    d = decode_its_command(bytes);
  }
  if (!d.ok()) throw InputError(fmt::format("HEX (byte {})", d.error->byte_offset), d.error->message);
  print_command(*d.command, a.json);
}

std::uint64_t parse_number(std::string_view text, std::string_view what) {
  if (starts_0x(text)) return parse_hex_u64(text, what);
  std::uint64_t v = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc{} || ptr != text.data() + text.size() || text.empty())
    throw InputError(std::string(what), fmt::format("'{}' is not a number (decimal, or hex with 0x)", text));
  return v;
}

void run_encode(const EncodeArgs& a) {
  std::string name = a.command;
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  std::vector<std::pair<std::string, std::uint64_t>> fields;
  for (const std::string& f : a.fields) {
    const auto eq = f.find('=');
    if (eq == std::string::npos || eq == 0)
      throw InputError(f, "fields are written NAME=VALUE, e.g. vPEID=0x1234");
    fields.emplace_back(f.substr(0, eq), parse_number(std::string_view(f).substr(eq + 1), f.substr(0, eq)));
  }
  if (name == "SGIR" || name == "GITS_SGIR") {
    Sgir s;
    for (const auto& [k, v] : fields) {
      std::string key = k;
      std::transform(key.begin(), key.end(), key.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
      if (key == "vintid" && v <= 15) s.vintid = static_cast<std::uint8_t>(v);
      else if (key == "vpeid" && v <= 0xFFFF) s.vpeid = static_cast<std::uint16_t>(v);
      else if (key == "vintid" || key == "vpeid") throw InputError(k, fmt::format("{:#x} does not fit", v));
      else throw InputError(k, "GITS_SGIR has fields vINTID and vPEID");
    }
    print_sgir(encode_sgir(s), a.json);
    return;
  }
  for (std::uint8_t op = 0; op < 0x40; ++op) {
    const std::string_view known = any_opcode_name(op);
    if (known == name && !command_layout(static_cast<ItsOpcode>(op)).empty()) {
      print_command(build_command(static_cast<ItsOpcode>(op), fields), a.json);
      return;
    }
  }
  throw InputError("COMMAND", fmt::format("'{}' is not one of sgir, sync, vsync, vmapp, vmovp, vsgi, invdb, vinvall",
                                          a.command));
}

}  // namespace

void add_gic_command(CLI::App& root) {
  auto* gic = root.add_subcommand("gic", "GICv4.1 direct vSGI: decode and encode ITS commands and GITS_SGIR values");
  gic->require_subcommand(1);
  gic->footer("Run 'ipilab gic decode --help' or 'ipilab gic encode --help' for examples.");

  auto d = std::make_shared<DecodeArgs>();
  auto* dec = gic->add_subcommand(
      "decode",
      "Decode a 32-byte GICv4.1 ITS command (SYNC, VMAPP, VMOVP, VSGI, VSYNC, VINVALL, INVDB) or a GITS_SGIR value.\n"
      "Every field is listed with its bit range (DWn[hi:lo]). In an ITS command, reserved bits set, unknown\n"
      "opcodes and wrong lengths are errors (exit 2) that name the byte; in a GITS_SGIR value (a single\n"
      "number of up to 16 hex digits), RES0 bits set are shown, not rejected: the hardware ignores them.");
  dec->add_option("HEX", d->hex,
                  "the command as 32 bytes in memory order (spaces, ':' or ',' between bytes are fine), or four\n"
                  "64-bit doublewords DW0..DW3 each written 0x..., or one 64-bit GITS_SGIR value")
      ->required();
  dec->add_flag("--sgir", d->sgir, "read HEX as a GITS_SGIR value (automatic for a single value of up to 16 digits)");
  dec->add_flag("--dwords", d->dwords, "read HEX as four 64-bit doublewords DW0 DW1 DW2 DW3");
  dec->add_flag("--json", d->json, "print an object: command, opcode, dwords, bytes, fields {name: value}, layout");
  dec->footer(R"(Examples:
  ipilab gic decode 23 05 a0 00 05 00 00 00 00 00 00 00 34 12 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00
      -> VSGI: Enable 1, Group 1, Priority 0xa0, vINTID 5, vPEID 0x1234
  ipilab gic decode 0x0000000500a00523 0x0000123400000000 0x0 0x0        (the same, as DW0..DW3)
  ipilab gic decode 0x0000123400000005                                    (GITS_SGIR: vINTID 5 to vPE 0x1234)
  ipilab gic decode --json 0x0000123400000005
)");
  dec->callback([d] { run_decode(*d); });

  auto e = std::make_shared<EncodeArgs>();
  auto* enc = gic->add_subcommand(
      "encode",
      "Encode an ITS command or a GITS_SGIR value from NAME=VALUE fields (names as 'gic decode' prints them,\n"
      "any case; missing fields are 0; values decimal or 0x-hex; addresses and Priority in their full units).");
  enc->add_option("COMMAND", e->command, "sgir, sync, vsync, vmapp, vmovp, vsgi, invdb or vinvall")->required();
  enc->add_option("FIELDS", e->fields, "NAME=VALUE pairs, e.g. vPEID=0x1234 vINTID=5");
  enc->add_flag("--json", e->json, "print the same object as 'gic decode --json'");
  enc->footer(R"(Examples:
  ipilab gic encode vsgi vPEID=0x1234 vINTID=5 Priority=0xa0 Enable=1 Group=1
  ipilab gic encode vmapp vPEID=3 RDbase=33 V=1 Alloc=1 VPT_size=15 VPT_addr=0x80030000 Default_DB=8195
  ipilab gic encode sgir vPEID=0x1234 vINTID=5
)");
  enc->callback([e] { run_encode(*e); });
}

}  // namespace ipilab::cli
