#include "gic/gic_system.h"

#include <set>

#include <fmt/format.h>

#include "common/enum_names.h"
#include "common/error.h"
#include "gic/bits.h"

namespace ipilab::gic {

std::string_view command_error_kind_name(CommandErrorKind kind) {
  using enum CommandErrorKind;
  static constexpr EnumName<CommandErrorKind> kNames[] = {{Malformed, "malformed"},
                                                          {NotSupported, "not_supported"},
                                                          {VpeidOutOfRange, "vpeid_out_of_range"},
                                                          {UnmappedVpe, "unmapped_vpe"},
                                                          {UnknownRedistributor, "unknown_redistributor"},
                                                          {NoVpeTable, "no_vpe_table"},
                                                          {QueueUnavailable, "queue_unavailable"}};
  return name_of(kNames, kind);
}

std::string_view sgir_outcome_name(SgirOutcome outcome) {
  using enum SgirOutcome;
  static constexpr EnumName<SgirOutcome> kNames[] = {{DeliveredResident, "delivered_resident"},
                                                     {PendingNotResident, "pending_not_resident"},
                                                     {PendingDisabled, "pending_disabled"},
                                                     {RejectedNoSgirFrame, "rejected_no_sgir_frame"},
                                                     {RejectedVpeidOutOfRange, "rejected_vpeid_out_of_range"},
                                                     {RejectedNoVpeTable, "rejected_no_vpe_table"},
                                                     {RejectedUnmappedVpe, "rejected_unmapped_vpe"}};
  return name_of(kNames, outcome);
}

namespace {

constexpr std::uint64_t kSyntheticTablePa = 0x7F00'0000'0000;  // create_vpe_table(): table i at + i * 64 KiB

std::string its_reg(int its, std::string_view reg) { return fmt::format("ITS {} {}", its, reg); }
std::string rd_reg(int cpu, std::string_view reg) { return fmt::format("RD {} {}", cpu, reg); }

bool page_supported(std::uint8_t mask, TablePageSize size) {
  return size != TablePageSize::Reserved && ((mask >> static_cast<unsigned>(size)) & 1u) != 0;
}

TablePageSize first_supported(std::uint8_t mask) {
  for (TablePageSize s : {TablePageSize::K4, TablePageSize::K16, TablePageSize::K64})
    if (page_supported(mask, s)) return s;
  return TablePageSize::K4;
}

}  // namespace

GicSystem::GicSystem(GicSystemConfig config)
    : config_(std::move(config)), memory_(std::make_shared<GuestMemory>()) {
  if (config_.redistributors.empty()) throw InputError("redistributors", "a GIC system needs at least one CPU");
  for (std::size_t i = 0; i < config_.its.size(); ++i) {
    const ItsConfig& c = config_.its[i];
    if (c.vpeid_bits < 1 || c.vpeid_bits > 16)
      throw InputError(fmt::format("its[{}].vpeid_bits", i), fmt::format("{} is not in 1..16", c.vpeid_bits));
    if ((c.mpidr & 0xFF) != 0)
      throw InputError(fmt::format("its[{}].mpidr", i), fmt::format("{:#x}: GITS_MPIDR[7:0] is RES0", c.mpidr));
    if (c.vpe_entry_bytes < 1 || c.vpe_entry_bytes > 32)
      throw InputError(fmt::format("its[{}].vpe_entry_bytes", i),
                       fmt::format("{} is not in 1..32 (GITS_BASER.Entry_Size is 5 bits)", c.vpe_entry_bytes));
    if ((c.baser_page_sizes & kAllPageSizes) == 0)
      throw InputError(fmt::format("its[{}].baser_page_sizes", i), "at least one page size must be supported");
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
    if (r.vpe_entry_bytes < 8 || r.vpe_entry_bytes > 64 || r.vpe_entry_bytes % 8 != 0)
      throw InputError(fmt::format("redistributors[{}].vpe_entry_bytes", i),
                       fmt::format("{} is not a multiple of 8 in 8..64 (GICR_VPROPBASER.Entry_Size counts 64-bit words)",
                                   r.vpe_entry_bytes));
    if ((r.vpropbaser_page_sizes & kAllPageSizes) == 0)
      throw InputError(fmt::format("redistributors[{}].vpropbaser_page_sizes", i), "at least one page size must be supported");
  }
  its_.reserve(config_.its.size());
  for (std::size_t i = 0; i < config_.its.size(); ++i) {
    ItsState& s = its_.emplace_back(memory_);
    s.processing = config_.processing;
    const ItsConfig& c = config_.its[i];
    // Reset values of GITS_BASER<n>: Valid = 0, the RO Type and Entry_Size of this implementation.
    auto reset_baser = [&](int n, BaserType type, std::uint8_t esz) {
      GitsBaser b;
      b.type = static_cast<std::uint8_t>(type);
      b.entry_bytes = esz;
      b.page_size = first_supported(c.baser_page_sizes);
      s.baser[static_cast<std::size_t>(n)] = encode_gits_baser(b);
    };
    if (c.typer.physical) {
      reset_baser(0, BaserType::Device, 8);
      reset_baser(1, BaserType::Collection, 8);
    }
    if (c.typer.vlpis) reset_baser(2, BaserType::Vpe, c.vpe_entry_bytes);
  }
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

GicSystem::ItsState& GicSystem::its_state(int its) {
  its_config(its);
  return its_[static_cast<std::size_t>(its)];
}

const GicSystem::ItsState& GicSystem::its_state(int its) const {
  its_config(its);
  return its_[static_cast<std::size_t>(its)];
}

void GicSystem::note(RegisterWriteResult& r, std::string reg, bool applied, std::string message) {
  if (!applied) r.applied = false;
  r.notes.push_back(message);
  register_notes_.push_back(RegisterNote{std::move(reg), applied, std::move(message)});
}

bool GicSystem::refused_while_enabled(const ItsState& s, RegisterWriteResult& r, const std::string& reg,
                                      std::string_view unchanged) {
  if (!s.ctlr.enabled) return false;
  note(r, reg, false,
       fmt::format("written while GITS_CTLR.Enabled = 1: UNPREDICTABLE (the ITS must be disabled and quiescent, Linux "
                   "its_force_quiescent); {}",
                   unchanged));
  return true;
}

// --- ITS registers --------------------------------------------------------------------------------

RegisterWriteResult GicSystem::write_gits_ctlr(int its, std::uint32_t value) {
  ItsState& s = its_state(its);
  const ItsConfig& cfg = config_.its[static_cast<std::size_t>(its)];
  RegisterWriteResult r;
  const std::string reg = its_reg(its, "GITS_CTLR");
  GitsCtlr next = decode_gits_ctlr(value);
  const bool was_enabled = s.ctlr.enabled;
  next.quiescent = s.ctlr.quiescent;  // RO
  if (next.other != 0) {
    note(r, reg, true, fmt::format("RES0 bits {:#x} written; they read as 0", next.other));
    next.other = 0;
  }
  if (!cfg.typer.vlpis) {  // ImDe and ITS_Number are GICv4-only fields, RES0 on a GICv3 ITS
    if (next.imde || next.its_number != 0)
      note(r, reg, true, "ImDe and ITS_Number are RES0 on an ITS without GITS_TYPER.Virtual; they read as 0");
    next.imde = false;
    next.its_number = 0;
  }
  if (next.its_number != s.ctlr.its_number && was_enabled) {
    note(r, reg, true,
         "ITS_Number changed while GITS_CTLR.Enabled = 1 is UNPREDICTABLE (GITS_CTLR register description); "
         "the field keeps its value");
    next.its_number = s.ctlr.its_number;
  }
  if (next.umsi_irq) {
    note(r, reg, true, "UMSIirq is not modelled (no unmapped-MSI reporting); it reads as 0");
    next.umsi_irq = false;
  }
  if (next.enabled && !was_enabled && !s.queue.valid()) {
    note(r, reg, false,
         "enabling the ITS with GITS_CBASER.Valid = 0 is UNPREDICTABLE (GITS_CTLR.Enabled description; KVM "
         "c9b51bb60d94 keeps such an ITS disabled): the ITS stays disabled");
    next.enabled = false;
  }
  next.quiescent = !next.enabled;  // synchronous model: nothing is in flight once disabled
  s.ctlr = next;
  if (next.enabled && !was_enabled) run_if_eager(its);
  return r;
}

std::uint32_t GicSystem::read_gits_ctlr(int its) const { return encode_gits_ctlr(its_state(its).ctlr); }
bool GicSystem::its_enabled(int its) const { return its_state(its).ctlr.enabled; }

RegisterWriteResult GicSystem::write_gits_cbaser(int its, std::uint64_t value) {
  ItsState& s = its_state(its);
  RegisterWriteResult r;
  const std::string reg = its_reg(its, "GITS_CBASER");
  if (refused_while_enabled(s, r, reg, "GITS_CBASER, GITS_CREADR unchanged")) return r;
  Cbaser c = decode_cbaser(value);
  if (c.other != 0) {
    note(r, reg, true, fmt::format("RES0 bits {:#x} written; they read as 0", c.other));
    c.other = 0;
  }
  s.queue.write_cbaser(encode_cbaser(c));
  ++s.stats.cbaser_writes;
  if (!s.queue.cwriter_in_range())
    note(r, reg, true,
         fmt::format("GITS_CWRITER.Offset {:#x} is beyond the new {} KiB queue: the queue is invalid until "
                     "GITS_CWRITER is written in range",
                     s.queue.write_offset(), s.queue.size_bytes() / 1024));
  return r;
}

RegisterWriteResult GicSystem::write_gits_cwriter(int its, std::uint64_t value) {
  ItsState& s = its_state(its);
  RegisterWriteResult r;
  const std::string reg = its_reg(its, "GITS_CWRITER");
  const Cwriter w = decode_cwriter(value);
  if (w.other != 0) note(r, reg, true, fmt::format("RES0 bits {:#x} written; they read as 0", w.other));
  if (!s.queue.write_cwriter(encode_cwriter(Cwriter{w.offset, w.retry, 0})))
    note(r, reg, true,
         fmt::format("Offset {:#x} is outside the {} KiB queue GITS_CBASER.Size describes: CONSTRAINED UNPREDICTABLE; "
                     "this model treats the queue as invalid until GITS_CWRITER is written in range",
                     w.offset, s.queue.size_bytes() / 1024));
  run_if_eager(its);
  return r;
}

RegisterWriteResult GicSystem::write_gits_baser(int its, int n, std::uint64_t value) {
  ItsState& s = its_state(its);
  const ItsConfig& cfg = config_.its[static_cast<std::size_t>(its)];
  if (n < 0 || n > 7) throw InputError("GITS_BASER<n>", fmt::format("n = {} is not in 0..7", n));
  RegisterWriteResult r;
  const std::string reg = its_reg(its, fmt::format("GITS_BASER{}", n));
  std::uint64_t& cur = s.baser[static_cast<std::size_t>(n)];
  const GitsBaser old = decode_gits_baser(cur);
  if (old.type == static_cast<std::uint8_t>(BaserType::None)) {
    if (value != 0) note(r, reg, false, "not implemented on this ITS (Type = 0): RAZ/WI");
    return r;
  }
  if (refused_while_enabled(s, r, reg, "the register is unchanged")) return r;
  GitsBaser b = decode_gits_baser(value);
  b.type = old.type;                // RO: writes are ignored (the value read back shows it)
  b.entry_bytes = old.entry_bytes;  // RO
  if (!page_supported(cfg.baser_page_sizes, b.page_size)) {
    note(r, reg, true, fmt::format("Page_Size {} is not supported; it reads back {}", table_page_name(b.page_size),
                                   table_page_name(old.page_size)));
    b.page_size = old.page_size;
  }
  if (b.indirect && !cfg.baser_indirect) {
    note(r, reg, true, "Indirect is not supported (flat tables only); it reads back 0");
    b.indirect = false;
  }
  cur = encode_gits_baser(b);
  if (n == 2 && old.type == static_cast<std::uint8_t>(BaserType::Vpe)) {
    if (b.valid) {
      const std::uint64_t page = table_page_bytes(b.page_size);
      if (page != 0 && b.pa % page != 0)
        note(r, reg, true,
             fmt::format("Physical_Address {:#x} is not aligned to the {} page size", b.pa, table_page_name(b.page_size)));
      s.vpe_table = table_at(b.pa);
    } else {
      s.vpe_table.reset();
    }
  }
  return r;
}

std::uint64_t GicSystem::read_gits_baser(int its, int n) const {
  if (n < 0 || n > 7) throw InputError("GITS_BASER<n>", fmt::format("n = {} is not in 0..7", n));
  return its_state(its).baser[static_cast<std::size_t>(n)];
}

ItsProcessing GicSystem::processing(int its) const { return its_state(its).processing; }

void GicSystem::set_processing(int its, ItsProcessing mode) {
  its_state(its).processing = mode;
  run_if_eager(its);
}

void GicSystem::run_if_eager(int its) {
  if (its_state(its).processing == ItsProcessing::Eager) process_commands(its);
}

// --- RD registers ---------------------------------------------------------------------------------

RegisterWriteResult GicSystem::write_gicr_vpropbaser(int cpu, std::uint64_t value) {
  const RedistributorConfig& cfg = rd_config(cpu);
  RdState& rd = rds_[static_cast<std::size_t>(cpu)];
  RegisterWriteResult r;
  const std::string reg = rd_reg(cpu, "GICR_VPROPBASER");
  if (!cfg.typer.rvpeid) {
    note(r, reg, false,
         "GICR_TYPER.RVPEID = 0: this RD has the GICv4.0 GICR_VPROPBASER (a vLPI property table), which is not "
         "modelled; the write is ignored");
    return r;
  }
  GicrVpropbaser41 v = decode_gicr_vpropbaser41(value);
  const GicrVpropbaser41 old = decode_gicr_vpropbaser41(rd.vpropbaser);
  const auto words = static_cast<std::uint8_t>(cfg.vpe_entry_bytes / 8);
  if (v.other != 0) {
    note(r, reg, true, "bit 62 is RES0; it reads as 0");
    v.other = 0;
  }
  v.entry_words = words;  // RO
  if (!page_supported(cfg.vpropbaser_page_sizes, v.page_size)) {
    const TablePageSize back = page_supported(cfg.vpropbaser_page_sizes, old.page_size)
                                   ? old.page_size
                                   : first_supported(cfg.vpropbaser_page_sizes);
    note(r, reg, true,
         fmt::format("Page_Size {} is not supported; it reads back {}", table_page_name(v.page_size), table_page_name(back)));
    v.page_size = back;
  }
  rd.vpropbaser = encode_gicr_vpropbaser41(v);
  if (v.valid)
    rd.vpe_table = table_at(v.pa);
  else
    rd.vpe_table.reset();
  return r;
}

std::uint64_t GicSystem::read_gicr_vpropbaser(int cpu) const {
  rd_config(cpu);
  const RdState& rd = rds_[static_cast<std::size_t>(cpu)];
  if (rd.vpropbaser == 0 && config_.redistributors[static_cast<std::size_t>(cpu)].typer.rvpeid) {
    GicrVpropbaser41 v;  // reset: Valid = 0, the RO Entry_Size still reads
    v.entry_words = static_cast<std::uint8_t>(config_.redistributors[static_cast<std::size_t>(cpu)].vpe_entry_bytes / 8);
    v.page_size = first_supported(config_.redistributors[static_cast<std::size_t>(cpu)].vpropbaser_page_sizes);
    return encode_gicr_vpropbaser41(v);
  }
  return rd.vpropbaser;
}

// --- vPE tables -----------------------------------------------------------------------------------

VpeTableId GicSystem::table_at(std::uint64_t pa) {
  for (const auto& [id, t] : tables_)
    if (t.pa == pa) return id;
  tables_[next_table_].pa = pa;
  return next_table_++;
}

VpeTableId GicSystem::create_vpe_table() {
  std::uint64_t pa = kSyntheticTablePa + static_cast<std::uint64_t>(next_table_) * 0x10000;
  while (true) {  // skip addresses a register already named
    bool used = false;
    for (const auto& [id, t] : tables_) used = used || t.pa == pa;
    if (!used) break;
    pa += 0x10000;
  }
  tables_[next_table_].pa = pa;
  return next_table_++;
}

void GicSystem::set_its_vpe_table(int its, std::optional<VpeTableId> table) {
  ItsState& s = its_state(its);
  if (table && !tables_.contains(*table)) throw InputError("vpe_table", fmt::format("no vPE table {}", *table));
  GitsBaser b = decode_gits_baser(s.baser[2]);
  if (b.type == static_cast<std::uint8_t>(BaserType::Vpe)) {
    b.valid = table.has_value();
    if (table) {
      b.pa = tables_.at(*table).pa;
      b.indirect = false;
      b.pages = 1;
      b.page_size = page_supported(config_.its[static_cast<std::size_t>(its)].baser_page_sizes, TablePageSize::K64)
                        ? TablePageSize::K64
                        : first_supported(config_.its[static_cast<std::size_t>(its)].baser_page_sizes);
    }
    s.baser[2] = encode_gits_baser(b);
  }
  s.vpe_table = table;
}

void GicSystem::set_rd_vpe_table(int cpu, std::optional<VpeTableId> table) {
  const RedistributorConfig& cfg = rd_config(cpu);
  if (table && !tables_.contains(*table)) throw InputError("vpe_table", fmt::format("no vPE table {}", *table));
  RdState& rd = rds_[static_cast<std::size_t>(cpu)];
  if (cfg.typer.rvpeid) {
    GicrVpropbaser41 v = decode_gicr_vpropbaser41(read_gicr_vpropbaser(cpu));
    v.valid = table.has_value();
    if (table) {
      v.pa = tables_.at(*table).pa;
      v.indirect = false;
      v.pages = 1;
      v.page_size = page_supported(cfg.vpropbaser_page_sizes, TablePageSize::K64) ? TablePageSize::K64
                                                                                 : first_supported(cfg.vpropbaser_page_sizes);
    }
    rd.vpropbaser = encode_gicr_vpropbaser41(v);
  }
  rd.vpe_table = table;
}

std::optional<VpeTableId> GicSystem::its_vpe_table(int its) const { return its_state(its).vpe_table; }

std::optional<VpeTableId> GicSystem::rd_vpe_table(int cpu) const {
  rd_config(cpu);
  return rds_[static_cast<std::size_t>(cpu)].vpe_table;
}

std::uint64_t GicSystem::vpe_table_pa(VpeTableId table) const {
  const auto it = tables_.find(table);
  if (it == tables_.end()) throw InputError("vpe_table", fmt::format("no vPE table {}", table));
  return it->second.pa;
}

const std::map<std::uint16_t, VpeTableEntry>& GicSystem::vpe_table_entries(VpeTableId table) const {
  const auto it = tables_.find(table);
  if (it == tables_.end()) throw InputError("vpe_table", fmt::format("no vPE table {}", table));
  return it->second.entries;
}

std::optional<VpeTableEntry> GicSystem::vpe_entry(int its, std::uint16_t vpeid) const {
  const auto table = its_vpe_table(its);
  if (!table) return std::nullopt;
  const auto& entries = tables_.at(*table).entries;
  const auto it = entries.find(vpeid);
  if (it == entries.end()) return std::nullopt;
  return it->second;
}

ItsCommandQueue& GicSystem::queue(int its) { return its_state(its).queue; }
const ItsCommandQueue& GicSystem::queue(int its) const { return its_state(its).queue; }
const ItsStats& GicSystem::stats(int its) const { return its_state(its).stats; }

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
                             std::string message, std::optional<std::uint16_t> vpeid) {
  errors_.push_back(CommandError{its, offset, opcode, kind, std::move(message), vpeid});
  ++its_[static_cast<std::size_t>(its)].stats.command_errors;
  return false;
}

std::size_t GicSystem::process_commands(int its, std::size_t max_commands) {
  ItsState& s = its_state(its);
  std::size_t done = 0;
  while (done < max_commands && s.ctlr.enabled) {
    const auto bytes = s.queue.next_command();
    if (!bytes) break;
    const std::uint32_t offset = s.queue.read_offset();
    const std::size_t errors_before = errors_.size();
    execute(its, std::span<const std::uint8_t, kItsCommandSize>(*bytes), offset);
    ++s.stats.commands;
    ++done;
    if (errors_.size() != errors_before && config_.on_command_error == CommandErrorPolicy::Stall) {
      s.queue.stall();  // CREADR stays on the failing command
      break;
    }
    s.queue.consume();
    ++s.stats.consumed;
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
                   q.valid() ? "command queue full and not draining (ITS disabled or stalled): command dropped"
                             : "command queue not valid (GITS_CBASER.Valid = 0): command dropped",
                   vpeid_of(cmd));
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
    const std::string_view known = any_opcode_name(bytes[0]);
    record_error(its, offset, bytes[0], CommandErrorKind::Malformed,
                 fmt::format("ITS {}: {} at {:#06x}: {}", its, known.empty() ? fmt::format("opcode {:#04x}", bytes[0]) : std::string(known),
                             offset, decoded.error->message));
    return;
  }
  const ItsCommand& cmd = *decoded.command;
  const ItsOpcode op = opcode_of(cmd);
  const std::uint8_t opbyte = static_cast<std::uint8_t>(op);
  const std::string_view name = opcode_name(op);
  const std::optional<std::uint16_t> named_vpe = vpeid_of(cmd);
  auto fail = [&](CommandErrorKind kind, std::string message) {
    return record_error(its, offset, opbyte, kind, fmt::format("ITS {}: {} at {:#06x}: {}", its, name, offset, message),
                        named_vpe);
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
  auto& table = tables_.at(*s.vpe_table).entries;
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
    // Linux 80e9963fb3b5 (irq-gic-v3-its.c, v6.9): "VSYNC is allowed to deliver an SError
    // when referencing a non existent VPE" — this model skips or stalls, real hardware may do that.
    fail(CommandErrorKind::UnmappedVpe,
         op == ItsOpcode::Vsync
             ? fmt::format("vPE {:#x} is not mapped on this ITS (the GIC may answer a VSYNC naming a non-existent "
                           "vPE with an SError, which this model does not raise)",
                           vpeid)
             : fmt::format("vPE {:#x} is not mapped on this ITS", vpeid));
    return;
  }
  if (op == ItsOpcode::Vmovp) {
    const VmovpCmd& c = std::get<VmovpCmd>(cmd);
    const auto cpu = rd_of(c.rdbase);
    if (!cpu) return;
    move_vpe(vpeid, *cpu, c, cfg.typer.vmovp, entry->second);
  } else if (op == ItsOpcode::Vsgi) {
    apply_vsgi(vpeid, std::get<VsgiCmd>(cmd));
  }
  // VSYNC, VINVALL and INVDB: no architectural state in this model beyond the mapping check.
  ++s.stats.by_opcode[op];
}

// VMOVP: with GITS_TYPER.VMOVP = 1 one command retargets the vPE in every vPE table that maps it;
// otherwise each ITS is told on its own (GITS_TYPER.VMOVP, Arm IHI 0069).
void GicSystem::move_vpe(std::uint16_t vpeid, int cpu, const VmovpCmd& c, bool all_tables, VpeTableEntry& entry) {
  auto retarget = [&](VpeTableEntry& e) {
    e.rd_cpu = cpu;
    if (c.db) e.default_db = c.default_db;
  };
  if (!all_tables) {
    retarget(entry);
    return;
  }
  for (auto& [id, t] : tables_) {
    auto it = t.entries.find(vpeid);
    if (it != t.entries.end()) retarget(it->second);
  }
}

void GicSystem::apply_vsgi(std::uint16_t vpeid, const VsgiCmd& c) {
  VpeVsgiState& st = vsgi_[vpeid];
  if (c.clear)
    st.pending = static_cast<std::uint16_t>(st.pending & ~(1u << c.vintid));
  else
    st.config[c.vintid] = VsgiConfig{c.enable, c.priority, c.group};
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
  const auto& table = tables_.at(*s.vpe_table).entries;
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
    st.doorbell_armed = false;  // "at most once" per non-residency phase (GICv4.1 series cover letter, 20200304203330.4967-1-maz@kernel.org)
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
