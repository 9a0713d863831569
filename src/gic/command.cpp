#include "gic/command.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <filesystem>
#include <ostream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/error.h"
#include "common/file.h"
#include "common/hex.h"
#include "gic/its_command.h"
#include "gic/its_report.h"
#include "gic/its_script.h"
#include "gic/sgir.h"

namespace ipilab::gic {
namespace {

using nlohmann::ordered_json;

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

void write_sgir(std::uint64_t value, bool json, std::ostream& out) {
  const SgirDecode d = decode_sgir(value);
  if (json) {
    ordered_json j;
    j["command"] = "GITS_SGIR";
    j["value"] = fmt::format("{:#018x}", value);
    j["offset_from_its_base"] = fmt::format("{:#x}", kGitsSgirOffset);
    j["fields"] = {{"vINTID", d.sgir.vintid}, {"vPEID", d.sgir.vpeid}};
    j["res0_set"] = fmt::format("{:#x}", d.res0_set);
    out << j.dump(2) << "\n";
    return;
  }
  out << fmt::format("GITS_SGIR {:#018x}  (write-only, ITS base + {:#x}; one posted 64-bit write)\n", value, kGitsSgirOffset);
  out << fmt::format("  {:<8} {:<8} {}\n", "vINTID", bit_range(3, 0), d.sgir.vintid);
  out << fmt::format("  {:<8} {:<8} {:#x} ({})\n", "vPEID", bit_range(47, 32), d.sgir.vpeid, d.sgir.vpeid);
  if (d.clean())
    out << fmt::format("  {:<8} {:<8} clear\n", "RES0", "other");
  else
    out << fmt::format("  {:<8} {:<8} {:#018x} SET (hardware ignores them; Linux never sets them)\n", "RES0", "other",
                       d.res0_set);
}

void write_command(const ItsCommand& cmd, bool json, std::ostream& out) {
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
    out << j.dump(2) << "\n";
    return;
  }
  out << fmt::format("{} (opcode {:#04x})\n", opcode_name(op), static_cast<int>(op));
  out << fmt::format("  DW0 {:#018x}  DW1 {:#018x}\n  DW2 {:#018x}  DW3 {:#018x}\n", dw[0], dw[1], dw[2], dw[3]);
  out << fmt::format("  bytes {}\n", format_hex_bytes(bytes.data(), bytes.size()));
  for (const FieldValue& f : fields) {
    std::string shown = f.value < 10 ? fmt::format("{}", f.value) : fmt::format("{:#x} ({})", f.value, f.value);
    if (f.field->shift != 0 && f.value != 0) shown += fmt::format(" [field {:#x} << {}]", f.raw, f.field->shift);
    out << fmt::format("  {:<15} DW{}{:<9} {:<28} {}\n", f.field->name, f.field->dword, bit_range(f.field->hi, f.field->lo),
                       shown, f.field->meaning);
  }
}

std::uint64_t parse_field_value(std::string_view text, std::string_view what) {
  if (starts_0x(text)) return parse_hex_u64(text, what);
  std::uint64_t v = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc{} || ptr != text.data() + text.size() || text.empty())
    throw InputError(std::string(what), fmt::format("'{}' is not a number (decimal, or hex with 0x)", text));
  return v;
}

std::filesystem::path resolve_script(const std::string& arg) {
  const std::filesystem::path p(arg);
  if (std::filesystem::exists(p) || arg.find('/') != std::string::npos || p.has_extension()) return p;
  const std::filesystem::path shipped = data_dir() / "docs" / "examples" / "its" / (arg + ".its");
  if (std::filesystem::exists(shipped)) return shipped;
  return p;  // read_text_file() reports it missing
}

}  // namespace

void decode_command(const DecodeOptions& opts, std::ostream& out) {
  std::string text;
  for (const std::string& t : opts.hex) text += (text.empty() ? "" : " ") + t;
  // One word without separators is one 64-bit value (GITS_SGIR; too long is said so), unless it
  // has the 64 digits of a whole 32-byte ITS command.
  const bool one_value = opts.hex.size() == 1 && opts.hex[0].find_first_of(" \t\n:,") == std::string::npos &&
                         hex_digits_only(opts.hex[0]).size() != 2 * kItsCommandSize;
  if (opts.sgir || (one_value && !opts.dwords)) {
    if (opts.hex.size() != 1)
      throw InputError("HEX", "--sgir takes one 64-bit value, e.g. 0x0000123400000005");
    write_sgir(parse_hex_u64(opts.hex[0], "HEX"), opts.json, out);
    return;
  }
  CommandDecode d;
  const bool four_values =
      opts.hex.size() == 4 && std::all_of(opts.hex.begin(), opts.hex.end(), [](const std::string& t) { return starts_0x(t); });
  if (opts.dwords || four_values) {
    if (opts.hex.size() != 4)
      throw InputError("HEX", fmt::format("--dwords takes four 64-bit values DW0 DW1 DW2 DW3, got {}", opts.hex.size()));
    CommandDwords dw{};
    for (std::size_t i = 0; i < 4; ++i) dw[i] = parse_hex_u64(opts.hex[i], fmt::format("HEX (DW{})", i));
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
  write_command(*d.command, opts.json, out);
}

void encode_command(const EncodeOptions& opts, std::ostream& out) {
  std::string name = opts.command;
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  std::vector<std::pair<std::string, std::uint64_t>> fields;
  for (const std::string& f : opts.fields) {
    const auto eq = f.find('=');
    if (eq == std::string::npos || eq == 0)
      throw InputError(f, "fields are written NAME=VALUE, e.g. vPEID=0x1234");
    fields.emplace_back(f.substr(0, eq), parse_field_value(std::string_view(f).substr(eq + 1), f.substr(0, eq)));
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
    write_sgir(encode_sgir(s), opts.json, out);
    return;
  }
  for (std::uint8_t op = 0; op < 0x40; ++op) {
    const std::string_view known = any_opcode_name(op);
    if (known == name && !command_layout(static_cast<ItsOpcode>(op)).empty()) {
      write_command(build_command(static_cast<ItsOpcode>(op), fields), opts.json, out);
      return;
    }
  }
  throw InputError("COMMAND", fmt::format("'{}' is not one of sgir, sync, vsync, vmapp, vmovp, vsgi, invdb, vinvall",
                                          opts.command));
}

void its_script_command(const ItsOptions& opts, std::ostream& out) {
  const std::filesystem::path path = resolve_script(opts.script);
  const std::string text = read_text_file(path);
  ItsScript script = parse_its_script(text, opts.script);
  if (!opts.linux_version.empty()) {
    if (opts.linux_version != "mainline" && opts.linux_version != "v5.6-rc1")
      throw InputError("--linux", fmt::format("'{}': give mainline or v5.6-rc1", opts.linux_version));
    script.system.linux_vpe_l1_fixes = opts.linux_version == "mainline";
  }
  const ItsScriptResult res = run_its_script(script);
  if (opts.json)
    write_its_json(res, out);
  else
    write_its_text(res, opts.quiet, out);
  if (res.expectations_failed > 0)
    throw CheckFailed(fmt::format("{}: {} of {} expectations failed", opts.script, res.expectations_failed, res.expectations));
}

}  // namespace ipilab::gic
