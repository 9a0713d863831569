// ipilab/workload/plan.h — a send turned into priced steps: what the simulator schedules.
//
// The models (src/hv, src/x86, src/gic) say *what* a send does (hypercalls, ICR writes, the ITS it
// writes, the work it did); a send path (send_path.h) turns that into a SendPlan: the sender's steps
// in order (the send hook from entry to return), and for each interrupt that goes out, after which
// sender step it leaves and the steps it crosses before it is pending at its target (ITS, RD hop).
// Each step prices one profile cost key times a count; its duration is sampled per occurrence
// (Jitter: mean and relative spread from the profile) and multiplied by the count, so a repeated
// primitive (128 cpumask words) costs count x one sample, not a sum of 128 independent samples.
//
// Every step carries a breakdown label "<who>: <what> [<cost key> x<count>]"; a figure the simulator
// reports is therefore always a sum of such steps, never a stored total.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cost/profile.h"
#include "sim/breakdown.h"
#include "sim/resource.h"
#include "sim/rng.h"

namespace ipilab::workload {

/// Where a step's time is spent: who is busy (and thus what queues) while it runs.
enum class Lane : std::uint8_t {
  Sender,   ///< the sending vCPU (guest code, or the hypervisor running on its behalf during an exit)
  Wire,     ///< a pure latency (an MMIO write or message in flight): nothing is busy
  ItsPort,  ///< the ITS's GITS_SGIR / command port (PlanStep::its says which): serialises senders
  Target,   ///< the receiving vCPU
};

struct PlanStep {
  sim::Breakdown::StepId id = 0;  ///< breakdown row
  sim::Jitter jitter;             ///< one occurrence of the cost key
  std::uint32_t count = 1;        ///< occurrences (the duration is count x one sample)
  Lane lane = Lane::Sender;
  int its = -1;                   ///< Lane::ItsPort: which ITS
  sim::Ps mean() const { return jitter.mean() * count; }
};

/// One interrupt that leaves the sender.
struct PlannedDelivery {
  int target_cpu = -1;             ///< guest CPU that receives it
  std::size_t after_sender_step = 0;  ///< it leaves when sender step [after_sender_step] completes
  std::vector<PlanStep> path;      ///< steps in flight (Wire / ItsPort) before it is pending at the target
  bool intended = true;            ///< false: this CPU was not asked for (misdelivered)
};

/// A send, priced. Deterministic for a given (model config, sender, targets), so built once per run.
struct SendPlan {
  std::vector<PlanStep> sender;
  std::vector<PlannedDelivery> deliveries;
  std::vector<int> lost;           ///< intended targets that receive nothing (oracle)
  /// Per send: "hypercalls", "hypercalls.<name>", "native_fallbacks", "icr_writes", "vm_exits", ...
  std::map<std::string, std::uint64_t> counters;
  std::vector<std::string> notes;  ///< e.g. the oracle's verdict in words
  /// Expected duration of the sender steps (without spread), for reports and tests.
  sim::Ps sender_mean() const;
  /// Mean time from the start of the send until delivery `i` is pending at its target.
  sim::Ps arrival_mean(std::size_t i) const;
};

/// Turns profile cost keys into plan steps and keeps the breakdown labels; one per run.
class Pricer {
 public:
  Pricer(const cost::Profile& profile, sim::Breakdown& breakdown) : profile_(&profile), breakdown_(&breakdown) {}

  /// A step of `count` x cost `key` on `lane`, labelled "<who>: <what> [key xN]". Throws InputError
  /// (naming the profile file and key) when the profile lacks the key.
  PlanStep step(std::string_view who, std::string_view what, std::string_view key, std::uint32_t count = 1,
                Lane lane = Lane::Sender, int its = -1) const;
  /// The cost's mean (marks it used for provenance).
  sim::Ps mean(std::string_view key) const;
  const cost::Profile& profile() const noexcept { return *profile_; }
  sim::Breakdown& breakdown() const noexcept { return *breakdown_; }

 private:
  const cost::Profile* profile_;
  sim::Breakdown* breakdown_;
};

/// Runs `steps` back to back on one timeline starting at `t`, sampling each and adding it to the
/// breakdown; Lane::ItsPort steps queue on `its_ports[its]`. Returns the end time.
sim::Ps run_steps(const std::vector<PlanStep>& steps, sim::Ps t, sim::Rng& rng, sim::Breakdown& breakdown,
                  std::vector<sim::Resource>* its_ports = nullptr);
/// One step's sampled duration (count x one sample).
inline sim::Ps sample(const PlanStep& s, sim::Rng& rng) { return s.jitter.sample(rng) * s.count; }

}  // namespace ipilab::workload
