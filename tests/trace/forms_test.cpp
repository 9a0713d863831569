// Every rendering of a cpumask, the kernel conventions, the serving categories, several buffers,
// the pairing limit, perf script, stdin and compressed input — with exact expected sets and counts.
#include <gtest/gtest.h>

#include <unistd.h>

#include <sstream>
#include <thread>

#include <fmt/format.h>

#include "common/error.h"
#include "test_util.h"
#include "trace/analysis.h"
#include "trace/buffer_filter.h"
#include "trace/cpumask.h"
#include "trace/report.h"
#include "trace/text_reader.h"

namespace ipilab::trace {
namespace {

using V = std::vector<std::uint32_t>;

V mask(std::string_view text, CpumaskForm expect) {
  V out;
  EXPECT_EQ(parse_cpumask_text(text, out), expect) << text;
  return out;
}

TEST(CpumaskForms, EachRenderingIsRecognisedFromTheValue) {
  // Kernel / tracefs text: 32-bit hex words, most significant first.
  EXPECT_EQ(mask("00000000,00000003", CpumaskForm::HexWords), (V{0, 1}));
  EXPECT_EQ(mask("00000002", CpumaskForm::HexWords), (V{1}));
  EXPECT_EQ(mask("00008000,00000001", CpumaskForm::HexWords), (V{0, 47}));
  // libtraceevent CPU lists: "1" is CPU 1 (read as a hex word it would be CPU 0), "0,15" is {0, 15}.
  EXPECT_EQ(mask("1", CpumaskForm::CpuList), (V{1}));
  EXPECT_EQ(mask("0,15", CpumaskForm::CpuList), (V{0, 15}));
  EXPECT_EQ(mask("0-3,8-9,12", CpumaskForm::CpuList), (V{0, 1, 2, 3, 8, 9, 12}));
  EXPECT_EQ(mask("0-63", CpumaskForm::CpuList).size(), 64u);
  EXPECT_EQ(mask("", CpumaskForm::Empty), V{});
  // Old libtraceevent [FAILED TO PARSE]: the bitmap's bytes, little-endian.
  EXPECT_EQ(mask("ARRAY[02, 00, 00, 00, 00, 00, 00, 00]", CpumaskForm::ByteArray), (V{1}));
  EXPECT_EQ(mask("ARRAY[01, 80, 00, 00]", CpumaskForm::ByteArray), (V{0, 15}));
  EXPECT_EQ(mask("ARRAY[]", CpumaskForm::ByteArray), V{});
  // Values that fit no form are never guessed.
  for (const char* bad : {"3-1", "0,,1", "f0", "1-", "00,1", "ARRAY[2, 00]", "ARRAY[02 00]", "0x3", "65536", "1,1"})
    mask(bad, CpumaskForm::Invalid);
}

TEST(CpumaskForms, TraceDatBitmapsInTheFilesByteOrderAndLongSize) {
  // CPUs 0 and 33 in two 32-bit longs / one 64-bit long, little- and big-endian.
  const unsigned char le4[] = {0x01, 0, 0, 0, 0x02, 0, 0, 0};
  const unsigned char be4[] = {0, 0, 0, 0x01, 0, 0, 0, 0x02};
  const unsigned char le8[] = {0x01, 0, 0, 0, 0x02, 0, 0, 0};
  const unsigned char be8[] = {0, 0, 0, 0x02, 0, 0, 0, 0x01};
  V out;
  ASSERT_TRUE(decode_cpumask_bitmap(le4, 8, 4, false, out));
  EXPECT_EQ(out, (V{0, 33}));
  ASSERT_TRUE(decode_cpumask_bitmap(be4, 8, 4, true, out));
  EXPECT_EQ(out, (V{0, 33}));
  ASSERT_TRUE(decode_cpumask_bitmap(le8, 8, 8, false, out));
  EXPECT_EQ(out, (V{0, 33}));
  ASSERT_TRUE(decode_cpumask_bitmap(be8, 8, 8, true, out));
  EXPECT_EQ(out, (V{0, 33}));
}

struct Analysed {
  std::unique_ptr<TraceAnalysis> a;
  ReadInfo info;
  const IpiAnalysis& only() const {
    const auto b = a->buffers();
    EXPECT_EQ(b.size(), 1u);
    return *b.front().second;
  }
};

Analysed analyse(const std::string& text, AnalysisOptions opt = {}) {
  Analysed r;
  r.a = std::make_unique<TraceAnalysis>(opt);
  std::istringstream in(text);
  read_text_trace(in, "t.txt", *r.a, &r.info);
  r.a->finish(r.info, "t.txt");
  return r;
}

const std::string kCf = "callback=generic_smp_call_function_interrupt+0x0";
const std::string kCfsCallback = "callback=generic_smp_call_function_single_interrupt+0x0";

TEST(CpumaskInText, EveryFormPairsAndABadValueIsLeftOutWithCountAndFirstLine) {
  const auto r = analyse("cpus=16\n"
                         "  a-1 [000] 1.000001000: ipi_send_cpumask: cpumask=1 callsite=f+0x1 " + kCf + "\n"
                         "  a-1 [000] 1.000002000: ipi_send_cpumask: cpumask=0,15 callsite=f+0x1 " + kCf + "\n"
                         "  a-1 [000] 1.000003000: ipi_send_cpumask: cpumask=00000000,00000004 callsite=f+0x1 " + kCf + "\n"
                         "  a-1 [000] 1.000004000: ipi_send_cpumask: cpumask= callsite=f+0x1 " + kCf + "\n"
                         "  a-1 [000] 1.000005000: ipi_send_cpumask: [FAILED TO PARSE] cpumask=ARRAY[08, 00, 00, 00, 00, 00, 00, 00] callsite=0xffffffff81000010 callback=0xffffffff81000020\n"
                         "  a-1 [000] 1.000006000: ipi_send_cpumask: cpumask=3x callsite=f+0x1 " + kCf + "\n"
                         "  a-1 [000] 1.000007000: ipi_send_cpumask: cpumask=zz callsite=f+0x1 " + kCf + "\n");
  const IpiAnalysis& a = r.only();
  // {1} + {0,15} + {2} + {} + {3} = 5 sends; the two bad values are left out.
  EXPECT_EQ(a.ipis_sent(), 5u);
  EXPECT_EQ(a.targets().at(1).sends_received, 1u);
  EXPECT_EQ(a.targets().at(15).sends_received, 1u);
  EXPECT_EQ(a.targets().at(3).sends_received, 1u);
  EXPECT_EQ(a.event_counts().at("ipi_send_cpumask"), 7u);  // every record is still counted
  EXPECT_EQ(r.info.cpumask_forms[static_cast<std::size_t>(CpumaskForm::CpuList)], 2u);
  EXPECT_EQ(r.info.cpumask_forms[static_cast<std::size_t>(CpumaskForm::HexWords)], 1u);
  EXPECT_EQ(r.info.cpumask_forms[static_cast<std::size_t>(CpumaskForm::Empty)], 1u);
  EXPECT_EQ(r.info.cpumask_forms[static_cast<std::size_t>(CpumaskForm::ByteArray)], 1u);
  EXPECT_EQ(r.info.cpumask_forms[static_cast<std::size_t>(CpumaskForm::Invalid)], 2u);
  ASSERT_EQ(r.info.warnings.size(), 1u);
  EXPECT_EQ(r.info.warnings[0].count, 2u);
  EXPECT_EQ(r.info.warnings[0].first_place, "t.txt:7");
  bool warned = false;
  for (const auto& w : a.warnings()) warned = warned || w.find("2 record(s), first at t.txt:7") != std::string::npos;
  EXPECT_TRUE(warned);
}

TEST(CpumaskInText, AnAmbiguousValueIsLeftOutNamingBothReadingsAnUnambiguousOneKeptAndFlagged) {
  // A 2-CPU trace (cpus=2): "3" as a CPU list is CPU 3, which it does not show; as a hex mask printed
  // without leading zeros it is CPUs 0 and 1, which it has: neither is guessed, the record is left
  // out. "0-3" reads one way only (CPUs 0-3) and the hex words name CPU 2: kept, paired as recorded,
  // and flagged (the CPU set comes from the trace, and a CPU beyond it is reported, not dropped).
  // ipi_send_cpumask with the call-function handler is a call-function IPI (call_function_entry).
  const std::string cf = "  b-2 [001] 1.000002000: call_function_entry: vector=252\n";
  const auto r = analyse("cpus=2\n"
                         "  a-1 [000] 1.000001000: ipi_send_cpumask: cpumask=1 callsite=f+0x1 " + kCfsCallback + "\n" + cf +
                         "  a-1 [000] 1.000003000: ipi_send_cpumask: cpumask=3 callsite=f+0x1 " + kCfsCallback + "\n"
                         "  a-1 [000] 1.000004000: ipi_send_cpumask: cpumask=0-3 callsite=f+0x1 " + kCfsCallback + "\n"
                         "  a-1 [000] 1.000005000: ipi_send_cpumask: cpumask=3 callsite=f+0x1 " + kCfsCallback + "\n"
                         "  a-1 [000] 1.000006000: ipi_send_cpumask: cpumask=00000000,00000004 callsite=f+0x1 " + kCfsCallback + "\n");
  const IpiAnalysis& a = r.only();
  EXPECT_EQ(a.ipis_sent(), 6u);  // "1", "0-3" (4 targets), CPU 2
  EXPECT_EQ(a.matched(), 1u);
  EXPECT_EQ(a.cpus(), 4u);
  EXPECT_EQ(a.cpus_evidence(), 2u);
  EXPECT_EQ(a.targets().at(3).sends_received, 1u);
  EXPECT_EQ(a.targets().at(2).sends_received, 2u);
  EXPECT_EQ(a.event_counts().at("ipi_send_cpumask"), 5u);
  ASSERT_EQ(r.info.warnings.size(), 1u);
  const ReadWarning& list = r.info.warnings[0];
  EXPECT_EQ(list.what, "ipi_send_cpumask: 'cpumask=' value read as a CPU list names a CPU the trace does not show; "
                       "it may be a hex mask instead: ambiguous, record left out of the pairing");
  EXPECT_EQ(list.count, 2u);  // "3", "3"
  EXPECT_EQ(list.first_place, "t.txt:4");
  EXPECT_EQ(list.first_detail, "'3' as a CPU list: CPU 3; as a hex mask: CPUs 0-1; the trace shows 2 CPUs (0-1) so far");
  std::size_t found = 0;
  for (const auto& w : a.warnings())
    found += w.starts_with("3 send(s) name CPUs 2-3 that no event line, per-CPU buffer or CPU count of the trace "
                           "shows (it shows CPUs 0-1): kept");
  EXPECT_EQ(found, 1u);
}

TEST(CpumaskInText, WithoutAHeaderNoCpuCountIsAssumed) {
  // No cpus=N / #P:N line: CPU 7 has logged nothing yet, but may exist; the sends are read as they
  // are (CPU lists) and paired, with no reader warning.
  const auto r = analyse("  a-1 [000] 1.000001000: ipi_send_cpumask: cpumask=3 callsite=f+0x1 " + kCfsCallback + "\n"
                         "  b-2 [003] 1.000002000: call_function_entry: vector=252\n"
                         "  b-2 [003] 1.000002500: call_function_exit: vector=252\n"
                         "  a-1 [000] 1.000003000: ipi_send_cpumask: cpumask=7 callsite=f+0x1 " + kCfsCallback + "\n"
                         "  c-3 [007] 1.000004000: call_function_entry: vector=252\n");
  const IpiAnalysis& a = r.only();
  EXPECT_EQ(a.ipis_sent(), 2u);
  EXPECT_EQ(a.matched(), 2u);
  EXPECT_EQ(a.cpus(), 8u);
  EXPECT_TRUE(r.info.warnings.empty());
}

TEST(Conventions, Linux64QueuedCallsInIpiSendAreNotIpis) {
  // v6.4: __smp_call_single_queue traced every queued call with its function as callback; only the
  // generic-handler send is the IPI. Second call: coalesced (no send of its own).
  const auto r = analyse("cpus=2\n"
                         "  a-1 [000] 1.000001000: ipi_send_cpu: cpu=1 callsite=generic_exec_single+0x36 callback=nohz_csd_func+0x0\n"
                         "  a-1 [000] 1.000001100: ipi_send_cpu: cpu=1 callsite=generic_exec_single+0x36 " + kCfsCallback + "\n"
                         "  a-1 [000] 1.000001500: ipi_send_cpu: cpu=1 callsite=generic_exec_single+0x36 callback=flush_tlb_func+0x0\n"
                         "  b-2 [001] 1.000003000: call_function_single_entry: vector=251\n"
                         "  b-2 [001] 1.000003500: call_function_single_exit: vector=251\n"
                         "  a-1 [000] 1.003000000: reschedule_entry: vector=253\n");
  const IpiAnalysis& a = r.only();
  EXPECT_EQ(a.convention(), Convention::V6_4);
  EXPECT_EQ(a.queued_call_sends(), 2u);
  EXPECT_EQ(a.ipis_sent(), 1u);
  EXPECT_EQ(a.matched(), 1u);
  EXPECT_EQ(a.unmatched_sends(), 0u);
  EXPECT_EQ(a.services()[static_cast<std::size_t>(CallService::Ipi)].count, 1u);
  EXPECT_EQ(a.services()[static_cast<std::size_t>(CallService::Coalesced)].count, 1u);
  EXPECT_NE(convention_statement(a.convention()).find("6.4"), std::string::npos);
}

TEST(Conventions, Linux65CsdQueueCpu) {
  const auto r = analyse("cpus=2\n"
                         "  a-1 [000] 1.000001000: csd_queue_cpu: cpu=1 callsite=generic_exec_single+0x36 func=nohz_csd_func csd=0x1000\n"
                         "  a-1 [000] 1.000001100: ipi_send_cpu: cpu=1 callsite=generic_exec_single+0x36 " + kCfsCallback + "\n"
                         "  b-2 [001] 1.000003000: call_function_single_entry: vector=251\n"
                         "  b-2 [001] 1.000003100: csd_function_entry: func=nohz_csd_func, csd=0x1000\n");
  const IpiAnalysis& a = r.only();
  EXPECT_EQ(a.convention(), Convention::V6_5);
  EXPECT_EQ(a.ipis_sent(), 1u);
  const ServiceStats& ipi = a.services()[static_cast<std::size_t>(CallService::Ipi)];
  EXPECT_EQ(ipi.count, 1u);
  ASSERT_EQ(ipi.queue_to_run.count(), 1u);
  EXPECT_EQ(ipi.queue_to_run.max(), 2100);
  EXPECT_EQ(analyse("cpus=2\n  b-2 [001] 1.0: reschedule_entry: vector=253\n").only().convention(), Convention::Indistinct);
}

TEST(Serving, CoalescedPollingIdleLocalAndPendingAreNeverUnmatched) {
  const auto r = analyse(
      "cpus=4\n"
      // CPU 0 -> CPU 1: an IPI, and a second call while the first is queued (coalesced).
      "  a-1 [000] 1.000001000: csd_queue_cpu: cpu=1 callsite=generic_exec_single+0x36 func=f1 csd=0x10\n"
      "  a-1 [000] 1.000001100: ipi_send_cpu: cpu=1 callsite=generic_exec_single+0x36 " + kCfsCallback + "\n"
      "  a-1 [000] 1.000001200: csd_queue_cpu: cpu=1 callsite=generic_exec_single+0x36 func=f2 csd=0x20\n"
      "  b-2 [001] 1.000002000: call_function_single_entry: vector=251\n"
      "  b-2 [001] 1.000002100: csd_function_entry: func=f1, csd=0x10\n"
      "  b-2 [001] 1.000002200: csd_function_exit: func=f1, csd=0x10\n"
      "  b-2 [001] 1.000002300: csd_function_entry: func=f2, csd=0x20\n"
      "  b-2 [001] 1.000002400: csd_function_exit: func=f2, csd=0x20\n"
      "  b-2 [001] 1.000002500: call_function_single_exit: vector=251\n"
      // CPU 0 -> CPU 2 polling in idle: no IPI, the wake event says so.
      "  a-1 [000] 1.000003000: csd_queue_cpu: cpu=2 callsite=generic_exec_single+0x36 func=f3 csd=0x30\n"
      "  a-1 [000] 1.000003050: sched_wake_idle_without_ipi: cpu=2\n"
      "  c-3 [002] 1.000004000: csd_function_entry: func=f3, csd=0x30\n"
      "  c-3 [002] 1.000004100: csd_function_exit: func=f3, csd=0x30\n"
      // A call run locally (csd=(nil)).
      "  a-1 [000] 1.000005000: csd_function_entry: func=f4, csd=(nil)\n"
      "  a-1 [000] 1.000005100: csd_function_exit: func=f4, csd=(nil)\n"
      // CPU 0 -> CPU 3: queue empty, no IPI and no wake event: polling-idle inferred.
      "  a-1 [000] 1.000006000: csd_queue_cpu: cpu=3 callsite=smp_call_function_many_cond+0x1 func=f5 csd=0x50\n"
      "  a-1 [000] 1.000006100: csd_queue_cpu: cpu=1 callsite=other_site+0x1 func=f6 csd=0x60\n"
      // The trace ends right after the last queue: pending.
      );
  const IpiAnalysis& a = r.only();
  auto svc = [&](CallService s) { return a.services()[static_cast<std::size_t>(s)]; };
  EXPECT_EQ(svc(CallService::Ipi).count, 1u);
  EXPECT_EQ(svc(CallService::Coalesced).count, 1u);
  EXPECT_EQ(svc(CallService::PollingIdle).count, 2u);
  EXPECT_EQ(svc(CallService::PollingIdle).inferred, 1u);
  EXPECT_EQ(svc(CallService::Local).count, 1u);
  EXPECT_EQ(svc(CallService::Pending).count, 1u);
  EXPECT_EQ(svc(CallService::Coalesced).queue_to_run.max(), 1100);   // 1.0000023 - 1.0000012
  EXPECT_EQ(svc(CallService::PollingIdle).queue_to_run.max(), 1000);  // 1.000004 - 1.000003
  EXPECT_EQ(a.wake_idle_without_ipi(), 1u);
  EXPECT_EQ(a.ipis_sent(), 1u);
  EXPECT_EQ(a.unmatched_sends(), 0u);
  EXPECT_EQ(a.unmatched_arrivals(), 0u);
}

TEST(Arm64, MultiTargetRaiseIsPairedPerTarget) {
  const auto r = analyse("cpus=4\n"
                         "  a-1 [000] 5.000000000: ipi_raise: target_mask=00000000,00000006 (Function call interrupts)\n"
                         "  b-2 [001] 5.000000400: ipi_entry: (Function call interrupts)\n"
                         "  b-2 [001] 5.000000500: ipi_exit: (Function call interrupts)\n"
                         "  c-3 [002] 5.000000900: ipi_entry: (Function call interrupts)\n"
                         "  c-3 [002] 5.000001000: ipi_exit: (Function call interrupts)\n"
                         "  a-1 [000] 6.000000000: ipi_raise: target_mask=1-2 (Rescheduling interrupts)\n"
                         "  b-2 [001] 6.000000200: ipi_entry: (Rescheduling interrupts)\n");
  const IpiAnalysis& a = r.only();
  EXPECT_EQ(a.ipis_sent(), 4u);
  EXPECT_EQ(a.matched(), 3u);
  EXPECT_EQ(a.unmatched_sends(), 1u);  // CPU 2 never entered the reschedule handler
  EXPECT_EQ(a.pairs().at({0, 1}).latency.count(), 2u);
  EXPECT_EQ(a.pairs().at({0, 2}).latency.max(), 900);
  EXPECT_EQ(a.by_kind()[static_cast<std::size_t>(IpiKind::CallFunction)].latency.max(), 900);
}

TEST(Buffers, PairOnlyWithinABufferAndPickOne) {
  const std::string text = "cpus=2\n"
                           "  a-1 [000] 1.000001000: ipi_send_cpu: cpu=1 callsite=f+0x1 callback=0x0\n"
                           "inst:  b-2 [001] 1.000002000: reschedule_entry: vector=253\n"
                           "inst:  a-1 [000] 1.000003000: ipi_send_cpu: cpu=1 callsite=g+0x1 callback=0x0\n"
                           "inst:  b-2 [001] 1.000004000: reschedule_entry: vector=253\n";
  const auto r = analyse(text);
  const auto b = r.a->buffers();
  ASSERT_EQ(b.size(), 2u);
  EXPECT_EQ(b[0].first, "");
  EXPECT_EQ(b[0].second->ipis_sent(), 1u);
  EXPECT_EQ(b[0].second->matched(), 0u);  // the arrival 1 us later is in another buffer
  EXPECT_EQ(b[0].second->unmatched_sends(), 1u);
  EXPECT_EQ(b[1].first, "inst");
  EXPECT_EQ(b[1].second->matched(), 1u);
  EXPECT_EQ(b[1].second->unmatched_arrivals(), 1u);
  // --buffer: a BufferFilter in front of the analysis keeps one buffer's events.
  TraceAnalysis only;
  BufferFilter keep(only, "inst");
  std::istringstream in(text);
  ReadInfo info;
  read_text_trace(in, "t.txt", keep, &info);
  keep.check("t.txt");
  only.finish(info, "t.txt");
  ASSERT_EQ(only.buffers().size(), 1u);
  EXPECT_EQ(only.buffers()[0].first, "inst");
  EXPECT_EQ(only.buffers()[0].second->ipis_sent(), 1u);
  EXPECT_EQ(only.buffers()[0].second->matched(), 1u);
  EXPECT_EQ(keep.buffers(), (std::vector<std::string>{"", "inst"}));
  TraceAnalysis missing;
  BufferFilter none(missing, "nope");
  std::istringstream in2(text);
  read_text_trace(in2, "t.txt", none, &info);
  try {
    none.check("t.txt");
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.place(), "t.txt");
    EXPECT_EQ(e.reason(), "no ring buffer 'nope' in this trace (its buffers: '', 'inst'; '' is the top level)");
  }
}

TEST(PairingLimit, ASendUnansweredForLongerIsUnmatchedNotPairedLater) {
  const std::string text = "cpus=2\n"
                           "  a-1 [000] 1.000000000: ipi_send_cpu: cpu=1 callsite=f+0x1 callback=0x0\n"
                           "  b-2 [001] 1.020000000: reschedule_entry: vector=253\n";
  const auto r = analyse(text);  // default limit 10 ms
  EXPECT_EQ(r.only().matched(), 0u);
  EXPECT_EQ(r.only().expired(), 1u);
  EXPECT_EQ(r.only().unmatched_sends(), 1u);
  EXPECT_EQ(r.only().unmatched_arrivals(), 1u);
  AnalysisOptions wide;
  wide.pair_limit_ns = 50'000'000;
  const auto w = analyse(text, wide);
  EXPECT_EQ(w.only().matched(), 1u);
  EXPECT_EQ(report_json(*w.a, w.info, "t")["pairing"]["limit_ns"], 50000000);
}

TEST(PerfScript, RealPerfScriptTextOfThisMachine) {
  // data/traces/perf-script.txt: `perf script` (perf 6.1) of `perf record -e 'ipi:*' -e csd:* -e
  // irq_vectors:{call_function_single,reschedule}_{entry,exit}` on Linux 6.18; counts from
  // `awk '{print $5}' | sort | uniq -c`.
  Analysed r;
  r.a = std::make_unique<TraceAnalysis>();
  r.info = analyse_trace(testing::traces_dir() / "perf-script.txt", *r.a);
  EXPECT_EQ(r.info.format, TraceFormat::PerfScript);
  const IpiAnalysis& a = r.only();
  EXPECT_EQ(a.events_total(), 801u);
  EXPECT_EQ(a.event_counts().at("ipi_send_cpu"), 175u);
  EXPECT_EQ(a.event_counts().at("csd_queue_cpu"), 48u);
  EXPECT_EQ(a.event_counts().at("csd_function_entry"), 114u);
  EXPECT_EQ(a.event_counts().at("call_function_single_entry"), 48u);
  EXPECT_EQ(a.event_counts().at("reschedule_entry"), 127u);
  EXPECT_EQ(a.ipis_sent(), 175u);
  EXPECT_EQ(a.convention(), Convention::V6_5);
}

TEST(Inputs, CompressedAndStandardInputReadLikeThePlainFile) {
  testing::TempDir tmp;
  auto summary = [](const std::filesystem::path& p) {
    TraceAnalysis a;
    const ReadInfo info = analyse_trace(p, a);
    const IpiAnalysis& b = *a.buffers().front().second;
    return std::make_tuple(b.events_total(), b.ipis_sent(), b.matched(), info.compression);
  };
  const auto txt = testing::traces_dir() / "pipe-report.txt";
  const auto dat = testing::traces_dir() / "pipe.dat";
  const auto plain = summary(txt);
  EXPECT_EQ(std::get<0>(plain), 145u);
  for (const auto& [tool, c] : {std::pair<const char*, Compression>{"gzip", Compression::Gzip},
                                {"zstd", Compression::Zstd}, {"xz", Compression::Xz}}) {
    if (!testing::have_program(tool)) continue;
    for (const auto& src : {txt, dat}) {
      const auto out = tmp.path / (src.filename().string() + "." + tool);
      ASSERT_EQ(std::system(fmt::format("{} -c '{}' > '{}' 2>/dev/null", tool, src.string(), out.string()).c_str()), 0);
      const auto s = summary(out);
      EXPECT_EQ(std::get<3>(s), c) << out;
      EXPECT_EQ(std::get<0>(s), 145u) << out;
      EXPECT_EQ(std::get<1>(s), 32u) << out;
      EXPECT_EQ(std::get<2>(s), 32u) << out;
    }
  }
  // A truncated gzip stream is an error naming the input.
  if (testing::have_program("gzip")) {
    const std::string gz = testing::slurp(tmp.path / "pipe-report.txt.gzip");
    testing::spit(tmp.path / "cut.gz", gz.substr(0, gz.size() / 2));
    TraceAnalysis a;
    try {
      analyse_trace(tmp.path / "cut.gz", a);
      FAIL() << "no error";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("gzip data ends early"), std::string::npos) << e.what();
    }
  }
  // Standard input ("-"): the text piped in.
  for (const auto& src : {txt, dat}) {
    int fds[2];
    ASSERT_EQ(::pipe(fds), 0);
    const int saved = ::dup(STDIN_FILENO);
    ::dup2(fds[0], STDIN_FILENO);
    ::close(fds[0]);
    const std::string content = testing::slurp(src);
    std::thread writer([&] {
      std::size_t off = 0;
      while (off < content.size()) {
        const ssize_t n = ::write(fds[1], content.data() + off, content.size() - off);
        if (n <= 0) break;
        off += static_cast<std::size_t>(n);
      }
      ::close(fds[1]);
    });
    const auto s = summary("-");
    writer.join();
    ::dup2(saved, STDIN_FILENO);
    ::close(saved);
    EXPECT_EQ(std::get<0>(s), 145u) << src;
    EXPECT_EQ(std::get<1>(s), 32u) << src;
  }
}

TEST(TraceDat, DirectPageDecodingEqualsLibtracecmdRecords) {
  // (mixed.dat is covered by RealTraces.MixedDatAndMixedTxtGiveIdenticalStatistics against its text.)
  for (const char* f : {"pipe.dat", "instance-extract.dat"}) {
    testing::CollectingSink direct, lib;
    const ReadInfo di = read_trace(testing::traces_dir() / f, direct);
    read_dat_trace_via_libtracecmd(testing::traces_dir() / f, lib);
    EXPECT_TRUE(di.direct_decode) << f;
    ASSERT_EQ(direct.events.size(), lib.events.size()) << f;
    for (std::size_t i = 0; i < direct.events.size(); ++i) {
      ASSERT_EQ(direct.events[i].ts_ns, lib.events[i].ts_ns) << f << " #" << i;
      ASSERT_EQ(direct.events[i].cpu, lib.events[i].cpu) << f << " #" << i;
      ASSERT_EQ(direct.events[i].name, lib.events[i].name) << f << " #" << i;
      ASSERT_EQ(direct.events[i].targets, lib.events[i].targets) << f << " #" << i;
      ASSERT_EQ(direct.events[i].callsite, lib.events[i].callsite) << f << " #" << i;
    }
    EXPECT_EQ(direct.others, lib.others) << f;
    EXPECT_EQ(direct.buffers, lib.buffers) << f;
  }
}

}  // namespace
}  // namespace ipilab::trace
