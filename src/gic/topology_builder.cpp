#include "gic/topology_builder.h"

#include <fmt/format.h>

#include "common/error.h"

namespace ipilab::gic {

ItsConfig gicv41_its(bool vmovp, bool pta, std::uint8_t svpet) {
  ItsConfig its;
  its.typer.physical = true;
  its.typer.vlpis = true;
  its.typer.vmapp = true;
  its.typer.vsgi = true;
  its.typer.vmovp = vmovp;
  its.typer.pta = pta;
  its.typer.svpet = svpet;
  return its;
}

RedistributorConfig gicv41_redistributor(int cpu, std::uint8_t common_lpi_aff) {
  RedistributorConfig rd;
  rd.typer.plpis = true;
  rd.typer.vlpis = true;
  rd.typer.direct_lpi = true;
  rd.typer.rvpeid = true;
  rd.typer.vsgi = true;
  rd.typer.processor_number = static_cast<std::uint16_t>(cpu);
  rd.typer.common_lpi_aff = common_lpi_aff;
  return rd;
}

GicSystemConfig build_socket_topology(const SocketTopology& t) {
  if (t.sockets < 1 || t.sockets > 256)
    throw InputError("sockets", fmt::format("{} is not in 1..256", t.sockets));
  if (t.cpus_per_socket < 1 || t.cpus_per_socket > 4096)
    throw InputError("cpus_per_socket", fmt::format("{} is not in 1..4096", t.cpus_per_socket));
  if (t.sockets * t.cpus_per_socket > 65536)
    throw InputError("cpus_per_socket", fmt::format("{} x {} CPUs exceed the 65536 processor numbers of GICR_TYPER",
                                                    t.sockets, t.cpus_per_socket));
  const bool aff3 = t.level == SocketAffinityLevel::Aff3;
  const std::uint8_t scope_value = t.scope == VpeTableScope::System ? 0 : (aff3 ? 1 : 2);
  const std::uint8_t svpet = t.scope == VpeTableScope::System ? 1 : scope_value;

  GicSystemConfig cfg;
  for (int s = 0; s < t.sockets; ++s) {
    ItsConfig its = gicv41_its(t.single_vmovp, t.pta, svpet);
    const auto sock = static_cast<std::uint8_t>(s);
    its.mpidr = aff3 ? make_affinity(sock, 0, 0, 0) : make_affinity(0, sock, 0, 0);
    its.socket = s;
    its.vpeid_bits = t.vpeid_bits;
    its.base_pa = t.its_base_pa + static_cast<std::uint64_t>(s) * 0x100'0000;
    cfg.its.push_back(its);
  }
  for (int s = 0; s < t.sockets; ++s) {
    for (int i = 0; i < t.cpus_per_socket; ++i) {
      const int cpu = s * t.cpus_per_socket + i;
      RedistributorConfig rd = gicv41_redistributor(cpu, scope_value);
      const auto sock = static_cast<std::uint8_t>(s);
      const auto aff1 = static_cast<std::uint8_t>(i / 16);
      const auto aff0 = static_cast<std::uint8_t>(i % 16);
      rd.typer.affinity = aff3 ? make_affinity(sock, 0, aff1, aff0) : make_affinity(0, sock, aff1, aff0);
      rd.typer.last = i == t.cpus_per_socket - 1;
      rd.socket = s;
      rd.rd_pa = t.rd_base_pa + static_cast<std::uint64_t>(cpu) * 0x40000;
      cfg.redistributors.push_back(rd);
    }
  }
  return cfg;
}

}  // namespace ipilab::gic

namespace ipilab::gic {

GicSystemConfig build_host_gic(const HostGicLayout& l) {
  if (l.cpus.empty()) throw InputError("cpus", "the GIC layout has no CPU");
  if (l.cpus.size() > 65536)
    throw InputError("cpus", fmt::format("{} CPUs exceed the 65536 processor numbers of GICR_TYPER", l.cpus.size()));
  if (l.common_lpi_aff < 0 || l.common_lpi_aff > 3)
    throw InputError("common_lpi_aff", fmt::format("{} is not in 0..3", l.common_lpi_aff));
  GicSystemConfig cfg;
  const auto svpet = static_cast<std::uint8_t>(l.common_lpi_aff == 0 ? 1 : l.common_lpi_aff);
  for (std::size_t i = 0; i < l.its.size(); ++i) {
    if (l.its[i].svpet && *l.its[i].svpet > 3)
      throw InputError(fmt::format("its[{}].svpet", i), fmt::format("{} does not fit GITS_TYPER.SVPET (0..3)", *l.its[i].svpet));
    ItsConfig its = gicv41_its(true, false, l.its[i].svpet.value_or(svpet));
    its.mpidr = l.its[i].mpidr & 0xFFFFFF00u;
    its.socket = l.its[i].socket;
    its.vpeid_bits = 16;
    its.base_pa = 0x2'0000'0000 + static_cast<std::uint64_t>(i) * 0x100'0000;
    cfg.its.push_back(its);
  }
  for (std::size_t c = 0; c < l.cpus.size(); ++c) {
    RedistributorConfig rd = gicv41_redistributor(static_cast<int>(c), static_cast<std::uint8_t>(l.common_lpi_aff));
    rd.typer.affinity = l.cpus[c].affinity;
    rd.typer.last = c + 1 == l.cpus.size() || l.cpus[c + 1].socket != l.cpus[c].socket;
    rd.socket = l.cpus[c].socket;
    rd.rd_pa = 0x1'0000'0000 + static_cast<std::uint64_t>(c) * 0x40000;
    cfg.redistributors.push_back(rd);
  }
  return cfg;
}

}  // namespace ipilab::gic
