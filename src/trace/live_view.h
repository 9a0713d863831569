// ipilab/trace/live_view.h — what `ipilab trace --live` shows while it streams: per interval and in
// total, the IPIs per kind (one kind per IPI, send to arrival, as the report counts them), their
// p50/p99 latency (send -> handler entry of the sends that raised an interrupt), the top sending
// (source, target) pairs, the coalesced share of IPI sends and the polling-idle share of queued
// calls. Fed as an AnalysisObserver of the buffer's analysis (records come as they complete).
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <utility>

#include "sim/histogram.h"
#include "trace/analysis.h"

namespace ipilab::trace {

class LiveView final : public AnalysisObserver {
 public:
  void on_ipi(const IpiRecord& r) override;
  void on_call(const CallRecord& r) override;

  /// The compact table for a terminal (refreshed in place by the caller), `elapsed` seconds in.
  std::string table(double elapsed, std::uint32_t cpus) const;
  /// One line for a log (no terminal).
  std::string line(double elapsed) const;
  /// Starts the next interval (after table() / line()).
  void next_interval(double elapsed);

  std::uint64_t ipis() const { return total_.ipis; }
  std::uint64_t calls() const { return total_.calls; }

 private:
  struct Counts {
    std::array<std::uint64_t, kIpiKindCount> by_kind{};
    std::uint64_t ipis = 0, coalesced = 0, unmatched = 0, calls = 0, polling_idle = 0;
    std::map<std::pair<std::uint32_t, std::uint32_t>, std::uint64_t> pairs;
  };
  Counts total_, now_;
  std::array<sim::Histogram, kIpiKindCount> latency_{};
  double interval_start_ = 0;
};

}  // namespace ipilab::trace
