// The mechanism registry and what every mechanism shares: the `mechanism` parameter, the kind ->
// vector table, interconnect steps.
#include <algorithm>

#include <fmt/format.h>

#include "common/error.h"
#include "common/registry.h"
#include "workload/mechanism.h"
#include "workload/mechanisms/builtin.h"

namespace ipilab::workload {
namespace {

const std::vector<MechanismInfo>& registry() {
  // One line per mechanism (builtin.h); sorted by name for listings. Built once, then read-only.
  static const std::vector<MechanismInfo> all = sorted_by_name(std::vector<MechanismInfo>{
      describe_hyperv(), describe_x2apic_physical(), describe_x2apic_cluster(), describe_kvm_pv(),
      describe_ipiv(), describe_native_x86(), describe_gicv4_1_vsgi(), describe_gicv3_emulated_sgi(),
      describe_native_gicv3(), describe_xapic(), describe_avic(), describe_x2avic()});
  return all;
}

std::string names() { return names_of(registry()); }

}  // namespace

std::string_view arch_name(Arch a) { return a == Arch::X86 ? "x86" : "arm64"; }

std::uint32_t vector_of(Arch arch, IpiKind kind, std::string_view place) {
  if (arch == Arch::X86) {
    switch (kind) {
      case IpiKind::CallFunctionSingle: return 0xFB;
      case IpiKind::CallFunction: return 0xFC;
      case IpiKind::Reschedule: return 0xFD;
      case IpiKind::IrqWork: return 0xF6;
      case IpiKind::Platform: return 0xF7;
      case IpiKind::TimerBroadcast:
      case IpiKind::Other:
      case IpiKind::Unknown: break;
    }
  } else {
    switch (kind) {
      case IpiKind::CallFunctionSingle:
      case IpiKind::CallFunction: return 1;  // IPI_CALL_FUNC
      case IpiKind::Reschedule: return 0;    // IPI_RESCHEDULE
      case IpiKind::IrqWork: return 5;       // IPI_IRQ_WORK
      case IpiKind::Platform:
        throw InputError(std::string(place), "arm64 has no X86_PLATFORM_IPI_VECTOR (PV spinlock kick): use an x86 mechanism");
      case IpiKind::TimerBroadcast:
      case IpiKind::Other:
      case IpiKind::Unknown: break;
    }
  }
  throw InputError(std::string(place), "an IPI of a kind only a trace reports (timer-broadcast, other, unknown) has no vector to send");
}

std::vector<const MechanismInfo*> list_mechanisms() { return entries_of(registry()); }

const MechanismInfo& find_mechanism(std::string_view name, std::string_view place) {
  if (const MechanismInfo* m = entry_named(registry(), name)) return *m;
  throw InputError(std::string(place), fmt::format("unknown mechanism \"{}\" (known: {})", name, names()));
}

ParamInfo mechanism_param(std::string_view def) {
  return {"mechanism", "string", fmt::format("\"{}\"", def),
          fmt::format("how the IPI is delivered (ipilab list --mechanisms): {}", names())};
}

const MechanismInfo& chosen_mechanism(const Params& params, std::string_view def) {
  const std::string name = params.get_string("mechanism", def);
  const MechanismInfo& m = find_mechanism(name, params.place("mechanism"));
  // A key of another mechanism is a mistake, not an unused value.
  for (const auto& other : registry()) {
    if (other.name == m.name) continue;
    for (const auto& p : other.params) {
      if (!params.has(p.name)) continue;
      const bool mine = std::any_of(m.params.begin(), m.params.end(), [&](const ParamInfo& q) { return q.name == p.name; });
      if (!mine)
        throw InputError(params.place(p.name),
                         fmt::format("only meaningful with mechanism = \"{}\" (this is \"{}\")", other.name, m.name));
    }
  }
  return m;
}

std::optional<PlanStep> interconnect_step(Pricer& pricer, const topology::Host& host, int from_node, int to_node,
                                          std::string_view what) {
  const double ns = host.hop_ns(from_node, to_node);
  if (ns <= 0) return std::nullopt;
  // One label per crossing kind (the nodes are in the provenance's host matrix, not in the label).
  return pricer.fixed("interconnect", what, "host latency matrix", sim::from_ns(ns), Lane::Wire);
}

PlannedDelivery delivery_after_last_step(const SendPlan& plan, Pricer& pricer, const topology::Host& host,
                                         const topology::Vm& vm, int sender_node, unsigned target, std::string_view what) {
  PlannedDelivery d;
  d.target_cpu = static_cast<int>(target);
  d.after_sender_step = static_cast<std::uint32_t>(plan.sender.size() - 1);
  const int tnode = host.cpu(vm.pcpu_of(static_cast<int>(target))).node;
  if (auto s = interconnect_step(pricer, host, sender_node, tnode, what)) d.path.push_back(*s);
  return d;
}

}  // namespace ipilab::workload
