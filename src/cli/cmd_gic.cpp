// ipilab gic decode / gic encode — read and write GICv4.1 ITS commands and GITS_SGIR values by hand;
// ipilab gic its SCRIPT — run a script of ITS register writes, commands and Linux driver calls.
// The codecs are src/gic/its_command.h, src/gic/sgir.h, src/gic/table_registers.h; the script runner
// is src/gic/its_script.h (format: docs/gic-its.md). This file only parses arguments and prints.
#include <algorithm>
#include <cctype>
#include <charconv>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "common/error.h"
#include "common/file.h"
#include "common/hex.h"
#include "gic/its_command.h"
#include "gic/its_script.h"
#include "gic/sgir.h"
#include "gic/table_registers.h"

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
  // One word without separators is one 64-bit value (GITS_SGIR; too long is said so), unless it
  // has the 64 digits of a whole 32-byte ITS command.
  const bool one_value = a.hex.size() == 1 && a.hex[0].find_first_of(" \t\n:,") == std::string::npos &&
                         hex_digits_only(a.hex[0]).size() != 2 * kItsCommandSize;
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

// ------------------------------------------------------------------------------------------------
// ipilab gic its SCRIPT

struct ItsArgs {
  std::string script;
  bool json = false;
  bool quiet = false;
  std::string linux_version;  ///< --linux: overrides the system line's linux=
};

std::string hex(std::uint64_t v) { return fmt::format("{:#x}", v); }

std::string describe_baser(std::uint64_t v) {
  const GitsBaser b = decode_gits_baser(v);
  if (!b.valid) return "not valid";
  return fmt::format("Valid{}, {}-byte entries, {} x {}, PA {:#x}", b.indirect ? ", Indirect" : "", b.entry_bytes,
                     table_page_name(b.page_size), b.pages, b.pa);
}

std::string describe_vpropbaser(std::uint64_t v) {
  const GicrVpropbaser41 b = decode_gicr_vpropbaser41(v);
  if (!b.valid) return "not valid";
  return fmt::format("Valid{}{}, {}-byte entries, {} x {}, PA {:#x}", b.indirect ? ", Indirect" : "", b.z ? ", Z" : "",
                     b.entry_words * 8, table_page_name(b.page_size), b.pages, b.pa);
}

// The driver's record of the RD's vPE table (boot=linux): vpe_l1_base, and a loud note when
// GICR_VPROPBASER.Size claims more L1 pages than allocate_vpe_l1_table() allocated (before e88bd316e597).
std::string vpe_l1_text(const RdView& v) {
  if (!v.linux_driver) return {};
  std::string t = v.vpe_l1_base ? fmt::format(" vpe_l1_base {:#x}", *v.vpe_l1_base)
                                : std::string(" vpe_l1_base NULL");
  const GicrVpropbaser41 b = decode_gicr_vpropbaser41(v.vpropbaser);
  const std::uint64_t claimed = std::uint64_t{b.pages} * table_page_bytes(b.page_size);
  if (b.valid && v.l1_bytes_allocated != 0 && claimed > v.l1_bytes_allocated)
    t += fmt::format(" [Size claims {} bytes of L1, {} allocated: the GIC may use memory past the table]", claimed,
                     v.l1_bytes_allocated);
  return t;
}

std::string describe_cbaser(std::uint64_t v) {
  const Cbaser c = decode_cbaser(v);
  return fmt::format("{}{} KiB at {:#x}", c.valid ? "" : "not valid, ", c.size_bytes() / 1024, c.pa);
}

std::string command_text(const ItsCommand& cmd) {
  std::string out(opcode_name(opcode_of(cmd)));
  for (const FieldValue& f : describe(cmd))
    if (f.value != 0) out += fmt::format(" {}={}", f.field->name, f.value < 10 ? fmt::format("{}", f.value) : hex(f.value));
  return out;
}

std::string vpes_text(const ItsView& v) {
  if (v.vpes.empty()) return "-";
  std::string out;
  for (const auto& [id, cpu] : v.vpes) out += fmt::format("{}{}->cpu{}", out.empty() ? "" : " ", id, cpu);
  return out;
}

std::string ints_text(const std::vector<int>& v, std::string_view prefix) {
  if (v.empty()) return "-";
  std::string out;
  for (int x : v) out += fmt::format("{}{}{}", out.empty() ? "" : ",", prefix, x);
  return out;
}

std::string wait_text(const NamedWait& n) {
  const ItsWaitResult& w = n.result;
  return fmt::format("{}({}) {} after {} CREADR read{}: waited for {} command{} ({} bytes, {} ahead of the batch); "
                     "CREADR {:#x} -> {:#x}, {} bytes travelled",
                     n.name.empty() ? "" : n.name + " ", wait_predicate_name(w.predicate), wait_outcome_name(w.outcome),
                     w.polls, w.polls == 1 ? "" : "s", w.waited_commands, w.waited_commands == 1 ? "" : "s",
                     w.waited_bytes(), w.ahead_commands, w.first_creadr, w.last_creadr, w.travelled_bytes);
}

void print_state_text(const StepResult& r, const StepResult* prev, bool full) {
  for (const ItsView& v : r.state.its) {
    fmt::print("  its{:<3} {} CREADR {:#06x}{} CWRITER {:#06x} pending {} executed {} errors {}{}{} | vPEs {}\n", v.its,
               v.enabled ? "Enabled " : "Disabled", v.creadr & 0xFFFE0, v.stalled ? " (Stalled)" : "", v.cwriter, v.pending,
               v.executed, v.errors, v.processing == ItsProcessing::Manual ? " [manual]" : "",
               v.driver_cmd_write && *v.driver_cmd_write != (v.cwriter & 0xFFFE0) ? fmt::format(" cmd_write {:#06x}", *v.driver_cmd_write) : "",
               vpes_text(v));
    const ItsView* p = prev ? &prev->state.its.at(static_cast<std::size_t>(v.its)) : nullptr;
    if (full || !p || p->baser2 != v.baser2 || p->cbaser != v.cbaser || p->ctlr != v.ctlr)
      fmt::print("         GITS_CTLR {:#010x}  GITS_CBASER {:#018x} ({})  GITS_BASER2 {:#018x} ({})\n", v.ctlr, v.cbaser,
                 describe_cbaser(v.cbaser), v.baser2, describe_baser(v.baser2));
  }
  for (const RdView& v : r.state.rds) {
    const RdView* p = prev ? &prev->state.rds.at(static_cast<std::size_t>(v.cpu)) : nullptr;
    if (!full && p && p->vpropbaser == v.vpropbaser && p->vpendbaser == v.vpendbaser) continue;
    fmt::print("  rd{:<4} GICR_VPROPBASER {:#018x} ({}){}{}  GICR_VPENDBASER {:#018x}\n", v.cpu, v.vpropbaser,
               describe_vpropbaser(v.vpropbaser),
               v.local_4_1_its ? fmt::format(" local_4_1_its its{}", *v.local_4_1_its) : "",
               vpe_l1_text(v), v.vpendbaser);
  }
  for (const VpeView& v : r.state.vpes)
    fmt::print("  vPE {:<3} cpu {} | mapped on {} (vmapp_count {}) | in the table of {} | vSGI enabled {:#06x} pending {:#06x}{}\n",
               v.vpeid, v.cpu ? std::to_string(*v.cpu) : "-", ints_text(v.mapped_on, "its"), v.vmapp_count,
               ints_text(v.in_tables_of, "its"), v.enabled, v.pending,
               v.resident_on ? fmt::format(" | resident on rd{}", *v.resident_on) : "");
}

void print_its_text(const ItsScriptResult& res, bool quiet) {
  fmt::print("{}\n", res.file);
  const StepResult* prev = nullptr;
  for (const StepResult& r : res.steps) {
    fmt::print("[line {}] {}\n", r.line, r.text);
    if (r.kind == "system") fmt::print("  system   {}\n", res.system_summary);
    if (r.kind == "system" && !res.cpu_sources.empty()) {
      std::map<std::string, int> n;
      for (const std::string& src : res.cpu_sources) ++n[src];
      std::string s;
      for (const auto& [k, v] : n) s += fmt::format("{}{} CPU{} {}", s.empty() ? "" : ", ", v, v == 1 ? "" : "s", k);
      fmt::print("  linux    bring-up: vPE tables {}\n", s);
    }
    if (r.refused) fmt::print("  refused  {}\n", *r.refused);
    for (std::size_t k = 0; k < r.issued.size();) {  // runs of identical commands print once, with a count
      std::size_t n = 1;
      while (k + n < r.issued.size() && r.issued[k + n].its == r.issued[k].its && r.issued[k + n].command == r.issued[k].command) ++n;
      fmt::print("  issued   its{}: {}{}\n", r.issued[k].its, command_text(r.issued[k].command), n > 1 ? fmt::format(" (x{})", n) : "");
      k += n;
    }
    for (const std::string& a : r.posted_as) fmt::print("  posted   as {} (the wait is `linux wait {}`)\n", a, a);
    for (const CommandError& e : r.command_errors)
      fmt::print("  error    {} [{}]\n", e.message, command_error_kind_name(e.kind));
    for (const RegisterNote& n : r.register_notes)
      fmt::print("  register {}: {}{}\n", n.reg, n.message, n.applied ? "" : " [write refused]");
    for (const NamedWait& w : r.waits) {
      fmt::print("  wait     {}\n", wait_text(w));
      if (!w.result.linux_message.empty()) fmt::print("  linux    {}\n", w.result.linux_message);
      if (!w.result.note.empty()) fmt::print("  note     {}\n", w.result.note);
    }
    if (r.sgir)
      fmt::print("  sgir     its{} vPE {} vINTID {}: {}{}{}\n", r.sgir->its, r.sgir->sgir.vpeid, r.sgir->sgir.vintid,
                 sgir_outcome_name(r.sgir->outcome),
                 r.sgir->target_cpu >= 0 ? fmt::format(" -> rd{} (socket {})", r.sgir->target_cpu, r.sgir->target_socket) : "",
                 r.sgir->doorbell ? ", default doorbell fired" : "");
    for (const std::string& n : r.notes) fmt::print("  note     {}\n", n);
    if (r.kind == "expect") {
      if (r.expect_failures.empty())
        fmt::print("  expect   ok\n");
      else
        for (const std::string& f : r.expect_failures) fmt::print("  expect   FAILED {}\n", f);
      continue;
    }
    if (!quiet || r.kind == "system") print_state_text(r, prev, r.kind == "system");
    prev = &r;
  }
  // steps[0] is the `system` bring-up (printed first above, steps[0] in --json): named, not counted.
  fmt::print("bring-up + {} step{}, {} expectation{} checked, {} failed\n", res.steps.size() - 1,
             res.steps.size() == 2 ? "" : "s", res.expectations, res.expectations == 1 ? "" : "s", res.expectations_failed);
}

ordered_json wait_json(const NamedWait& n) {
  const ItsWaitResult& w = n.result;
  return ordered_json{{"name", n.name.empty() ? nullptr : ordered_json(n.name)},
                      {"predicate", std::string(wait_predicate_name(w.predicate))},
                      {"outcome", std::string(wait_outcome_name(w.outcome))},
                      {"polls", w.polls},
                      {"udelays", w.udelays},
                      {"snapshot", hex(w.snapshot)},
                      {"from", hex(w.from)},
                      {"to", hex(w.to)},
                      {"first_creadr", hex(w.first_creadr)},
                      {"last_creadr", hex(w.last_creadr)},
                      {"batch_commands", w.batch_commands},
                      {"ahead_commands", w.ahead_commands},
                      {"waited_commands", w.waited_commands},
                      {"waited_bytes", w.waited_bytes()},
                      {"travelled_bytes", w.travelled_bytes},
                      {"linux_message", w.linux_message.empty() ? nullptr : ordered_json(w.linux_message)},
                      {"note", w.note.empty() ? nullptr : ordered_json(w.note)}};
}

ordered_json state_json(const StateView& s) {
  ordered_json its = ordered_json::array();
  for (const ItsView& v : s.its) {
    ordered_json vp = ordered_json::array();
    for (const auto& [id, cpu] : v.vpes) vp.push_back({{"vpeid", id}, {"cpu", cpu}});
    its.push_back({{"its", v.its},
                   {"GITS_CTLR", hex(v.ctlr)},
                   {"GITS_CBASER", hex(v.cbaser)},
                   {"GITS_CWRITER", hex(v.cwriter)},
                   {"GITS_CREADR", hex(v.creadr)},
                   {"GITS_BASER2", hex(v.baser2)},
                   {"enabled", v.enabled},
                   {"stalled", v.stalled},
                   {"pending", v.pending},
                   {"executed", v.executed},
                   {"errors", v.errors},
                   {"processing", std::string(its_processing_name(v.processing))},
                   {"cmd_write", v.driver_cmd_write ? ordered_json(hex(*v.driver_cmd_write)) : ordered_json(nullptr)},
                   {"vpe_table", v.table ? ordered_json(*v.table) : ordered_json(nullptr)},
                   {"vpes", vp}});
  }
  ordered_json rds = ordered_json::array();
  for (const RdView& v : s.rds)
    rds.push_back({{"cpu", v.cpu},
                   {"GICR_VPROPBASER", hex(v.vpropbaser)},
                   {"GICR_VPENDBASER", hex(v.vpendbaser)},
                   {"vpe_table", v.table ? ordered_json(*v.table) : ordered_json(nullptr)},
                   {"local_4_1_its", v.local_4_1_its ? ordered_json(*v.local_4_1_its) : ordered_json(nullptr)},
                   {"vpe_l1_base", v.vpe_l1_base ? ordered_json(hex(*v.vpe_l1_base)) : ordered_json(nullptr)},
                   {"l1_bytes_allocated", v.l1_bytes_allocated}});
  ordered_json vpes = ordered_json::array();
  for (const VpeView& v : s.vpes)
    vpes.push_back({{"vpeid", v.vpeid},
                    {"cpu", v.cpu ? ordered_json(*v.cpu) : ordered_json(nullptr)},
                    {"vmapp_count", v.vmapp_count},
                    {"mapped_on", v.mapped_on},
                    {"in_tables_of", v.in_tables_of},
                    {"vsgi_enabled", fmt::format("{:#06x}", v.enabled)},
                    {"vsgi_pending", fmt::format("{:#06x}", v.pending)},
                    {"resident_on", v.resident_on ? ordered_json(*v.resident_on) : ordered_json(nullptr)}});
  return ordered_json{{"its", its}, {"rds", rds}, {"vpes", vpes}, {"command_errors", s.command_errors}};
}

void print_its_json(const ItsScriptResult& res) {
  ordered_json steps = ordered_json::array();
  for (const StepResult& r : res.steps) {
    ordered_json issued = ordered_json::array();
    for (const IssuedCommand& c : r.issued) {
      ordered_json dw = ordered_json::array();
      for (std::uint64_t d : encode_its_dwords(c.command)) dw.push_back(fmt::format("{:#018x}", d));
      issued.push_back({{"its", c.its}, {"command", std::string(opcode_name(opcode_of(c.command)))}, {"dwords", dw}});
    }
    ordered_json errors = ordered_json::array();
    for (const CommandError& e : r.command_errors) {
      const std::string_view name = any_opcode_name(e.opcode);
      errors.push_back({{"its", e.its},
                        {"offset", hex(e.queue_offset)},
                        {"opcode", fmt::format("{:#04x}", e.opcode)},
                        {"command", name.empty() ? nullptr : ordered_json(std::string(name))},
                        {"kind", std::string(command_error_kind_name(e.kind))},
                        {"vpeid", e.vpeid ? ordered_json(*e.vpeid) : ordered_json(nullptr)},
                        {"message", e.message}});
    }
    ordered_json notes = ordered_json::array();
    for (const RegisterNote& n : r.register_notes) notes.push_back({{"register", n.reg}, {"applied", n.applied}, {"message", n.message}});
    ordered_json waits = ordered_json::array();
    for (const NamedWait& w : r.waits) waits.push_back(wait_json(w));
    ordered_json sgir = nullptr;
    if (r.sgir)
      sgir = {{"its", r.sgir->its},
              {"vpeid", r.sgir->sgir.vpeid},
              {"vintid", r.sgir->sgir.vintid},
              {"outcome", std::string(sgir_outcome_name(r.sgir->outcome))},
              {"target_cpu", r.sgir->target_cpu >= 0 ? ordered_json(r.sgir->target_cpu) : ordered_json(nullptr)},
              {"doorbell", r.sgir->doorbell}};
    steps.push_back({{"line", r.line},
                     {"kind", r.kind},
                     {"text", r.text},
                     {"refused", r.refused ? ordered_json(*r.refused) : ordered_json(nullptr)},
                     {"issued", issued},
                     {"posted_as", r.posted_as},
                     {"command_errors", errors},
                     {"register_notes", notes},
                     {"waits", waits},
                     {"sgir", sgir},
                     {"notes", r.notes},
                     {"expect_failures", r.expect_failures},
                     {"state", state_json(r.state)}});
  }
  ordered_json j{{"file", res.file},
                 {"system", res.system_summary},
                 {"bringup_notes", res.bringup_notes},
                 {"vpe_table_sources", res.cpu_sources},
                 {"expectations", {{"checked", res.expectations}, {"failed", res.expectations_failed}}},
                 {"steps", steps}};
  fmt::print("{}\n", j.dump(2));
}

std::filesystem::path resolve_script(const std::string& arg) {
  const std::filesystem::path p(arg);
  if (std::filesystem::exists(p) || arg.find('/') != std::string::npos || p.has_extension()) return p;
  const std::filesystem::path shipped = data_dir() / "docs" / "examples" / "its" / (arg + ".its");
  if (std::filesystem::exists(shipped)) return shipped;
  return p;  // read_text_file() reports it missing
}

void run_its(const ItsArgs& a) {
  const std::filesystem::path path = resolve_script(a.script);
  const std::string text = read_text_file(path);
  ItsScript script = parse_its_script(text, a.script);
  if (!a.linux_version.empty()) {
    if (a.linux_version != "mainline" && a.linux_version != "v5.6-rc1")
      throw InputError("--linux", fmt::format("'{}': give mainline or v5.6-rc1", a.linux_version));
    script.system.linux_vpe_l1_fixes = a.linux_version == "mainline";
  }
  const ItsScriptResult res = run_its_script(script);
  if (a.json)
    print_its_json(res);
  else
    print_its_text(res, a.quiet);
  if (res.expectations_failed > 0)
    throw CheckFailed(fmt::format("{}: {} of {} expectations failed", a.script, res.expectations_failed, res.expectations));
}

}  // namespace

void add_gic_command(CLI::App& root) {
  auto* gic = root.add_subcommand(
      "gic", "GICv4.1 direct vSGI: decode and encode ITS commands and GITS_SGIR values, run ITS scripts");
  gic->require_subcommand(1);
  gic->footer("Run 'ipilab gic decode --help', 'ipilab gic encode --help' or 'ipilab gic its --help' for examples.");

  auto d = std::make_shared<DecodeArgs>();
  auto* dec = gic->add_subcommand(
      "decode",
      "Decode a 32-byte GICv4.1 ITS command (SYNC, VMAPP, VMOVP, VSGI, VSYNC, VINVALL, INVDB) or a GITS_SGIR value");
  dec->add_option("HEX", d->hex,
                  "the command as 32 bytes in memory order (spaces, ':' or ',' between bytes are fine), or four\n"
                  "64-bit doublewords DW0..DW3 each written 0x..., or one 64-bit GITS_SGIR value")
      ->required();
  dec->add_flag("--sgir", d->sgir, "read HEX as a GITS_SGIR value (automatic for a single value of up to 16 digits)");
  dec->add_flag("--dwords", d->dwords, "read HEX as four 64-bit doublewords DW0 DW1 DW2 DW3");
  dec->add_flag("--json", d->json, "print an object: command, opcode, dwords, bytes, fields {name: value}, layout");
  dec->footer(R"(Every field is listed with its bit range (DWn[hi:lo]). In an ITS command, reserved bits set, unknown
opcodes and wrong lengths are errors (exit 2) that name the byte; in a GITS_SGIR value (a single
number of up to 16 hex digits), RES0 bits set are shown, not rejected: the hardware ignores them.

Examples:
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
      "Encode an ITS command or a GITS_SGIR value from NAME=VALUE fields (names as 'gic decode' prints them)");
  enc->add_option("COMMAND", e->command, "sgir, sync, vsync, vmapp, vmovp, vsgi, invdb or vinvall")->required();
  enc->add_option("FIELDS", e->fields, "NAME=VALUE pairs, e.g. vPEID=0x1234 vINTID=5");
  enc->add_flag("--json", e->json, "print the same object as 'gic decode --json'");
  enc->footer(R"(Field names are matched in any case; missing fields are 0; values are decimal or 0x-hex; addresses
and Priority are given in their full units.

Examples:
  ipilab gic encode vsgi vPEID=0x1234 vINTID=5 Priority=0xa0 Enable=1 Group=1
  ipilab gic encode vmapp vPEID=3 RDbase=33 V=1 Alloc=1 VPT_size=15 VPT_addr=0x80030000 Default_DB=8195
  ipilab gic encode sgir vPEID=0x1234 vINTID=5
)");
  enc->callback([e] { run_encode(*e); });

  auto i = std::make_shared<ItsArgs>();
  auto* its = gic->add_subcommand(
      "its",
      "Run an ITS script (register writes, ITS commands, Linux host-driver calls), printing the ITS state per step");
  its->add_option("SCRIPT", i->script,
                  "a script file, or the name of a shipped example (docs/examples/its/NAME.its):\n"
                  "disable-reenable, wrap-wait, vpe-move, vpe-tables, vpe-l1-fixes")
      ->required();
  its->add_option("--linux", i->linux_version,
                  "the host driver's vPE-table bring-up: mainline, or v5.6-rc1 (before e88bd316e597 and 8b718d403c5c); "
                  "overrides the script's system linux=");
  its->add_flag("--json", i->json, "print every step with its full state as JSON (contract: docs/gic-its.md)");
  its->add_flag("--quiet", i->quiet, "text output: print the state only after the bring-up, events after every step");
  its->footer(R"(A script holds register writes (GITS_CTLR, GITS_CBASER, GITS_CWRITER, GITS_BASER<n>, GITS_SGIR,
GICR_VPROPBASER / GICR_VPENDBASER per redistributor), guest-memory writes, ITS commands and Linux host-driver
calls (map / move / unmap a vPE, VSGI, INVDB, GITS_SGIR, completion waits). After each step it prints the ITS
state: CREADR, CWRITER, errors, vPE mappings, pending vSGIs, and the vPE-table registers when they change.

The script format is documented in docs/gic-its.md. A script starts with a system line, e.g.
  system sockets=2 cpus_per_socket=2 common_lpi_aff=2
then one statement per line ('#' comments): write, mem, push, run, mode, driver, linux ..., expect ...
A Linux bring-up (boot=linux, the default) programs GITS_BASER2, GITS_CBASER, GITS_CTLR and every
GICR_VPROPBASER the way drivers/irqchip/irq-gic-v3-its.c does.

Exit status: 0, 1 when an expect line does not hold, 2 for a bad script (FILE:LINE and the reason).

Examples:
  ipilab gic its disable-reenable          # GITS_CTLR.Enabled 1 -> 0 -> 1: resumes at CREADR, no replay
  ipilab gic its wrap-wait                 # CREADR wraps past 64 KiB: a050fa5476d4's predicate vs the old one
  ipilab gic its vpe-move                  # VMOVP of a mapped vPE, of an unmapped one (CVE-2024-50192)
  ipilab gic its vpe-tables --quiet        # GITS_BASER2 / GICR_VPROPBASER for CommonLPIAff 3
  ipilab gic its vpe-l1-fixes --quiet      # v5.6-rc1: VPROPBASER.Size one page too many, vpe_l1_base NULL
  ipilab gic its wrap-wait --json | jq '.steps[] | select(.waits != []) | .waits'
)");
  its->callback([i] { run_its(*i); });
}

}  // namespace ipilab::cli
