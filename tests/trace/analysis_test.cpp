// Pairing rules (docs/trace.md, "Pairing") on synthetic traces, then on the real traces in data/traces.
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>

#include "common/error.h"
#include "test_util.h"
#include "trace/analysis.h"
#include "trace/report.h"
#include "trace/text_reader.h"

namespace ipilab::trace {
namespace {

IpiAnalysis analyse_text(const std::string& text) {
  IpiAnalysis a;
  std::istringstream in(text);
  read_text_trace(in, "t.txt", a);
  a.finish(ReadInfo{}, "t.txt");
  return a;
}

const std::string kCfs = "callback=generic_smp_call_function_single_interrupt+0x0";

TEST(Pairing, SendMatchesFirstEntryOfSameKindOnTarget) {
  const auto a = analyse_text("cpus=2\n"
                              "  a-1 [000] 1.000001000: ipi_send_cpu: cpu=1 callsite=f+0x1 " + kCfs + "\n"
                              "  b-2 [001] 1.000001500: reschedule_entry: vector=253\n"  // other kind: not it
                              "  b-2 [001] 1.000003000: call_function_single_entry: vector=251\n"
                              "  b-2 [001] 1.000003400: call_function_single_exit: vector=251\n");
  EXPECT_EQ(a.ipis_sent(), 1u);
  EXPECT_EQ(a.matched(), 1u);
  EXPECT_EQ(a.unmatched_sends(), 0u);
  EXPECT_EQ(a.unmatched_arrivals(), 1u);  // the reschedule entry had no send
  const KindStats& k = a.by_kind()[static_cast<std::size_t>(IpiKind::CallFunctionSingle)];
  EXPECT_EQ(k.latency.count(), 1u);
  EXPECT_EQ(k.latency.max(), 2000);
  EXPECT_EQ(k.handler.max(), 400);
  EXPECT_EQ(a.by_kind()[static_cast<std::size_t>(IpiKind::Reschedule)].unmatched_arrivals, 1u);
}

TEST(Pairing, SeveralSendsBeforeOneEntryAreCoalesced) {
  const auto a = analyse_text("cpus=3\n"
                              "  a-1 [000] 1.000001000: ipi_send_cpu: cpu=2 callsite=f+0x1 " + kCfs + "\n"
                              "  a-1 [001] 1.000001200: ipi_send_cpu: cpu=2 callsite=g+0x2 " + kCfs + "\n"
                              "  a-1 [000] 1.000001300: ipi_send_cpu: cpu=2 callsite=f+0x1 " + kCfs + "\n"
                              "  c-3 [002] 1.000002000: call_function_single_entry: vector=251\n");
  EXPECT_EQ(a.ipis_sent(), 3u);
  EXPECT_EQ(a.matched(), 3u);
  EXPECT_EQ(a.coalesced(), 2u);
  const KindStats& k = a.by_kind()[static_cast<std::size_t>(IpiKind::CallFunctionSingle)];
  EXPECT_EQ(k.latency.count(), 1u);      // one interrupt, one latency sample
  EXPECT_EQ(k.latency.max(), 1000);     // from the first send
  EXPECT_EQ(a.pairs().at({1, 2}).coalesced, 1u);
  EXPECT_EQ(a.pairs().at({0, 2}).matched, 2u);
  const auto sites = a.callsites_by_count();
  ASSERT_EQ(sites.size(), 2u);
  EXPECT_EQ(sites[0]->callsite, "f+0x1");
  EXPECT_EQ(sites[0]->sends, 2u);
  EXPECT_EQ(sites[0]->coalesced, 1u);
  // Who interrupts CPU 2: CPU 0 twice, CPU 1 once.
  EXPECT_EQ(a.targets().at(2).by_source.at(0), 2u);
  EXPECT_EQ(a.targets().at(2).by_source.at(1), 1u);
}

// Every IPI record (send to one target) and delivery of a text trace, for exact pair checks.
struct Pairs : AnalysisObserver {
  std::vector<IpiRecord> ipis;  // by send id after run()
  std::vector<IpiDelivery> deliveries;
  void on_ipi(const IpiRecord& r) override { ipis.push_back(r); }
  IpiAnalysis run(const std::string& text) {
    AnalysisOptions o;
    o.observer = this;
    IpiAnalysis a({}, [this](const IpiDelivery& d) { deliveries.push_back(d); }, o);
    std::istringstream in(text);
    read_text_trace(in, "t.txt", a);
    a.finish(ReadInfo{}, "t.txt");
    std::sort(ipis.begin(), ipis.end(), [](const IpiRecord& x, const IpiRecord& y) { return x.id < y.id; });
    return a;
  }
};

const std::string kResched = "callsite=wakeup_preempt+0x92 callback=0x0";

TEST(Pairing, TwoSendsThenTwoEntriesAreTwoPairsInOrderNotACoalescing) {
  // A reschedule pattern of a real trace (CPU 1 -> CPU 0): two sends, then two handler entries on
  // the target. Two entries are two interrupts: each send has its own, in order.
  Pairs p;
  const auto a = p.run("cpus=2\n"
                       "  a-1 [001] 15794.945561842: ipi_send_cpu: cpu=0 " + kResched + "\n"
                       "  a-1 [001] 15794.945608351: ipi_send_cpu: cpu=0 " + kResched + "\n"
                       "  b-2 [000] 15794.945634935: reschedule_entry: vector=253\n"
                       "  b-2 [000] 15794.945635435: reschedule_exit: vector=253\n"
                       "  b-2 [000] 15794.945643135: reschedule_entry: vector=253\n"
                       "  b-2 [000] 15794.945643835: reschedule_exit: vector=253\n");
  const KindStats& k = a.by_kind()[static_cast<std::size_t>(IpiKind::Reschedule)];
  EXPECT_EQ(k.sends, 2u);
  EXPECT_EQ(k.arrivals, 2u);
  EXPECT_EQ(k.matched, 2u);
  EXPECT_EQ(k.coalesced, 0u);
  EXPECT_EQ(k.unmatched_arrivals, 0u);
  EXPECT_EQ(a.coalesced(), 0u);
  EXPECT_EQ(a.unmatched_arrivals(), 0u);
  EXPECT_EQ(a.targets().at(0).unmatched_arrivals, 0u);
  EXPECT_EQ(k.latency.count(), 2u);
  EXPECT_EQ(k.latency.max(), 15794945634935 - 15794945561842);  // 73093 ns
  EXPECT_EQ(k.latency.min(), 15794945643135 - 15794945608351);  // 34784 ns
  ASSERT_EQ(p.ipis.size(), 2u);
  EXPECT_EQ(p.ipis[0].outcome, SendOutcome::Raised);
  EXPECT_EQ(p.ipis[0].arrival_ns, 15794945634935u);
  EXPECT_EQ(p.ipis[0].handler_ns, 500u);
  EXPECT_EQ(p.ipis[1].outcome, SendOutcome::Raised);
  EXPECT_EQ(p.ipis[1].arrival_ns, 15794945643135u);
  EXPECT_EQ(p.ipis[1].handler_ns, 700u);
  ASSERT_EQ(p.deliveries.size(), 2u);
  EXPECT_EQ(p.deliveries[0].coalesced, 0u);
  EXPECT_EQ(p.deliveries[1].send_ns, 15794945608351u);
}

TEST(Pairing, TwoSendsOneEntryIsApicCoalescing) {
  // The second send found the vector still pending in the target's IRR: one interrupt for both.
  Pairs p;
  const auto a = p.run("cpus=2\n"
                       "  a-1 [001] 1.000001000: ipi_send_cpu: cpu=0 " + kResched + "\n"
                       "  a-1 [001] 1.000001300: ipi_send_cpu: cpu=0 " + kResched + "\n"
                       "  b-2 [000] 1.000002000: reschedule_entry: vector=253\n"
                       "  b-2 [000] 1.000002600: reschedule_exit: vector=253\n");
  const KindStats& k = a.by_kind()[static_cast<std::size_t>(IpiKind::Reschedule)];
  EXPECT_EQ(k.matched, 2u);
  EXPECT_EQ(k.coalesced, 1u);
  EXPECT_EQ(k.unmatched_arrivals, 0u);
  EXPECT_EQ(k.unmatched_sends, 0u);
  EXPECT_EQ(k.latency.count(), 1u);
  EXPECT_EQ(k.latency.max(), 1000);
  EXPECT_EQ(a.pairs().at({1, 0}).coalesced, 1u);
  ASSERT_EQ(p.ipis.size(), 2u);
  EXPECT_EQ(p.ipis[0].outcome, SendOutcome::Raised);
  EXPECT_EQ(p.ipis[1].outcome, SendOutcome::Coalesced);
  EXPECT_EQ(p.ipis[1].arrival_ns, 1000002000u);  // rides on the one entry
  EXPECT_EQ(p.ipis[1].handler_ns, 600u);
  ASSERT_EQ(p.deliveries.size(), 1u);
  EXPECT_EQ(p.deliveries[0].send_ns, 1000001000u);
  EXPECT_EQ(p.deliveries[0].coalesced, 1u);
}

TEST(Pairing, ThreeSendsTwoEntriesPairTwoInOrderAndCoalesceTheLast) {
  // s1 s2 s3 e1 e2: e1 takes s1, e2 (no send waiting after e1) takes s2; s3 has no entry left: it
  // was coalesced, onto the interrupt s2 raised (the latest raised before it).
  Pairs p;
  const auto a = p.run("cpus=2\n"
                       "  a-1 [001] 1.000001000: ipi_send_cpu: cpu=0 " + kResched + "\n"
                       "  a-1 [001] 1.000001100: ipi_send_cpu: cpu=0 " + kResched + "\n"
                       "  a-1 [001] 1.000001200: ipi_send_cpu: cpu=0 " + kResched + "\n"
                       "  b-2 [000] 1.000002000: reschedule_entry: vector=253\n"
                       "  b-2 [000] 1.000002100: reschedule_exit: vector=253\n"
                       "  b-2 [000] 1.000003000: reschedule_entry: vector=253\n"
                       "  b-2 [000] 1.000003400: reschedule_exit: vector=253\n");
  const KindStats& k = a.by_kind()[static_cast<std::size_t>(IpiKind::Reschedule)];
  EXPECT_EQ(k.sends, 3u);
  EXPECT_EQ(k.matched, 3u);
  EXPECT_EQ(k.coalesced, 1u);
  EXPECT_EQ(k.unmatched_arrivals, 0u);
  EXPECT_EQ(k.unmatched_sends, 0u);
  EXPECT_EQ(k.latency.count(), 2u);
  EXPECT_EQ(k.latency.max(), 1900);  // e2 - s2
  EXPECT_EQ(k.latency.min(), 1000);  // e1 - s1
  ASSERT_EQ(p.ipis.size(), 3u);
  EXPECT_EQ(p.ipis[0].outcome, SendOutcome::Raised);
  EXPECT_EQ(p.ipis[0].arrival_ns, 1000002000u);
  EXPECT_EQ(p.ipis[1].outcome, SendOutcome::Raised);
  EXPECT_EQ(p.ipis[1].arrival_ns, 1000003000u);
  EXPECT_EQ(p.ipis[2].outcome, SendOutcome::Coalesced);
  EXPECT_EQ(p.ipis[2].arrival_ns, 1000003000u);
  EXPECT_EQ(p.ipis[2].handler_ns, 400u);
  ASSERT_EQ(p.deliveries.size(), 2u);
  EXPECT_EQ(p.deliveries[0].coalesced, 0u);
  EXPECT_EQ(p.deliveries[1].coalesced, 1u);
}

TEST(Pairing, AnEntryPrefersASendMadeAfterThePreviousEntry) {
  // s1 s2 e1 s3 e2: s3 was sent after e1, so e2 is its interrupt; s2 merged into e1's (a later
  // entry never serves an older send than the one the previous entry served).
  Pairs p;
  const auto a = p.run("cpus=2\n"
                       "  a-1 [001] 1.000001000: ipi_send_cpu: cpu=0 " + kResched + "\n"
                       "  a-1 [001] 1.000001100: ipi_send_cpu: cpu=0 " + kResched + "\n"
                       "  b-2 [000] 1.000002000: reschedule_entry: vector=253\n"
                       "  b-2 [000] 1.000002100: reschedule_exit: vector=253\n"
                       "  a-1 [001] 1.000005000: ipi_send_cpu: cpu=0 " + kResched + "\n"
                       "  b-2 [000] 1.000006000: reschedule_entry: vector=253\n");
  const KindStats& k = a.by_kind()[static_cast<std::size_t>(IpiKind::Reschedule)];
  EXPECT_EQ(k.matched, 3u);
  EXPECT_EQ(k.coalesced, 1u);
  EXPECT_EQ(k.unmatched_arrivals, 0u);
  EXPECT_EQ(k.latency.count(), 2u);
  EXPECT_EQ(k.latency.max(), 1000);  // e1 - s1 and e2 - s3
  EXPECT_EQ(k.latency.min(), 1000);
  ASSERT_EQ(p.ipis.size(), 3u);
  EXPECT_EQ(p.ipis[1].outcome, SendOutcome::Coalesced);
  EXPECT_EQ(p.ipis[1].arrival_ns, 1000002000u);
  EXPECT_EQ(p.ipis[1].handler_ns, 100u);
  EXPECT_EQ(p.ipis[2].outcome, SendOutcome::Raised);
  EXPECT_EQ(p.ipis[2].arrival_ns, 1000006000u);
}

TEST(Pairing, AProvisionalCoalescingBeyondThePairLimitStaysCoalesced) {
  // s1 s2 e1, then an entry 20 ms later: beyond the 10 ms limit it does not take s2.
  Pairs p;
  const auto a = p.run("cpus=2\n"
                       "  a-1 [001] 1.000001000: ipi_send_cpu: cpu=0 " + kResched + "\n"
                       "  a-1 [001] 1.000001100: ipi_send_cpu: cpu=0 " + kResched + "\n"
                       "  b-2 [000] 1.000002000: reschedule_entry: vector=253\n"
                       "  b-2 [000] 1.020002000: reschedule_entry: vector=253\n");
  EXPECT_EQ(a.matched(), 2u);
  EXPECT_EQ(a.coalesced(), 1u);
  EXPECT_EQ(a.unmatched_arrivals(), 1u);
  EXPECT_EQ(a.expired(), 0u);
  ASSERT_EQ(p.ipis.size(), 2u);
  EXPECT_EQ(p.ipis[1].outcome, SendOutcome::Coalesced);
  EXPECT_EQ(p.ipis[1].arrival_ns, 1000002000u);
}

TEST(Pairing, CpumaskSendIsOneSendPerTargetAndLeftoversAreUnmatched) {
  const auto a = analyse_text(
      "cpus=4\n"
      "  a-1 [000] 1.000001000: ipi_send_cpumask: cpumask=00000000,0000000e callsite=smp_call_function_many_cond+0x1 "
      "callback=generic_smp_call_function_interrupt+0x0\n"
      "  b-2 [001] 1.000002000: call_function_entry: vector=252\n"
      "  c-3 [002] 1.000003000: call_function_entry: vector=252\n");
  EXPECT_EQ(a.ipis_sent(), 3u);
  EXPECT_EQ(a.matched(), 2u);
  EXPECT_EQ(a.unmatched_sends(), 1u);  // CPU 3 never entered the handler
  EXPECT_EQ(a.by_kind()[static_cast<std::size_t>(IpiKind::CallFunction)].unmatched_sends, 1u);
  EXPECT_EQ(a.pairs().at({0, 3}).sends, 1u);
  EXPECT_EQ(a.pairs().at({0, 3}).matched, 0u);
}

TEST(Pairing, CallFunctionEntryServesWaitingSingleSendAndUnknownMatchesAny) {
  // A callback printed as a raw address (libtraceevent without symbols) does not tell the kind: it
  // is served by the next IPI entry of any kind.
  const auto a = analyse_text("cpus=2\n"
                              "  a-1 [000] 1.000001000: ipi_send_cpu: cpu=1 callsite=f+0x1 " + kCfs + "\n"
                              "  b-2 [001] 1.000002000: call_function_entry: vector=252\n"
                              "  a-1 [000] 1.000003000: ipi_send_cpu: cpu=1 callsite=h+0x1 callback=0xffffffff81234567\n"
                              "  b-2 [001] 1.000004000: reschedule_entry: vector=253\n");
  EXPECT_EQ(a.matched(), 2u);
  EXPECT_EQ(a.unmatched_arrivals(), 0u);
  EXPECT_EQ(a.by_kind()[static_cast<std::size_t>(IpiKind::CallFunction)].matched, 1u);
  EXPECT_EQ(a.by_kind()[static_cast<std::size_t>(IpiKind::Reschedule)].matched, 1u);
  // One kind per IPI, send to arrival: the single-function send served by a call-function entry is
  // a call-function IPI, the send of unknown kind served by a reschedule entry a reschedule IPI.
  EXPECT_EQ(a.by_kind()[static_cast<std::size_t>(IpiKind::CallFunction)].sends, 1u);
  EXPECT_EQ(a.by_kind()[static_cast<std::size_t>(IpiKind::CallFunctionSingle)].sends, 0u);
  EXPECT_EQ(a.by_kind()[static_cast<std::size_t>(IpiKind::Reschedule)].sends, 1u);
  EXPECT_EQ(a.by_kind()[static_cast<std::size_t>(IpiKind::Unknown)].sends, 0u);
  std::size_t notes = 0;
  for (const auto& w : a.warnings())
    notes += w.find("1 unknown send(s) were served by reschedule handler entries") != std::string::npos ||
             w.find("1 call-function-single send(s) were served by call-function handler entries") != std::string::npos;
  EXPECT_EQ(notes, 2u);
}

TEST(Pairing, ArmRaiseRepeatingTheSendIsNotCountedTwice) {
  const auto a = analyse_text("cpus=2\n"
                              "  a-1 [000] 1.000001000: ipi_send_cpu: cpu=1 callsite=f+0x1 " + kCfs + "\n"
                              "  a-1 [000] 1.000001100: ipi_raise: target_mask=00000000,00000002 (Function call interrupts)\n"
                              "  b-2 [001] 1.000002000: ipi_entry: (Function call interrupts)\n"
                              "  b-2 [001] 1.000002500: ipi_exit: (Function call interrupts)\n"
                              "  a-1 [000] 1.000003000: ipi_raise: target_mask=00000000,00000002 (Rescheduling interrupts)\n"
                              "  b-2 [001] 1.000004000: ipi_entry: (Rescheduling interrupts)\n");
  EXPECT_EQ(a.raises_merged(), 1u);
  EXPECT_EQ(a.ipis_sent(), 2u);
  EXPECT_EQ(a.matched(), 2u);
  EXPECT_EQ(a.by_kind()[static_cast<std::size_t>(IpiKind::CallFunction)].handler.max(), 500);
}

TEST(Pairing, TraceWithoutIpiEventsSaysWhatToEnable) {
  IpiAnalysis a;
  std::istringstream in("cpus=2\n  a-1 [000] 1.0: sched_switch: prev_comm=a\n");
  read_text_trace(in, "t.txt", a);
  try {
    a.finish(ReadInfo{}, "t.txt");
    FAIL() << "no error";
  } catch (const InputError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("ipi:ipi_send_cpu"), std::string::npos);
    EXPECT_NE(m.find("Linux >= 6.4"), std::string::npos);
    EXPECT_NE(m.find("Linux >= 6.5"), std::string::npos);
    EXPECT_NE(m.find("irq_vectors"), std::string::npos);
  }
}

TEST(Pairing, OnlyArrivalsWarnsToEnableSends) {
  const auto a = analyse_text("cpus=2\n  b-2 [001] 1.000004000: reschedule_entry: vector=253\n");
  ASSERT_FALSE(a.warnings().empty());
  EXPECT_NE(a.warnings()[0].find("enable ipi:ipi_send_cpu"), std::string::npos);
  EXPECT_EQ(a.unmatched_arrivals(), 1u);
}

// ---- real traces (data/traces, copied from the project's shared traces) ----

nlohmann::json json_of(const std::filesystem::path& p) {
  IpiAnalysis a;
  const ReadInfo info = analyse_trace(p, a);
  auto j = report_json(a, info, "x");
  j.erase("file");
  j.erase("format");
  j.erase("input");  // how the bytes were read (format, compression, trace.dat header) differs by form
  return j;
}

TEST(RealTraces, MixedDatAndMixedTxtGiveIdenticalStatistics) {
  const auto dat = json_of(testing::traces_dir() / "mixed.dat");
  const auto txt = json_of(testing::traces_dir() / "mixed.txt");
  EXPECT_EQ(dat, txt);
}

TEST(RealTraces, MixedEventCountsEqualTraceCmdReport) {
  // Expected counts obtained with trace-cmd 3.1.6:
  //   trace-cmd report data/traces/mixed.dat | grep -c ' <event>: '
  // ipi_send_cpu 4501, call_function_single_entry 4497, reschedule_entry 4, csd_queue_cpu 4499,
  // csd_function_entry 8501; no ipi_send_cpumask, call_function_entry or irq_work_entry.
  const auto j = json_of(testing::traces_dir() / "mixed.dat");
  EXPECT_EQ(j["events"]["ipi_send_cpu"], 4501);
  EXPECT_EQ(j["events"]["call_function_single_entry"], 4497);
  EXPECT_EQ(j["events"]["reschedule_entry"], 4);
  EXPECT_EQ(j["events"]["csd_queue_cpu"], 4499);
  EXPECT_EQ(j["events"]["csd_function_entry"], 8501);
  EXPECT_FALSE(j["events"].contains("ipi_send_cpumask"));
  EXPECT_FALSE(j["events"].contains("call_function_entry"));
  EXPECT_EQ(j["summary"]["events"], 35004);  // = 35005 lines of report minus the "cpus=2" line
  EXPECT_EQ(j["ipis_sent"], 4501);
  // Every send of this trace finds its handler (4497 call-function-single + 4 reschedule entries).
  EXPECT_EQ(j["matched"], 4501);
  EXPECT_EQ(j["unmatched_sends"], 0);
  EXPECT_EQ(j["unmatched_arrivals"], 0);
  EXPECT_EQ(j["by_kind"]["call-function-single"]["count"], 4497);
  EXPECT_EQ(j["by_kind"]["reschedule"]["count"], 4);
  // data/traces/mixed.dat: 3992 of 4501 sends from on_each_cpu_cond_mask+0x20, 499 from membarrier.
  EXPECT_EQ(j["by_callsite"][0]["callsite"], "on_each_cpu_cond_mask+0x20");
  EXPECT_EQ(j["by_callsite"][0]["count"], 3992);
  EXPECT_EQ(j["by_callsite"][1]["callsite"], "membarrier_private_expedited+0x20e");
  EXPECT_EQ(j["by_callsite"][1]["count"], 499);
}

TEST(RealTraces, PipeDatCountsEqualTraceCmdReportInEveryTextForm) {
  // trace-cmd report data/traces/pipe.dat | grep -c ' <event>: ': ipi_send_cpu 32,
  // call_function_single_entry 11, reschedule_entry 23. pipe-report.txt = `trace-cmd report`
  // (microseconds), pipe-report-l.txt = `trace-cmd report -l` (latency format).
  for (const char* f : {"pipe.dat", "pipe-report.txt", "pipe-report-l.txt"}) {
    const auto j = json_of(testing::traces_dir() / f);
    EXPECT_EQ(j["events"]["ipi_send_cpu"], 32) << f;
    EXPECT_EQ(j["events"]["call_function_single_entry"], 11) << f;
    EXPECT_EQ(j["events"]["reschedule_entry"], 23) << f;
    EXPECT_EQ(j["ipis_sent"], 32) << f;
    EXPECT_EQ(j["matched"], 32) << f;
    EXPECT_EQ(j["unmatched_arrivals"], 2) << f;
  }
}

nlohmann::json buffers_json(const std::filesystem::path& p, std::optional<std::string> only = std::nullopt) {
  TraceAnalysis a;
  const ReadInfo info = analyse_trace(p, a, only);
  auto j = report_json(a, info, "x");
  j.erase("file");
  j.erase("format");
  if (j.contains("buffers"))
    for (auto& b : j["buffers"]) b.erase("input"), b.erase("file"), b.erase("format");
  else
    j.erase("input");
  return j;
}

TEST(RealTraces, InstanceBufferOfTraceCmdExtractIsReportedPerBuffer) {
  // data/traces/instance-extract.dat: events recorded in a tracefs instance "bigdat" on Linux 6.18,
  // saved by `trace-cmd extract -B bigdat`; the top-level buffer holds one stale record. Counts from
  // `trace-cmd report data/traces/instance-extract.dat | grep -c ' <event>: '` (trace-cmd 3.1.6):
  // ipi_send_cpu 17106, call_function_single_entry 6130, reschedule_entry 10977, csd_queue_cpu 6131;
  // 84685 lines = 84684 events + "cpus=2", of which 1 (a reschedule_entry) in the top-level buffer.
  const auto j = buffers_json(testing::traces_dir() / "instance-extract.dat");
  ASSERT_TRUE(j.contains("buffers"));
  ASSERT_EQ(j["buffers"].size(), 2u);
  const auto& top = j["buffers"][0];
  const auto& big = j["buffers"][1];
  EXPECT_EQ(top["buffer"], "");
  EXPECT_EQ(top["summary"]["events"], 1);
  EXPECT_EQ(top["unmatched_arrivals"], 1);  // not paired with a send of the other buffer
  EXPECT_EQ(big["buffer"], "bigdat");
  EXPECT_EQ(big["summary"]["events"], 84683);
  EXPECT_EQ(big["events"]["ipi_send_cpu"], 17106);
  EXPECT_EQ(big["events"]["call_function_single_entry"], 6130);
  EXPECT_EQ(big["events"]["reschedule_entry"], 10976);
  EXPECT_EQ(big["events"]["csd_queue_cpu"], 6131);
  EXPECT_EQ(big["ipis_sent"], 17106);
  EXPECT_EQ(big["unmatched_sends"], 0);
  // --buffer picks one: the same report as in the list.
  const auto only = buffers_json(testing::traces_dir() / "instance-extract.dat", "bigdat");
  EXPECT_FALSE(only.contains("buffers"));
  EXPECT_EQ(only, big);
}

TEST(RealTraces, InstanceReportTextEqualsDat) {
  if (!testing::have_program("trace-cmd")) GTEST_SKIP() << "trace-cmd not installed";
  // `trace-cmd report -t` prefixes the instance's lines with "bigdat: "; same statistics as the .dat.
  testing::TempDir tmp;
  const auto txt = tmp.path / "ie.txt";
  ASSERT_EQ(std::system(("trace-cmd report -t '" + (testing::traces_dir() / "instance-extract.dat").string() + "' > '" +
                         txt.string() + "' 2>/dev/null").c_str()), 0);
  EXPECT_EQ(buffers_json(txt), buffers_json(testing::traces_dir() / "instance-extract.dat"));
}

TEST(RealTraces, TracefsTraceFileRecordedOnLinux618) {
  // data/traces/tracefs-trace.txt: `cat /sys/kernel/tracing/instances/<i>/trace` on this project's
  // Linux 6.18 VM with the events of `ipilab trace record` (45 ipi_send_cpu, 15 csd_queue_cpu).
  const auto j = json_of(testing::traces_dir() / "tracefs-trace.txt");
  EXPECT_EQ(j["summary"]["cpus"], 2);
  EXPECT_EQ(j["events"]["ipi_send_cpu"], 45);
  EXPECT_EQ(j["events"]["csd_queue_cpu"], 15);
  EXPECT_EQ(j["ipis_sent"], 45);
}

TEST(RealTraces, JsonContractKeys) {
  const auto j = json_of(testing::traces_dir() / "mixed.txt");
  for (const char* k : {"ipis_sent", "matched", "unmatched_sends", "unmatched_arrivals", "by_kind", "by_callsite",
                        "pairs", "summary", "targets", "events"})
    EXPECT_TRUE(j.contains(k)) << k;
  EXPECT_TRUE(j["by_kind"]["call-function-single"]["latency_ns"].contains("p50"));
  EXPECT_TRUE(j["by_kind"]["call-function-single"]["latency_ns"].contains("p99"));
  EXPECT_TRUE(j["by_callsite"][0].contains("callsite"));
  EXPECT_TRUE(j["by_callsite"][0].contains("count"));
  ASSERT_EQ(j["pairs"].size(), 2u);
  EXPECT_EQ(j["pairs"][0]["src"], 0);
  EXPECT_EQ(j["pairs"][0]["dst"], 1);
  EXPECT_EQ(j["pairs"][0]["count"], 4493);
  EXPECT_TRUE(j["pairs"][0]["latency_ns"].contains("p50"));
}

TEST(ReplayApi, SendsOfMixedDatInTraceOrder) {
  const auto sends = read_ipi_sends(testing::traces_dir() / "mixed.dat");
  ASSERT_EQ(sends.size(), 4501u);
  // First send, line 3 of mixed.txt: ipiload-5111 [001] 344.504323854: ipi_send_cpu: cpu=0
  // callsite=generic_exec_single+0x36 callback=generic_smp_call_function_single_interrupt+0x0
  EXPECT_EQ(sends[0].time_ns, 344504323854u);
  EXPECT_EQ(sends[0].src_cpu, 1u);
  EXPECT_EQ(sends[0].targets, (std::vector<std::uint32_t>{0}));
  EXPECT_EQ(sends[0].kind, IpiKind::CallFunctionSingle);
  EXPECT_EQ(sends[0].callsite, "generic_exec_single+0x36");
  for (std::size_t i = 1; i < sends.size(); ++i) ASSERT_LE(sends[i - 1].time_ns, sends[i].time_ns);
  std::size_t resched = 0;
  for (const auto& s : sends) resched += s.kind == IpiKind::Reschedule;
  EXPECT_EQ(resched, 4u);  // the 4 "callback=0x0" sends from wakeup_preempt+0x92
}

TEST(ReplayApi, DeliveriesOfMixedTxtCarryMeasuredLatency) {
  std::uint64_t n = 0, resched = 0, first_latency = 0;
  for_each_ipi_delivery(testing::traces_dir() / "mixed.txt", [&](const IpiDelivery& d) {
    if (n == 0) {
      // mixed.txt lines 3-4: send at 344.504323854 from CPU 1, call_function_single_entry on CPU 0
      // at 344.504341926.
      EXPECT_EQ(d.src_cpu, 1u);
      EXPECT_EQ(d.dst_cpu, 0u);
      EXPECT_EQ(d.kind, IpiKind::CallFunctionSingle);
      first_latency = d.entry_ns - d.send_ns;
    }
    ++n;
    resched += d.kind == IpiKind::Reschedule;
  });
  EXPECT_EQ(n, 4501u);
  EXPECT_EQ(resched, 4u);
  EXPECT_EQ(first_latency, 344504341926u - 344504323854u);
}

}  // namespace
}  // namespace ipilab::trace
