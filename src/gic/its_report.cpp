#include "gic/its_report.h"

#include <map>
#include <ostream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "gic/table_registers.h"

namespace ipilab::gic {
namespace {

using nlohmann::ordered_json;

std::string hex_text(std::uint64_t v) { return fmt::format("{:#x}", v); }

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
    if (f.value != 0) out += fmt::format(" {}={}", f.field->name, f.value < 10 ? fmt::format("{}", f.value) : hex_text(f.value));
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

void write_state_text(const StepResult& r, const StepResult* prev, bool full, std::ostream& out) {
  for (const ItsView& v : r.state.its) {
    const bool cmd_write_apart = v.driver_cmd_write && *v.driver_cmd_write != (v.cwriter & 0xFFFE0);
    out << fmt::format("  its{:<3} {} CREADR {:#06x}{} CWRITER {:#06x} pending {} executed {} errors {}{}{} | vPEs {}\n",
                       v.its, v.enabled ? "Enabled " : "Disabled", v.creadr & 0xFFFE0, v.stalled ? " (Stalled)" : "",
                       v.cwriter, v.pending, v.executed, v.errors,
                       v.processing == ItsProcessing::Manual ? " [manual]" : "",
                       cmd_write_apart ? fmt::format(" cmd_write {:#06x}", *v.driver_cmd_write) : "", vpes_text(v));
    const ItsView* p = prev ? &prev->state.its.at(static_cast<std::size_t>(v.its)) : nullptr;
    if (full || !p || p->baser2 != v.baser2 || p->cbaser != v.cbaser || p->ctlr != v.ctlr)
      out << fmt::format("         GITS_CTLR {:#010x}  GITS_CBASER {:#018x} ({})  GITS_BASER2 {:#018x} ({})\n",
                         v.ctlr, v.cbaser, describe_cbaser(v.cbaser), v.baser2, describe_baser(v.baser2));
  }
  for (const RdView& v : r.state.rds) {
    const RdView* p = prev ? &prev->state.rds.at(static_cast<std::size_t>(v.cpu)) : nullptr;
    if (!full && p && p->vpropbaser == v.vpropbaser && p->vpendbaser == v.vpendbaser) continue;
    out << fmt::format("  rd{:<4} GICR_VPROPBASER {:#018x} ({}){}{}  GICR_VPENDBASER {:#018x}\n", v.cpu, v.vpropbaser,
                       describe_vpropbaser(v.vpropbaser),
                       v.local_4_1_its ? fmt::format(" local_4_1_its its{}", *v.local_4_1_its) : "",
                       vpe_l1_text(v), v.vpendbaser);
  }
  for (const VpeView& v : r.state.vpes)
    out << fmt::format("  vPE {:<3} cpu {} | mapped on {} (vmapp_count {}) | in the table of {} | vSGI enabled {:#06x} "
                       "pending {:#06x}{}\n",
                       v.vpeid, v.cpu ? std::to_string(*v.cpu) : "-", ints_text(v.mapped_on, "its"), v.vmapp_count,
                       ints_text(v.in_tables_of, "its"), v.enabled, v.pending,
                       v.resident_on ? fmt::format(" | resident on rd{}", *v.resident_on) : "");
}

ordered_json wait_json(const NamedWait& n) {
  const ItsWaitResult& w = n.result;
  return ordered_json{{"name", n.name.empty() ? nullptr : ordered_json(n.name)},
                      {"predicate", std::string(wait_predicate_name(w.predicate))},
                      {"outcome", std::string(wait_outcome_name(w.outcome))},
                      {"polls", w.polls},
                      {"udelays", w.udelays},
                      {"snapshot", hex_text(w.snapshot)},
                      {"from", hex_text(w.from)},
                      {"to", hex_text(w.to)},
                      {"first_creadr", hex_text(w.first_creadr)},
                      {"last_creadr", hex_text(w.last_creadr)},
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
                   {"GITS_CTLR", hex_text(v.ctlr)},
                   {"GITS_CBASER", hex_text(v.cbaser)},
                   {"GITS_CWRITER", hex_text(v.cwriter)},
                   {"GITS_CREADR", hex_text(v.creadr)},
                   {"GITS_BASER2", hex_text(v.baser2)},
                   {"enabled", v.enabled},
                   {"stalled", v.stalled},
                   {"pending", v.pending},
                   {"executed", v.executed},
                   {"errors", v.errors},
                   {"processing", std::string(its_processing_name(v.processing))},
                   {"cmd_write", v.driver_cmd_write ? ordered_json(hex_text(*v.driver_cmd_write)) : ordered_json(nullptr)},
                   {"vpe_table", v.table ? ordered_json(*v.table) : ordered_json(nullptr)},
                   {"vpes", vp}});
  }
  ordered_json rds = ordered_json::array();
  for (const RdView& v : s.rds)
    rds.push_back({{"cpu", v.cpu},
                   {"GICR_VPROPBASER", hex_text(v.vpropbaser)},
                   {"GICR_VPENDBASER", hex_text(v.vpendbaser)},
                   {"vpe_table", v.table ? ordered_json(*v.table) : ordered_json(nullptr)},
                   {"local_4_1_its", v.local_4_1_its ? ordered_json(*v.local_4_1_its) : ordered_json(nullptr)},
                   {"vpe_l1_base", v.vpe_l1_base ? ordered_json(hex_text(*v.vpe_l1_base)) : ordered_json(nullptr)},
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

}  // namespace

void write_its_text(const ItsScriptResult& res, bool quiet, std::ostream& out) {
  out << fmt::format("{}\n", res.file);
  const StepResult* prev = nullptr;
  for (const StepResult& r : res.steps) {
    out << fmt::format("[line {}] {}\n", r.line, r.text);
    if (r.kind == "system") out << fmt::format("  system   {}\n", res.system_summary);
    if (r.kind == "system" && !res.cpu_sources.empty()) {
      std::map<std::string, int> n;
      for (const std::string& src : res.cpu_sources) ++n[src];
      std::string s;
      for (const auto& [k, v] : n) s += fmt::format("{}{} CPU{} {}", s.empty() ? "" : ", ", v, v == 1 ? "" : "s", k);
      out << fmt::format("  linux    bring-up: vPE tables {}\n", s);
    }
    if (r.refused) out << fmt::format("  refused  {}\n", *r.refused);
    for (std::size_t k = 0; k < r.issued.size();) {  // runs of identical commands print once, with a count
      std::size_t n = 1;
      while (k + n < r.issued.size() && r.issued[k + n].its == r.issued[k].its && r.issued[k + n].command == r.issued[k].command) ++n;
      out << fmt::format("  issued   its{}: {}{}\n", r.issued[k].its, command_text(r.issued[k].command), n > 1 ? fmt::format(" (x{})", n) : "");
      k += n;
    }
    for (const std::string& a : r.posted_as) out << fmt::format("  posted   as {} (the wait is `linux wait {}`)\n", a, a);
    for (const CommandError& e : r.command_errors)
      out << fmt::format("  error    {} [{}]\n", e.message, command_error_kind_name(e.kind));
    for (const RegisterNote& n : r.register_notes)
      out << fmt::format("  register {}: {}{}\n", n.reg, n.message, n.applied ? "" : " [write refused]");
    for (const NamedWait& w : r.waits) {
      out << fmt::format("  wait     {}\n", wait_text(w));
      if (!w.result.linux_message.empty()) out << fmt::format("  linux    {}\n", w.result.linux_message);
      if (!w.result.note.empty()) out << fmt::format("  note     {}\n", w.result.note);
    }
    if (r.sgir)
      out << fmt::format("  sgir     its{} vPE {} vINTID {}: {}{}{}\n", r.sgir->its, r.sgir->sgir.vpeid, r.sgir->sgir.vintid,
                         sgir_outcome_name(r.sgir->outcome),
                         r.sgir->target_cpu >= 0 ? fmt::format(" -> rd{} (socket {})", r.sgir->target_cpu, r.sgir->target_socket) : "",
                         r.sgir->doorbell ? ", default doorbell fired" : "");
    for (const std::string& n : r.notes) out << fmt::format("  note     {}\n", n);
    if (r.kind == "expect") {
      if (r.expect_failures.empty())
        out << fmt::format("  expect   ok\n");
      else
        for (const std::string& f : r.expect_failures) out << fmt::format("  expect   FAILED {}\n", f);
      continue;
    }
    if (!quiet || r.kind == "system") write_state_text(r, prev, r.kind == "system", out);
    prev = &r;
  }
  // steps[0] is the `system` bring-up (printed first above, steps[0] in --json): named, not counted.
  out << fmt::format("bring-up + {} step{}, {} expectation{} checked, {} failed\n", res.steps.size() - 1,
                     res.steps.size() == 2 ? "" : "s", res.expectations, res.expectations == 1 ? "" : "s", res.expectations_failed);
}

void write_its_json(const ItsScriptResult& res, std::ostream& out) {
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
                        {"offset", hex_text(e.queue_offset)},
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
  out << j.dump(2) << "\n";
}

}  // namespace ipilab::gic
