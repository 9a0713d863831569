#include "gic/linux_its.h"

#include <algorithm>
#include <numeric>

#include <fmt/format.h>

#include "common/enum_names.h"
#include "common/error.h"
#include "gic/bits.h"

namespace ipilab::gic {

std::uint32_t compute_common_aff(std::uint64_t gicr_typer) {
  const GicrTyper t = decode_gicr_typer(gicr_typer);
  const std::uint32_t keep = ~(0xFFFFFFFFu >> (8 * t.common_lpi_aff));  // CommonLPIAff <= 3: shift <= 24
  return t.affinity & keep;
}

std::uint32_t compute_its_aff(std::uint64_t gits_typer, std::uint32_t gits_mpidr) {
  GicrTyper fake;
  fake.plpis = false;
  fake.common_lpi_aff = decode_gits_typer(gits_typer).svpet;
  fake.affinity = gits_mpidr;
  return compute_common_aff(encode_gicr_typer(fake));
}

std::string_view find41_policy_name(Find41Policy policy) { return name_of(kFind41PolicyNames, policy); }

std::string_view vpe_table_source_name(VpeTableSource source) {
  using enum VpeTableSource;
  static constexpr EnumName<VpeTableSource> kNames[] = {{NotAllocated, "not_allocated"},
                                                        {InheritedFromRd, "inherited_from_rd"},
                                                        {InheritedFromIts, "inherited_from_its"},
                                                        {Private, "private"}};
  return name_of(kNames, source);
}

namespace {
bool is_v4(const ItsConfig& c) { return c.typer.vlpis; }
bool is_v4_1(const ItsConfig& c) { return c.typer.vmapp; }

/// Linux get_order() with 4 KiB pages: the smallest order with 4096 << order >= bytes.
unsigned get_order(std::uint64_t bytes) {
  unsigned order = 0;
  while ((std::uint64_t{4096} << order) < bytes) ++order;
  return order;
}

unsigned ilog2(std::uint64_t v) {
  unsigned r = 0;
  while (v > 1) {
    v >>= 1;
    ++r;
  }
  return r;
}

constexpr unsigned kMaxPageOrder = 10;  // Linux MAX_PAGE_ORDER with 4 KiB pages (4 MiB allocations)

constexpr std::uint64_t kBaserIndirectProbe =
    (std::uint64_t{1} << 62) | (std::uint64_t{kCacheRaWaWb} << 59) | (std::uint64_t{kInnerShareable} << 10);

/// readl_relaxed(its->base + GITS_CREADR): the raw value, Stalled (bit 0) included, as Linux uses it.
std::uint32_t creadr_read(const GicSystem& sys, int its) { return static_cast<std::uint32_t>(sys.read_gits_creadr(its)); }
}  // namespace

std::uint64_t ItsCall::waited_commands() const {
  std::uint64_t n = 0;
  for (const ItsWaitResult& w : waits) n += w.waited_commands;
  return n;
}
std::uint64_t ItsCall::waited_bytes() const { return waited_commands() * 32; }
std::uint64_t ItsCall::polls() const {
  std::uint64_t n = 0;
  for (const ItsWaitResult& w : waits) n += w.polls;
  return n;
}
bool ItsCall::all_completed() const {
  for (const ItsWaitResult& w : waits)
    if (!w.completed()) return false;
  return true;
}

std::uint64_t LinuxItsDriver::alloc_pa(std::uint64_t bytes) {
  const std::uint64_t size = std::uint64_t{4096} << get_order(bytes);  // buddy allocator: naturally aligned
  next_pa_ = (next_pa_ + size - 1) & ~(size - 1);
  const std::uint64_t pa = next_pa_;
  next_pa_ += size;
  return pa;
}

// its_alloc_tables(), the GITS_TYPE_VCPU (BASER2) case: its_probe_baser_psz, find_sibling_its,
// its_parse_indirect_baser, its_setup_baser.
void LinuxItsDriver::alloc_its_vpe_table(int its) {
  GicSystem& sys = *sys_;
  const ItsConfig& c = sys.its_config(its);
  auto read = [&] { return sys.read_gits_baser(its, 2); };
  std::uint64_t psz = 0;
  TablePageSize code = TablePageSize::K4;
  for (TablePageSize try_code : {TablePageSize::K64, TablePageSize::K16, TablePageSize::K4}) {
    GitsBaser v = decode_gits_baser(read());
    v.page_size = try_code;
    sys.write_gits_baser(its, 2, encode_gits_baser(v));
    if (decode_gits_baser(read()).page_size == try_code) {
      psz = table_page_bytes(try_code);
      code = try_code;
      break;
    }
  }
  if (psz == 0) {
    bringup_notes_.push_back(fmt::format("ITS {}: no GITS_BASER2 page size reads back (its_probe_baser_psz fails)", its));
    return;
  }
  unsigned order = get_order(psz);
  if (is_v4_1(c) && c.typer.svpet != 0) {  // find_sibling_its(), walking its_nodes as it is now
    const std::uint32_t aff = compute_its_aff(sys.gits_typer(its), c.mpidr);
    for (int other : its_nodes_) {
      const ItsConfig& o = sys.its_config(other);
      if (!is_v4_1(o) || o.typer.svpet == 0) continue;
      if (compute_its_aff(sys.gits_typer(other), o.mpidr) != aff) continue;
      if (!decode_gits_baser(baser2_[static_cast<std::size_t>(other)]).valid) continue;
      sys.write_gits_baser(its, 2, baser2_[static_cast<std::size_t>(other)]);  // *baser = sibling->tables[2]
      baser2_[static_cast<std::size_t>(its)] = read();
      its_owner_[static_cast<std::size_t>(its)] = its_owner_[static_cast<std::size_t>(other)];
      return;
    }
  }
  // its_parse_indirect_baser(its, baser, &order, ITS_MAX_VPEID_BITS)
  std::uint64_t esz = decode_gits_baser(read()).entry_bytes;
  unsigned ids = options_.max_vpeid_bits;
  bool indirect = false;
  if ((esz << ids) > psz * 2) {
    sys.write_gits_baser(its, 2, kBaserIndirectProbe);
    indirect = decode_gits_baser(read()).indirect;
    if (indirect) {
      ids -= ilog2(psz / esz);
      esz = 8;  // GITS_LVL1_ENTRY_SIZE
    }
  }
  unsigned new_order = std::max(get_order(esz << ids), order);
  if (new_order > kMaxPageOrder) {
    new_order = kMaxPageOrder;
    bringup_notes_.push_back(
        fmt::format("ITS {}: vPE table too large, ITS_MAX_VPEID reduced (its_parse_indirect_baser)", its));
  }
  order = new_order;
  // its_setup_baser(its, baser, RaWaWb, InnerShareable, order, indirect)
  GitsBaser cur = decode_gits_baser(read());
  std::uint64_t alloc_pages = (std::uint64_t{4096} << order) / psz;
  if (alloc_pages > 256) {
    alloc_pages = 256;
    order = get_order(256 * psz);
  }
  GitsBaser w;
  w.valid = true;
  w.indirect = indirect;
  w.inner_cache = kCacheRaWaWb;
  w.type = cur.type;
  w.entry_bytes = cur.entry_bytes;
  w.pa = alloc_pa(std::uint64_t{4096} << order);
  w.shareability = kInnerShareable;
  w.page_size = code;
  w.pages = static_cast<std::uint16_t>(alloc_pages);
  const std::uint64_t val = encode_gits_baser(w);
  sys.write_gits_baser(its, 2, val);
  const std::uint64_t tmp = read();
  if (tmp != val)
    bringup_notes_.push_back(fmt::format("ITS {}: GITS_BASER2 doesn't stick: {:#x} {:#x} (its_setup_baser)", its, val, tmp));
  baser2_[static_cast<std::size_t>(its)] = tmp;
  if (decode_gits_baser(tmp).valid) its_owner_[static_cast<std::size_t>(its)] = its;
}

LinuxItsDriver::LinuxItsDriver(GicSystem& sys, Options options) : sys_(&sys), options_(std::move(options)) {
  const int n_its = static_cast<int>(sys.its_count());
  const int n_cpu = static_cast<int>(sys.cpu_count());
  if (options_.max_vpeid_bits < 1 || options_.max_vpeid_bits > 16)
    throw InputError("max_vpeid_bits", fmt::format("{} is not in 1..16", options_.max_vpeid_bits));
  next_pa_ = options_.table_pa;
  cmd_write_.assign(static_cast<std::size_t>(n_its), 0);
  cmd_base_pa_.assign(static_cast<std::size_t>(n_its), 0);
  baser2_.assign(static_cast<std::size_t>(n_its), 0);
  its_owner_.assign(static_cast<std::size_t>(n_its), -1);

  // 1. its_probe_one() per ITS, firmware order.
  int next_list_nr = 0;
  for (int its = 0; its < n_its; ++its) {
    const ItsConfig& c = sys.its_config(its);
    if (is_v4(c)) {
      if (!c.typer.vmovp) its_list_nr_[its] = next_list_nr++;  // its_compute_its_list_map()
      alloc_its_vpe_table(its);
    }
    Cbaser cb;
    cb.valid = true;
    cb.pa = options_.queue_pa + static_cast<std::uint64_t>(its) * kLinuxItsQueueBytes;
    cb.size = kLinuxItsQueueBytes / 4096 - 1;  // ITS_CMD_QUEUE_SZ / SZ_4K - 1 = 15
    cb.inner_cache = kCacheRaWaWb;
    cb.shareability = kInnerShareable;
    cmd_base_pa_[static_cast<std::size_t>(its)] = cb.pa;
    sys.write_gits_cbaser(its, encode_cbaser(cb));
    sys.write_gits_cwriter(its, 0);
    GitsCtlr ctlr = decode_gits_ctlr(sys.read_gits_ctlr(its));
    ctlr.enabled = true;
    ctlr.imde = is_v4(c);
    if (its_list_nr_.contains(its)) ctlr.its_number = static_cast<std::uint8_t>(its_list_nr_.at(its) & 0xF);
    ctlr.quiescent = false;
    sys.write_gits_ctlr(its, encode_gits_ctlr(ctlr));
    its_nodes_.insert(its_nodes_.begin(), its);  // list_add(&its->entry, &its_nodes): at the head
  }

  // 2. its_init() and the RD scan.
  for (int its : its_nodes_) {
    has_v4_ = has_v4_ || is_v4(sys.its_config(its));
    has_v4_1_ = has_v4_1_ || is_v4_1(sys.its_config(its));
  }
  has_rvpeid_ = has_v4_1_;
  for (int cpu = 0; cpu < n_cpu; ++cpu) has_rvpeid_ = has_rvpeid_ && sys.rd_config(cpu).typer.rvpeid;

  // 3. Per-CPU allocate_vpe_l1_table(), boot order.
  std::vector<int> order = options_.boot_order;
  if (order.empty()) {
    order.resize(static_cast<std::size_t>(n_cpu));
    std::iota(order.begin(), order.end(), 0);
  }
  {
    std::vector<int> sorted = order;
    std::sort(sorted.begin(), sorted.end());
    std::vector<int> all(static_cast<std::size_t>(n_cpu));
    std::iota(all.begin(), all.end(), 0);
    if (sorted != all)
      throw InputError("boot_order", fmt::format("must list each of the {} CPUs exactly once", n_cpu));
  }
  cpus_.assign(static_cast<std::size_t>(n_cpu), CpuVpeTable{});
  if (!has_rvpeid_) return;
  std::vector<bool> booted(static_cast<std::size_t>(n_cpu), false);
  int next_mask = 0;
  for (int cpu : order) allocate_vpe_l1_table(cpu, booted, next_mask);
}

void LinuxItsDriver::allocate_vpe_l1_table(int cpu, std::vector<bool>& booted, int& next_mask) {
  GicSystem& sys = *sys_;
  const int n_cpu = static_cast<int>(sys.cpu_count());
  CpuVpeTable& me = cpus_[static_cast<std::size_t>(cpu)];
  // "if VPENDBASER.Valid is set, disable any previously programmed VPE by setting PendingLast"
  if (decode_vpendbaser(sys.read_vpendbaser(cpu)).valid) {
    Vpendbaser pl;
    pl.pending_last = true;
    sys.write_vpendbaser(cpu, encode_vpendbaser(pl));
  }
  const std::uint32_t aff = compute_common_aff(sys.gicr_typer(cpu));
  std::uint64_t val = 0;
  // inherit_vpe_l1_table_from_rd(): for_each_possible_cpu, skipping unbooted CPUs and this one.
  for (int other = 0; other < n_cpu; ++other) {
    if (other == cpu || !booted[static_cast<std::size_t>(other)]) continue;
    if (compute_common_aff(sys.gicr_typer(other)) != aff) continue;
    const CpuVpeTable& them = cpus_[static_cast<std::size_t>(other)];
    GicrVpropbaser41 v = decode_gicr_vpropbaser41(sys.read_gicr_vpropbaser(other));
    v.z = false;  // "Make sure we don't write the Z bit in that case"
    val = encode_gicr_vpropbaser41(v);
    me.source = VpeTableSource::InheritedFromRd;
    me.from_cpu = other;
    me.mask_id = them.mask_id;
    me.local_4_1_its = them.local_4_1_its;  // seed patch
    break;
  }
  if (me.source == VpeTableSource::NotAllocated) {
    me.mask_id = next_mask++;  // a new vpe_table_mask
    // inherit_vpe_l1_table_from_its()
    for (int its : its_nodes_) {
      const ItsConfig& c = sys.its_config(its);
      if (!is_v4_1(c) || c.typer.svpet == 0) continue;
      if (aff != compute_its_aff(sys.gits_typer(its), c.mpidr)) continue;
      const GitsBaser baser = decode_gits_baser(baser2_[static_cast<std::size_t>(its)]);
      if (!baser.valid) continue;
      GicrVpropbaser41 v;
      v.valid = true;
      v.indirect = baser.indirect;
      v.page_size = baser.page_size;
      v.pa = baser.pa;  // GITS_BASER_ADDR_48_to_52 for 64K pages, else bits [47:12]
      v.shareability = baser.shareability;
      v.inner_cache = baser.inner_cache;
      v.pages = static_cast<std::uint8_t>(std::min<std::uint16_t>(baser.pages, 128));
      val = encode_gicr_vpropbaser41(v);
      me.source = VpeTableSource::InheritedFromIts;
      me.from_its = its;
      me.local_4_1_its = its;  // seed patch
      break;
    }
  }
  if (me.source == VpeTableSource::NotAllocated) {
    // Private table: "First probe the page size".
    GicrVpropbaser41 probe;
    probe.page_size = TablePageSize::K64;
    sys.write_gicr_vpropbaser(cpu, encode_gicr_vpropbaser41(probe));
    const GicrVpropbaser41 back = decode_gicr_vpropbaser41(sys.read_gicr_vpropbaser(cpu));
    TablePageSize gpsz = back.page_size;
    if (gpsz == TablePageSize::Reserved) gpsz = TablePageSize::K4;  // "default: gpsz = GIC_PAGE_SIZE_4K"
    const std::uint64_t psz = table_page_bytes(gpsz);
    GicrVpropbaser41 v;
    v.page_size = gpsz;
    v.entry_words = back.entry_words;
    const std::uint64_t epp = psz / (std::uint64_t{back.entry_words} * 8);  // entries per GIC page
    const std::uint64_t max_vpeid = std::uint64_t{1} << options_.max_vpeid_bits;
    std::uint64_t npg = 1;
    if (epp < max_vpeid) {
      v.indirect = true;
      const std::uint64_t nl2 = (max_vpeid + epp - 1) / epp;  // L2 pages to cover the vPEID space
      npg = (nl2 * 8 + psz - 1) / psz;                         // L1 pages pointing to them
    }
    // FIELD_PREP(GICR_VPROPBASER_4_1_SIZE, npg - 1) since e88bd316e597; `npg` before it, which the
    // GIC reads as npg + 1 pages.
    v.pages = static_cast<std::uint8_t>(std::min<std::uint64_t>(options_.vpe_l1_fixes ? npg : npg + 1, 128));
    const std::uint64_t np = (npg * psz + 4095) / 4096;  // CPU pages for L1
    v.pa = alloc_pa(np * 4096);
    me.vpe_l1_base = v.pa;
    me.l1_bytes_allocated = np * 4096;
    v.inner_cache = kCacheRaWb;
    v.shareability = kInnerShareable;
    v.z = true;
    v.valid = true;
    val = encode_gicr_vpropbaser41(v);
    me.source = VpeTableSource::Private;
  }
  // 8b718d403c5c: an inheriting RD records the shared table's base too (before: NULL).
  if (me.source != VpeTableSource::Private && options_.vpe_l1_fixes) me.vpe_l1_base = decode_gicr_vpropbaser41(val).pa;
  sys.write_gicr_vpropbaser(cpu, val);
  me.vpropbaser = sys.read_gicr_vpropbaser(cpu);
  me.table = sys.rd_vpe_table(cpu);
  masks_[me.mask_id].push_back(cpu);
  booted[static_cast<std::size_t>(cpu)] = true;
}

std::optional<int> LinuxItsDriver::its_vpe_table_owner(int its) const {
  sys_->its_config(its);  // range check
  const int o = its_owner_[static_cast<std::size_t>(its)];
  return o < 0 ? std::nullopt : std::optional<int>(o);
}

std::optional<int> LinuxItsDriver::rd_vpe_table_owner(int cpu) const {
  const CpuVpeTable* t = &cpu_vpe_table(cpu);
  while (t->source == VpeTableSource::InheritedFromRd) t = &cpus_[static_cast<std::size_t>(t->from_cpu)];
  if (t->source != VpeTableSource::InheritedFromIts) return std::nullopt;
  return its_vpe_table_owner(t->from_its);
}

const CpuVpeTable& LinuxItsDriver::cpu_vpe_table(int cpu) const {
  sys_->rd_config(cpu);
  return cpus_[static_cast<std::size_t>(cpu)];
}

std::vector<int> LinuxItsDriver::vpe_table_mask(int cpu) const {
  const CpuVpeTable& c = cpu_vpe_table(cpu);
  if (c.mask_id < 0) return {};
  std::vector<int> out = masks_.at(c.mask_id);
  std::sort(out.begin(), out.end());
  return out;
}

std::uint64_t LinuxItsDriver::its_baser2(int its) const {
  sys_->its_config(its);
  return baser2_[static_cast<std::size_t>(its)];
}

std::uint32_t LinuxItsDriver::cmd_write(int its) const {
  sys_->its_config(its);
  return cmd_write_[static_cast<std::size_t>(its)];
}

std::optional<int> LinuxItsDriver::first_v4_1() const {
  for (int its : its_nodes_)
    if (is_v4_1(sys_->its_config(its))) return its;
  return std::nullopt;
}

std::optional<int> LinuxItsDriver::find_4_1_its(int cpu, Find41Policy policy) const {
  const CpuVpeTable& c = cpu_vpe_table(cpu);
  if (policy == Find41Policy::PostSeed && c.local_4_1_its) return c.local_4_1_its;
  return first_v4_1();
}

ItsChoice LinuxItsDriver::choose_sgir_its(int sender_cpu, Find41Policy policy) const {
  ItsChoice out;
  out.sender_socket = sys_->rd_config(sender_cpu).socket;
  const auto its = find_4_1_its(sender_cpu, policy);
  if (!its) return out;
  out.its = *its;
  out.its_socket = sys_->its_config(*its).socket;
  out.its_local = out.its_socket == out.sender_socket;
  out.from_local_pointer = policy == Find41Policy::PostSeed && cpu_vpe_table(sender_cpu).local_4_1_its.has_value();
  return out;
}

std::vector<int> LinuxItsDriver::vmovp_targets() const {
  if (its_list_nr_.empty()) {
    if (its_nodes_.empty()) return {};
    return {its_nodes_.front()};  // list_first_entry(&its_nodes)
  }
  std::vector<int> out;
  for (int its : its_nodes_)
    if (is_v4(sys_->its_config(its))) out.push_back(its);
  return out;
}

std::optional<int> LinuxItsDriver::vpe_cpu(std::uint16_t vpeid) const {
  const auto it = vpe_cpu_.find(vpeid);
  if (it == vpe_cpu_.end()) return std::nullopt;
  return it->second;
}

int LinuxItsDriver::vmapp_count(std::uint16_t vpeid) const {
  const auto it = vmapp_count_.find(vpeid);
  return it == vmapp_count_.end() ? 0 : it->second;
}

std::vector<std::uint16_t> LinuxItsDriver::known_vpes() const {
  std::set<std::uint16_t> ids;
  for (const auto& [id, n] : vmapp_count_) ids.insert(id);
  for (const auto& [id, cpu] : vpe_cpu_) ids.insert(id);
  return {ids.begin(), ids.end()};
}

std::vector<int> LinuxItsDriver::mapped_on(std::uint16_t vpeid) const {
  const auto it = mapped_on_.find(vpeid);
  if (it == mapped_on_.end()) return {};
  return {it->second.begin(), it->second.end()};
}

// --- posting commands (BUILD_SINGLE_CMD_FUNC) --------------------------------------------------------

// its_allocate_entry(): wait (1,000,000 x udelay(1)) while its_queue_full().
bool LinuxItsDriver::allocate_entry(ItsCall& call, int its) {
  GicSystem& sys = *sys_;
  constexpr std::uint32_t entries = kLinuxItsQueueBytes / kItsCommandSize;
  auto full = [&] {
    const std::uint32_t widx = cmd_write_[static_cast<std::size_t>(its)] / kItsCommandSize;
    const std::uint32_t ridx = creadr_read(sys, its) / kItsCommandSize;
    return (widx + 1) % entries == ridx;
  };
  std::uint64_t count = kLinuxItsWaitPolls;
  while (full()) {
    if (--count == 0) {
      call.notes.push_back(fmt::format("ITS {}: ITS queue not draining (its_allocate_entry spun 1 s)", its));
      return false;
    }
    const bool manual = sys.processing(its) == ItsProcessing::Manual;
    const std::size_t ran =
        manual ? sys.process_commands(its, options_.behaviour.its_commands_per_poll) : 0;
    if (ran == 0) count = 1;  // nothing can change: the next check fails the same way until the count runs out
  }
  return true;
}

void LinuxItsDriver::send(ItsCall& call, int its, Batch batch) {
  GicSystem& sys = *sys_;
  const auto i = static_cast<std::size_t>(its);
  const std::uint32_t cwriter = static_cast<std::uint32_t>(sys.read_gits_cwriter(its) & 0xFFFE0);
  if (cwriter != cmd_write_[i])
    call.notes.push_back(fmt::format("ITS {}: the driver's cmd_write {:#x} differs from GITS_CWRITER {:#x} (the register "
                                     "was written behind the driver's back); Linux writes at cmd_write",
                                     its, cmd_write_[i], cwriter));
  const Cbaser cb = decode_cbaser(sys.read_gits_cbaser(its));
  if (!cb.valid || cb.size_bytes() != kLinuxItsQueueBytes || cb.pa != cmd_base_pa_[i])
    call.notes.push_back(fmt::format("ITS {}: GITS_CBASER {:#x} no longer names the 64 KiB queue the driver allocated at "
                                     "{:#x}; Linux still writes there",
                                     its, sys.read_gits_cbaser(its), cmd_base_pa_[i]));
  const std::uint32_t from = cmd_write_[i];
  std::size_t written = 0;
  for (const ItsCommand& cmd : batch.cmds) {
    if (!allocate_entry(call, its)) break;  // first command: give up; sync object: "goto post"
    const CommandBytes bytes = encode_its_command(cmd);
    sys.guest_memory().write(cmd_base_pa_[i] + cmd_write_[i], bytes);
    cmd_write_[i] = (cmd_write_[i] + kItsCommandSize) % kLinuxItsQueueBytes;
    call.commands.push_back(IssuedCommand{its, cmd});
    ++written;
  }
  if (written == 0) return;  // "We're soooooo screewed..."
  ItsWaitTicket t;
  t.its = its;
  t.snapshot = creadr_read(sys, its);  // rd_idx = readl_relaxed(GITS_CREADR), under the lock
  t.from = from;
  t.to = cmd_write_[i];
  t.consumed_at_snapshot = sys.stats(its).consumed;
  t.cbaser_writes_at_snapshot = sys.stats(its).cbaser_writes;
  t.builder = batch.builder;
  sys.write_gits_cwriter(its, t.to);  // its_post_commands()
  call.tickets.push_back(t);
  if (!defer_waits_) call.waits.push_back(wait(t));
}

ItsWaitResult LinuxItsDriver::wait(const ItsWaitTicket& ticket, std::optional<WaitPredicate> predicate) {
  return wait_for_range_completion(*sys_, ticket, predicate.value_or(options_.behaviour.wait),
                                   options_.behaviour.its_commands_per_poll);
}

ItsCall LinuxItsDriver::refuse_unmapped(std::uint16_t vpeid, std::string_view what) const {
  ItsCall call;
  call.refused = fmt::format("vPE {:#x} is mapped on no ITS (vmapp_count = 0): {}", vpeid, what);
  return call;
}

// --- vPE lifecycle -------------------------------------------------------------------------------

ItsCall LinuxItsDriver::map_vpe(std::uint16_t vpeid, int cpu) {
  sys_->rd_config(cpu);
  ItsCall call;
  for (int its : its_nodes_) {
    if (!is_v4(sys_->its_config(its))) continue;
    ItsCall one = map_vpe_on(vpeid, cpu, its);
    if (one.refused) {
      call.notes.push_back(*one.refused);
      continue;
    }
    call.commands.insert(call.commands.end(), one.commands.begin(), one.commands.end());
    call.tickets.insert(call.tickets.end(), one.tickets.begin(), one.tickets.end());
    call.waits.insert(call.waits.end(), one.waits.begin(), one.waits.end());
    call.notes.insert(call.notes.end(), one.notes.begin(), one.notes.end());
  }
  return call;
}

ItsCall LinuxItsDriver::map_vpe_on(std::uint16_t vpeid, int cpu, int its) {
  sys_->rd_config(cpu);
  const ItsConfig& c = sys_->its_config(its);
  ItsCall call;
  if (!is_v4(c)) {
    call.refused = fmt::format("ITS {} is not a GICv4 ITS (GITS_TYPER.Virtual = 0)", its);
    return call;
  }
  if (mapped_on_[vpeid].contains(its)) {
    call.refused = fmt::format("vPE {:#x} is already mapped on ITS {} (Linux activates a vPE once)", vpeid, its);
    return call;
  }
  vpe_cpu_[vpeid] = cpu;  // vpe->col_idx
  VmappCmd m;
  int& count = vmapp_count_[vpeid];
  const bool alloc = count++ == 0;  // alloc = !atomic_fetch_inc(&vpe->vmapp_count)
  m.vpeid = vpeid;
  m.rdbase = sys_->rdbase_for(its, cpu);
  m.valid = true;
  m.vpt_size = options_.vpt_size;
  m.vpt_pa = options_.vpt_pa + std::uint64_t{vpeid} * 0x10000;
  if (is_v4_1(c)) {
    m.alloc = alloc;
    m.ptz = false;  // "This is why we never advertise PTZ"
    m.vconf_pa = options_.vconf_pa;
    m.default_db = options_.doorbell_base + vpeid;
  }
  mapped_on_[vpeid].insert(its);
  send(call, its, Batch{{m, VsyncCmd{vpeid}}, "its_build_vmapp_cmd"});
  send(call, its, Batch{{VinvallCmd{vpeid}, VsyncCmd{vpeid}}, "its_build_vinvall_cmd"});
  return call;
}

ItsCall LinuxItsDriver::unmap_vpe(std::uint16_t vpeid) {
  if (vmapp_count(vpeid) == 0 || mapped_on(vpeid).empty())
    return refuse_unmapped(vpeid, "there is nothing to unmap");
  ItsCall call;
  const std::set<int> on = mapped_on_[vpeid];
  for (int its : its_nodes_) {
    if (!on.contains(its)) continue;
    const ItsConfig& c = sys_->its_config(its);
    VmappCmd m;
    int& count = vmapp_count_[vpeid];
    const bool alloc = --count == 0;  // alloc = !atomic_dec_return(&vpe->vmapp_count)
    m.vpeid = vpeid;
    m.valid = false;
    if (is_v4_1(c)) m.alloc = alloc;
    mapped_on_[vpeid].erase(its);
    // v4.1: "Unmapping a VPE is self-synchronizing on GICv4.1, no need to issue a VSYNC" (80e9963fb3b5).
    const bool vsync = !is_v4_1(c) || options_.behaviour.vsync_after_unmap;
    Batch b{{m}, "its_build_vmapp_cmd"};
    if (vsync) b.cmds.push_back(VsyncCmd{vpeid});
    send(call, its, std::move(b));
  }
  return call;
}

ItsCall LinuxItsDriver::move_vpe(std::uint16_t vpeid, int cpu) {
  sys_->rd_config(cpu);
  if (vmapp_count(vpeid) == 0 && options_.behaviour.refuse_vmovp_unmapped)
    return refuse_unmapped(vpeid,
                           "its_vpe_set_affinity returns -EINVAL, no VMOVP (1442ee001198, CVE-2024-50192)");
  ItsCall call;
  const auto from = vpe_cpu(vpeid);
  if (from && *from == cpu) {
    call.notes.push_back(fmt::format("vPE {:#x} is already on CPU {}: no VMOVP (its_vpe_set_affinity: from == cpu)",
                                     vpeid, cpu));
    return call;
  }
  std::uint16_t its_list = 0;
  for (const auto& [its, nr] : its_list_nr_)
    if (nr < 16) its_list = static_cast<std::uint16_t>(its_list | (1u << nr));
  const bool single = its_list_nr_.empty();
  const std::uint16_t seq = single ? 0 : vmovp_seq_++;
  vpe_cpu_[vpeid] = cpu;  // vpe->col_idx = cpu
  for (int its : vmovp_targets()) {
    VmovpCmd m;
    m.sequence_number = seq;
    m.its_list = single ? 0 : its_list;
    m.vpeid = vpeid;
    m.rdbase = sys_->rdbase_for(its, cpu);
    m.db = is_v4_1(sys_->its_config(its));
    m.default_db = m.db ? options_.doorbell_base + vpeid : 0;
    send(call, its, Batch{{m, VsyncCmd{vpeid}}, "its_build_vmovp_cmd"});
  }
  return call;
}

ItsCall LinuxItsDriver::vsgi_command(Find41Policy policy, int sender_cpu, const VsgiCmd& c) {
  sys_->rd_config(sender_cpu);
  if (vmapp_count(c.vpeid) == 0)
    return refuse_unmapped(c.vpeid, "its_configure_sgi is unreachable in Linux for a vPE that is not activated");
  const auto its = find_4_1_its(sender_cpu, policy);
  ItsCall call;
  if (!its) {
    call.refused = "no GICv4.1 ITS (find_4_1_its() returns NULL)";
    return call;
  }
  send(call, *its, Batch{{c, VsyncCmd{c.vpeid}}, "its_build_vsgi_cmd"});
  return call;
}

ItsCall LinuxItsDriver::configure_vsgi(Find41Policy policy, int sender_cpu, std::uint16_t vpeid, std::uint8_t vintid,
                                       const VsgiConfig& config) {
  VsgiCmd c;
  c.enable = config.enable;
  c.group = config.group;
  c.priority = static_cast<std::uint8_t>(config.priority & 0xF0);  // Linux encodes prio >> 4
  c.vintid = vintid;
  c.vpeid = vpeid;
  return vsgi_command(policy, sender_cpu, c);
}

ItsCall LinuxItsDriver::clear_vsgi_pending(Find41Policy policy, int sender_cpu, std::uint16_t vpeid,
                                           std::uint8_t vintid) {
  VsgiCmd c;
  c.clear = true;
  c.vintid = vintid;
  c.vpeid = vpeid;
  return vsgi_command(policy, sender_cpu, c);
}

ItsCall LinuxItsDriver::send_invdb(Find41Policy policy, int sender_cpu, std::uint16_t vpeid) {
  sys_->rd_config(sender_cpu);
  if (vmapp_count(vpeid) == 0)
    return refuse_unmapped(vpeid, "its_vpe_4_1_send_inv is unreachable in Linux for a vPE that is not activated");
  const auto its = find_4_1_its(sender_cpu, policy);
  ItsCall call;
  if (!its) {
    call.refused = "no GICv4.1 ITS (find_4_1_its() returns NULL: its_vpe_4_1_send_inv sends nothing)";
    return call;
  }
  send(call, *its, Batch{{InvdbCmd{vpeid}, VsyncCmd{vpeid}}, "its_build_invdb_cmd"});
  return call;
}

ItsCall LinuxItsDriver::post_sync_traffic(int its, int cpu, std::size_t count) {
  sys_->its_config(its);
  sys_->rd_config(cpu);
  ItsCall call;
  if (count == 0) return call;
  Batch b;
  b.builder = "its_build_sync_cmd";
  b.cmds.assign(count, SyncCmd{sys_->rdbase_for(its, cpu)});
  const bool deferred = defer_waits_;
  defer_waits_ = true;  // other CPUs wait on their own; this CPU does not
  send(call, its, std::move(b));
  defer_waits_ = deferred;
  return call;
}

void LinuxItsDriver::schedule_vpe(int cpu, std::uint16_t vpeid, bool vgrp0_en, bool vgrp1_en) {
  Vpendbaser v;
  v.valid = true;
  v.vgrp0_en = vgrp0_en;
  v.vgrp1_en = vgrp1_en;
  v.vpeid = vpeid;
  sys_->write_vpendbaser(cpu, encode_vpendbaser(v));
}

void LinuxItsDriver::deschedule_vpe(int cpu, bool doorbell) {
  Vpendbaser v = decode_vpendbaser(sys_->read_vpendbaser(cpu));
  v.valid = false;
  v.doorbell = doorbell;
  sys_->write_vpendbaser(cpu, encode_vpendbaser(v));
}

VsgiRoute LinuxItsDriver::send_vsgi(Find41Policy policy, int sender_cpu, std::uint16_t vpeid, std::uint8_t vintid) {
  const ItsChoice choice = choose_sgir_its(sender_cpu, policy);
  VsgiRoute r;
  r.policy = policy;
  r.sender_cpu = sender_cpu;
  r.sender_socket = choice.sender_socket;
  r.its = choice.its;
  r.its_socket = choice.its_socket;
  r.its_local = choice.its_local;
  r.from_local_pointer = choice.from_local_pointer;
  const std::uint64_t value = encode_sgir(Sgir{vintid, vpeid});
  if (choice.its < 0) {
    r.write.sgir = decode_sgir(value).sgir;
    r.write.outcome = SgirOutcome::RejectedNoSgirFrame;
    return r;
  }
  r.write = sys_->write_sgir(choice.its, value);
  return r;
}

}  // namespace ipilab::gic
