// The forms of trace that other people's machines produce and trace-cmd reads whole: ftrace's own
// events in a trace.dat (print, bprint, function, kernel_stack, an id without a format), a -T
// (stacktrace) recording, a terminal paste of `trace-cmd report`, a guest with a CPU offline, sends
// with an empty cpumask, a multi-target call-function IPI — each with its exact counts, and every
// kind's row balanced.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>

#include "common/error.h"
#include "hand_dat.h"
#include "test_util.h"
#include "trace/analysis.h"
#include "trace/report.h"

namespace ipilab::trace {
namespace {

using testing::HandDat;
using testing::TempDir;

// sends = raised + coalesced + unmatched; arrivals = raised + unmatched arrivals, for every kind.
void expect_balanced(const IpiAnalysis& a) {
  std::uint64_t sends = 0, arrivals = 0;
  for (int k = 0; k < kIpiKindCount; ++k) {
    const KindStats& s = a.by_kind()[static_cast<std::size_t>(k)];
    EXPECT_EQ(s.sends, s.raised + s.coalesced + s.unmatched_sends) << kind_name(static_cast<IpiKind>(k));
    EXPECT_EQ(s.matched, s.raised + s.coalesced) << kind_name(static_cast<IpiKind>(k));
    EXPECT_EQ(s.arrivals, s.raised + s.unmatched_arrivals) << kind_name(static_cast<IpiKind>(k));
    sends += s.sends;
    arrivals += s.arrivals;
  }
  EXPECT_EQ(sends, a.ipis_sent());
  EXPECT_EQ(arrivals, a.arrivals());
}

const KindStats& kind(const IpiAnalysis& a, IpiKind k) { return a.by_kind()[static_cast<std::size_t>(k)]; }

// Counts the events of `trace-cmd report FILE` by name (the word before the fields).
std::map<std::string, int> trace_cmd_counts(const std::filesystem::path& dat) {
  std::map<std::string, int> n;
  const std::string cmd = "trace-cmd report '" + dat.string() + "' 2>/dev/null";
  std::FILE* p = ::popen(cmd.c_str(), "r");
  if (!p) return n;
  char line[4096];
  while (std::fgets(line, sizeof line, p)) {
    const std::string_view l(line);
    // "<comm>-<pid> [cpu] <ts>: <event>: ..." — the event follows the timestamp's ": ".
    const auto ts = l.find("]");
    if (ts == std::string_view::npos) continue;
    const auto colon = l.find(": ", ts);
    if (colon == std::string_view::npos) continue;
    auto start = colon + 2;
    while (start < l.size() && l[start] == ' ') ++start;
    const auto end = l.find(':', start);
    if (end == std::string_view::npos) continue;
    ++n[std::string(l.substr(start, end - start))];
  }
  ::pclose(p);
  return n;
}

// A hand-made trace.dat with ftrace's own events among IPI events (formats of Linux 6.18).
std::filesystem::path hand_ftrace_dat(const TempDir& d) {
  using namespace testing;
  HandDat h(3);
  // CPU 0 sends one call-function IPI to CPUs 1 and 2 (smp_call_function_many_cond traces the mask
  // with the single-function handler as callback), and one ipi_send_cpumask with an empty mask.
  h.print(0, 1'000'000, "phase one");
  h.ipi_send_cpumask(0, 1'000'100, 0b110, kSymManyCond + 0x1a0, kSymCfsHandler);
  h.kernel_stack(0, 1'000'101, {kSymManyCond + 0x1a0, kSymResched});
  h.ipi_send_cpumask(0, 1'000'200, 0, kSymManyCond + 0x1a0, kSymCfsHandler);
  h.bprint(0, 1'000'300, 7);
  h.function(0, 1'000'400, kSymResched, kSymManyCond);
  h.add(0, 1'000'500, 999, std::string(8, '\0'));  // an id whose format the file does not carry
  h.print(0, 1'005'000, "phase two");
  h.vector(1, 1'002'000, 153, 252);  // call_function_entry
  h.vector(1, 1'002'500, 152, 252);
  h.vector(2, 1'003'000, 153, 252);
  h.vector(2, 1'003'600, 152, 252);
  const auto path = d.path / "ftrace-events.dat";
  h.write(path);
  // IPILAB_KEEP_FIXTURE=DIR keeps a copy, to open it with trace-cmd or KernelShark.
  if (const char* keep = std::getenv("IPILAB_KEEP_FIXTURE"))
    std::filesystem::copy_file(path, std::filesystem::path(keep) / path.filename(),
                               std::filesystem::copy_options::overwrite_existing);
  return path;
}

TEST(FtraceEvents, TraceDatWithPrintBprintFunctionKernelStackAndAnIdWithoutFormat) {
  TempDir d;
  const auto path = hand_ftrace_dat(d);
  TraceAnalysis t;
  const ReadInfo info = analyse_trace(path, t);
  ASSERT_EQ(t.buffers().size(), 1u);
  const IpiAnalysis& a = *t.buffers()[0].second;
  EXPECT_EQ(a.ipis_sent(), 2u);
  EXPECT_EQ(a.empty_sends(), 1u);
  EXPECT_EQ(a.markers(), 2u);
  EXPECT_EQ(a.matched(), 2u);
  EXPECT_EQ(a.unmatched_sends(), 0u);
  EXPECT_EQ(a.unmatched_arrivals(), 0u);
  const KindStats& cf = kind(a, IpiKind::CallFunction);
  EXPECT_EQ(cf.sends, 2u);
  EXPECT_EQ(cf.arrivals, 2u);
  EXPECT_EQ(cf.raised, 2u);
  EXPECT_EQ(cf.latency.min(), 1'900);  // CPU 1: 1'002'000 - 1'000'100
  EXPECT_EQ(cf.latency.max(), 2'900);
  EXPECT_EQ(kind(a, IpiKind::CallFunctionSingle).sends, 0u);
  const std::map<std::string, std::uint64_t> skipped{
      {"bprint", 1}, {"function", 1}, {"kernel_stack", 1}, {"event id 999 (no format)", 1}};
  EXPECT_EQ(a.skipped_event_counts(), skipped);
  EXPECT_EQ(a.events_total(), 12u);
  ASSERT_EQ(info.warnings.size(), 1u);
  EXPECT_EQ(info.warnings[0].count, 1u);
  EXPECT_EQ(info.warnings[0].first_value, "id 999");
  EXPECT_NE(info.warnings[0].first_place.find("CPU 0 record at data offset"), std::string::npos);
  expect_balanced(a);
  // The text report names every skipped event and the markers.
  const std::string text = report_text(t, info, "f.dat");
  EXPECT_NE(text.find("events skipped bprint 1, event id 999 (no format) 1, function 1, kernel_stack 1"), std::string::npos)
      << text;
  EXPECT_NE(text.find("markers        2"), std::string::npos);
  EXPECT_NE(text.find("empty sends    1"), std::string::npos);
  // The JSON has every count, zeros included.
  const auto j = report_json(t, info, "f.dat");
  EXPECT_EQ(j["events_skipped"]["kernel_stack"], 1);
  EXPECT_EQ(j["summary"]["empty_sends"], 1);
  EXPECT_EQ(j["by_kind"]["reschedule"]["sends"], 0);
  EXPECT_EQ(j["by_kind"]["call-function"]["raised"], 2);
}

TEST(FtraceEvents, TraceCmdReadsTheHandMadeFileAlike) {
  if (!testing::have_program("trace-cmd")) GTEST_SKIP() << "trace-cmd is not installed";
  TempDir d;
  const auto n = trace_cmd_counts(hand_ftrace_dat(d));
  EXPECT_EQ(n.at("ipi_send_cpumask"), 2);
  EXPECT_EQ(n.at("call_function_entry"), 2);
  EXPECT_EQ(n.at("call_function_exit"), 2);
  EXPECT_EQ(n.at("print"), 2);
  EXPECT_EQ(n.at("bprint"), 1);
  EXPECT_EQ(n.at("function"), 1);
  EXPECT_EQ(n.at("kernel_stack"), 1);
}

std::filesystem::path forms(const char* name) {
  return std::filesystem::path(IPILAB_SOURCE_DIR) / "tests/trace/data/forms" / name;
}

struct Read {
  ReadInfo info;
  std::unique_ptr<TraceAnalysis> t;
  const IpiAnalysis& only() const { return *t->buffers().at(0).second; }
};
Read read(const std::filesystem::path& p) {
  Read r;
  r.t = std::make_unique<TraceAnalysis>();
  r.info = analyse_trace(p, *r.t);
  EXPECT_EQ(r.t->buffers().size(), 1u);
  return r;
}

// A recording with the stacktrace option (trace-cmd record -T) and trace_marker writes, from a
// tracefs instance on Linux 6.18 (trace-cmd extract), and `trace-cmd report` of it: the same counts.
// Event counts: trace-cmd report | grep -c ' <event>: '; stack lines: grep -c '^=>'.
void expect_stacktrace_recording(const Read& r) {
  const IpiAnalysis& a = r.only();
  const std::map<std::string, std::uint64_t> events{
      {"call_function_single_entry", 89}, {"call_function_single_exit", 80}, {"csd_function_entry", 220},
      {"csd_function_exit", 262},         {"csd_queue_cpu", 98},             {"ipi_send_cpu", 158},
      {"kernel_stack", 34},               {"print", 2},                      {"reschedule_entry", 6},
      {"reschedule_exit", 6}};
  EXPECT_EQ(a.event_counts(), events);
  EXPECT_EQ(a.skipped_event_counts(), (std::map<std::string, std::uint64_t>{{"kernel_stack", 34}}));
  EXPECT_EQ(a.markers(), 2u);
  EXPECT_EQ(a.ipis_sent(), 158u);
  const KindStats& cfs = kind(a, IpiKind::CallFunctionSingle);
  EXPECT_EQ(cfs.sends, 152u);
  EXPECT_EQ(cfs.arrivals, 89u);
  EXPECT_EQ(cfs.raised, 89u);
  EXPECT_EQ(cfs.coalesced, 63u);
  EXPECT_EQ(kind(a, IpiKind::Reschedule).sends, 6u);
  EXPECT_EQ(kind(a, IpiKind::Reschedule).raised, 6u);
  EXPECT_EQ(a.unmatched_sends(), 0u);
  EXPECT_EQ(a.unmatched_arrivals(), 0u);
  EXPECT_EQ(a.services()[static_cast<std::size_t>(CallService::Ipi)].count, 98u);
  EXPECT_EQ(a.services()[static_cast<std::size_t>(CallService::Local)].count, 110u);
  EXPECT_EQ(a.services()[static_cast<std::size_t>(CallService::Pending)].count, 0u);
  EXPECT_EQ(a.cpus(), 2u);
  expect_balanced(a);
}

TEST(StacktraceRecording, TraceDatWithKernelStackAndMarkerEvents) {
  const Read r = read(forms("stacktrace-T.dat"));
  expect_stacktrace_recording(r);
  EXPECT_TRUE(r.info.skipped_lines.empty());
}

TEST(StacktraceRecording, ReportTextSkipsAndCountsEveryStackLine) {
  const Read r = read(forms("stacktrace-T.txt"));
  expect_stacktrace_recording(r);
  EXPECT_EQ(r.info.skipped_lines, (std::map<std::string, std::uint64_t>{{"stack", 303}}));
}

TEST(TerminalPaste, TraceCmdsStderrLinesStackLinesAndABlankLineAreSkippedAndCounted) {
  // `trace-cmd report trace.dat` as copied from a terminal: "version = 7", "CPU N is empty" (its
  // standard error) before "cpus=4", then 142 lines of the -T report above (46 events, 95 "=>"
  // stack lines), and a trailing blank line.
  const Read r = read(forms("terminal-paste.txt"));
  const IpiAnalysis& a = r.only();
  EXPECT_EQ(r.info.skipped_lines,
            (std::map<std::string, std::uint64_t>{{"blank", 1}, {"stack", 95}, {"trace-cmd message", 3}}));
  EXPECT_EQ(a.events_total(), 46u);
  EXPECT_EQ(a.event_counts().at("ipi_send_cpu"), 6u);
  EXPECT_EQ(a.event_counts().at("kernel_stack"), 9u);
  EXPECT_EQ(a.markers(), 1u);
  EXPECT_EQ(a.cpus(), 4u);  // cpus=4; CPUs 2 and 3 were empty
  const KindStats& cfs = kind(a, IpiKind::CallFunctionSingle);
  EXPECT_EQ(cfs.sends, 4u);
  EXPECT_EQ(cfs.raised, 3u);
  EXPECT_EQ(cfs.unmatched_sends, 1u);  // its entry lies after the pasted lines
  EXPECT_EQ(kind(a, IpiKind::Reschedule).raised, 2u);
  expect_balanced(a);
  const std::string text = report_text(*r.t, r.info, "paste");
  EXPECT_NE(text.find("lines skipped  99 (not events: stack 95, trace-cmd message 3, blank 1)"), std::string::npos) << text;
}

TEST(Hotplug, AGuestWithACpuOfflineKeepsTheCpuTheTraceShows) {
  // A 4-vCPU guest with vCPU 2 offline: tracefs says "#P:3" (CPUs online when read), CPU 3 has its
  // own lines, and a cpumask names CPU 3: nothing is dropped, the trace has 4 CPUs.
  const Read r = read(forms("hotplug-guest.txt"));
  const IpiAnalysis& a = r.only();
  EXPECT_EQ(r.info.online_cpus, 3u);
  EXPECT_EQ(a.cpus(), 4u);
  EXPECT_EQ(a.cpus_evidence(), 4u);
  EXPECT_TRUE(r.info.warnings.empty());
  EXPECT_EQ(a.ipis_sent(), 4u);
  EXPECT_EQ(a.matched(), 4u);
  EXPECT_EQ(a.targets().at(3).sends_received, 2u);
  EXPECT_EQ(kind(a, IpiKind::CallFunction).raised, 2u);
  EXPECT_EQ(kind(a, IpiKind::CallFunctionSingle).raised, 1u);
  EXPECT_EQ(kind(a, IpiKind::Reschedule).raised, 1u);
  EXPECT_EQ(r.info.skipped_lines, (std::map<std::string, std::uint64_t>{{"comment", 12}}));
  for (const auto& w : a.warnings()) EXPECT_EQ(w.find("send(s) name"), std::string::npos) << w;
  expect_balanced(a);
  const std::string text = report_text(*r.t, r.info, "hotplug");
  EXPECT_NE(text.find("CPUs           4 (3 online when the trace was read (#P:3)"), std::string::npos) << text;
}

TEST(EmptyMask, ATraceWhoseOnlySendsAreEmptySaysSoInOneLineAndIsAnError) {
  try {
    TraceAnalysis t;
    analyse_trace(forms("empty-mask-only.txt"), t);
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.reason(), "nothing to pair: every IPI event of this trace sent nothing or was left out (2 send(s) with "
                          "an empty cpumask, 0 record(s) left out)");
  }
}

TEST(EmptyMask, AnEmptySendBesideRealOnesIsCountedAndTheSummaryPrinted) {
  const Read r = read(forms("empty-mask-and-ipis.txt"));
  const IpiAnalysis& a = r.only();
  EXPECT_EQ(a.empty_sends(), 1u);
  EXPECT_EQ(a.ipis_sent(), 1u);
  EXPECT_EQ(kind(a, IpiKind::Reschedule).raised, 1u);
  EXPECT_EQ(kind(a, IpiKind::Reschedule).latency.max(), 3'500);
  expect_balanced(a);
  const auto j = report_json(*r.t, r.info, "e");
  EXPECT_EQ(j["summary"]["empty_sends"], 1);
  EXPECT_EQ(j["by_kind"]["call-function"]["sends"], 0);
  EXPECT_EQ(j["by_kind"]["unknown"]["unmatched_sends"], 0);
}

TEST(CallFunctionMulti, AMultiTargetCallFunctionIpiIsOneKindOnBothSides) {
  // smp_call_function_many_cond: three calls queued, one ipi_send_cpumask (callback: the single
  // handler, as kernel/smp.c traces it) answered by call_function_entry on each target; then a
  // single call with its own ipi_send_cpu, answered by call_function_single_entry on CPU 3.
  const Read r = read(forms("call-function-multi.txt"));
  const IpiAnalysis& a = r.only();
  const KindStats& cf = kind(a, IpiKind::CallFunction);
  EXPECT_EQ(cf.sends, 3u);
  EXPECT_EQ(cf.arrivals, 3u);
  EXPECT_EQ(cf.raised, 3u);
  EXPECT_EQ(cf.latency.min(), 1'700);   // CPU 1: 102000 - 100300
  EXPECT_EQ(cf.latency.max(), 103'700);  // CPU 3: 204000 - 100300
  const KindStats& cfs = kind(a, IpiKind::CallFunctionSingle);
  EXPECT_EQ(cfs.sends, 1u);
  EXPECT_EQ(cfs.raised, 1u);
  EXPECT_EQ(cfs.latency.max(), 4'400);
  EXPECT_EQ(a.services()[static_cast<std::size_t>(CallService::Ipi)].count, 4u);
  EXPECT_EQ(a.warnings().size(), 0u) << a.warnings().front();
  expect_balanced(a);
}

TEST(QueuedCalls, ACallThatRodeOnAnEarlierIpiIsCoalescedWhenTheTraceEndsWithinAMillisecond) {
  // CPU 0 queues A (its queue was empty: IPI), then B (queue not empty: no IPI); CPU 1 runs both
  // from one interrupt; the trace ends 3 us later. B is coalesced, not "pending".
  const std::string text =
      "cpus=2\n"
      "  a-1 [000] 1.000000000: csd_queue_cpu: cpu=1 callsite=generic_exec_single+0x36 func=fa csd=0xa0\n"
      "  a-1 [000] 1.000000100: ipi_send_cpu: cpu=1 callsite=generic_exec_single+0x36 "
      "callback=generic_smp_call_function_single_interrupt+0x0\n"
      "  a-1 [000] 1.000000200: csd_queue_cpu: cpu=1 callsite=ttwu_queue_wakelist+0x11d func=fb csd=0xb0\n"
      "  b-2 [001] 1.000002000: call_function_single_entry: vector=251\n"
      "  b-2 [001] 1.000002100: csd_function_entry: func=fa, csd=0xa0\n"
      "  b-2 [001] 1.000002200: csd_function_exit: func=fa, csd=0xa0\n"
      "  b-2 [001] 1.000002300: csd_function_entry: func=fb, csd=0xb0\n"
      "  b-2 [001] 1.000002400: csd_function_exit: func=fb, csd=0xb0\n"
      "  b-2 [001] 1.000002500: call_function_single_exit: vector=251\n";
  TempDir d;
  testing::spit(d.path / "t.txt", text);
  const Read r = read(d.path / "t.txt");
  const IpiAnalysis& a = r.only();
  EXPECT_EQ(a.services()[static_cast<std::size_t>(CallService::Ipi)].count, 1u);
  EXPECT_EQ(a.services()[static_cast<std::size_t>(CallService::Coalesced)].count, 1u);
  EXPECT_EQ(a.services()[static_cast<std::size_t>(CallService::Pending)].count, 0u);
  expect_balanced(a);
}

TEST(Balance, EveryKindsRowBalancesOnEveryShippedTrace) {
  std::size_t files = 0;
  for (const auto& dir : {testing::traces_dir(), std::filesystem::path(IPILAB_SOURCE_DIR) / "tests/trace/data/forms"}) {
    for (const auto& e : std::filesystem::directory_iterator(dir)) {
      const auto ext = e.path().extension();
      if (ext != ".dat" && ext != ".txt") continue;
      if (e.path().filename() == "empty-mask-only.txt") continue;  // nothing to pair (its own test)
      SCOPED_TRACE(e.path().string());
      TraceAnalysis t;
      analyse_trace(e.path(), t);
      for (const auto& [name, a] : t.buffers()) expect_balanced(*a);
      ++files;
    }
  }
  EXPECT_GE(files, 14u);
}

}  // namespace
}  // namespace ipilab::trace
