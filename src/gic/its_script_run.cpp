// Runner of `ipilab gic its` scripts (its_script.h): builds the system a `system` line describes, runs
// each step against GicSystem / LinuxItsDriver, and records what the step raised and the state after it.
#include <algorithm>
#include <memory>
#include <set>

#include <fmt/format.h>

#include "common/error.h"
#include "gic/its_script.h"
#include "gic/topology_builder.h"

namespace ipilab::gic {

std::string_view its_processing_name(ItsProcessing mode) { return mode == ItsProcessing::Eager ? "eager" : "manual"; }

GicSystemConfig script_system_config(const ScriptSystem& y, const std::vector<ScriptItsOverride>& overrides) {
  const int clpi = y.common_lpi_aff.value_or(y.socket_aff == 3 ? 1 : 2);
  const int svpet = y.svpet.value_or(clpi == 0 ? 1 : clpi);
  auto socket_affinity = [&](int s, int aff1, int aff0) {
    const auto sock = static_cast<std::uint8_t>(s);
    return y.socket_aff == 3 ? make_affinity(sock, 0, static_cast<std::uint8_t>(aff1), static_cast<std::uint8_t>(aff0))
                             : make_affinity(0, sock, static_cast<std::uint8_t>(aff1), static_cast<std::uint8_t>(aff0));
  };
  GicSystemConfig cfg;
  cfg.processing = y.processing;
  cfg.on_command_error = y.on_error;
  for (int s = 0; s < y.sockets; ++s) {
    ItsConfig its = gicv41_its(y.vmovp, y.pta, static_cast<std::uint8_t>(svpet));
    its.mpidr = socket_affinity(s, 0, 0);
    its.socket = s;
    its.vpeid_bits = y.vpeid_bits;
    its.base_pa = 0x2'0000'0000 + static_cast<std::uint64_t>(s) * 0x100'0000;
    its.vpe_entry_bytes = static_cast<std::uint8_t>(y.vpe_entry_bytes);
    cfg.its.push_back(its);
  }
  for (const ScriptItsOverride& o : overrides) {
    ItsConfig& its = cfg.its.at(static_cast<std::size_t>(o.its));
    if (o.vlpis) its.typer.vlpis = *o.vlpis;
    if (o.vmapp) its.typer.vmapp = *o.vmapp;
    if (o.vsgi) its.typer.vsgi = *o.vsgi;
    if (o.vmovp) its.typer.vmovp = *o.vmovp;
    if (o.svpet) its.typer.svpet = static_cast<std::uint8_t>(*o.svpet);
    if (o.socket) its.socket = *o.socket;
    if (o.mpidr) its.mpidr = *o.mpidr;
    if (o.page_sizes) its.baser_page_sizes = *o.page_sizes;
    if (o.indirect) its.baser_indirect = *o.indirect;
    if (o.entry_bytes) its.vpe_entry_bytes = static_cast<std::uint8_t>(*o.entry_bytes);
  }
  for (int s = 0; s < y.sockets; ++s) {
    for (int i = 0; i < y.cpus_per_socket; ++i) {
      const int cpu = s * y.cpus_per_socket + i;
      RedistributorConfig rd = gicv41_redistributor(cpu, static_cast<std::uint8_t>(clpi));
      rd.typer.affinity = socket_affinity(s, i / y.cluster, i % y.cluster);
      rd.typer.last = i == y.cpus_per_socket - 1;
      rd.socket = s;
      rd.rd_pa = 0x1'0000'0000 + static_cast<std::uint64_t>(cpu) * 0x40000;
      rd.vpe_entry_bytes = static_cast<std::uint8_t>(y.vpe_entry_bytes);
      cfg.redistributors.push_back(rd);
    }
  }
  return cfg;
}

namespace {

std::string join_ints(const std::vector<int>& v) {
  if (v.empty()) return "-";
  std::string out;
  for (int x : v) out += (out.empty() ? "" : ",") + std::to_string(x);
  return out;
}

std::uint64_t parse_number(std::string_view text) {
  std::string digits;
  for (char ch : text)
    if (ch != '_') digits.push_back(ch);
  const bool hex = digits.size() > 2 && digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X');
  return std::stoull(hex ? digits.substr(2) : digits, nullptr, hex ? 16 : 10);  // validated by the parser
}

std::vector<int> parse_list(std::string_view text) {
  std::vector<int> out;
  if (text == "-") return out;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = text.find(',', start);
    out.push_back(static_cast<int>(parse_number(text.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start))));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  std::sort(out.begin(), out.end());
  return out;
}

bool is_hex(std::string_view text) { return text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X'); }

class Runner {
 public:
  explicit Runner(const ItsScript& s) : script_(s) {}

  ItsScriptResult run() {
    ItsScriptResult out;
    out.file = script_.file;
    const GicSystemConfig cfg = script_system_config(script_.system, script_.its_overrides);
    sys_ = std::make_unique<GicSystem>(cfg);
    {
      const ScriptSystem& y = script_.system;
      std::string its;
      for (std::size_t i = 0; i < cfg.its.size(); ++i) {
        const GitsTyper& t = cfg.its[i].typer;
        its += fmt::format("{}its{}: {}{}VMOVP={} PTA={} SVPET={} MPIDR={:#x}", i == 0 ? "" : "; ", i,
                           t.vmapp ? "GICv4.1" : (t.vlpis ? "GICv4.0" : "GICv3"), t.vsgi ? "+vSGI " : " ", t.vmovp ? 1 : 0,
                           t.pta ? 1 : 0, t.svpet, cfg.its[i].mpidr);
      }
      out.system_summary = fmt::format("{} socket{} x {} CPUs (socket in Aff{}, {} CPUs per Aff1 cluster), CommonLPIAff={}; "
                                       "{}; {} bring-up, processing {}, on command error {}",
                                       y.sockets, y.sockets == 1 ? "" : "s", y.cpus_per_socket, y.socket_aff, y.cluster,
                                       cfg.redistributors[0].typer.common_lpi_aff, its, y.boot_linux ? "Linux" : "no",
                                       its_processing_name(y.processing), y.on_error == CommandErrorPolicy::Skip ? "skip" : "stall");
    }
    StepResult boot;
    boot.line = script_.system_line;
    boot.kind = "system";
    boot.text = "system (bring-up)";
    const std::size_t notes0 = sys_->register_notes().size();
    if (script_.system.boot_linux) {
      LinuxItsDriver::Options opts;
      opts.vpe_l1_fixes = script_.system.linux_vpe_l1_fixes;
      drv_ = std::make_unique<LinuxItsDriver>(*sys_, opts);
      out.bringup_notes = drv_->bringup_notes();
      for (int cpu = 0; cpu < static_cast<int>(sys_->cpu_count()); ++cpu)
        out.cpu_sources.emplace_back(vpe_table_source_name(drv_->cpu_vpe_table(cpu).source));
      boot.notes = out.bringup_notes;
    }
    for (std::size_t i = notes0; i < sys_->register_notes().size(); ++i) boot.register_notes.push_back(sys_->register_notes()[i]);
    boot.state = snapshot();
    out.steps.push_back(std::move(boot));
    last_action_ = 0;
    for (const ScriptStep& step : script_.steps) {
      StepResult r;
      r.line = step.line;
      r.text = step.text;
      const std::size_t errors_before = sys_->command_errors().size();
      const std::size_t notes_before = sys_->register_notes().size();
      std::visit([&](const auto& a) { execute(a, r, out); }, step.action);
      for (std::size_t i = errors_before; i < sys_->command_errors().size(); ++i) r.command_errors.push_back(sys_->command_errors()[i]);
      for (std::size_t i = notes_before; i < sys_->register_notes().size(); ++i) r.register_notes.push_back(sys_->register_notes()[i]);
      r.state = snapshot();
      const bool is_expect = std::holds_alternative<ScriptExpect>(step.action);
      out.steps.push_back(std::move(r));
      if (!is_expect) last_action_ = out.steps.size() - 1;
    }
    return out;
  }

 private:
  // --- steps ---

  void execute(const ScriptDriver& d, StepResult& r, ItsScriptResult&) {
    r.kind = "driver";
    LinuxItsDriver::Behaviour& b = drv_->behaviour();
    if (d.wait) b.wait = *d.wait;
    if (d.refuse_vmovp_unmapped) b.refuse_vmovp_unmapped = *d.refuse_vmovp_unmapped;
    if (d.vsync_after_unmap) b.vsync_after_unmap = *d.vsync_after_unmap;
    if (d.its_rate) b.its_commands_per_poll = *d.its_rate;
    if (d.find41) policy_ = *d.find41;
    r.notes.push_back(fmt::format("wait={} vmovp_unmapped={} unmap_vsync={} find41={} its_rate={}", wait_predicate_name(b.wait),
                                  b.refuse_vmovp_unmapped ? "refuse" : "send", b.vsync_after_unmap ? 1 : 0,
                                  find41_policy_name(policy_), b.its_commands_per_poll));
  }

  void execute(const ScriptWrite& w, StepResult& r, ItsScriptResult&) {
    r.kind = "write";
    switch (w.reg) {
      case ScriptRegister::GitsCtlr: sys_->write_gits_ctlr(w.index, static_cast<std::uint32_t>(w.value)); break;
      case ScriptRegister::GitsCbaser: sys_->write_gits_cbaser(w.index, w.value); break;
      case ScriptRegister::GitsCwriter: sys_->write_gits_cwriter(w.index, w.value); break;
      case ScriptRegister::GitsBaser: sys_->write_gits_baser(w.index, w.baser_n, w.value); break;
      case ScriptRegister::GitsSgir: r.sgir = sys_->write_sgir(w.index, w.value); break;
      case ScriptRegister::GicrVpropbaser: sys_->write_gicr_vpropbaser(w.index, w.value); break;
      case ScriptRegister::GicrVpendbaser: sys_->write_vpendbaser(w.index, w.value); break;
    }
  }

  void execute(const ScriptMem& m, StepResult& r, ItsScriptResult&) {
    r.kind = "mem";
    sys_->guest_memory().write(m.pa, m.bytes);
    r.notes.push_back(fmt::format("{} bytes at {:#x}", m.bytes.size(), m.pa));
  }

  void execute(const ScriptPush& p, StepResult& r, ItsScriptResult&) {
    r.kind = "push";
    ItsCommandQueue& q = sys_->queue(p.its);
    if (!q.valid()) {
      r.notes.push_back("GITS_CBASER.Valid = 0: software has no queue to write to; nothing pushed");
      return;
    }
    if (!q.cwriter_in_range()) {
      r.notes.push_back("GITS_CWRITER is outside the queue; nothing pushed");
      return;
    }
    const std::size_t size = q.size_bytes();
    std::uint32_t off = q.write_offset();
    std::uint32_t pushed = 0;
    for (; pushed < p.count; ++pushed) {
      const auto next = static_cast<std::uint32_t>((off + kItsCommandSize) % size);
      if (next == q.read_offset()) {
        r.notes.push_back(fmt::format("queue full after {} of {} commands (the slot before CREADR stays unused)", pushed, p.count));
        break;
      }
      q.write_memory(off, p.bytes);
      off = next;
    }
    if (pushed > 0) {
      sys_->write_gits_cwriter(p.its, off);
      r.notes.push_back(fmt::format("{} command{} written, GITS_CWRITER = {:#x}", pushed, pushed == 1 ? "" : "s", off));
    }
  }

  void execute(const ScriptRun& run, StepResult& r, ItsScriptResult&) {
    r.kind = "run";
    if (!sys_->its_enabled(run.its)) r.notes.push_back("GITS_CTLR.Enabled = 0: the ITS runs nothing");
    const std::size_t n = sys_->process_commands(run.its, run.max ? static_cast<std::size_t>(*run.max)
                                                                    : std::numeric_limits<std::size_t>::max());
    r.notes.push_back(fmt::format("ITS {} executed {} command{}", run.its, n, n == 1 ? "" : "s"));
  }

  void execute(const ScriptMode& m, StepResult& r, ItsScriptResult&) {
    r.kind = "mode";
    sys_->set_processing(m.its, m.mode);
  }

  void take(const ItsCall& c, const std::string& as, StepResult& r) {
    r.refused = c.refused;
    r.notes.insert(r.notes.end(), c.notes.begin(), c.notes.end());
    r.issued = c.commands;
    for (const ItsWaitResult& w : c.waits) r.waits.push_back(NamedWait{"", w});
    if (!as.empty()) {
      tickets_[as] = c.tickets;
      if (!c.tickets.empty()) r.posted_as.push_back(as);
      if (c.tickets.empty())
        r.notes.push_back(fmt::format("nothing posted: '{}' names no batch", as));
    }
  }

  void execute(const ScriptLinux& l, StepResult& r, ItsScriptResult&) {
    r.kind = "linux";
    LinuxItsDriver& d = *drv_;
    const bool deferred = !l.as.empty();
    d.defer_waits(deferred);
    switch (l.op) {
      case LinuxOp::Map: take(l.its ? d.map_vpe_on(l.vpe, l.cpu, *l.its) : d.map_vpe(l.vpe, l.cpu), l.as, r); break;
      case LinuxOp::Unmap: take(d.unmap_vpe(l.vpe), l.as, r); break;
      case LinuxOp::Move: take(d.move_vpe(l.vpe, l.cpu), l.as, r); break;
      case LinuxOp::Vsgi: take(d.configure_vsgi(policy_, l.sender, l.vpe, l.vintid, l.config), l.as, r); break;
      case LinuxOp::Clear: take(d.clear_vsgi_pending(policy_, l.sender, l.vpe, l.vintid), l.as, r); break;
      case LinuxOp::Invdb: take(d.send_invdb(policy_, l.sender, l.vpe), l.as, r); break;
      case LinuxOp::Traffic: take(d.post_sync_traffic(*l.its, l.cpu, l.count), "", r); break;
      case LinuxOp::Sgi: {
        const VsgiRoute route = d.send_vsgi(policy_, l.sender, l.vpe, l.vintid);
        r.sgir = route.write;
        if (route.its < 0)
          r.notes.push_back("find_4_1_its() is NULL: no GICv4.1 ITS");
        else
          r.notes.push_back(fmt::format("find_4_1_its() on CPU {} -> ITS {} ({}; ITS on socket {}, sender on socket {})",
                                        l.sender, route.its, route.from_local_pointer ? "local_4_1_its" : "first v4.1 ITS in its_nodes",
                                        route.its_socket, route.sender_socket));
        break;
      }
      case LinuxOp::Schedule: d.schedule_vpe(l.cpu, l.vpe, l.g0, l.g1); break;
      case LinuxOp::Deschedule: d.deschedule_vpe(l.cpu, l.flag); break;
      case LinuxOp::Wait: {
        std::vector<ItsWaitResult> results;
        for (const ItsWaitTicket& t : tickets_.at(l.as)) {
          results.push_back(d.wait(t, l.predicate));
          r.waits.push_back(NamedWait{l.as, results.back()});
        }
        waits_[l.as] = results;
        break;
      }
    }
    d.defer_waits(false);
  }

  void execute(const ScriptExpect& e, StepResult& r, ItsScriptResult& out) {
    r.kind = "expect";
    const StateView now = snapshot();
    for (const auto& [key, want] : e.keys) {
      ++out.expectations;
      const std::optional<std::string> fail = check(e, key, want, now, out);
      if (fail) {
        ++out.expectations_failed;
        r.expect_failures.push_back(*fail);
      }
    }
  }

  // --- expect ---

  std::optional<std::string> number_check(const std::string& what, std::uint64_t got, const std::string& want) {
    const std::uint64_t w = parse_number(want);
    if (got == w) return std::nullopt;
    return is_hex(want) ? fmt::format("{}: expected {}, got {:#x}", what, want, got)
                        : fmt::format("{}: expected {}, got {}", what, want, got);
  }
  std::optional<std::string> text_check(const std::string& what, const std::string& got, const std::string& want) {
    if (got == want) return std::nullopt;
    return fmt::format("{}: expected {}, got {}", what, want, got);
  }
  std::optional<std::string> opt_check(const std::string& what, std::optional<int> got, const std::string& want) {
    const std::string g = got ? std::to_string(*got) : "none";
    if (want == "none" || want == "NONE" || want == "None") return text_check(what, g, "none");
    if (!got) return fmt::format("{}: expected {}, got none", what, want);
    return number_check(what, static_cast<std::uint64_t>(*got), want);
  }
  std::optional<std::string> list_check(const std::string& what, std::vector<int> got, const std::string& want) {
    std::sort(got.begin(), got.end());
    return text_check(what, join_ints(got), join_ints(parse_list(want)));
  }

  std::optional<std::string> check_its(const ScriptExpect& e, const std::string& key, const std::string& want, const StateView& s) {
    const ItsView& v = s.its.at(static_cast<std::size_t>(e.index));
    const std::string what = fmt::format("its{} {}", e.index, key);
    if (key == "creadr") return number_check(what, v.creadr, want);
    if (key == "cwriter") return number_check(what, v.cwriter, want);
    if (key == "cbaser") return number_check(what, v.cbaser, want);
    if (key == "ctlr") return number_check(what, v.ctlr, want);
    if (key == "baser2") return number_check(what, v.baser2, want);
    if (key == "enabled") return number_check(what, v.enabled, want);
    if (key == "stalled") return number_check(what, v.stalled, want);
    if (key == "pending") return number_check(what, v.pending, want);
    if (key == "executed") return number_check(what, v.executed, want);
    if (key == "errors") return number_check(what, v.errors, want);
    if (key == "cmd_write") return number_check(what, v.driver_cmd_write.value_or(0), want);
    if (key == "vpes") {
      std::string got;
      for (const auto& [id, cpu] : v.vpes) got += fmt::format("{}{}:{}", got.empty() ? "" : ",", id, cpu);
      return text_check(what, got.empty() ? "-" : got, want);
    }
    return fmt::format("{}: not checkable", key);  // the parser admits only the keys above
  }

  std::optional<std::string> check_rd(const ScriptExpect& e, const std::string& key, const std::string& want, const StateView& s) {
    const RdView& v = s.rds.at(static_cast<std::size_t>(e.index));
    const std::string what = fmt::format("rd{} {}", e.index, key);
    if (key == "vpropbaser") return number_check(what, v.vpropbaser, want);
    if (key == "vpendbaser") return number_check(what, v.vpendbaser, want);
    if (key == "local_its") return opt_check(what, v.local_4_1_its, want);
    if (key == "vpe_l1_base") {
      const bool want_null = want == "none" || want == "NONE" || want == "None";
      if (!v.vpe_l1_base)
        return want_null ? std::nullopt : std::optional<std::string>(fmt::format("{}: expected {}, got none (NULL)", what, want));
      if (want_null) return fmt::format("{}: expected none (NULL), got {:#x}", what, *v.vpe_l1_base);
      return number_check(what, *v.vpe_l1_base, want);
    }
    if (key == "table_pa") return number_check(what, decode_gicr_vpropbaser41(v.vpropbaser).pa, want);
    if (key == "table_pages") return number_check(what, decode_gicr_vpropbaser41(v.vpropbaser).pages, want);
    return fmt::format("{}: not checkable", key);  // the parser admits only the keys above
  }

  std::optional<std::string> check_vpe(const ScriptExpect& e, const std::string& key, const std::string& want, const StateView& s) {
    VpeView v;
    v.vpeid = static_cast<std::uint16_t>(e.index);
    for (const VpeView& x : s.vpes)
      if (x.vpeid == v.vpeid) v = x;
    const std::string what = fmt::format("vpe {} {}", e.index, key);
    if (key == "cpu") return opt_check(what, v.cpu, want);
    if (key == "vmapp_count") return number_check(what, static_cast<std::uint64_t>(v.vmapp_count), want);
    if (key == "mapped_on") return list_check(what, v.mapped_on, want);
    if (key == "in_tables_of") return list_check(what, v.in_tables_of, want);
    if (key == "pending") return number_check(what, v.pending, want);
    if (key == "resident_on") return opt_check(what, v.resident_on, want);
    return fmt::format("{}: not checkable", key);  // the parser admits only the keys above
  }

  std::optional<std::string> check_wait(const ScriptExpect& e, const std::string& key, const std::string& want) {
    const std::string what = fmt::format("wait {} {}", e.name, key);
    const auto it = waits_.find(e.name);
    if (it == waits_.end()) return fmt::format("{}: '{}' has not been waited for yet (linux wait {})", what, e.name, e.name);
    const std::vector<ItsWaitResult>& ws = it->second;
    if (key == "batches") return number_check(what, ws.size(), want);
    if (ws.empty()) return fmt::format("{}: '{}' posted no batch", what, e.name);
    std::uint64_t sum = 0;
    auto total = [&](auto f) {
      sum = 0;
      for (const ItsWaitResult& w : ws) sum += f(w);
      return sum;
    };
    if (key == "outcome") {
      std::string got(wait_outcome_name(WaitOutcome::Completed));
      for (const ItsWaitResult& w : ws)
        if (!w.completed()) {
          got = wait_outcome_name(w.outcome);
          break;
        }
      return text_check(what, got, want);
    }
    if (key == "polls") return number_check(what, total([](const ItsWaitResult& w) { return w.polls; }), want);
    if (key == "udelays") return number_check(what, total([](const ItsWaitResult& w) { return w.udelays; }), want);
    if (key == "waited_commands") return number_check(what, total([](const ItsWaitResult& w) { return w.waited_commands; }), want);
    if (key == "waited_bytes") return number_check(what, total([](const ItsWaitResult& w) { return w.waited_bytes(); }), want);
    if (key == "ahead_commands") return number_check(what, total([](const ItsWaitResult& w) { return w.ahead_commands; }), want);
    if (key == "batch_commands") return number_check(what, total([](const ItsWaitResult& w) { return w.batch_commands; }), want);
    if (key == "travelled_bytes") return number_check(what, total([](const ItsWaitResult& w) { return w.travelled_bytes; }), want);
    if (key == "first_creadr") return number_check(what, ws.front().first_creadr, want);
    if (key == "last_creadr") return number_check(what, ws.back().last_creadr, want);
    return fmt::format("{}: not checkable", key);  // the parser admits only the keys above
  }

  std::optional<std::string> check_step(const std::string& key, const std::string& want, const ItsScriptResult& out) {
    const StepResult& p = out.steps.at(last_action_);
    const std::string what = fmt::format("step (line {}) {}", p.line, key);
    if (key == "refused") return number_check(what, p.refused.has_value(), want);
    if (key == "errors") return number_check(what, p.command_errors.size(), want);
    if (key == "register_notes") return number_check(what, p.register_notes.size(), want);
    if (key == "issued") return number_check(what, p.issued.size(), want);
    if (key == "sgir") return text_check(what, p.sgir ? std::string(sgir_outcome_name(p.sgir->outcome)) : "none", want);
    return fmt::format("{}: not checkable", key);  // the parser admits only the keys above
  }

  std::optional<std::string> check_system(const std::string& key, const std::string& want, const StateView& s) {
    if (key == "command_errors") return number_check("system command_errors", s.command_errors, want);
    return fmt::format("{}: not checkable", key);  // the parser admits only the keys above
  }

  std::optional<std::string> check(const ScriptExpect& e, const std::string& key, const std::string& want,
                                   const StateView& s, const ItsScriptResult& out) {
    switch (e.target) {
      case ScriptExpect::Target::Its: return check_its(e, key, want, s);
      case ScriptExpect::Target::Rd: return check_rd(e, key, want, s);
      case ScriptExpect::Target::Vpe: return check_vpe(e, key, want, s);
      case ScriptExpect::Target::Wait: return check_wait(e, key, want);
      case ScriptExpect::Target::Step: return check_step(key, want, out);
      case ScriptExpect::Target::System: return check_system(key, want, s);
    }
    return fmt::format("{}: not checkable", key);  // the parser admits only the keys above
  }

  // --- state ---

  StateView snapshot() const {
    StateView v;
    const GicSystem& s = *sys_;
    v.command_errors = s.command_errors().size();
    std::set<std::uint16_t> vpes;
    std::map<std::uint16_t, std::vector<int>> in_tables;
    for (int i = 0; i < static_cast<int>(s.its_count()); ++i) {
      ItsView x;
      x.its = i;
      x.ctlr = s.read_gits_ctlr(i);
      x.cbaser = s.read_gits_cbaser(i);
      x.cwriter = s.read_gits_cwriter(i);
      x.creadr = s.read_gits_creadr(i);
      x.baser2 = s.read_gits_baser(i, 2);
      x.enabled = s.its_enabled(i);
      x.stalled = s.queue(i).stalled();
      x.pending = s.queue(i).pending_slots();
      x.executed = s.stats(i).commands;
      x.errors = s.stats(i).command_errors;
      x.processing = s.processing(i);
      if (drv_) x.driver_cmd_write = drv_->cmd_write(i);
      x.table = s.its_vpe_table(i);
      if (x.table)
        for (const auto& [id, e] : s.vpe_table_entries(*x.table)) {
          x.vpes.emplace_back(id, e.rd_cpu);
          vpes.insert(id);
          in_tables[id].push_back(i);
        }
      v.its.push_back(std::move(x));
    }
    std::map<std::uint16_t, int> resident;
    for (int cpu = 0; cpu < static_cast<int>(s.cpu_count()); ++cpu) {
      RdView r;
      r.cpu = cpu;
      r.vpropbaser = s.read_gicr_vpropbaser(cpu);
      r.vpendbaser = s.read_vpendbaser(cpu);
      r.table = s.rd_vpe_table(cpu);
      if (drv_) {
        r.local_4_1_its = drv_->cpu_vpe_table(cpu).local_4_1_its;
        r.vpe_l1_base = drv_->cpu_vpe_table(cpu).vpe_l1_base;
        r.l1_bytes_allocated = drv_->cpu_vpe_table(cpu).l1_bytes_allocated;
        r.linux_driver = true;
      }
      if (const auto res = s.resident_vpe(cpu)) {
        resident[*res] = cpu;
        vpes.insert(*res);
      }
      v.rds.push_back(r);
    }
    for (const auto& [id, st] : s.vsgi_states()) vpes.insert(id);
    if (drv_)
      for (std::uint16_t id : drv_->known_vpes()) vpes.insert(id);
    for (std::uint16_t id : vpes) {
      VpeView p;
      p.vpeid = id;
      if (drv_) {
        p.cpu = drv_->vpe_cpu(id);
        p.vmapp_count = drv_->vmapp_count(id);
        p.mapped_on = drv_->mapped_on(id);
      }
      if (in_tables.contains(id)) p.in_tables_of = in_tables.at(id);
      const VpeVsgiState st = s.vsgi_state(id);
      p.pending = st.pending;
      for (int n = 0; n < 16; ++n)
        if (st.config[static_cast<std::size_t>(n)].enable) p.enabled = static_cast<std::uint16_t>(p.enabled | (1u << n));
      if (resident.contains(id)) p.resident_on = resident.at(id);
      v.vpes.push_back(p);
    }
    return v;
  }

  const ItsScript& script_;
  std::unique_ptr<GicSystem> sys_;
  std::unique_ptr<LinuxItsDriver> drv_;
  Find41Policy policy_ = Find41Policy::PostSeed;
  std::map<std::string, std::vector<ItsWaitTicket>> tickets_;
  std::map<std::string, std::vector<ItsWaitResult>> waits_;
  std::size_t last_action_ = 0;
};

}  // namespace

ItsScriptResult run_its_script(const ItsScript& script) { return Runner(script).run(); }

}  // namespace ipilab::gic
