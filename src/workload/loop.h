// ipilab/workload/loop.h — the shared discrete-event driver of the IPI loops: one sender sends to one
// or more targets, the targets take the interrupt (waking from HLT or being interrupted while
// running), run a handler, acknowledge through a shared cache line, and the sender waits for every
// acknowledgement before the next iteration (or, for `kick`, does not wait).
//
// Events per iteration: one per interrupt arrival and one per acknowledgement seen by the sender;
// everything inside an event is computed from priced steps (plan.h). Targets are stateful across
// iterations: a target still busy (handler tail, going back to HLT) when the next interrupt arrives
// takes it when it is free, and one that reached HLT pays vcpu.halt_wakeup — so back-to-back sends,
// halt/wake and queueing emerge rather than being assumed.
//
// Cache-line transfers (the CSD or flag written by one vCPU and read by the other) are priced from the
// host's latency matrix (topology::Host::c2c between the two vCPUs' pCPUs), whose source is added to
// the provenance.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "workload/plan.h"
#include "workload/send_path.h"
#include "workload/workload.h"

namespace ipilab::workload {

struct LoopSpec {
  std::string main_metric = "cycles_per_iteration";
  std::string main_description;
  std::string unit = "cycles";          ///< "cycles" (profile clock) or "ns"
  unsigned sender = 0;
  std::vector<unsigned> targets;        ///< intended targets
  bool wait_for_ack = true;             ///< false: kick (the sender does not wait)
  /// Sender steps before the send (loop overhead, CSD queueing).
  std::vector<PlanStep> before_send;
  /// The send, planned once (deterministic).
  SendPlan plan;
  /// Cost keys on interrupt arrival: target halted / target running (empty = free).
  std::string wake_key = "vcpu.halt_wakeup";
  std::string inject_key = "apic.interrupt_injection";
  /// Target steps up to the acknowledgement (irq entry, callback, csd_unlock...), and whether the
  /// handler first reads a line the sender wrote (CSD): one c2c transfer sender -> target.
  std::vector<PlanStep> handler_before_ack;
  bool handler_reads_sender_line = true;
  /// Target steps after the acknowledgement (EOI, irq exit).
  std::vector<PlanStep> handler_after_ack;
  /// Steps a halted-idle target spends going back to HLT after the handler (empty: stays running).
  std::vector<PlanStep> back_to_idle;
  /// Handler steps of a CPU that gets an interrupt it was not meant to (misdelivered).
  std::vector<PlanStep> stray_handler;
  /// kick: sender idle time between sends (ps), and the metric is send start -> handler entry.
  sim::Ps think_time{};
  std::string settings_note;
};

/// Runs spec.warmup + spec.iterations iterations of `loop` and reports: the main metric (iteration
/// time, or for kick the wake latency), "send_cost" (time inside the send hook), "delivery_latency"
/// (send start -> first handler instruction of the last intended target), counters (per-send plan
/// counters x sends; lost/misdelivered), breakdown per iteration, provenance.
RunResult run_loop(const RunSpec& spec, const LoopSpec& loop, sim::Breakdown& breakdown,
                   std::vector<std::pair<std::string, std::string>> settings);

/// The tail every guest interrupt handler runs after its work: EOI, then interrupt exit (Target lane).
std::vector<PlanStep> interrupt_tail(const Pricer& pricer);
/// What a CPU pays for an interrupt it was not meant to get: entry, nothing to do, EOI, exit.
std::vector<PlanStep> stray_handler(const Pricer& pricer);

/// The step list of keys for a handler, all on the Target lane: {who, what, key}.
std::vector<PlanStep> target_steps(const Pricer& pricer,
                                   const std::vector<std::array<std::string_view, 3>>& steps);

}  // namespace ipilab::workload
