// The printed names of the analysis' enums and the statement of each kernel convention.
#include "trace/analysis.h"

#include <fmt/format.h>

#include "common/enum_names.h"

namespace ipilab::trace {

std::string_view outcome_name(SendOutcome o) {
  using enum SendOutcome;
  static constexpr EnumName<SendOutcome> kNames[] = {
      {Raised, "raised"}, {Coalesced, "coalesced"}, {Unmatched, "unmatched"}, {Expired, "expired"}};
  return name_of(kNames, o);
}

std::string_view service_name(CallService s) {
  using enum CallService;
  static constexpr EnumName<CallService> kNames[] = {
      {Ipi, "ipi"}, {Coalesced, "coalesced"}, {PollingIdle, "polling-idle"}, {Local, "local"}, {Pending, "pending"}};
  return name_of(kNames, s);
}

std::string_view convention_name(Convention c) {
  using enum Convention;
  static constexpr EnumName<Convention> kNames[] = {
      {Indistinct, "indistinct"}, {V6_5, "v6.5+"}, {V6_4, "v6.4"}, {Mixed, "mixed"}};
  return name_of(kNames, c);
}

std::string convention_statement(Convention c) {
  switch (c) {
    case Convention::V6_5:
      return "Linux >= 6.5 convention (csd:csd_queue_cpu present): every ipi_send_* is an IPI, queued calls are "
             "csd_queue_cpu";
    case Convention::V6_4:
      return "Linux 6.4 convention (ipi_send_* with a queued function as callback, no csd events): those events are "
             "queued calls, only ipi_send_* with a generic handler or NULL callback are IPIs";
    case Convention::Mixed:
      return "both conventions appear (ipi_send_* with queued functions as callback before csd events): each event "
             "read by its own shape";
    case Convention::Indistinct:
      return "no event tells the Linux 6.4 and >= 6.5 conventions apart; both read this trace alike";
  }
  return "";
}

}  // namespace ipilab::trace
