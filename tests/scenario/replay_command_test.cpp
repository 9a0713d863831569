// `ipilab replay`: the trace's architecture against each variant's mechanism (an x86 trace through
// a GICv4.1 scenario warns, on stdout, stderr and in the JSON; the replay still runs).
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "scenario/replay.h"

namespace ipilab::scenario {
namespace {

namespace fs = std::filesystem;

const fs::path kTraces = fs::path(IPILAB_SOURCE_DIR) / "data" / "traces";

struct Output {
  std::string out, err;
};
Output replay(const std::string& trace, const std::string& scenario, std::vector<std::string> variants, const std::string& json = "") {
  ReplayOptions o;
  o.trace = trace;
  o.scenario = scenario;
  o.variants = std::move(variants);
  o.max_ipis = 200;
  o.json = json;
  std::ostringstream out, err;
  run_replay_command(o, out, err);
  return {out.str(), err.str()};
}

// A 2-CPU arm64 trace (trace-cmd report text): sends with ipi_raise, handler entries with ipi_entry.
std::string arm_trace() {
  std::string templ = (fs::temp_directory_path() / "ipilab-replay-arm-XXXXXX").string();
  const int fd = ::mkstemp(templ.data());
  EXPECT_GE(fd, 0);
  ::close(fd);
  std::ofstream(templ) << "cpus=2\n"
                          "  a-1 [000] 1.000001000: ipi_send_cpu: cpu=1 callsite=f+0x1 "
                          "callback=generic_smp_call_function_single_interrupt+0x0\n"
                          "  a-1 [000] 1.000001100: ipi_raise: target_mask=00000000,00000002 (Function call interrupts)\n"
                          "  b-2 [001] 1.000002000: ipi_entry: (Function call interrupts)\n"
                          "  b-2 [001] 1.000002500: ipi_exit: (Function call interrupts)\n";
  return templ;
}

TEST(ReplayArch, X86TraceThroughAGicv41Scenario_Warns) {
  const auto o = replay((kTraces / "mixed.dat").string(), "seed003-ipi-hw", {"local ITS, VM on socket 0"});
  EXPECT_NE(o.out.find("  arch       trace: x86 (irq_vectors:* handler events)\n"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("  WARNING    the trace was recorded on x86 (irq_vectors:* handler events), but gicv4.1-vsgi (every"),
            std::string::npos)
      << o.out;
  EXPECT_EQ(o.err,
            "ipilab: warning: the trace was recorded on x86 (irq_vectors:* handler events), but gicv4.1-vsgi (every variant) "
            "is an arm64 mechanism: its sends go out as arm64 SGIs and the measured column is another architecture's "
            "latency; compare with care\n");
  // The replay still ran: the modelled column is there.
  EXPECT_NE(o.out.find("call-function-single"), std::string::npos) << o.out;
  const auto j = nlohmann::json::parse(replay((kTraces / "mixed.dat").string(), "seed003-ipi-hw", {"local ITS, VM on socket 0"}, "-").out);
  EXPECT_EQ(j["trace_arch"], "x86");
  ASSERT_EQ(j["warnings"].size(), 1u);
  EXPECT_NE(j["warnings"][0].get<std::string>().find("gicv4.1-vsgi"), std::string::npos);
}

TEST(ReplayArch, SameArchitecture_NoWarning) {
  const auto o = replay((kTraces / "mixed.dat").string(), "seed000-send-ipi-one", {"mainline"});
  EXPECT_EQ(o.out.find("WARNING"), std::string::npos) << o.out;
  EXPECT_EQ(o.err, "");
  const auto j = nlohmann::json::parse(replay((kTraces / "mixed.dat").string(), "seed000-send-ipi-one", {"mainline"}, "-").out);
  EXPECT_EQ(j["trace_arch"], "x86");
  EXPECT_TRUE(j["warnings"].empty());
}

TEST(ReplayArch, Arm64TraceThroughAHyperVScenario_Warns_ThroughGicv41_DoesNot) {
  const std::string t = arm_trace();
  const auto x = replay(t, "seed000-send-ipi-one", {"mainline"});
  EXPECT_NE(x.out.find("  arch       trace: arm64 (ipi:ipi_raise / ipi_entry events)\n"), std::string::npos) << x.out;
  EXPECT_NE(x.err.find("recorded on arm64 (ipi:ipi_raise / ipi_entry events), but hyperv (every variant) is an x86 "
                       "mechanism: its sends go out as x86 vectors"),
            std::string::npos)
      << x.err;
  const auto a = replay(t, "seed003-ipi-hw", {});
  EXPECT_EQ(a.err, "");
  EXPECT_EQ(a.out.find("WARNING"), std::string::npos) << a.out;
  fs::remove(t);
}

TEST(ReplayArch, FromTheEventsSeen) {
  EXPECT_EQ(trace_arch({{"call_function_single_entry", 3}})->arch, workload::Arch::X86);
  EXPECT_EQ(trace_arch({{"local_timer_exit", 1}, {"ipi_send_cpu", 2}})->arch, workload::Arch::X86);
  EXPECT_EQ(trace_arch({{"ipi_entry", 1}})->arch, workload::Arch::Arm);
  EXPECT_FALSE(trace_arch({{"ipi_send_cpu", 5}, {"csd_function_entry", 5}}).has_value());  // no handler events
  EXPECT_FALSE(trace_arch({{"ipi_entry", 1}, {"reschedule_entry", 1}}).has_value());      // both: no claim
  EXPECT_FALSE(trace_arch({{"reschedule_entry", 0}}).has_value());
}

}  // namespace
}  // namespace ipilab::scenario
