// ipilab/scenario/timeline.h — the simulated timeline of `ipilab run` / `ipilab replay`
// (--perfetto FILE.json, --events FILE.csv|.jsonl, --timeline-limit N), in the vocabulary of
// `ipilab trace --perfetto` / `--events` on a real trace, so that the two can be looked at side by side.
//
// One observer per variant (workload::Observer, attached through RunSpec::observer; without the
// options nothing is attached and the run pays nothing) records a window of the run:
//   run:    the first N measured iterations (after the warm-up: the iterations the table summarises),
//           from the mark that opens the measured window to the N-th mark after it;
//   replay: the first N replayed sends, from the start.
// An IPI belongs to the window when its send does; its handler is drawn even when it runs after the
// window closed (so that its arrow has an end); handlers that run in the window for IPIs sent before
// it are drawn without an arrow.
//
// Perfetto / Chrome trace-event JSON (trace/timeline.h writes it): one process (pid) per variant,
// named "<command> <scenario> — <variant> (simulated: iterations 1-N ...)" for run and "simulated
// (mechanism M) — <scenario> / <variant> (sends 1-N of T)" for replay (whose recorded group,
// replay.h, sits above them on the trace's clock); in it one thread per vCPU named
// "CPU <n>" (the guest's CPU number, as a guest trace's CPUs) and one per shared resource the window
// used, named as in the run's resource table ("pcpu<N>.hypervisor", "its<N>.sgir"). Categories are
// those of the trace's timeline, plus the simulator's own:
//   send          a send hook on its sender, start -> return ("send <kind> -> CPU <list>"), with
//   send-step     its priced steps nested in it (the breakdown labels), exit handling included
//   ipi           a flow arrow from the send to the handler entry that served it, one per IPI
//                 delivered; "ipi,coalesced" when the IPI merged into one already pending (its
//                 vector's IRR / SGI pending bit was set: the earlier one's handler serves both)
//   irq           interrupt entry on the target (taken -> first handler instruction)
//   handler       "<kind> handler", first handler instruction -> done (EOI and irq exit included);
//                 "handler,misdelivered" for an interrupt nobody sent this CPU
//   call,coalesced     a marker on the sender where a CSD found the target's queue busy: no IPI
//                      of its own, the marker names the IPI that served it
//   call,polling-idle  a marker on the sender where the target polled in idle (no IPI at all), and
//                      the flush from the idle loop on the target
//   ipi,lost      a marker on the sender for an IPI the mechanism lost (with the model's reason)
//   iteration     a marker on the vCPU whose program starts an iteration
//   resource      a step on a shared resource's track (its queueing in args)
// Kinds are the trace's names (call-function-single, call-function, reschedule, irq-work), from
// the vector and the mechanism's architecture.
//
// --events: the trace's columns (trace/export.h), one row per IPI ("ipi") and per queued CSD or wake
// entry ("call"); `buffer` holds the variant's name; times in ns with ps decimals, from the start of
// the simulated run. ipi rows: served raised | coalesced | pending (still in flight when the run
// stopped); call rows: served ipi | coalesced | polling-idle | lost | pending, arrival_ns = the entry
// of the handler (or idle-loop flush) that ran the queue, handler_ns = that handler's entry -> done.
//
// Memory: the window's events (bounded by N; at most kMaxTimelineEvents per variant, beyond which
// the timeline is cut and says so) and the IPIs in flight. Outputs are written with
// write_file_atomically when every variant ran (a device or a pipe is written straight through).
#pragma once

#include "common/output.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "workload/workload.h"

namespace ipilab::scenario {

inline constexpr std::uint64_t kDefaultTimelineIterations = 100;  ///< run: --timeline-limit default
inline constexpr std::uint64_t kDefaultTimelineSends = 1000;      ///< replay: --timeline-limit default
inline constexpr std::uint64_t kMaxTimelineEvents = 500'000;      ///< per variant

struct TimelineOptions {
  std::string perfetto;     ///< --perfetto FILE.json ("" = none)
  std::string events;       ///< --events FILE.csv | FILE.jsonl ("" = none)
  std::uint64_t limit = 0;  ///< --timeline-limit (0 = the default of the unit)
  bool any() const { return !perfetto.empty() || !events.empty(); }
};

/// Checks the options before anything runs: the file names' extensions and that a limit comes with
/// an output. Throws InputError naming the option. The paths themselves are checked with the
/// command's other outputs (output_requests(), output::check_outputs).
void check_timeline_options(const TimelineOptions& options);
/// The outputs of `options` for output::check_outputs.
std::vector<output::OutputRequest> output_requests(const TimelineOptions& options);

class SimTimeline {
 public:
  enum class Unit : std::uint8_t { Iterations, Sends };
  /// `command`: "ipilab run" / "ipilab replay TRACE", for the process names.
  SimTimeline(TimelineOptions options, Unit unit, std::string command);
  ~SimTimeline();
  SimTimeline(const SimTimeline&) = delete;
  SimTimeline& operator=(const SimTimeline&) = delete;

  bool wanted() const { return options_.any(); }
  std::uint64_t limit() const { return limit_; }
  /// Where simulated time 0 is on another clock (replay: the trace's first send, trace clock ns):
  /// added to the --perfetto timestamps of the variants observed from now on, so that the simulated
  /// groups line up with the recorded one. --events keeps times from the start of the run.
  void set_origin_ns(std::uint64_t ns) { origin_ns_ = ns; }
  /// A timeline fragment (trace/timeline.h join_fragments) put before the variants' in --perfetto,
  /// e.g. the recorded trace a replay re-issues; `what` describes it in write()'s line.
  void add_leading_fragment(std::string fragment, std::string what) {
    leading_.push_back(std::move(fragment));
    leading_what_.push_back(std::move(what));
  }

  /// The observer of one variant: sets spec.observer (nothing when !wanted()). `scenario` and
  /// `variant` name its process; `default_mechanism` is the workload's (for the architecture).
  /// The observer lives as long as this SimTimeline.
  void observe(workload::RunSpec& spec, const std::string& scenario, const std::string& variant,
               std::string_view default_mechanism);

  /// After every observed run: writes the outputs into `outs` (committed by the caller with the
  /// command's other outputs) and returns a line for the user naming them, the window and the
  /// flow count ("" when !wanted()).
  std::string write(output::OutputSet& outs);
  /// The same, committing the outputs at once.
  std::string write();

  // Totals over the variants (after their runs).
  std::uint64_t flows() const;  ///< arrows send -> arrival (one per IPI of a window that reached a handler)
  std::uint64_t rows() const;   ///< --events rows

 private:
  class Variant;
  TimelineOptions options_;
  Unit unit_;
  std::string command_;
  std::uint64_t limit_;
  std::uint64_t origin_ns_ = 0;
  std::vector<std::string> leading_, leading_what_;
  std::vector<std::unique_ptr<Variant>> variants_;
};

}  // namespace ipilab::scenario
