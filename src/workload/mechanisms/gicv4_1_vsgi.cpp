// gicv4.1-vsgi: GICv4.1 direct vSGI injection. The guest's ICC_SGI1R_EL1 write traps to KVM
// (access_gic_sgi -> vgic_v3_dispatch_sgi), which for each target calls irq_set_irqchip_state ->
// its_sgi_set_irqchip_state: one GITS_SGIR write of (vPEID, vINTID) to find_4_1_its() of the
// sender's pCPU (src/gic/linux_its.h, before or after the seed patch f1a3fac4095c). The ITS looks the
// vPE up in its vPE table and forwards to the redistributor hosting it, which presents the vSGI to
// the resident vPE without any exit on the target.
//
// Pricing (cost keys, src/cost/catalog.h), per ICC_SGI1R_EL1 write (arm_common.h) on the sender:
//   gic.sgi_trap_entry, then per target gic.vgic_dispatch_sgi (its delivery leaves after it), then
//   gic.sgi_trap_return.
// In flight, per target: its.sgir_write; the interconnect from the sender's node to the ITS's (host
// latency matrix); its.sgir_process on the ITS's GITS_SGIR port (one write at a time per ITS);
// its.rd_hop; the interconnect from the ITS's node to the target redistributor's; gic.rd_vsgi_pending.
// Arrival: resident (running) target: nothing more; halted (WFI, vPE not resident, doorbell):
// vcpu.halt_wakeup. Handler prologue: gic.ack_iar.
//
// ITS commands (VMOVP, VSGI, INVDB and their completion wait) are timed by gicv4_1_its_commands.h
// when a workload issues them (its_commands); `its_wait` picks the driver's completion predicate.
#include <algorithm>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/error.h"
#include "workload/mechanisms/arm_common.h"
#include "workload/mechanisms/builtin.h"
#include "workload/mechanisms/gicv4_1_its_commands.h"
#include "workload/counters.h"

namespace ipilab::workload {
namespace {

using namespace cost::keys;
constexpr std::string_view kSender = "sender";
const EnumParam<gic::Find41Policy> kFind41{"find_4_1_its", gic::Find41Policy::PostSeed, gic::kFind41PolicyNames,
                          "ITS choice for GITS_SGIR: pre-seed (first v4.1 ITS in its_nodes = the last one firmware "
                          "reported) or post-seed (per-CPU local_4_1_its, f1a3fac4095c)"};
const EnumParam<gic::WaitPredicate> kItsWait{"its_wait", gic::WaitPredicate::Linear, gic::kWaitPredicateNames,
                           "the host driver's ITS completion wait (its_wait_for_range_completion): linear (a050fa5476d4, "
                           "v5.2-rc4 and stable 4.19.60 / 5.1.19) or offsets (before: spins to the 1 s timeout when CREADR "
                           "wrapped past the batch); matters when ITS commands are sent (workload its_commands)"};

class Vsgi final : public ArmMechanism, public ItsCommandHost {
 public:
  explicit Vsgi(MechanismContext& ctx) : ArmMechanism(ctx) {
    policy_ = ctx.params.get(kFind41);
    wait_ = ctx.params.get(kItsWait);
    gic_ = std::make_unique<VmGic>(ctx.host, ctx.vm, policy_);
    Pricer& pr = *pricer_;
    arrival_.halted = {pr.step("target", "WFI: doorbell, vCPU scheduled, vPE made resident", vcpu_halt_wakeup, 1, Lane::TargetHv)};
    arrival_.prologue = {pr.step("target", "acknowledge: ICC_IAR1_EL1 read", gic_ack_iar)};
  }

  SendPlan plan(const SendRequest& r) override {
    Pricer& pr = *pricer_;
    SendPlan p;
    const int spcpu = vm_->pcpu_of(static_cast<int>(r.sender));
    const int snode = host_->cpu(spcpu).node;
    plan_trapped_sgi1r_writes(p, r, [&](unsigned target) {
      p.sender.push_back(pr.step(kSender, "vgic_v3_dispatch_sgi -> its_sgi_set_irqchip_state", gic_vgic_dispatch_sgi, 1, Lane::Exit));
      add_counter(p, pr, counters::sgir_writes);
      const gic::VsgiRoute route = gic_->driver->send_vsgi(policy_, spcpu, static_cast<std::uint16_t>(target),
                                                           static_cast<std::uint8_t>(r.vector & 0xF));
      if (route.its < 0 || !route.write.accepted()) {
        p.lost.push_back({static_cast<int>(target),
                          fmt::format("GITS_SGIR write from pCPU {} was not accepted ({})", spcpu,
                                      gic::sgir_outcome_name(route.write.outcome))});
        p.notes.push_back(p.lost.back().reason);
        return;
      }
      const int its_node = host_->its[static_cast<std::size_t>(route.its)].node;
      const int rd_node = host_->cpu(route.target_cpu()).node;
      PlannedDelivery d;
      d.target_cpu = static_cast<int>(target);
      d.after_sender_step = static_cast<std::uint32_t>(p.sender.size() - 1);
      d.path.push_back(pr.step("in flight", "GITS_SGIR write (posted MMIO)", its_sgir_write, 1, Lane::Wire));
      if (auto s = interconnect_step(pr, *host_, snode, its_node, "GITS_SGIR write to the ITS's node")) d.path.push_back(*s);
      d.path.push_back(pr.step(fmt::format("ITS{}", route.its), "vPE table lookup, forward to the RD", its_sgir_process, 1,
                               Lane::ItsPort, route.its));
      d.path.push_back(pr.step("in flight", "ITS -> redistributor message", its_rd_hop, 1, Lane::Wire));
      if (auto s = interconnect_step(pr, *host_, its_node, rd_node, "ITS -> redistributor on another node")) d.path.push_back(*s);
      d.path.push_back(pr.step("RD", "vSGI pending -> vCPU interface", gic_rd_vsgi_pending, 1, Lane::Wire));
      p.deliveries.push_back(std::move(d));
      add_counter(p, pr, route.its_local ? counters::its_local : counters::its_remote);
    });
    return p;
  }

  std::vector<std::pair<std::string, std::string>> settings() const override {
    std::vector<std::pair<std::string, std::string>> s{{"mechanism", "gicv4.1-vsgi"}, {"find_4_1_its", std::string(gic::find41_policy_name(policy_))}};
    if (commands_) s.emplace_back("its_wait", gic::wait_predicate_name(wait_));
    s.emplace_back("vPE tables", vpe_tables_text());
    // Which ITS each socket's vCPUs write.
    std::map<int, std::pair<int, bool>> by_socket;  // sender socket -> (ITS, local)
    for (const auto& v : vm_->vcpus) {
      const gic::ItsChoice c = gic_->driver->choose_sgir_its(v.pcpu, policy_);
      by_socket.emplace(c.sender_socket, std::pair{c.its, c.its_local});
    }
    std::string w;
    for (const auto& [sock, c] : by_socket) {
      const std::string its = c.first < 0 ? std::string("none") : fmt::format("ITS{} on socket {}", c.first, host_->its[static_cast<std::size_t>(c.first)].socket);
      w += fmt::format("{}{}{} ({})", w.empty() ? "" : "; ", by_socket.size() > 1 ? fmt::format("socket {} -> ", sock) : "", its,
                       c.second ? "local" : "remote");
    }
    s.emplace_back("ITS written", w);
    return s;
  }

  // CommonLPIAff, each ITS's SVPET, and who owns each vPE table: the ITS that allocated it (its
  // GITS_BASER2; siblings and RDs inheriting it share it) or the RDs themselves. The owner decides
  // local_4_1_its, so it is what the local / remote split of GITS_SGIR writes follows.
  std::string vpe_tables_text() const {
    const gic::LinuxItsDriver& d = *gic_->driver;
    std::string t = fmt::format("CommonLPIAff = {}; SVPET", host_->gic_common_lpi_aff.value_or(1));
    for (std::size_t i = 0; i < host_->its.size(); ++i)
      t += fmt::format("{} ITS{} = {}", i == 0 ? "" : ",", i, gic_->system->its_config(static_cast<int>(i)).typer.svpet);
    std::map<std::string, std::pair<std::vector<int>, std::vector<int>>> tables;  // owner -> (ITSs, CPUs)
    for (std::size_t i = 0; i < host_->its.size(); ++i)
      if (const auto o = d.its_vpe_table_owner(static_cast<int>(i)))
        tables[fmt::format("ITS{}", *o)].first.push_back(static_cast<int>(i));
    for (int cpu = 0; cpu < static_cast<int>(host_->cpus.size()); ++cpu) {
      const auto o = d.rd_vpe_table_owner(cpu);
      std::string key;
      if (o) {
        key = fmt::format("ITS{}", *o);
      } else {
        const auto mask = d.vpe_table_mask(cpu);
        key = mask.empty() ? "none" : fmt::format("the RDs (first CPU {})", mask.front());
      }
      tables[key].second.push_back(cpu);
    }
    for (const auto& [owner, users] : tables) {
      std::vector<std::string> by;
      for (int i : users.first) by.push_back(fmt::format("ITS{}", i));
      if (!users.second.empty()) by.push_back("CPUs " + topology::Host::format_cpu_list(users.second));
      t += fmt::format("; table of {} (used by {})", owner, fmt::join(by, ", "));
    }
    return t;
  }

  ItsCommandModel& its_commands() override {
    if (!commands_)
      commands_ = std::make_unique<ItsCommandModel>(*host_, *vm_, *gic_, policy_, wait_, *pricer_);
    return *commands_;
  }

  // The timed ITS commands' resources (each ITS's command queue and its->lock), when a workload sent any.
  void begin_window(sim::Ps now) override {
    if (commands_) commands_->begin_window(now);
  }
  std::vector<MechanismResource> resources(sim::Ps end) const override {
    return commands_ ? commands_->resources(end) : std::vector<MechanismResource>{};
  }

  /// The ITS a vCPU's pCPU writes (for the workloads' settings).
  gic::ItsChoice choice(unsigned cpu) const { return gic_->driver->choose_sgir_its(vm_->pcpu_of(static_cast<int>(cpu)), policy_); }

 private:
  gic::Find41Policy policy_;
  gic::WaitPredicate wait_;
  std::unique_ptr<VmGic> gic_;
  std::unique_ptr<ItsCommandModel> commands_;
};

}  // namespace

MechanismInfo describe_gicv4_1_vsgi() {
  return {"gicv4.1-vsgi",
          Arch::Arm,
          "GICv4.1 direct vSGI: the trapped ICC_SGI1R_EL1 becomes one GITS_SGIR write per target to find_4_1_its() "
          "of the sender's pCPU; no exit on a resident target",
          {info(kFind41), info(kItsWait)},
          {gic_sgi_trap_entry, gic_vgic_dispatch_sgi, gic_sgi_trap_return, its_sgir_write, its_sgir_process, its_rd_hop,
           gic_rd_vsgi_pending, gic_ack_iar, vcpu_halt_wakeup, its_creadr_read, its_command_write, its_cwriter_write,
           its_command_process, its_wait_udelay, gic_vgic_mmio_trap},
          [](MechanismContext& ctx) { return std::make_unique<Vsgi>(ctx); }};
}

}  // namespace ipilab::workload
