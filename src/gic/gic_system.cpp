#include "gic/gic_system.h"

#include <set>

#include <fmt/format.h>

#include "common/error.h"
#include "gic/bits.h"

namespace ipilab::gic {

std::string_view command_error_kind_name(CommandErrorKind kind) {
  switch (kind) {
    case CommandErrorKind::Malformed: return "malformed";
    case CommandErrorKind::NotSupported: return "not_supported";
    case CommandErrorKind::VpeidOutOfRange: return "vpeid_out_of_range";
    case CommandErrorKind::UnmappedVpe: return "unmapped_vpe";
    case CommandErrorKind::UnknownRedistributor: return "unknown_redistributor";
    case CommandErrorKind::NoVpeTable: return "no_vpe_table";
    case CommandErrorKind::QueueUnavailable: return "queue_unavailable";
  }
  return "?";
}

std::string_view sgir_outcome_name(SgirOutcome outcome) {
  switch (outcome) {
    case SgirOutcome::DeliveredResident: return "delivered_resident";
    case SgirOutcome::PendingNotResident: return "pending_not_resident";
    case SgirOutcome::PendingDisabled: return "pending_disabled";
    case SgirOutcome::RejectedNoSgirFrame: return "rejected_no_sgir_frame";
    case SgirOutcome::RejectedVpeidOutOfRange: return "rejected_vpeid_out_of_range";
    case SgirOutcome::RejectedNoVpeTable: return "rejected_no_vpe_table";
    case SgirOutcome::RejectedUnmappedVpe: return "rejected_unmapped_vpe";
  }
  return "?";
}

GicSystem::GicSystem(GicSystemConfig config) : config_(std::move(config)) {
  if (config_.redistributors.empty()) throw InputError("redistributors", "a GIC system needs at least one CPU");
  for (std::size_t i = 0; i < config_.its.size(); ++i) {
    const ItsConfig& c = config_.its[i];
    if (c.vpeid_bits < 1 || c.vpeid_bits > 16)
      throw InputError(fmt::format("its[{}].vpeid_bits", i), fmt::format("{} is not in 1..16", c.vpeid_bits));
    if ((c.mpidr & 0xFF) != 0)
      throw InputError(fmt::format("its[{}].mpidr", i), fmt::format("{:#x}: GITS_MPIDR[7:0] is RES0", c.mpidr));
    encode_gits_typer(c.typer);  // throws on a field that does not fit
  }
  std::set<std::uint64_t> pas;
  std::set<std::uint16_t> numbers;
  for (std::size_t i = 0; i < config_.redistributors.size(); ++i) {
    const RedistributorConfig& r = config_.redistributors[i];
    encode_gicr_typer(r.typer);
    if ((r.rd_pa & 0xFFFF) != 0 || r.rd_pa >= (std::uint64_t{1} << 52))
      throw InputError(fmt::format("redistributors[{}].rd_pa", i),
                       fmt::format("{:#x} is not a 64 KiB aligned address below 2^52", r.rd_pa));
    if (!pas.insert(r.rd_pa).second)
      throw InputError(fmt::format("redistributors[{}].rd_pa", i), fmt::format("{:#x} is used twice", r.rd_pa));
    if (!numbers.insert(r.typer.processor_number).second)
      throw InputError(fmt::format("redistributors[{}].processor_number", i),
                       fmt::format("{} is used twice", r.typer.processor_number));
  }
  its_.resize(config_.its.size());
  rds_.resize(config_.redistributors.size());
}

const ItsConfig& GicSystem::its_config(int its) const {
  if (its < 0 || static_cast<std::size_t>(its) >= its_.size())
    throw InputError("its", fmt::format("no ITS {} (the system has {})", its, its_.size()));
  return config_.its[static_cast<std::size_t>(its)];
}

const RedistributorConfig& GicSystem::rd_config(int cpu) const {
  if (cpu < 0 || static_cast<std::size_t>(cpu) >= rds_.size())
    throw InputError("cpu", fmt::format("no CPU {} (the system has {})", cpu, rds_.size()));
  return config_.redistributors[static_cast<std::size_t>(cpu)];
}

VpeTableId GicSystem::create_vpe_table() {
  tables_[next_table_];
  return next_table_++;
}

void GicSystem::set_its_vpe_table(int its, std::optional<VpeTableId> table) {
  its_config(its);
  if (table && !tables_.contains(*table)) throw InputError("vpe_table", fmt::format("no vPE table {}", *table));
  its_[static_cast<std::size_t>(its)].vpe_table = table;
}

void GicSystem::set_rd_vpe_table(int cpu, std::optional<VpeTableId> table) {
  rd_config(cpu);
  if (table && !tables_.contains(*table)) throw InputError("vpe_table", fmt::format("no vPE table {}", *table));
  rds_[static_cast<std::size_t>(cpu)].vpe_table = table;
}

std::optional<VpeTableId> GicSystem::its_vpe_table(int its) const {
  its_config(its);
  return its_[static_cast<std::size_t>(its)].vpe_table;
}

std::optional<VpeTableId> GicSystem::rd_vpe_table(int cpu) const {
  rd_config(cpu);
  return rds_[static_cast<std::size_t>(cpu)].vpe_table;
}

std::optional<VpeTableEntry> GicSystem::vpe_entry(int its, std::uint16_t vpeid) const {
  const auto table = its_vpe_table(its);
  if (!table) return std::nullopt;
  const auto& entries = tables_.at(*table);
  const auto it = entries.find(vpeid);
  if (it == entries.end()) return std::nullopt;
  return it->second;
}

ItsCommandQueue& GicSystem::queue(int its) {
  its_config(its);
  return its_[static_cast<std::size_t>(its)].queue;
}

const ItsCommandQueue& GicSystem::queue(int its) const {
  its_config(its);
  return its_[static_cast<std::size_t>(its)].queue;
}

const ItsStats& GicSystem::stats(int its) const {
  its_config(its);
  return its_[static_cast<std::size_t>(its)].stats;
}

std::optional<int> GicSystem::resolve_rdbase(int its, std::uint64_t rdbase) const {
  const bool pta = its_config(its).typer.pta;
  for (std::size_t cpu = 0; cpu < config_.redistributors.size(); ++cpu) {
    const RedistributorConfig& r = config_.redistributors[cpu];
    if (pta ? (r.rd_pa >> 16) == rdbase : r.typer.processor_number == rdbase) return static_cast<int>(cpu);
  }
  return std::nullopt;
}

std::uint64_t GicSystem::rdbase_for(int its, int cpu) const {
  const RedistributorConfig& r = rd_config(cpu);
  return its_config(its).typer.pta ? r.rd_pa >> 16 : r.typer.processor_number;
}

bool GicSystem::record_error(int its, std::uint32_t offset, std::uint8_t opcode, CommandErrorKind kind,
                             std::string message) {
  errors_.push_back(CommandError{its, offset, opcode, kind, std::move(message)});
  ++its_[static_cast<std::size_t>(its)].stats.command_errors;
  return false;
}

std::size_t GicSystem::process_commands(int its, std::size_t max_commands) {
  its_config(its);
  ItsState& s = its_[static_cast<std::size_t>(its)];
  std::size_t done = 0;
  while (done < max_commands) {
    const auto bytes = s.queue.next_command();
    if (!bytes) break;
    const std::uint32_t offset = s.queue.read_offset();
    const std::size_t errors_before = errors_.size();
    execute(its, *bytes, offset);
    ++s.stats.commands;
    ++done;
    if (errors_.size() != errors_before && config_.on_command_error == CommandErrorPolicy::Stall) {
      s.queue.stall();  // CREADR stays on the failing command
      break;
    }
    s.queue.consume();
  }
  return done;
}

std::size_t GicSystem::submit(int its, std::span<const ItsCommand> cmds) {
  ItsCommandQueue& q = queue(its);
  const std::size_t errors_before = errors_.size();
  for (const ItsCommand& cmd : cmds) {
    const CommandBytes bytes = encode_its_command(cmd);
    if (q.full()) process_commands(its);
    if (!q.push(bytes)) {  // disabled or stalled queue: the command is lost, say so
      record_error(its, q.write_offset(), bytes[0], CommandErrorKind::QueueUnavailable,
                   q.enabled() ? "command queue full and stalled: command dropped"
                               : "command queue disabled (GITS_CBASER.Valid = 0): command dropped");
    }
  }
  process_commands(its);
  return errors_.size() - errors_before;
}

void GicSystem::set_pending(std::uint16_t vpeid, std::uint8_t vintid) {
  vsgi_[vpeid].pending = static_cast<std::uint16_t>(vsgi_[vpeid].pending | (1u << (vintid & 0xF)));
}

void GicSystem::execute(int its, std::span<const std::uint8_t, kItsCommandSize> bytes, std::uint32_t offset) {
  ItsState& s = its_[static_cast<std::size_t>(its)];
  const ItsConfig& cfg = config_.its[static_cast<std::size_t>(its)];
  const CommandDecode decoded = decode_its_command(bytes);
  if (!decoded.ok()) {
    record_error(its, offset, bytes[0], CommandErrorKind::Malformed, decoded.error->message);
    return;
  }
  const ItsCommand& cmd = *decoded.command;
  const ItsOpcode op = opcode_of(cmd);
  const std::uint8_t opbyte = static_cast<std::uint8_t>(op);
  const std::string_view name = opcode_name(op);
  auto fail = [&](CommandErrorKind kind, std::string message) {
    return record_error(its, offset, opbyte, kind, fmt::format("ITS {}: {}: {}", its, name, message));
  };
  auto rd_of = [&](std::uint64_t rdbase) -> std::optional<int> {
    auto cpu = resolve_rdbase(its, rdbase);
    if (!cpu)
      fail(CommandErrorKind::UnknownRedistributor,
           fmt::format("RDbase {:#x} names no redistributor ({})", rdbase,
                       cfg.typer.pta ? "GITS_TYPER.PTA=1: RD address >> 16" : "GITS_TYPER.PTA=0: processor number"));
    return cpu;
  };

  if (op == ItsOpcode::Sync) {
    if (rd_of(std::get<SyncCmd>(cmd).rdbase)) ++s.stats.by_opcode[op];
    return;
  }
  // Every other modelled command is a GICv4 one.
  if (!cfg.typer.vlpis) {
    fail(CommandErrorKind::NotSupported, "GITS_TYPER.Virtual = 0: this ITS has no virtual commands");
    return;
  }
  if ((op == ItsOpcode::Vsgi || op == ItsOpcode::Invdb) && !cfg.typer.vmapp) {
    fail(CommandErrorKind::NotSupported, "a GICv4.1 command on an ITS with GITS_TYPER.VMAPP = 0");
    return;
  }
  const std::uint16_t vpeid = *vpeid_of(cmd);
  if (vpeid >> cfg.vpeid_bits != 0) {
    fail(CommandErrorKind::VpeidOutOfRange,
         fmt::format("vPEID {:#x} is beyond this ITS's {} vPEID bits", vpeid, cfg.vpeid_bits));
    return;
  }
  if (!s.vpe_table) {
    fail(CommandErrorKind::NoVpeTable, "no vPE table (GITS_BASER2 not valid)");
    return;
  }
  auto& table = tables_.at(*s.vpe_table);
  const auto entry = table.find(vpeid);

  if (op == ItsOpcode::Vmapp) {
    const VmappCmd& c = std::get<VmappCmd>(cmd);
    if (!c.valid) {
      if (entry == table.end()) {
        fail(CommandErrorKind::UnmappedVpe, fmt::format("unmapping vPE {:#x}, which is not mapped", vpeid));
        return;
      }
      table.erase(entry);
    } else {
      const auto cpu = rd_of(c.rdbase);
      if (!cpu) return;
      table[vpeid] = VpeTableEntry{*cpu, c.vpt_pa, c.vconf_pa, c.vpt_size, c.default_db};
    }
    ++s.stats.by_opcode[op];
    return;
  }
  if (entry == table.end()) {
    fail(CommandErrorKind::UnmappedVpe, fmt::format("vPE {:#x} is not mapped on this ITS", vpeid));
    return;
  }
  switch (op) {
    case ItsOpcode::Vmovp: {
      const VmovpCmd& c = std::get<VmovpCmd>(cmd);
      const auto cpu = rd_of(c.rdbase);
      if (!cpu) return;
      if (cfg.typer.vmovp) {
        for (auto& [id, entries] : tables_) {
          auto it = entries.find(vpeid);
          if (it != entries.end()) {
            it->second.rd_cpu = *cpu;
            if (c.db) it->second.default_db = c.default_db;
          }
        }
      } else {
        entry->second.rd_cpu = *cpu;
        if (c.db) entry->second.default_db = c.default_db;
      }
      break;
    }
    case ItsOpcode::Vsgi: {
      const VsgiCmd& c = std::get<VsgiCmd>(cmd);
      VpeVsgiState& st = vsgi_[vpeid];
      if (c.clear)
        st.pending = static_cast<std::uint16_t>(st.pending & ~(1u << c.vintid));
      else
        st.config[c.vintid] = VsgiConfig{c.enable, c.priority, c.group};
      break;
    }
    case ItsOpcode::Vsync:
    case ItsOpcode::Vinvall:
    case ItsOpcode::Invdb:
      break;  // no architectural state in this model beyond the mapping check
    case ItsOpcode::Sync:
    case ItsOpcode::Vmapp:
      break;  // handled above
  }
  ++s.stats.by_opcode[op];
}

SgirWriteResult GicSystem::write_sgir(int its, std::uint64_t value) {
  const ItsConfig& cfg = its_config(its);
  ItsState& s = its_[static_cast<std::size_t>(its)];
  ++s.stats.sgir_writes;
  const SgirDecode d = decode_sgir(value);
  SgirWriteResult r;
  r.its = its;
  r.sgir = d.sgir;
  r.res0_ignored = d.res0_set;
  if (!cfg.typer.vsgi) {
    r.outcome = SgirOutcome::RejectedNoSgirFrame;
    return r;
  }
  if (d.sgir.vpeid >> cfg.vpeid_bits != 0) {
    r.outcome = SgirOutcome::RejectedVpeidOutOfRange;
    return r;
  }
  if (!s.vpe_table) {
    r.outcome = SgirOutcome::RejectedNoVpeTable;
    return r;
  }
  const auto& table = tables_.at(*s.vpe_table);
  const auto entry = table.find(d.sgir.vpeid);
  if (entry == table.end()) {
    r.outcome = SgirOutcome::RejectedUnmappedVpe;
    return r;
  }
  const int cpu = entry->second.rd_cpu;
  r.target_cpu = cpu;
  r.target_socket = config_.redistributors[static_cast<std::size_t>(cpu)].socket;
  set_pending(d.sgir.vpeid, d.sgir.vintid);
  VpeVsgiState& st = vsgi_[d.sgir.vpeid];
  const VsgiConfig& conf = st.config[d.sgir.vintid];
  if (!conf.enable) {
    r.outcome = SgirOutcome::PendingDisabled;
    return r;
  }
  const Vpendbaser& vp = rds_[static_cast<std::size_t>(cpu)].vpendbaser;
  const bool resident = vp.valid && vp.vpeid == d.sgir.vpeid;
  const bool group_on = conf.group ? vp.vgrp1_en : vp.vgrp0_en;
  if (resident && group_on) {
    r.outcome = SgirOutcome::DeliveredResident;
    return r;
  }
  r.outcome = SgirOutcome::PendingNotResident;
  if (!resident && st.doorbell_armed) {
    r.doorbell = true;
    st.doorbell_armed = false;  // at most once per non-residency phase (fact sheet §1.1)
  }
  return r;
}

void GicSystem::write_vpendbaser(int cpu, std::uint64_t value) {
  rd_config(cpu);
  RdState& rd = rds_[static_cast<std::size_t>(cpu)];
  const Vpendbaser next = decode_vpendbaser(value);
  if (rd.vpendbaser.valid && !next.valid) {
    vsgi_[rd.vpendbaser.vpeid].doorbell_armed = next.doorbell;
  }
  if (next.valid) vsgi_[next.vpeid].doorbell_armed = false;
  rd.vpendbaser = next;
  rd.vpendbaser.pending_last = false;
  rd.vpendbaser.dirty = false;
}

std::uint64_t GicSystem::read_vpendbaser(int cpu) const {
  rd_config(cpu);
  return encode_vpendbaser(rds_[static_cast<std::size_t>(cpu)].vpendbaser);
}

std::optional<std::uint16_t> GicSystem::resident_vpe(int cpu) const {
  rd_config(cpu);
  const Vpendbaser& v = rds_[static_cast<std::size_t>(cpu)].vpendbaser;
  if (!v.valid) return std::nullopt;
  return v.vpeid;
}

std::uint16_t GicSystem::read_vsgi_pending(int cpu, std::uint16_t vpeid) const {
  rd_config(cpu);
  const auto it = vsgi_.find(vpeid);
  return it == vsgi_.end() ? 0 : it->second.pending;
}

VpeVsgiState GicSystem::vsgi_state(std::uint16_t vpeid) const {
  const auto it = vsgi_.find(vpeid);
  return it == vsgi_.end() ? VpeVsgiState{} : it->second;
}

}  // namespace ipilab::gic
