// ipilab/gic/topology_builder.h — GicSystemConfig for common multi-socket hosts.
//
// N sockets x M CPUs, one GICv4.1 ITS per socket (firmware reports socket 0's ITS first). CPU c is on
// socket c / M; its affinity puts the socket in Aff2 (Aff3 = 0) or in Aff3 (Aff2 = 0); within a socket
// Aff1 = index / 16 and Aff0 = index % 16 (GICv3 SGI target lists address 16 Aff0 values per cluster).
// vPE table scope (Arm IHI 0069 GICR_TYPER.CommonLPIAff and GITS_TYPER.SVPET; Linux irq-gic-v3-its.c
// compute_common_aff, compute_its_aff, inherit_vpe_l1_table_from_its/_rd):
//  * PerSocket: CommonLPIAff = 2 (Aff3.Aff2) for Aff2 sockets or 1 (Aff3) for Aff3 sockets; each ITS
//    has SVPET = the same value and GITS_MPIDR = its socket's affinity, so each socket's RDs and ITS
//    share one table and Linux's local_4_1_its is the socket's own ITS.
//  * System: CommonLPIAff = 0 (all RDs share one table); SVPET = 1 (Linux reads it as "Aff3"), so an
//    ITS shares when its Aff3 is 0 — every ITS with Aff2 sockets, only socket 0's ITS with Aff3 sockets.
// Every ITS: VLPIS, VMAPP, VSGI, VMOVP (single VMOVP unless single_vmovp = false), PTA as asked.
// Every RD: PLPIS, VLPIS, DirectLPI, RVPEID, VSGI, Processor_Number = CPU number,
// RD_base = rd_base_pa + cpu * 0x40000 (four 64 KiB frames per GICv4 RD).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "gic/gic_system.h"

namespace ipilab::gic {

enum class SocketAffinityLevel { Aff2, Aff3 };
enum class VpeTableScope { PerSocket, System };

struct SocketTopology {
  int sockets = 2;
  int cpus_per_socket = 32;
  SocketAffinityLevel level = SocketAffinityLevel::Aff2;
  VpeTableScope scope = VpeTableScope::PerSocket;
  bool pta = false;               ///< GITS_TYPER.PTA: RDbase is an address (true) or processor number
  bool single_vmovp = true;       ///< GITS_TYPER.VMOVP
  unsigned vpeid_bits = 16;
  std::uint64_t its_base_pa = 0x2'0000'0000;  ///< ITS s at its_base_pa + s * 0x100'0000
  std::uint64_t rd_base_pa = 0x1'0000'0000;
};

/// Builds the configuration. Throws InputError("sockets"/"cpus_per_socket", ...) for counts outside
/// 1..256 sockets and 1..4096 CPUs per socket.
/// A GICv4.1 ITS as the builders make it: physical and virtual LPIs, VMAPP and vSGI, with the given
/// GITS_TYPER.VMOVP, PTA and SVPET.
ItsConfig gicv41_its(bool vmovp, bool pta, std::uint8_t svpet);
/// A GICv4.1 redistributor with processor number `cpu`: GICR_TYPER.PLPIS, VLPIS, DirectLPI,
/// RVPEID and VSGI set, CommonLPIAff as given (affinity, Last, socket and address left to the caller).
RedistributorConfig gicv41_redistributor(int cpu, std::uint8_t common_lpi_aff);

GicSystemConfig build_socket_topology(const SocketTopology& topology);

}  // namespace ipilab::gic

namespace ipilab::gic {

/// A host's GIC as the host description gives it (src/workload/mechanisms/arm_host.cpp builds it
/// from a topology::Host): any number of sockets, CPUs and ITSs, ITSs in any firmware order.
struct HostGicLayout {
  struct Cpu {
    int socket = 0;
    std::uint32_t affinity = 0;  ///< MPIDR Aff3.Aff2.Aff1.Aff0 (GICR_TYPER.Affinity)
  };
  struct Its {
    int socket = 0;
    std::uint32_t mpidr = 0;     ///< GITS_MPIDR Aff3.Aff2.Aff1 in [31:8], [7:0] zero
    std::optional<std::uint8_t> svpet;  ///< GITS_TYPER.SVPET as firmware sets it; unset: the default below
  };
  std::vector<Cpu> cpus;         ///< index = CPU number = redistributor index
  std::vector<Its> its;          ///< firmware (MADT) order
  int common_lpi_aff = 1;        ///< GICR_TYPER.CommonLPIAff of every RD, 0..3
};

/// Every RD: PLPIS, VLPIS, DirectLPI, RVPEID, VSGI, Processor_Number = CPU number, the given
/// affinity, CommonLPIAff as given, Last on the final RD of each socket's run. Every ITS: VLPIS, VMAPP,
/// VSGI, single VMOVP, PTA = 0, SVPET as given or else CommonLPIAff (1 when CommonLPIAff = 0: Linux
/// reads SVPET as a CommonLPIAff value, and an ITS with SVPET = 0 shares with nobody), GITS_MPIDR as
/// given. Throws InputError("its[i].svpet") for an SVPET above 3.
/// Throws InputError for an empty layout, more than 65536 CPUs or CommonLPIAff outside 0..3.
GicSystemConfig build_host_gic(const HostGicLayout& layout);

}  // namespace ipilab::gic
