// ipilab/cost/catalog.h — every cost key ipilab knows, declared once (SST-ELI style, anchors.md 2.2).
//
// A cost key names one primitive operation the simulator prices ("hv.hypercall_entry_exit").
// The catalog says what the operation is, the kind of unit it takes, and which workloads need it;
// `ipilab list --costs` prints it. A profile (profile.h) may only set keys of the catalog, so a typo
// in a profile is an error, not a silently unused value. Adding a key = one line in catalog.cpp.
//
// Naming: <layer>.<operation>[_<qualifier>], layers: guest (Linux in the VM), vm (generic VM
// exit/entry), hv (Hyper-V hypervisor), x2apic / apic (x86 interrupt hardware emulation), kvm (KVM
// hypercalls), its / gic (Arm GICv4.1), mem (cache coherence), vcpu (scheduling of vCPUs).
#pragma once

#include <span>
#include <string_view>

namespace ipilab::cost {

/// The kind of quantity a key holds; decides which units a profile may use for it.
enum class UnitKind {
  Duration,  ///< a time: "cycles" (converted with the profile's clock_ghz), "ns", "ps" or "us"
};

struct CostKeyInfo {
  std::string_view name;
  UnitKind kind;
  std::string_view description;  ///< what the operation is, and per what it is counted
  std::string_view used_by;      ///< workloads / send paths that need it
};

/// All keys, in catalog order (grouped by layer).
std::span<const CostKeyInfo> catalog();
/// The key's entry, or nullptr.
const CostKeyInfo* find_cost_key(std::string_view name);
/// "cycles, ns, ps or us" — the units a kind accepts, for messages.
std::string_view units_of(UnitKind kind);

}  // namespace ipilab::cost
