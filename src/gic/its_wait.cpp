#include "gic/its_wait.h"

#include <fmt/format.h>

#include "common/enum_names.h"
#include "gic/gic_system.h"

namespace ipilab::gic {

std::string_view wait_predicate_name(WaitPredicate predicate) { return name_of(kWaitPredicateNames, predicate); }

std::string_view wait_outcome_name(WaitOutcome outcome) {
  using enum WaitOutcome;
  static constexpr EnumName<WaitOutcome> kNames[] = {{Completed, "completed"},
                                                     {CompletedEarly, "completed_early"},
                                                     {TimedOut, "timed_out"},
                                                     {TimedOutAfterCompletion, "timed_out_after_completion"}};
  return name_of(kNames, outcome);
}

WaitPredicateState::WaitPredicateState(WaitPredicate predicate, const ItsWaitTicket& t, std::uint32_t queue_bytes)
    : predicate_(predicate), queue_bytes_(queue_bytes), prev_idx_(t.snapshot), to_idx_(t.to), linear_idx_(t.snapshot),
      from_(t.from), to_(t.to) {
  if (to_idx_ < prev_idx_) to_idx_ += queue_bytes_;  // "Linearize to_idx if the command set has wrapped around"
}

bool WaitPredicateState::poll(std::uint32_t rd) {
  if (predicate_ == WaitPredicate::Offsets) {
    if (from_ < to_ && rd >= to_) return true;                 // direct case
    if (from_ >= to_ && rd >= to_ && rd < from_) return true;  // wrapped case
    return false;
  }
  std::uint64_t delta = rd - prev_idx_;
  if (rd < prev_idx_) delta = rd + queue_bytes_ - prev_idx_;
  linear_idx_ += delta;
  if (linear_idx_ >= to_idx_) return true;
  prev_idx_ = rd;
  return false;
}

namespace {

/// readl_relaxed(its->base + GITS_CREADR): Linux uses the raw value, Stalled (bit 0) included.
std::uint32_t creadr_offset(const GicSystem& sys, int its) { return static_cast<std::uint32_t>(sys.read_gits_creadr(its)); }

std::uint64_t ring_distance(std::uint32_t from, std::uint32_t to, std::uint32_t size) {
  return to >= from ? to - from : to + size - from;
}

}  // namespace

ItsWaitResult wait_for_range_completion(GicSystem& sys, const ItsWaitTicket& t, WaitPredicate predicate,
                                        std::uint64_t commands_per_poll) {
  ItsWaitResult r;
  r.predicate = predicate;
  r.snapshot = t.snapshot;
  r.from = t.from;
  r.to = t.to;
  r.batch_commands = ring_distance(t.from, t.to, kLinuxItsQueueBytes) / 32;
  r.ahead_commands = ring_distance(t.snapshot & 0xFFFE0, t.from, kLinuxItsQueueBytes) / 32;  // offset, without Stalled
  r.waited_commands = r.ahead_commands + r.batch_commands;
  if (sys.stats(t.its).cbaser_writes != t.cbaser_writes_at_snapshot)
    r.note = "GITS_CBASER was written after the batch was posted: CREADR no longer measures this batch";

  WaitPredicateState pred(predicate, t);
  r.to_linear = pred.to_linear();
  auto consumed_since = [&] { return sys.stats(t.its).consumed - t.consumed_at_snapshot; };
  std::uint64_t count = kLinuxItsWaitPolls;
  bool done = false;
  while (true) {
    const std::uint32_t rd = creadr_offset(sys, t.its);
    ++r.polls;
    if (r.polls == 1) r.first_creadr = rd;
    r.last_creadr = rd;
    if (pred.poll(rd)) {
      done = true;
      break;
    }
    if (--count == 0) break;
    // udelay(1): the ITS may progress meanwhile.
    ++r.udelays;
    const bool manual = sys.processing(t.its) == ItsProcessing::Manual;
    const std::size_t ran = manual && commands_per_poll > 0 ? sys.process_commands(t.its, commands_per_poll) : 0;
    if (ran == 0 && creadr_offset(sys, t.its) == rd) {
      // Nothing can change any more: every remaining read returns `rd` and fails the same way.
      r.polls += count;
      r.udelays += count - 1;
      count = 0;
      break;
    }
  }
  r.linear = pred.linear();
  r.travelled_bytes = consumed_since() * 32;
  const bool truly_done = consumed_since() >= r.waited_commands;
  if (done)
    r.outcome = truly_done ? WaitOutcome::Completed : WaitOutcome::CompletedEarly;
  else
    r.outcome = truly_done ? WaitOutcome::TimedOutAfterCompletion : WaitOutcome::TimedOut;
  if (!done) {
    const std::string timeout =
        predicate == WaitPredicate::Linear
            ? fmt::format("ITS queue timeout ({} {})", r.to_linear, pred.linear())
            : fmt::format("ITS queue timeout ({} {} {})", t.from, t.to, r.last_creadr);
    r.linux_message = t.builder.empty() ? timeout : fmt::format("{}; ITS cmd {} failed", timeout, t.builder);
  }
  return r;
}

}  // namespace ipilab::gic
