// ipilab/trace/report.h — the human report and the --json document of `ipilab trace`.
//
// JSON contract (stable keys; all latencies and times in ns):
//   { "file", "format", "summary": {span_ns, first_ts_ns, last_ts_ns, cpus, events, ipis_sent,
//     ipis_per_second, lost_events},
//     "ipis_sent", "matched", "coalesced", "unmatched_sends", "unmatched_arrivals", "arrivals",
//     "events": {name: count},
//     "by_kind": {kind: {count (= arrivals), sends, matched, coalesced, unmatched_sends,
//                unmatched_arrivals, latency_ns: {count,min,p50,p90,p99,max,mean},
//                handler_ns: {...}}},
//     "by_callsite": [{callsite, callback, count, share, matched, coalesced, unmatched,
//                      latency_ns: {...}}]   (most sends first),
//     "pairs": [{src, dst, count, matched, coalesced, latency_ns: {...}}],
//     "targets": [{cpu, sends_received, unmatched_arrivals, sources: [{src, count}],
//                  callsites: [{callsite, count}], arrivals: {kind: count}}],
//     "csd_functions": [{func, queued, runs, queue_to_run_ns: {...}, run_time_ns: {...}}],
//     "calls": {ipi|coalesced|polling-idle|local|pending: {count, inferred, queue_to_run_ns: {...}}},
//     "wake_idle_without_ipi": {count, for_calls, for_wakeups},
//     "convention": {name ("v6.5+", "v6.4", "indistinct", "mixed"), statement, queued_call_sends},
//     "pairing": {limit_ns, expired},
//     "input": {compression, buffer, buffers, cpumask_forms: {form: count}, trace_dat: {version,
//               compression, big_endian, long_size, kernel_long_size, direct_decode}},
//     "statistics": "<how percentiles are computed>", "warnings": [..] }
// A trace with several buffers holding IPI events gives {"file", "format", "buffers": [report...]},
// one report (the object above, with its "buffer" name) per buffer.
// Empty statistics have count 0 and every figure 0. Symbol strings come from the trace and may not
// be valid UTF-8: dump with nlohmann::json::error_handler_t::replace (as the CLI does).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "trace/analysis.h"

namespace ipilab::trace {

/// How the percentiles are computed (printed in the report and stored in the JSON).
inline constexpr const char* kStatisticsNote =
    "nearest-rank percentiles from a log-linear histogram (sim::Histogram): exact below 256 ns, else within "
    "0.4 %; min, max, mean exact";

nlohmann::json latency_json(const Histogram& h);
/// The report of one buffer (`buffer` = its name).
nlohmann::json report_json(const IpiAnalysis& a, const ReadInfo& info, const std::string& file,
                           const std::string& buffer = {});
std::string report_text(const IpiAnalysis& a, const ReadInfo& info, const std::string& file,
                        const std::string& buffer = {});
/// The whole trace: one buffer's report, or {"file","format","buffers":[...]} for several.
nlohmann::json report_json(const TraceAnalysis& a, const ReadInfo& info, const std::string& file);
std::string report_text(const TraceAnalysis& a, const ReadInfo& info, const std::string& file);

}  // namespace ipilab::trace
