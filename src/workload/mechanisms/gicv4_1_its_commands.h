// ipilab/workload/mechanisms/gicv4_1_its_commands.h — timed ITS command traffic of the gicv4.1-vsgi
// mechanism: KVM's host driver sending VMOVP, VSGI or INVDB (each with its VSYNC) and waiting for the
// ITS to complete it, as Linux's BUILD_SINGLE_CMD_FUNC does (drivers/irqchip/irq-gic-v3-its.c:
// its_send_single_vcommand -> its_allocate_entry, its_post_commands, its_wait_for_range_completion).
//
// What is sent, and where (the commands come from the src/gic driver model, LinuxItsDriver, on the
// mechanism's GIC: their bytes and queue offsets are the model's):
//   vmovp  vgic_v4_load -> irq_set_affinity -> its_vpe_set_affinity -> its_send_vmovp, when a vCPU's
//          thread runs on another pCPU than before: VMOVP + VSYNC to vmovp_targets() (one ITS, the
//          head of its_nodes, when every ITS has GITS_TYPER.VMOVP = 1), waited for on the pCPU the
//          thread moved to. The caller names that pCPU. Only the ITS side moves: the simulation keeps
//          the vCPU on its pinned pCPU, so use it where nothing routes through the moved vPE.
//   vsgi   the guest writes its redistributor's SGI frame (an SGI's priority or enable): the MMIO write
//          traps (gic.vgic_mmio_trap), KVM's vgic_update_vsgi / its_sgi_(un)mask_irq ->
//          its_configure_sgi: VSGI + VSYNC to find_4_1_its() of the vCPU's pCPU.
//   invdb  its_vpe_4_1_send_inv (the vPE's doorbell LPI masked or unmasked): INVDB + VSYNC to
//          find_4_1_its() of the pCPU. Who triggers it at which rate is the caller's.
//
// Timing of one batch (a command and its sync object) on ITS i, posted from pCPU c:
//   1. raw_spin_lock(&its->lock): granted in the order the operations began (a wait, not a cost key).
//   2. under the lock, per command slot: its_allocate_entry -> its_queue_full reads GITS_CREADR
//      (its.creadr_read, plus the host latency matrix's crossing there and back when c and the ITS
//      are on different nodes), then the command is written (its.command_write); with the linear
//      predicate (a050fa5476d4) GITS_CREADR is read once more (the snapshot rd_idx); GITS_CWRITER is
//      written (posted: its.cwriter_write + one crossing until the ITS sees it); unlock.
//   3. the ITS executes its queue in order, one command at a time (its.command_process each), each
//      batch once its CWRITER write has reached it.
//   4. its_wait_for_range_completion: read GITS_CREADR (as the ITS has it when the read is issued;
//      the CPU has the value its.creadr_read + crossings later) and feed it to the predicate
//      (gic/its_wait.h WaitPredicateState: linear, or the offsets one of before a050fa5476d4); not
//      done: udelay(1) (its.wait_udelay) and read again; after 1,000,000 reads Linux gives up ("ITS
//      queue timeout (...)" and "ITS cmd <builder> failed").
// So a wait includes the commands other CPUs posted ahead of it, and the offsets predicate keeps
// spinning when other CPUs' commands carried CREADR past the end of the queue before it looked,
// until CREADR comes back into its window a lap later or the reads run out.
//
// Each step is returned as a duration the caller spends out of the guest (Op::host_work), and the
// next step is asked for at the simulated time it begins: every GITS_CREADR read sees the ITS as all
// the other CPUs' traffic has left it by then. Operations on one ITS must be begun in time order (the
// core calls programs in time order). Several batches of one operation (VMOVP on an ITS without
// GITS_TYPER.VMOVP: one per ITS) are posted when the operation begins and waited for in turn.
// Counters (the run's): its_commands, its_batches, its_creadr_reads, its_wait_polls, its_lock_waits
// (batches that found the lock taken), its_waits_completed_early, its_waits_spun_after_completion
// (a read came after the batch ran and the predicate did not see it: the offsets predicate on a wrap),
// its_waits_timed_out, its_waits_timed_out_after_completion, vm_exits (vsgi traps).
// Resources (per ITS, reported by the core with its own: Mechanism::resources; restarted at the
// window's start with the counters: Mechanism::begin_window): its<N>.command_queue, kind
// its_command_queue: utilisation = the fraction of the window the ITS executes commands (step 3),
// wait = per batch, from its CWRITER write reaching the ITS to the ITS starting its first command,
// arrivals = batches; its<N>.lock, kind its_lock: utilisation = the fraction held (step 2), wait =
// per batch, for the lock (step 1). Both with sim::Resource's meaning (Little's law included),
// taken in as the simulated time passes each batch's times (the model knows them when it posts).
// Not modelled: a full queue (each CPU has at most one batch in flight, so the 2047
// free slots never run out while fewer than 1023 CPUs send), physical-LPI traffic of other devices.
#pragma once

#include <algorithm>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/enum_names.h"
#include "gic/its_wait.h"
#include "gic/linux_its.h"
#include "sim/resource.h"
#include "sim/rng.h"
#include "sim/time.h"
#include "topology/host.h"
#include "topology/vm.h"
#include "workload/mechanisms/arm_common.h"
#include "workload/plan.h"

namespace ipilab::workload {

enum class ItsCommandKind : std::uint8_t { Vmovp, Vsgi, Invdb };
inline constexpr EnumName<ItsCommandKind> kItsCommandKindNames[] = {
    {ItsCommandKind::Vsgi, "vsgi"}, {ItsCommandKind::Invdb, "invdb"}, {ItsCommandKind::Vmovp, "vmovp"}};
/// "vmovp", "vsgi", "invdb" (kItsCommandKindNames).
std::string_view its_command_kind_name(ItsCommandKind kind);

/// One host operation: guest CPU `cpu` (its vPE is vPE `cpu`) sends `kind`; `pcpu` is where the
/// driver runs (vmovp: the pCPU the thread moved to, which is also where the vPE goes; otherwise
/// the vCPU's pinned pCPU).
struct ItsOpRequest {
  unsigned cpu = 0;
  ItsCommandKind kind = ItsCommandKind::Vsgi;
  int pcpu = 0;
};

/// What one finished operation did.
struct ItsOpResult {
  sim::Ps start{}, end{};
  sim::Ps lock_wait{};         ///< waiting for its->lock, summed over the batches
  sim::Ps completion_wait{};   ///< from the unlock to the end of its_wait_for_range_completion, summed
  std::uint64_t batches = 0;
  std::uint64_t polls = 0;     ///< GITS_CREADR reads of the completion waits
  std::uint64_t ahead = 0;     ///< commands of other CPUs between the snapshot and the batch (linear)
  gic::WaitOutcome outcome = gic::WaitOutcome::Completed;  ///< the worst of its batches
  std::string linux_message;   ///< what Linux prints for the first wait that timed out, else ""
  bool nothing_sent = false;   ///< the driver issued no command (e.g. a VMOVP to the vPE's own CPU)
};

class ItsCommandModel {
 public:
  /// `gic` is the mechanism's (its driver is switched to deferred waits); `predicate` the driver's
  /// completion wait. Cost keys are priced on first use.
  ItsCommandModel(const topology::Host& host, const topology::Vm& vm, VmGic& gic, gic::Find41Policy policy,
                  gic::WaitPredicate predicate, Pricer& pricer);

  /// Starts an operation at `now` (the previous one of `req.cpu` must be finished); returns how long
  /// the CPU is busy before the next step (the trap, the lock, the posting).
  sim::Ps begin(const ItsOpRequest& req, sim::Ps now, sim::Rng& rng);
  /// The next step at `now`: its duration, or nullopt when the operation is finished (result()).
  std::optional<sim::Ps> next(unsigned cpu, sim::Ps now, sim::Rng& rng);
  const ItsOpResult& result(unsigned cpu) const;

  /// The measured window starts at `now` (the core's mark after the warm-up, where it also resets
  /// the counters above: Mechanism::begin_window); `now` >= every time the model was called at.
  void begin_window(sim::Ps now);
  /// Per ITS, its command queue and its->lock over [the window's start, `end`] (`end` >= every time
  /// the model was called at); the core reports those with arrivals (see the file comment).
  std::vector<MechanismResource> resources(sim::Ps end) const;

  /// The ITSs an operation of `kind` issued on `pcpu` goes to (for settings).
  std::vector<int> targets(ItsCommandKind kind, int pcpu) const;
  gic::WaitPredicate predicate() const { return predicate_; }

 private:
  // The figures of one shared thing (an ITS's lock or command queue) whose items' times are all
  // known when they are posted (arrival <= start <= end, arrival >= the time of posting): each item
  // enters the figures when the simulated time passes its arrival and leaves when it passes its
  // end, in time order, with sim::Resource's definitions (utilisation, waits start - arrival of the
  // window's arrivals in a sim::WaitLog at the core's 1 ns, Little's law from the area under n(t)
  // against the clipped sojourns plus the carried-in share). Busy time is clipped to the window at
  // both ends, that of items carried in included.
  class Books {
   public:
    void add(sim::Ps arrival, sim::Ps start, sim::Ps end);
    /// Takes in every arrival and end before `t` (the model was called at `t`).
    void advance(sim::Ps t) {
      if (next_ < t) take(t, false);
      else horizon_ = std::max(horizon_, t);
    }
    void reset(sim::Ps now);
    sim::ResourceStats stats(sim::Ps end) const;

   private:
    struct Item {
      sim::Ps arrival, start, end;
      bool arrived = false;
    };
    void take(sim::Ps t, bool inclusive);  // events at < t (inclusive: <= t), in time order
    std::vector<Item> live_;               // not yet ended
    sim::Ps next_ = sim::kNever;           // the earliest event of live_
    sim::Ps horizon_{};                    // events before it are taken in
    sim::Area area_;
    sim::Ps window_start_{}, total_wait_{}, max_wait_{};
    std::uint64_t arrivals_ = 0;
    double busy_ = 0, sojourn_ = 0, carried_ = 0;  // ps, of the items that ended
    sim::WaitLog waits_{1000};
  };
  struct Timeline {                 // one ITS: its lock, its command processor, CREADR over time
    sim::Ps lock_free{};
    sim::Ps busy_until{};
    std::uint32_t base = 0;         // queue offset of the first timed command
    std::uint64_t posted = 0;       // timed commands posted
    std::uint64_t folded = 0;       // commands done before the pruning horizon
    std::deque<sim::Ps> done;       // completion times of the others (non-decreasing)
    Books lock, queue;              // its->lock held; the command processor executing a batch
  };
  struct Batch {
    gic::ItsWaitTicket ticket;
    std::uint64_t end_seq = 0;      // timeline index after its last command
    sim::Ps release{};              // unlock (the wait starts here)
    int pcpu = 0;
  };
  struct Active {
    bool busy = false, finishing = false;
    std::vector<Batch> batches;
    std::size_t current = 0;
    std::optional<gic::WaitPredicateState> pred;
    std::uint64_t polls = 0;        // of the current batch
    bool missed = false;            // a read saw the batch done and the predicate said no
    ItsOpResult result;
  };

  Timeline& timeline(int its);
  /// Commands of `its` the ITS has completed by `t` (t >= every earlier pruning horizon).
  std::uint64_t consumed(int its, sim::Ps t);
  std::uint32_t creadr(int its, sim::Ps t);
  void prune(sim::Ps now);
  /// One GITS_CREADR read from `pcpu` of ITS `its`: its sampled duration (breakdown row `read`).
  sim::Ps read(int pcpu, int its, const PlanStep& what, sim::Rng& rng);
  sim::Ps crossing(int from_node, int to_node, sim::Rng& rng);
  Batch post(const gic::ItsWaitTicket& t, int pcpu, sim::Ps arrive, sim::Rng& rng, ItsOpResult& r);
  void count(std::string_view name, std::uint64_t n = 1);

  const topology::Host* host_;
  VmGic* gic_;
  gic::Find41Policy policy_;
  gic::WaitPredicate predicate_;
  Pricer* pricer_;
  std::vector<Timeline> its_;
  std::vector<Active> ops_;        // by guest CPU
  std::vector<std::uint8_t> priority_;  // vsgi: the priority each vPE's SGI has now (alternates)
  std::optional<PlanStep> trap_, alloc_read_, snap_read_, poll_read_, write_, cwriter_, udelay_;
  std::vector<PlanStep> process_;  // by ITS
  int steps_ready_ = 0;
};

/// A mechanism that can send ITS commands (gicv4.1-vsgi); workloads find it by dynamic_cast.
class ItsCommandHost {
 public:
  virtual ~ItsCommandHost() = default;
  virtual ItsCommandModel& its_commands() = 0;
};

}  // namespace ipilab::workload
