// x2avic: AMD x2AVIC (Zen 4 / EPYC Genoa and later; KVM support by Suravee Suthikulpanit, Linux 6.0):
// AVIC for a guest in x2APIC mode. The guest is Linux's x2APIC physical driver (a KVM guest without
// a vIOMMU runs x2APIC physical: one WRMSR 0x830 per target, shorthands per `shorthand`); the ICR MSR
// write is not intercepted, and the CPU sends a fixed, edge-triggered IPI as AVIC does (avic.cpp): no
// exit, a doorbell to each running target, #VMEXIT(AVIC_INCOMPLETE_IPI) on the sender when a target
// is not running (avic_incomplete_ipi_interception -> avic_kick_target_vcpus).
// Limit: the physical APIC ID table holds IDs 0..X2AVIC_MAX_PHYSICAL_ID (0x1FF, Linux 6.0:
// `max_physical_id`). A VM with a larger APIC ID gets AVIC inhibited by KVM
// (APICV_INHIBIT_REASON_PHYSICAL_ID_TOO_BIG): every ICR write exits and no interrupt is posted, as
// x2apic-physical with apicv = false; the run says so in its notes.
#include <fmt/format.h>

#include "workload/mechanisms/builtin.h"
#include "workload/mechanisms/x86_common.h"

namespace ipilab::workload {

using namespace cost::keys;

std::vector<cost::CostKey> avic_cost_keys();  // avic.cpp

namespace {
const IntParam kMaxId{"max_physical_id", 0x1FF, 0xFE, 0xFFFFF,
                      "the largest APIC ID x2AVIC's physical APIC ID table holds (X2AVIC_MAX_PHYSICAL_ID 0x1FF = 511 "
                      "since Linux 6.0); a VM with a larger APIC ID has AVIC inhibited "
                      "(APICV_INHIBIT_REASON_PHYSICAL_ID_TOO_BIG): its ICR writes exit, nothing is posted"};
}  // namespace

MechanismInfo describe_x2avic() {
  return {"x2avic",
          Arch::X86,
          "AMD x2AVIC (Zen 4, Linux 6.0), x2APIC physical guest: a fixed ICR write causes no exit unless a target is "
          "not "
          "running (AVIC_INCOMPLETE_IPI); APIC IDs above max_physical_id inhibit it",
          x86_mechanism_params(false, {info(kMaxId)}, true),
          joined(avic_cost_keys(), {x2apic_icr_write_exit}),
          [](MechanismContext& ctx) {
            X86SendOptions o;
            const auto max_id = static_cast<std::int64_t>(ctx.params.get(kMaxId));
            const auto top = static_cast<std::int64_t>(ctx.vm.size()) - 1;  // vCPU n has x2APIC ID n (x86_view)
            if (top > max_id) {
              o.inhibited = true;
              o.inhibit_reason = fmt::format(
                  "x2AVIC inhibited: APIC ID {} is above max_physical_id {} (KVM APICV_INHIBIT_REASON_PHYSICAL_ID_TOO_BIG): "
                  "every ICR write exits and no interrupt is posted",
                  top, max_id);
            } else {
              o.avic = true;
            }
            return std::make_unique<X86NativeMechanism>(ctx, "x2avic", x86::X2apicMode::Physical, false, o);
          }};
}

}  // namespace ipilab::workload
