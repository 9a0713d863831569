// Text reader: every accepted line shape (trace-cmd report, the tracefs trace file; docs/trace.md),
// strict fields, and clear errors.
#include <gtest/gtest.h>

#include <sstream>

#include "common/error.h"
#include "test_util.h"
#include "trace/reader.h"
#include "trace/text_reader.h"

namespace ipilab::trace {
namespace {

using testing::CollectingSink;

CollectingSink parse(const std::string& text) {
  CollectingSink sink;
  std::istringstream in(text);
  read_text_trace(in, "t.txt", sink);
  return sink;
}

std::string error_of(const std::string& text) {
  try {
    parse(text);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(TextReader, TraceCmdReportWithT) {
  const auto s = parse(
      "cpus=2\n"
      "         ipiload-5111  [001]   344.504323854: ipi_send_cpu:         cpu=0 "
      "callsite=generic_exec_single+0x36 callback=generic_smp_call_function_single_interrupt+0x0\n"
      "          <idle>-0     [000]   344.504341926: call_function_single_entry: vector=251\n");
  EXPECT_EQ(s.cpus, 2u);
  ASSERT_EQ(s.events.size(), 2u);
  EXPECT_EQ(s.events[0].ts_ns, 344504323854u);
  EXPECT_EQ(s.events[0].cpu, 1u);
  EXPECT_EQ(s.events[0].type, EventType::IpiSendCpu);
  EXPECT_EQ(s.events[0].targets, (std::vector<std::uint32_t>{0}));
  EXPECT_EQ(s.events[0].callsite, "generic_exec_single+0x36");
  EXPECT_EQ(s.events[0].kind, IpiKind::CallFunctionSingle);
  EXPECT_EQ(s.events[1].type, EventType::VectorEntry);
  EXPECT_EQ(s.events[1].kind, IpiKind::CallFunctionSingle);
  EXPECT_EQ(s.events[1].vector, 251);
  EXPECT_EQ(s.events[1].cpu, 0u);
}

TEST(TextReader, MicrosecondTimestampsAreScaled) {
  const auto s = parse("cpus=2\n  bash-4989  [000]   342.252296: reschedule_entry:     vector=253\n");
  ASSERT_EQ(s.events.size(), 1u);
  EXPECT_EQ(s.events[0].ts_ns, 342252296000u);
}

TEST(TextReader, LatencyFormatOfReportL) {
  // trace-cmd report -l: CPU number glued to the five flag characters.
  const auto s = parse("cpus=2\n  <idle>-0       1d.h1.   342.252327: call_function_single_entry: vector=251\n");
  ASSERT_EQ(s.events.size(), 1u);
  EXPECT_EQ(s.events[0].cpu, 1u);
}

TEST(TextReader, TracefsTraceFileWithFlagsTgidAndKernelSymbols) {
  const auto s = parse(
      "# tracer: nop\n#\n# entries-in-buffer/entries-written: 2/2   #P:4\n#\n"
      "            bash-16837   [003] ...1.  1463.758379: ipi_send_cpu: cpu=1 "
      "callsite=on_each_cpu_cond_mask+0x20/0x60 callback=generic_smp_call_function_single_interrupt+0x0/0x10\n"
      "   Web Content-1234 (   1200) [002] d.h2.  1463.758390: ipi_send_cpumask: cpumask=00000000,0000000d "
      "callsite=kvm_make_all_cpus_request+0x1a/0x40 [kvm] callback=generic_smp_call_function_interrupt+0x0/0x10\n");
  EXPECT_EQ(s.cpus, 0u);  // "#P:4" counts the CPUs online when the file was read, not the CPU numbers
  ASSERT_EQ(s.events.size(), 2u);
  EXPECT_EQ(s.events[0].cpu, 3u);
  EXPECT_EQ(s.events[0].callsite, "on_each_cpu_cond_mask+0x20");
  EXPECT_EQ(s.events[0].callback, "generic_smp_call_function_single_interrupt+0x0");
  EXPECT_EQ(s.events[1].cpu, 2u);
  EXPECT_EQ(s.events[1].type, EventType::IpiSendCpumask);
  EXPECT_EQ(s.events[1].targets, (std::vector<std::uint32_t>{0, 2, 3}));
  EXPECT_EQ(s.events[1].callsite, "kvm_make_all_cpus_request+0x1a");
  EXPECT_EQ(s.events[1].kind, IpiKind::CallFunction);
}

TEST(TextReader, CsdEventsWithCommaAndNilPointer) {
  const auto s = parse(
      "cpus=2\n"
      "  a-1 [000] 1.000000001: csd_queue_cpu:        cpu=1 callsite=on_each_cpu_cond_mask+0x20 func=flush_tlb_func "
      "csd=0xffff888627d2e3e0\n"
      "  a-1 [000] 1.000000002: csd_function_entry:   func=flush_tlb_func, csd=(nil)\n");
  ASSERT_EQ(s.events.size(), 2u);
  EXPECT_EQ(s.events[0].type, EventType::CsdQueueCpu);
  EXPECT_EQ(s.events[0].csd, 0xffff888627d2e3e0u);
  EXPECT_EQ(s.events[0].callback, "flush_tlb_func");
  EXPECT_EQ(s.events[1].callback, "flush_tlb_func");
  EXPECT_EQ(s.events[1].csd, 0u);
}

TEST(TextReader, ArmIpiRaiseAndEntry) {
  const auto s = parse(
      "cpus=4\n"
      "  a-1 [000] 5.000000001: ipi_raise:            target_mask=00000000,00000006 (Function call interrupts)\n"
      "  b-2 [001] 5.000000101: ipi_entry:            (Function call interrupts)\n"
      "  b-2 [001] 5.000000201: ipi_exit:             (Function call interrupts)\n");
  ASSERT_EQ(s.events.size(), 3u);
  EXPECT_EQ(s.events[0].type, EventType::IpiRaise);
  EXPECT_EQ(s.events[0].targets, (std::vector<std::uint32_t>{1, 2}));
  EXPECT_EQ(s.events[0].kind, IpiKind::CallFunction);
  EXPECT_EQ(s.events[1].type, EventType::IpiEntry);
  EXPECT_EQ(s.events[2].type, EventType::IpiExit);
}

TEST(TextReader, OtherEventsCountedLostEventsReported) {
  const auto s = parse(
      "cpus=2\nCPU 1 is empty\n##### CPU 1 buffer started ####\n"
      "  a-1 [000] 1.000000001: local_timer_entry:    vector=236\n"
      "  a-1 [000] 1.000000002: sched_switch:         prev_comm=a prev_pid=1 ==> next_comm=b\n"
      "CPU:0 [LOST 17 EVENTS]\n");
  EXPECT_TRUE(s.events.empty());
  EXPECT_EQ(s.others, (std::map<std::string, std::uint64_t>{{"local_timer_entry", 1}, {"sched_switch", 1}}));
  EXPECT_EQ(s.lost_marks, 1u);
  EXPECT_EQ(s.lost, 17u);
}

TEST(TextReader, ErrorsNameLineAndReason) {
  const std::string not_event =
      "not a trace event line (expected '<comm>-<pid> [<cpu>] <sec>.<frac>: <event>: <fields>' as printed by "
      "trace-cmd report, the tracefs 'trace' file or perf script)";
  EXPECT_EQ(error_of("cpus=2\nhello world\n"), "t.txt:2: " + not_event);
  EXPECT_EQ(error_of("cpus=2\n  a-1 [000] 1.5: ipi_send_cpu: callsite=x+0x1 callback=0x0\n"),
            "t.txt:2: ipi_send_cpu: missing field 'cpu='");
  EXPECT_EQ(error_of("cpus=2\n  a-1 [000] 1.5: reschedule_entry: vector=x\n"),
            "t.txt:2: reschedule_entry: bad 'vector=' value");
  EXPECT_EQ(error_of("cpus=2\n  a-1 [000] 1.5: ipi_send_cpu: [FAILED TO PARSE] cpu=1\n"),
            "t.txt:2: ipi_send_cpu: missing field 'callsite='");
  EXPECT_NE(error_of("cpus=2\n  a-1 1.5: reschedule_entry: vector=253\n"), "");  // no CPU
  // A line cut in the middle (truncated file).
  EXPECT_EQ(error_of("cpus=2\n          <idle>-0     [000]   344.50"), "t.txt:2: " + not_event);
}

TEST(DetectFormat, FromContentNotName) {
  EXPECT_EQ(detect_format(std::string("\x17\x08\x44tracing6\0", 12), "f"), TraceFormat::TraceDat);
  EXPECT_EQ(detect_format("cpus=2\n  x-1 [000] 1.2: a: b\n", "f"), TraceFormat::TraceCmdReport);
  EXPECT_EQ(detect_format("# tracer: nop\n#\n", "f"), TraceFormat::TracefsTrace);
  EXPECT_EQ(detect_format("\n  a-1 [000] 1.000000001: reschedule_entry: vector=253\n", "f"), TraceFormat::TraceCmdReport);
}

TEST(DetectFormat, RejectsEmptyCompressedBinaryAndProse) {
  auto msg = [](std::string_view head) {
    try {
      detect_format(head, "f");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_EQ(msg(""), "f: empty file (no trace in it)");
  EXPECT_EQ(msg(std::string_view("\x17\x08\x44tr", 5)), "f: truncated trace.dat (only 5 bytes)");
  // Exit 2 naming what was seen instead.
  EXPECT_EQ(msg(std::string_view("\x89PNG\r\n\x1a\n\0\0", 10)), "f: this is a PNG image");
  EXPECT_EQ(msg(std::string_view("PERFILE2\0\0\0\0", 12)),
            "f: this is a perf.data file (perf record): convert it with 'perf script > trace.txt'");
  EXPECT_EQ(msg(std::string_view("\x7f" "ELF\2\1\1\0", 8)), "f: this is an ELF executable or object file");
  EXPECT_EQ(msg(std::string_view("\x01\x02\x03\x04\x05", 5)),
            "f: this is binary data (first bytes 01 02 03 04), not a trace.dat (no 0x17 0x08 0x44 'tracing' magic at "
            "byte 0)");
  EXPECT_EQ(msg("cmake_minimum_required(VERSION 3.25)\nproject(x)\n"),
            "f: not a trace: expected a trace.dat (trace-cmd record), the text of 'trace-cmd report' (first line "
            "'cpus=N'), of the tracefs 'trace' file (first line '# tracer: ...') or of 'perf script'; the first line is "
            "'cmake_minimum_required(VERSION 3.25)'");
}

}  // namespace
}  // namespace ipilab::trace
