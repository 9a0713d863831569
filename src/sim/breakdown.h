// ipilab/sim/breakdown.h — where the time goes: named step -> total simulated time and count.
//
// A workload registers its steps once (step("hypercall entry/exit") -> StepId) and adds the modeled
// duration of each occurrence (add(id, d), O(1)). rows() lists the steps in registration order with
// their total, count and share of the sum of all steps. Memory: one row per step name.
// Steps may overlap in time (e.g. sender and target work); the shares are of the summed step time,
// not of the wall-clock latency, and reports should say so.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sim/time.h"

namespace ipilab::sim {

class Breakdown {
 public:
  using StepId = std::uint32_t;

  struct Row {
    std::string name;
    Ps total;
    std::uint64_t count = 0;
    double share = 0;  ///< total / sum of all totals, in [0, 1]
  };

  /// The id of step `name`, registering it (at the end of the order) if new.
  StepId step(std::string_view name);
  /// Adds one occurrence of duration d (>= 0, else std::invalid_argument) to step id.
  void add(StepId id, Ps d) {
    if (d.v < 0 || id >= rows_.size()) bad_add();
    rows_[id].total += d;
    ++rows_[id].count;
  }
  /// The name of step `id` (registered by step()).
  const std::string& name(StepId id) const { return rows_.at(id).name; }
  /// Convenience: step(name) then add (a lookup per call; prefer ids in hot loops).
  void add(std::string_view name, Ps d) { add(step(name), d); }

  /// Adds every step of `other` (by name).
  void merge(const Breakdown& other);
  /// Zeroes totals and counts, keeping the registered steps and their ids.
  void reset();

  /// Steps in registration order with their shares.
  std::vector<Row> rows() const;
  /// Sum of all step totals.
  Ps total() const;
  /// Total of one step by name (Ps{0} if unknown).
  Ps total_of(std::string_view name) const;

 private:
  [[noreturn]] static void bad_add();
  std::vector<Row> rows_;
};

}  // namespace ipilab::sim
