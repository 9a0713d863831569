// ipi_benchmark: Norov's IPI benchmark module simulated. With every cost fixed, one operation is exactly
// the sum of its steps: the Dry-run loop, the two ktime_get, the send path, the running target's
// injection and entry, and six hand-overs of a line on the critical path of the Normal IPI (the queue
// head both ways, the CSD there and its release back, the `time` variable there and back), each at the
// host's same-socket 48 ns (skylake-2s-40c, host CPUs 0 and 1).
#include <map>
#include <set>

#include <gtest/gtest.h>

#include "run_helpers.h"
#include "workload/mechanism.h"
#include "workload/vm_run.h"

namespace ipilab::workload {
namespace {

using testing::make_setup;

const std::map<std::string, double> kIpiBenchmarkNs = {
    {"guest.ipi_bench_dry_run", 25}, {"guest.clock_read", 45},         {"guest.cpumask_word", 1},
    {"guest.ipi_path_call", 5},      {"vm.exit_entry", 400},           {"x2apic.icr_write_exit", 200},
    {"x2apic.icr_dest_per_target", 100}, {"apic.interrupt_injection", 700}, {"guest.irq_entry", 100},
    {"guest.eoi", 60},               {"guest.irq_exit", 50},           {"guest.csd_queue", 40},
    {"guest.callback", 20},          {"guest.csd_unlock", 30}};
constexpr double kLine = 48;  // skylake-2s-40c: same_node_ns

double round_trip(const std::string& toml, int vcpus = 2) {
  auto s = make_setup("skylake-2s-40c", "kvm-skylake-pv-ipi.toml", {0, 1}, vcpus, {}, toml, {}, 400);
  testing::fix_x86_costs(s.spec.profile, "ipi_benchmark", kIpiBenchmarkNs);
  const RunResult r = testing::run(s, "ipi_benchmark");
  for (const auto& m : r.metrics)
    if (m.name == "round_trip") return m.summary.mean;
  ADD_FAILURE() << "no metric round_trip";
  return 0;
}

TEST(IpiBenchmark, SelfIpiIsTheLoopTwoClockReadsAndTheLocalCall) {
  EXPECT_DOUBLE_EQ(round_trip("case = \"self\""), 25 + 45 + 30 + 45 + 20);
}

TEST(IpiBenchmark, NormalIpiPaysSixLineHandOvers) {
  // loop 25 + any_but 1 + ktime_get 45 + csd 40 + send 5 + 400 + 200 + 100 + injection 700 + entry 100
  // + handle_ipi's ktime_get 45 + callback 20 + csd_unlock 30, and six lines.
  EXPECT_DOUBLE_EQ(round_trip("case = \"normal\"\nmechanism = \"x2apic-physical\""),
                   25 + 1 + 45 + 40 + 705 + 700 + 100 + 45 + 20 + 30 + 6 * kLine);
}

TEST(IpiBenchmark, BroadcastToOneCpuReadsNoClockAndPaysTheCsdLineTwice) {
  EXPECT_DOUBLE_EQ(round_trip("case = \"broadcast\"\nmechanism = \"x2apic-physical\""),
                   25 + 40 + 705 + 700 + 100 + 20 + 30 + 2 * kLine);
}

}  // namespace
}  // namespace ipilab::workload
