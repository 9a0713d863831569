#include "workload/mechanisms/arm_common.h"

#include <fmt/format.h>

#include "common/error.h"
#include "workload/counters.h"

namespace ipilab::workload {

gic::HostGicLayout gic_layout_of(const topology::Host& host) {
  const std::string where = !host.gic_place.empty() ? host.gic_place
                            : host.file.empty()      ? fmt::format("host '{}': host.its", host.name)
                                                     : host.file + ": host.its";
  if (!host.has_gic())
    throw InputError(where,
                     fmt::format("host '{}' has no GIC ([[host.its]] / [host.gic]): the Arm mechanisms need one", host.name));
  if (const std::string why = host.gic_unrepresentable(); !why.empty())
    throw InputError(where, fmt::format("the GIC model cannot represent host '{}': {}", host.name, why));
  gic::HostGicLayout l;
  l.common_lpi_aff = host.gic_common_lpi_aff.value_or(1);
  for (const auto& c : host.cpus) l.cpus.push_back({c.socket, host.gic_affinity(c.id)});
  for (std::size_t i = 0; i < host.its.size(); ++i)
    l.its.push_back({host.its[i].socket, host.its_affinity(static_cast<int>(i)),
                     host.its[i].svpet ? std::optional<std::uint8_t>(static_cast<std::uint8_t>(*host.its[i].svpet))
                                       : std::nullopt});
  return l;
}

VmGic::VmGic(const topology::Host& host, const topology::Vm& vm, gic::Find41Policy policy) {
  system = std::make_unique<gic::GicSystem>(gic::build_host_gic(gic_layout_of(host)));
  driver = std::make_unique<gic::LinuxItsDriver>(*system);
  for (const auto& v : vm.vcpus) {
    const auto vpeid = static_cast<std::uint16_t>(v.cpu);
    driver->map_vpe(vpeid, v.pcpu);
    driver->schedule_vpe(v.pcpu, vpeid);
    for (std::uint8_t sgi = 0; sgi < 16; ++sgi)
      driver->configure_vsgi(policy, v.pcpu, vpeid, sgi, gic::VsgiConfig{true, 0xA0, true});
  }
}

std::vector<std::pair<std::size_t, std::size_t>> sgi1r_writes(std::span<const unsigned> targets) {
  std::vector<std::pair<std::size_t, std::size_t>> out;
  std::size_t i = 0;
  while (i < targets.size()) {
    std::size_t j = i + 1;
    while (j < targets.size() && targets[j] / 16 == targets[i] / 16) ++j;
    out.emplace_back(i, j);
    i = j;
  }
  return out;
}

void ArmMechanism::plan_trapped_sgi1r_writes(SendPlan& p, const SendRequest& r,
                                             const std::function<void(unsigned)>& per_target) const {
  Pricer& pr = *pricer_;
  for (const auto& [b, e] : workload::sgi1r_writes(r.targets)) {
    p.sender.push_back(pr.step("sender", "ICC_SGI1R_EL1 write traps to EL2", cost::keys::gic_sgi_trap_entry, 1, Lane::Exit));
    add_counter(p, pr, counters::vm_exits);
    for (std::size_t i = b; i < e; ++i) per_target(r.targets[i]);
    p.sender.push_back(pr.step("sender", "return from the trap, ERET to the guest", cost::keys::gic_sgi_trap_return, 1, Lane::Exit));
  }
}

}  // namespace ipilab::workload
