// ipilab/gic/its_wait.h — how the Linux host driver waits for its ITS commands to complete.
//
// Linux BUILD_SINGLE_CMD_FUNC (its_send_single_command / its_send_single_vcommand) posts a batch of one
// command plus its SYNC/VSYNC under its->lock, then spins in its_wait_for_range_completion() reading
// GITS_CREADR with udelay(1) between reads, for at most 1,000,000 reads ("1s!").
//
//  * Linear predicate (commit a050fa5476d4 "irqchip/gic-v3-its: Fix command queue pointer comparison
//    bug", v5.2-rc4, in stable 4.19.60 / 5.1.19): CREADR is read once more under the lock, just before
//    GITS_CWRITER is written (the snapshot, `rd_idx`). to_idx is linearised (+ ITS_CMD_QUEUE_SZ when
//    it wrapped below the snapshot); each poll adds the distance CREADR moved since the previous read,
//    modulo the queue size, and the wait ends when that running total reaches to_idx. It therefore
//    waits for everything between the snapshot and the end of the batch, other CPUs' commands ahead
//    of it included, and it survives CREADR wrapping past 64 KiB.
//  * Offsets predicate (before a050fa5476d4): compares raw offsets, from = first command of the batch,
//    to = the offset after it: done when (from < to && rd >= to) || (from >= to && rd >= to && rd < from).
//    When other CPUs' commands carry CREADR past to *and* past the end of the queue before the first
//    read, rd < to and the predicate never holds: the CPU spins the full 1,000,000 reads and prints
//    "ITS queue timeout (65440 65504 480)" although its commands completed (the commit's report). A
//    slow ITS whose CREADR is still a lap behind can also end the wait before the batch ran.
//
// The model adds the ground truth Linux cannot see (how many commands the ITS has consumed since the
// snapshot), so each wait is classified as completed, completed early, timed out, or timed out after
// completing. The result carries what the simulator prices: polls (CREADR reads), udelay(1) calls,
// and the commands/bytes the wait covered.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/enum_names.h"

namespace ipilab::gic {

class GicSystem;

enum class WaitPredicate { Linear, Offsets };
/// its_wait_for_range_completion's predicate: "linear" (a050fa5476d4, v5.2-rc4 and stable 4.19.60 /
/// 5.1.19) or "offsets" (before it: spins to the 1 s timeout when CREADR wrapped past the batch).
inline constexpr EnumName<WaitPredicate> kWaitPredicateNames[] = {{WaitPredicate::Linear, "linear"},
                                                                  {WaitPredicate::Offsets, "offsets"}};
/// "linear" / "offsets" (kWaitPredicateNames).
std::string_view wait_predicate_name(WaitPredicate predicate);

enum class WaitOutcome {
  Completed,                ///< the predicate ended the wait and the batch had been consumed
  CompletedEarly,           ///< the predicate ended the wait before the ITS consumed the batch
  TimedOut,                 ///< 1,000,000 reads; the batch was not consumed (ITS disabled, stalled, slow)
  TimedOutAfterCompletion,  ///< 1,000,000 reads although the batch had been consumed (predicate missed it)
};
/// "completed", "completed_early", "timed_out", "timed_out_after_completion".
std::string_view wait_outcome_name(WaitOutcome outcome);

/// Linux's ITS_CMD_QUEUE_SZ: the driver always allocates a 64 KiB queue and does its arithmetic in it.
inline constexpr std::uint32_t kLinuxItsQueueBytes = 0x10000;
/// its_wait_for_range_completion()'s `count`: CREADR reads before giving up.
inline constexpr std::uint64_t kLinuxItsWaitPolls = 1'000'000;

/// What the posting CPU knows about its batch after its_post_commands().
struct ItsWaitTicket {
  int its = -1;
  std::uint32_t snapshot = 0;   ///< GITS_CREADR as read under the lock before the CWRITER write (rd_idx; Stalled in bit 0)
  std::uint32_t from = 0;       ///< offset of the batch's first command
  std::uint32_t to = 0;         ///< offset after the batch (next_cmd; the CWRITER value written)
  std::uint64_t consumed_at_snapshot = 0;  ///< ItsStats::consumed when the snapshot was read (ground truth)
  std::uint64_t cbaser_writes_at_snapshot = 0;
  std::string builder;          ///< Linux builder function, e.g. "its_build_vmovp_cmd" (for the messages)
};

/// What one its_wait_for_range_completion() call did.
struct ItsWaitResult {
  WaitPredicate predicate = WaitPredicate::Linear;
  WaitOutcome outcome = WaitOutcome::Completed;
  std::uint64_t polls = 0;          ///< GITS_CREADR reads
  std::uint64_t udelays = 0;        ///< udelay(1) calls between reads (polls - 1)
  std::uint32_t first_creadr = 0;   ///< GITS_CREADR the first read returned (raw, as Linux uses it: Stalled in bit 0)
  std::uint32_t last_creadr = 0;    ///< GITS_CREADR the last read returned
  std::uint32_t snapshot = 0, from = 0, to = 0;
  std::uint64_t to_linear = 0;      ///< Linear: to_idx after linearisation
  std::uint64_t linear = 0;         ///< Linear: linear_idx at the end
  std::uint64_t batch_commands = 0; ///< the posting CPU's own commands (from .. to)
  std::uint64_t ahead_commands = 0; ///< commands between the snapshot and from (other CPUs', not yet run)
  std::uint64_t waited_commands = 0;///< ahead + batch: what the wait had to see consumed
  std::uint64_t travelled_bytes = 0;///< bytes CREADR moved from the snapshot by the last read (ground truth)
  std::string linux_message;        ///< what Linux prints (pr_err) on a timeout, else ""
  std::string note;                 ///< model remarks (e.g. GITS_CBASER rewritten since the snapshot)
  std::uint64_t batch_bytes() const { return batch_commands * 32; }
  std::uint64_t ahead_bytes() const { return ahead_commands * 32; }
  std::uint64_t waited_bytes() const { return waited_commands * 32; }
  bool completed() const { return outcome == WaitOutcome::Completed; }
};

/// The predicate of one wait, fed one CREADR offset per read (pure).
class WaitPredicateState {
 public:
  WaitPredicateState(WaitPredicate predicate, const ItsWaitTicket& ticket, std::uint32_t queue_bytes = kLinuxItsQueueBytes);
  /// One loop iteration's read: true when its_wait_for_range_completion() would break out.
  bool poll(std::uint32_t creadr);
  std::uint64_t to_linear() const { return to_idx_; }
  std::uint64_t linear() const { return linear_idx_; }

 private:
  WaitPredicate predicate_;
  std::uint32_t queue_bytes_;
  std::uint64_t prev_idx_, to_idx_, linear_idx_;
  std::uint32_t from_, to_;
};

/// Runs the wait against `sys`: each read returns GITS_CREADR of ticket.its; between reads the ITS
/// executes up to `commands_per_poll` commands (when it is in ItsProcessing::Manual; an eager ITS has
/// already run what it can). Exact: when a read changes nothing and the ITS cannot progress, the
/// remaining reads are identical and are counted without being looped through.
ItsWaitResult wait_for_range_completion(GicSystem& sys, const ItsWaitTicket& ticket, WaitPredicate predicate,
                                        std::uint64_t commands_per_poll);

}  // namespace ipilab::gic
