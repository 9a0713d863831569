// ipilab/sweep/result.h — what one point of a sweep produced, and its wire form (the text a worker
// thread or an MPI rank hands back to the writer).
//
// Every run goes through the wire form (to_wire, then from_wire) whether it ran in a thread or on
// another rank, so the written CSV/JSON cannot depend on where a point ran. Doubles survive the
// round trip exactly (nlohmann::json writes the shortest text that reads back to the same double).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "sim/histogram.h"

namespace ipilab::sweep {

struct MetricSummary {
  std::string name, unit, description;
  sim::Summary summary;  ///< in `unit`
};

struct PointResult {
  enum class Status { Ok, Failed, Skipped, NotRun };
  Status status = Status::NotRun;
  std::string error;  ///< Failed: the message; Skipped: the reason
  std::vector<MetricSummary> metrics;  ///< metrics[0] = the workload's main metric
  std::map<std::string, std::uint64_t> counters;
  std::vector<std::pair<std::string, std::string>> settings;
  std::vector<std::string> notes;
  std::uint64_t events = 0;
  std::string host, vm, profile;  ///< the scenario layer's labels of what the point ran on
};

/// "ok", "failed", "skipped", "not-run".
const char* status_name(PointResult::Status s) noexcept;

std::string to_wire(const PointResult& r);
/// Throws std::runtime_error on text that is not a wire form.
PointResult from_wire(const std::string& text);

}  // namespace ipilab::sweep
