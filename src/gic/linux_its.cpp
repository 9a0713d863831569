#include "gic/linux_its.h"

#include <algorithm>
#include <numeric>

#include <fmt/format.h>

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

std::string_view find41_policy_name(Find41Policy policy) {
  return policy == Find41Policy::PreSeed ? "pre_seed" : "post_seed";
}

std::string_view vpe_table_source_name(VpeTableSource source) {
  switch (source) {
    case VpeTableSource::NotAllocated: return "not_allocated";
    case VpeTableSource::InheritedFromRd: return "inherited_from_rd";
    case VpeTableSource::InheritedFromIts: return "inherited_from_its";
    case VpeTableSource::Private: return "private";
  }
  return "?";
}

namespace {
bool is_v4(const ItsConfig& c) { return c.typer.vlpis; }
bool is_v4_1(const ItsConfig& c) { return c.typer.vmapp; }
}  // namespace

LinuxItsDriver::LinuxItsDriver(GicSystem& sys, Options options) : sys_(&sys), options_(std::move(options)) {
  const int n_its = static_cast<int>(sys.its_count());
  const int n_cpu = static_cast<int>(sys.cpu_count());

  // 1. its_probe_one() per ITS, firmware order.
  int next_list_nr = 0;
  for (int its = 0; its < n_its; ++its) {
    const ItsConfig& c = sys.its_config(its);
    if (is_v4(c)) {  // its_alloc_tables(): GITS_BASER2, type vPE
      std::optional<VpeTableId> table;
      if (is_v4_1(c) && c.typer.svpet != 0) {  // find_sibling_its(), walking its_nodes as it is now
        const std::uint32_t aff = compute_its_aff(sys.gits_typer(its), c.mpidr);
        for (int other : its_nodes_) {
          const ItsConfig& o = sys.its_config(other);
          if (!is_v4_1(o) || o.typer.svpet == 0) continue;
          if (compute_its_aff(sys.gits_typer(other), o.mpidr) != aff) continue;
          if (!sys.its_vpe_table(other)) continue;
          table = sys.its_vpe_table(other);
          break;
        }
      }
      sys.set_its_vpe_table(its, table ? *table : sys.create_vpe_table());
      if (!c.typer.vmovp) its_list_nr_[its] = next_list_nr++;  // its_compute_its_list_map()
    }
    Cbaser cb;
    cb.valid = true;
    cb.pa = options_.queue_pa + static_cast<std::uint64_t>(its) * 0x10000;
    cb.size = 15;  // 64 KiB, 2048 slots
    cb.shareability = 1;
    sys.queue(its).write_cbaser(encode_cbaser(cb));
    sys.queue(its).write_cwriter(0);
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
  for (int cpu : order) {
    CpuVpeTable& me = cpus_[static_cast<std::size_t>(cpu)];
    const std::uint32_t aff = compute_common_aff(sys.gicr_typer(cpu));
    // inherit_vpe_l1_table_from_rd(): for_each_possible_cpu, skipping unbooted CPUs and this one.
    for (int other = 0; other < n_cpu; ++other) {
      if (other == cpu || !booted[static_cast<std::size_t>(other)]) continue;
      if (compute_common_aff(sys.gicr_typer(other)) != aff) continue;
      const CpuVpeTable& them = cpus_[static_cast<std::size_t>(other)];
      me.source = VpeTableSource::InheritedFromRd;
      me.from_cpu = other;
      me.table = them.table;
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
        if (!sys.its_vpe_table(its)) continue;
        me.source = VpeTableSource::InheritedFromIts;
        me.from_its = its;
        me.table = sys.its_vpe_table(its);
        me.local_4_1_its = its;  // seed patch
        break;
      }
    }
    if (me.source == VpeTableSource::NotAllocated) {
      me.source = VpeTableSource::Private;
      me.table = sys.create_vpe_table();
    }
    sys.set_rd_vpe_table(cpu, me.table);
    masks_[me.mask_id].push_back(cpu);
    booted[static_cast<std::size_t>(cpu)] = true;
  }
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

std::vector<IssuedCommand> LinuxItsDriver::submit(int its, std::vector<ItsCommand> cmds) {
  sys_->submit(its, cmds);
  std::vector<IssuedCommand> out;
  for (ItsCommand& c : cmds) out.push_back(IssuedCommand{its, std::move(c)});
  return out;
}

std::vector<IssuedCommand> LinuxItsDriver::map_vpe(std::uint16_t vpeid, int cpu) {
  sys_->rd_config(cpu);
  std::vector<IssuedCommand> out;
  vpe_cpu_[vpeid] = cpu;
  for (int its : its_nodes_) {
    if (!is_v4(sys_->its_config(its))) continue;
    VmappCmd m;
    m.alloc = vmapp_count_[vpeid]++ == 0;
    m.ptz = false;
    m.vconf_pa = options_.vconf_pa;
    m.default_db = options_.doorbell_base + vpeid;
    m.vpeid = vpeid;
    m.rdbase = sys_->rdbase_for(its, cpu);
    m.valid = true;
    m.vpt_size = options_.vpt_size;
    m.vpt_pa = options_.vpt_pa + std::uint64_t{vpeid} * 0x10000;
    auto issued = submit(its, {m, VsyncCmd{vpeid}, VinvallCmd{vpeid}, VsyncCmd{vpeid}});
    out.insert(out.end(), issued.begin(), issued.end());
  }
  return out;
}

std::vector<IssuedCommand> LinuxItsDriver::unmap_vpe(std::uint16_t vpeid) {
  std::vector<IssuedCommand> out;
  for (int its : its_nodes_) {
    if (!is_v4(sys_->its_config(its))) continue;
    VmappCmd m;
    int& count = vmapp_count_[vpeid];
    if (count > 0) --count;
    m.alloc = count == 0;
    m.vpeid = vpeid;
    m.valid = false;
    auto issued = submit(its, {m});
    out.insert(out.end(), issued.begin(), issued.end());
  }
  vpe_cpu_.erase(vpeid);
  return out;
}

std::vector<IssuedCommand> LinuxItsDriver::move_vpe(std::uint16_t vpeid, int cpu) {
  sys_->rd_config(cpu);
  std::vector<IssuedCommand> out;
  std::uint16_t its_list = 0;
  for (const auto& [its, nr] : its_list_nr_)
    if (nr < 16) its_list = static_cast<std::uint16_t>(its_list | (1u << nr));
  const bool single = its_list_nr_.empty();
  const std::uint16_t seq = single ? 0 : vmovp_seq_++;
  for (int its : vmovp_targets()) {
    VmovpCmd m;
    m.sequence_number = seq;
    m.its_list = single ? 0 : its_list;
    m.vpeid = vpeid;
    m.rdbase = sys_->rdbase_for(its, cpu);
    m.db = is_v4_1(sys_->its_config(its));
    m.default_db = m.db ? options_.doorbell_base + vpeid : 0;
    auto issued = submit(its, {m, VsyncCmd{vpeid}});
    out.insert(out.end(), issued.begin(), issued.end());
  }
  vpe_cpu_[vpeid] = cpu;
  return out;
}

std::vector<IssuedCommand> LinuxItsDriver::configure_vsgi(Find41Policy policy, int sender_cpu, std::uint16_t vpeid,
                                                          std::uint8_t vintid, const VsgiConfig& config) {
  const auto its = find_4_1_its(sender_cpu, policy);
  if (!its) return {};
  VsgiCmd c;
  c.enable = config.enable;
  c.group = config.group;
  c.priority = static_cast<std::uint8_t>(config.priority & 0xF0);  // Linux encodes prio >> 4
  c.vintid = vintid;
  c.vpeid = vpeid;
  return submit(*its, {c, VsyncCmd{vpeid}});
}

std::vector<IssuedCommand> LinuxItsDriver::clear_vsgi_pending(Find41Policy policy, int sender_cpu,
                                                              std::uint16_t vpeid, std::uint8_t vintid) {
  const auto its = find_4_1_its(sender_cpu, policy);
  if (!its) return {};
  VsgiCmd c;
  c.clear = true;
  c.vintid = vintid;
  c.vpeid = vpeid;
  return submit(*its, {c, VsyncCmd{vpeid}});
}

std::vector<IssuedCommand> LinuxItsDriver::send_invdb(Find41Policy policy, int sender_cpu, std::uint16_t vpeid) {
  const auto its = find_4_1_its(sender_cpu, policy);
  if (!its) return {};
  return submit(*its, {InvdbCmd{vpeid}, VsyncCmd{vpeid}});
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
