// ipilab/common/estimator.h — how one timed sample is taken: the batch estimator and the counter-read
// overhead it keeps out of the samples (pure, header-only). It sits below both users: the host-side
// measurements (measure/c2c.cpp) and the KVM harness, whose guest loops follow the same rules
// (kvm/ipi_bench.cpp sizes its batches with iterations_for_bias).
//
// Reading a counter (RDTSC with its LFENCEs, steady_clock::now) costs time, and a timestamp pair around
// an operation puts one read's cost inside the sample. Timing every iteration with its own pair adds that
// cost to every sample: an operation of 16 ns timed with a 10 ns counter read reads as 26 ns. The batch
// estimator takes ONE pair around N iterations (the serialising barriers sit with the timestamps, outside
// the iterations) and reports (t1 - t0) / N, so the read's cost is spread over N: 16 + 10 / N. This is
// the change kvm-unit-tests made to its arm64 micro-bench (arm/micro-bench.c, 2023): time the whole
// loop, not each iteration.
//
// Counter contract: `read()` returns a timestamp (any arithmetic type); what one read costs is whatever
// time passes between the value it returns and the value the next read would return if nothing ran
// between them. counter_overhead() measures exactly that: an empty timed region.
//
// Per-iteration timing (N = 1) is still right where the operation is long next to the read
// (iterations_for_bias() returns 1) or where iterations cannot run back to back (a halted target needs an
// idle gap between sends that must not be inside the timed window); callers say which applies.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <vector>

namespace ipilab::timing {

/// One timed sample: `elapsed` counter units over `iterations` back-to-back iterations.
struct TimedBatch {
  double elapsed = 0;
  std::uint64_t iterations = 0;
  /// The sample: the batch's per-iteration mean.
  double per_iteration() const { return iterations == 0 ? 0.0 : elapsed / static_cast<double>(iterations); }
};

/// The batch estimator: t0 = read(); op() `iterations` times; t1 = read().
template <class Counter, class Op>
TimedBatch time_batch(Counter&& read, Op&& op, std::uint64_t iterations) {
  if (iterations == 0) throw std::invalid_argument("a batch needs at least one iteration");
  const auto t0 = read();
  for (std::uint64_t i = 0; i < iterations; ++i) op();
  const auto t1 = read();
  return {static_cast<double>(t1 - t0), iterations};
}

/// The per-iteration estimator (one pair per iteration): each sample holds one counter read's cost.
template <class Counter, class Op>
std::vector<double> time_each(Counter&& read, Op&& op, std::uint64_t iterations) {
  std::vector<double> out;
  out.reserve(iterations);
  for (std::uint64_t i = 0; i < iterations; ++i) {
    const auto t0 = read();
    op();
    const auto t1 = read();
    out.push_back(static_cast<double>(t1 - t0));
  }
  return out;
}

/// The counter-read overhead: the median of `reps` empty timed regions (read; read).
template <class Counter>
double counter_overhead(Counter&& read, unsigned reps = 101) {
  if (reps == 0) throw std::invalid_argument("counter_overhead needs at least one repetition");
  std::vector<double> d;
  d.reserve(reps);
  for (unsigned i = 0; i < reps; ++i) {
    const auto t0 = read();
    const auto t1 = read();
    d.push_back(static_cast<double>(t1 - t0));
  }
  std::nth_element(d.begin(), d.begin() + static_cast<std::ptrdiff_t>(d.size() / 2), d.end());
  return d[d.size() / 2];
}

/// Iterations per sample so that the counter read's share of a sample, overhead / (N * op), is at most
/// `max_bias` (e.g. 0.001 = 0.1 %): N = ceil(overhead / (max_bias * op)), at least 1, at most `max_n`.
/// `op` <= 0 (an operation too short to see next to the read) gives max_n. 1 means: time each iteration,
/// the operation is long enough.
inline std::uint64_t iterations_for_bias(double overhead, double op, double max_bias, std::uint64_t max_n) {
  if (!(max_bias > 0)) throw std::invalid_argument("max_bias must be > 0");
  if (max_n == 0) throw std::invalid_argument("max_n must be >= 1");
  if (!(overhead > 0)) return 1;
  if (!(op > 0)) return max_n;
  const double n = std::ceil(overhead / (max_bias * op) - 1e-9);
  if (n >= static_cast<double>(max_n)) return max_n;
  return std::max<std::uint64_t>(1, static_cast<std::uint64_t>(n));
}

}  // namespace ipilab::timing
