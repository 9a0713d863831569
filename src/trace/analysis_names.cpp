// The printed names of the analysis' enums and the statement of each kernel convention.
#include "trace/analysis.h"

#include <fmt/format.h>

namespace ipilab::trace {

std::string_view outcome_name(SendOutcome o) {
  switch (o) {
    case SendOutcome::Raised: return "raised";
    case SendOutcome::Coalesced: return "coalesced";
    case SendOutcome::Unmatched: return "unmatched";
    case SendOutcome::Expired: return "expired";
  }
  return "?";
}

std::string_view service_name(CallService s) {
  switch (s) {
    case CallService::Ipi: return "ipi";
    case CallService::Coalesced: return "coalesced";
    case CallService::PollingIdle: return "polling-idle";
    case CallService::Local: return "local";
    case CallService::Pending: return "pending";
  }
  return "?";
}

std::string_view convention_name(Convention c) {
  switch (c) {
    case Convention::Indistinct: return "indistinct";
    case Convention::V6_5: return "v6.5+";
    case Convention::V6_4: return "v6.4";
    case Convention::Mixed: return "mixed";
  }
  return "?";
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
