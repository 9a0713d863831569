// ipilab/workload/counters.h — every counter a run reports, declared once (as cost/catalog.h does
// for cost keys).
//
// A counter counts events of the measured window: sends, interrupts delivered, hypercalls, VM exits,
// ITS commands... The code that counts names a typed constant (workload::counters::vm_exits); the
// catalog says what the event is, its unit and who counts it; `ipilab list --counters` prints it; a
// scenario's `expect` on a name that is neither a counter here nor a metric is refused when the
// scenario is read (with a suggestion), not at run time. Counters::id() (plan.h) refuses a name that
// is not in the catalog, so a counter cannot be added without an entry here.
//
// One family is open-ended: "hypercalls.<call>", one counter per hypercall name the guest issued
// (the Hyper-V TLFS call names such as HvCallSendSyntheticClusterIpiEx, and KVM_HC_SEND_IPI).
// Adding a counter = one constant here + one line in counters.cpp.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace ipilab::workload {

/// A counter's name, as a run reports it and an `expect` names it.
struct CounterKey {
  std::string_view name;
  constexpr operator std::string_view() const noexcept { return name; }
};

namespace counters {
// The whole-VM core (vm_run.h), every workload.
inline constexpr CounterKey sends{"sends"};
inline constexpr CounterKey ipis_delivered{"ipis_delivered"};
inline constexpr CounterKey deliveries{"deliveries"};
inline constexpr CounterKey coalesced{"coalesced"};
inline constexpr CounterKey polling_skips{"polling_skips"};
inline constexpr CounterKey misdelivered{"misdelivered"};
inline constexpr CounterKey lost{"lost"};
// The core's balance over the measured window (vm_run.h, Counters).
inline constexpr CounterKey ipis_sent{"ipis_sent"};
inline constexpr CounterKey ipis_in_flight_at_start{"ipis_in_flight_at_start"};
inline constexpr CounterKey ipis_in_flight_at_end{"ipis_in_flight_at_end"};
inline constexpr CounterKey requests{"requests"};
inline constexpr CounterKey requests_lost{"requests_lost"};
inline constexpr CounterKey requests_pending_at_start{"requests_pending_at_start"};
inline constexpr CounterKey requests_pending_at_end{"requests_pending_at_end"};
// Mechanisms.
inline constexpr CounterKey hypercalls{"hypercalls"};
inline constexpr CounterKey hypercalls_failed{"hypercalls_failed"};
inline constexpr CounterKey native_fallbacks{"native_fallbacks"};
inline constexpr CounterKey duplicated{"duplicated"};
inline constexpr CounterKey vm_exits{"vm_exits"};
inline constexpr CounterKey icr_writes{"icr_writes"};
inline constexpr CounterKey icr_fastpath_exits{"icr_fastpath_exits"};
inline constexpr CounterKey ipiv_icr_writes{"ipiv_icr_writes"};
inline constexpr CounterKey avic_icr_writes{"avic_icr_writes"};
inline constexpr CounterKey avic_incomplete_ipi_exits{"avic_incomplete_ipi_exits"};
inline constexpr CounterKey pv_tlb_flush_skips{"pv_tlb_flush_skips"};
inline constexpr CounterKey kicks{"kicks"};
inline constexpr CounterKey sgir_writes{"sgir_writes"};
inline constexpr CounterKey sgi1r_writes{"sgi1r_writes"};
inline constexpr CounterKey its_local{"its_local"};
inline constexpr CounterKey its_remote{"its_remote"};
// The host driver's ITS commands (workload its_commands).
inline constexpr CounterKey its_commands{"its_commands"};
inline constexpr CounterKey its_batches{"its_batches"};
inline constexpr CounterKey its_creadr_reads{"its_creadr_reads"};
inline constexpr CounterKey its_wait_polls{"its_wait_polls"};
inline constexpr CounterKey its_lock_waits{"its_lock_waits"};
inline constexpr CounterKey its_waits_completed_early{"its_waits_completed_early"};
inline constexpr CounterKey its_waits_spun_after_completion{"its_waits_spun_after_completion"};
inline constexpr CounterKey its_waits_timed_out{"its_waits_timed_out"};
inline constexpr CounterKey its_waits_timed_out_after_completion{"its_waits_timed_out_after_completion"};
}  // namespace counters

/// The family of per-call hypercall counters: "hypercalls.<call>".
inline constexpr std::string_view kPerCallPrefix = "hypercalls.";
/// "hypercalls.<call>" for one hypercall name (e.g. hv::call_code_name(code), "KVM_HC_SEND_IPI").
std::string per_call_counter(std::string_view call);

struct CounterInfo {
  std::string_view name;         ///< the counter, or "hypercalls.<call>" for the family
  std::string_view unit;         ///< what one count is ("sends", "interrupts", "VM exits", ...)
  std::string_view description;  ///< what is counted, and when
  std::string_view used_by;      ///< who counts it
};

/// Every counter, in catalog order (the core's first, then the mechanisms', then the ITS's).
std::span<const CounterInfo> counter_catalog();
/// The hypercall names a "hypercalls.<call>" counter may carry.
std::span<const std::string_view> per_call_names();
/// The entry for `name` (a per-call counter gets the family's entry), or nullptr.
const CounterInfo* find_counter(std::string_view name);
/// Every concrete counter name (the family expanded), for suggestions.
std::vector<std::string> counter_names();

}  // namespace ipilab::workload
