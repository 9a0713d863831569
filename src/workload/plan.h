// ipilab/workload/plan.h — a send turned into priced steps: what the simulator executes.
//
// The models (src/hv, src/x86, src/gic) say *what* a send does (hypercalls, ICR writes, the ITS it
// writes, the work it did); a mechanism (mechanism.h) turns that into a SendPlan: the sender's steps
// in order (the send hook from entry to return), and for each interrupt that goes out, after which
// sender step it leaves and the steps it crosses before it is pending at its target (interconnect,
// ITS, redistributor). Each step prices one profile cost key times a count; its duration is sampled
// per occurrence (Jitter: mean and spread from the profile) and multiplied by the count, so a
// repeated primitive (128 cpumask words) costs count x one sample, not a sum of 128 samples.
// Interconnect steps are priced from the host's latency matrix (topology::Host::hop_ns), not from
// the profile: their label says so.
//
// Every step carries a breakdown label "<who>: <what> [<cost key>]"; a figure the simulator reports
// is therefore always a sum of such steps, never a stored total.
//
// Lanes say who is busy while a step runs, hence what queues (vm_run.h):
//   Guest     the sending vCPU's guest code inside the send hook (interrupts off)
//   Exit      the hypervisor on the sender's physical CPU during a VM exit: queues on the
//             `pcpu<N>.hypervisor` resource of that CPU
//   Wire      a pure latency (a posted write or a message in flight): nothing is busy
//   ItsPort   the GITS_SGIR port of ITS `its`: every sender writing that ITS queues on it
//   TargetHv  the hypervisor on the TARGET's physical CPU (waking a halted vCPU, handling a kick)
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <initializer_list>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "cost/catalog.h"
#include "cost/profile.h"
#include "sim/breakdown.h"
#include "sim/rng.h"

namespace ipilab::workload {

enum class Lane : std::uint8_t { Guest, Exit, Wire, ItsPort, TargetHv };

/// A priced step: a plain value (copied into plans and caches without touching the distribution's
/// tables). Its distribution belongs to the Pricer that priced it, which outlives the run's plans.
struct PlanStep {
  sim::Breakdown::StepId id = 0;          ///< breakdown row
  /// A sender step that only happens when guest CPU `if_blocked`'s vCPU thread is blocked at the
  /// send (KVM's kvm_vcpu_kick wakes a thread only if it sleeps; one inside halt-polling needs no
  /// wake-up): the core skips it, drawing nothing, otherwise. -1: always taken.
  std::int32_t if_blocked = -1;
  const sim::Jitter* jitter = nullptr;    ///< one occurrence of the cost key (owned by the Pricer); nullptr: 0 ps
  std::uint32_t count = 1;                ///< occurrences (the duration is count x one sample)
  Lane lane = Lane::Guest;
  std::int32_t its = -1;                  ///< Lane::ItsPort: which ITS (firmware index)
  sim::Ps mean() const { return jitter ? jitter->mean() * count : sim::Ps{}; }
  /// One sampled duration (count x one sample).
  sim::Ps sample(sim::Rng& rng) const { return jitter ? jitter->sample(rng) * count : sim::Ps{}; }
};

/// The steps of one delivery in flight (none or one on x86, up to six on GICv4.1), kept inline up to
/// kInline so that a plan's deliveries cost no allocation each; a longer path moves to the heap.
class StepPath {
 public:
  static constexpr std::uint32_t kInline = 2;
  void push_back(const PlanStep& s) {
    if (n_ < kInline) {
      inline_[n_] = s;
    } else {
      if (n_ == kInline) spill_.assign(inline_.begin(), inline_.end());
      spill_.push_back(s);
    }
    ++n_;
  }
  std::size_t size() const noexcept { return n_; }
  bool empty() const noexcept { return n_ == 0; }
  const PlanStep* begin() const noexcept { return n_ <= kInline ? inline_.data() : spill_.data(); }
  const PlanStep* end() const noexcept { return begin() + n_; }
  const PlanStep& operator[](std::size_t i) const noexcept { return begin()[i]; }

 private:
  std::array<PlanStep, kInline> inline_{};
  std::vector<PlanStep> spill_;  // every step, once there are more than kInline
  std::uint32_t n_ = 0;
};

/// A counter of a run, interned by name once (counters are added in the hot path by id).
using CounterId = std::uint32_t;

class Counters {
 public:
  /// The id of counter `name`, a catalogued one (workload/counters.h): std::logic_error otherwise.
  CounterId id(std::string_view name);
  void add(CounterId id, std::uint64_t n) { values_[id] += n; }
  std::uint64_t value(std::string_view name) const;
  /// Name -> value, sorted by name (zero values included).
  std::map<std::string, std::uint64_t> to_map() const;
  void reset();

 private:
  struct Hash {  // lookups by string_view without building a std::string
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
  };
  std::vector<std::string> names_;
  std::vector<std::uint64_t> values_;
  std::unordered_map<std::string, CounterId, Hash, std::equal_to<>> index_;
};

/// One interrupt that leaves the sender.
struct PlannedDelivery {
  int target_cpu = -1;                ///< guest CPU that receives it
  std::uint32_t after_sender_step = 0;///< it leaves when sender step [after_sender_step] completes
  StepPath path;                      ///< steps in flight before it is pending at the target
  bool intended = true;               ///< false: this CPU was not asked for (misdelivered)
};

/// An intended target that receives nothing, and why (the model's verdict in words).
struct LostTarget {
  int cpu = -1;
  std::string reason;
};

/// A send, priced. Deterministic for a given (model config, sender, targets), so cached per run.
struct SendPlan {
  std::vector<PlanStep> sender;
  std::vector<PlannedDelivery> deliveries;
  std::vector<LostTarget> lost;
  /// Per send: "hypercalls", "hypercalls.<name>", "native_fallbacks", "icr_writes", "vm_exits", ...
  std::vector<std::pair<CounterId, std::uint64_t>> counters;
  std::vector<std::string> notes;     ///< e.g. the oracle's verdict in words (shown once per run)
  /// AVIC: the sender's steps when a write it issued (a sender step with deliveries) finds a target
  /// not running (its thread blocked or preempted): the core runs them after that step, once per
  /// such write, adds not_running_counters, and launches the write's deliveries after them. Empty:
  /// the target's state never changes the sender's path.
  std::vector<PlanStep> not_running;
  std::vector<std::pair<CounterId, std::uint64_t>> not_running_counters;
  /// Expected duration of the sender steps (without spread), for reports and tests.
  sim::Ps sender_mean() const;
  /// Mean time from the start of the send until delivery `i` is pending at its target.
  sim::Ps arrival_mean(std::size_t i) const;
};

/// Turns profile cost keys into plan steps, keeps the breakdown labels and the run's counters;
/// one per run, alive as long as the steps it priced. Steps are cached by (who, what, key, lane, its), so planning a send again costs a
/// hash lookup per step, not a label format; in front of that cache a small direct-mapped one,
/// indexed by where the strings are and checked against their contents, answers the calls that
/// repeat in every plan without building the string key.
class Pricer {
 public:
  Pricer(const cost::Profile& profile, sim::Breakdown& breakdown, Counters& counters)
      : profile_(&profile), breakdown_(&breakdown), counters_(&counters) {}
  Pricer(const Pricer&) = delete;  // its steps point into it
  Pricer& operator=(const Pricer&) = delete;

  /// A step of `count` x cost `key` on `lane`, labelled "<who>: <what> [key]". Throws InputError
  /// (naming the profile file and key) when the profile lacks the key.
  PlanStep step(std::string_view who, std::string_view what, cost::CostKey key, std::uint32_t count = 1,
                Lane lane = Lane::Guest, int its = -1);
  /// A fixed-duration step priced from the host (not the profile), e.g. an interconnect crossing:
  /// labelled "<who>: <what> [<source>]".
  PlanStep fixed(std::string_view who, std::string_view what, std::string_view source, sim::Ps duration,
                 Lane lane = Lane::Wire);
  /// The cost's mean (recorded as used).
  sim::Ps mean(cost::CostKey key);
  /// The cost of `key`, recorded as used: a cost the run prices outside a plan step (e.g. a
  /// line transfer it takes from the profile).
  const cost::Cost& use(cost::CostKey key);
  /// The costs this run priced with so far (step(), mean(), use()): the run's provenance.
  const cost::UsedCosts& used() const noexcept { return used_; }
  /// Makes the run's provenance exactly `keys`: for a workload whose bound mechanism priced steps
  /// that the run never takes.
  void only_used(std::initializer_list<cost::CostKey> keys);
  CounterId counter(std::string_view name) { return counters_->id(name); }
  const cost::Profile& profile() const noexcept { return *profile_; }
  sim::Breakdown& breakdown() const noexcept { return *breakdown_; }
  Counters& counters() const noexcept { return *counters_; }

 private:
  struct Recent {  // a step() or fixed() call seen before: its arguments (copied) and its step
    bool used = false;
    Lane lane = Lane::Guest;
    int its = -1;
    std::int64_t duration = -1;  // fixed(): the duration; step(): -1
    std::string who, what, source;
    PlanStep step;
  };
  static constexpr std::size_t kRecent = 128;
  static std::size_t recent_slot(std::string_view who, std::string_view what, std::string_view source, int lane,
                                 std::int64_t extra) noexcept;
  const cost::Profile* profile_;
  sim::Breakdown* breakdown_;
  Counters* counters_;
  cost::UsedCosts used_;
  std::unordered_map<std::string, PlanStep> cache_;
  std::deque<sim::Jitter> jitters_;  // the steps' distributions (a deque: their addresses never change)
  std::string scratch_;
  std::vector<Recent> recent_ = std::vector<Recent>(kRecent);
};

/// Adds `n` to counter `name` in a plan (merging with an entry already there).
void add_counter(SendPlan& plan, Pricer& pricer, std::string_view name, std::uint64_t n = 1);

}  // namespace ipilab::workload
