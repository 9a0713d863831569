// ipilab/topology/discover.h — the host this process runs on, read with hwloc.
//
// What hwloc gives: every online CPU (PU os_index = Linux CPU number), its package (socket), core,
// SMT rank and NUMA node (all re-indexed densely from 0), the CPU model string, and the ACPI SLIT
// node distances when firmware provides them. What it does not give: core-to-core latency in ns
// and the GIC ITSs. So the latency matrix is an ESTIMATE, stated in latency.source: SLIT ratios
// scaled so that "local" (10) = 45 ns, the median same-socket one-way latency of monolithic Xeons in
// core-to-core-latency's published table (github.com/nviennot/core-to-core-latency README); without
// SLIT every node pair gets 45 ns on the diagonal and 130 ns elsewhere. `ipilab topo --host --measure`
// is meant to replace it with a measured matrix. ITSs are not discovered (hwloc does not report them; on Arm hosts the ACPI MADT
// GIC ITS entries would be the source) — the list is left empty.
#pragma once

#include <vector>

#include "topology/host.h"

namespace ipilab::topology {

/// Reads this machine with hwloc. Throws UnavailableError if hwloc cannot load a topology.
Host discover_host();

/// Linux CPU number (PU os_index) of each hwloc logical PU index, in logical order (the index
/// space measure::C2cConfig::pus uses). Throws UnavailableError like discover_host().
std::vector<int> pu_os_indexes();

}  // namespace ipilab::topology
