// AVIC / x2AVIC, xAPIC and preempted targets (KVM PV TLB flush): who gets the interrupt by which path,
// the exits on the sender, and the round trip as the sum of the priced parts (every key of the x86
// mechanisms at the ns below, the rest 0).
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

#include "common/error.h"
#include "run_helpers.h"
#include "workload/mechanism.h"
#include "workload/target_path.h"
#include "workload/vm_run.h"

namespace ipilab::workload {
namespace {
using testing::counter;

using testing::make_setup;
using testing::Setup;

const std::map<std::string, double> kAvicNs = {
    {"guest.counter_read", 1000},  {"guest.bench_loop", 10},       {"guest.ipi_path_call", 5},
    {"vm.exit_entry", 400},        {"x2apic.icr_write_exit", 200}, {"x2apic.icr_dest_per_target", 100},
    {"vcpu.halt_wakeup", 3000},    {"apic.interrupt_injection", 700}, {"guest.irq_entry", 100},
    {"vcpu.halt_exit", 1500},      {"vcpu.halt_poll_wakeup", 500}, {"apic.event_injection", 250},
    {"avic.icr_write", 30},        {"avic.doorbell", 60},          {"avic.incomplete_ipi", 900},
    {"xapic.icr_write_exit", 150}, {"xapic.mmio_exit", 600},       {"vcpu.preempted_wait", 50000},
    {"guest.tlb_flush_handler", 0}, {"mem.cacheline_same_node", 110}};

Setup with_avic_profile(Setup s) {
  std::set<std::string> keys;
  for (const auto* m : list_mechanisms())
    if (m->arch == Arch::X86)
      for (const auto& k : m->cost_keys) keys.emplace(k.name);
  for (const char* w : {"kvm_bench", "multicast"})
    for (const auto& k : find_workload(w, "test").cost_keys) keys.emplace(k.name);
  for (const auto& k : core_cost_keys()) keys.emplace(k.name);
  for (const std::string& k : keys) {
    const auto it = kAvicNs.find(k);
    s.spec.profile.set(k, it == kAvicNs.end() ? 0.0 : it->second, cost::Unit::Ns, 0, "test");
  }
  return s;
}

RunResult avic_bench(const std::string& toml, bool halted, std::uint64_t iterations = 400) {
  auto s = with_avic_profile(make_setup("genoa-2s-192c", "kvm-genoa-avic.toml", {0, 1}, 2,
                                   halted ? std::vector<int>{1} : std::vector<int>{}, toml, {}, iterations));
  return testing::run(s, "kvm_bench");
}

double sample(const RunResult& r) {
  for (const auto& m : r.metrics)
    if (m.name == "sample") return m.summary.mean;
  ADD_FAILURE() << "no sample metric";
  return 0;
}


// Two same-node line transfers (mem.cacheline_same_node, 110 ns: the flag and the CSD) per round trip.
constexpr double kRead = 1000, kLoop = 10, kEntry = 100, kLines = 220;

TEST(Avic, X2avicRunningTargetGetsADoorbellAndTheSenderNoExit) {
  const RunResult r = avic_bench("mechanism = \"x2avic\"\nbatch = 10", false, 2000);
  EXPECT_NEAR(sample(r), kRead / 10 + kLoop + 5 + 30 + 60 + 700 + kEntry + kLines, 1e-6);
  EXPECT_EQ(counter(r, "vm_exits"), 0u);
  EXPECT_EQ(counter(r, "avic_icr_writes"), counter(r, "ipis_delivered"));
  EXPECT_EQ(counter(r, "avic_incomplete_ipi_exits"), 0u);
  EXPECT_EQ(counter(r, "target_path.running_guest_posted"), counter(r, "ipis_delivered"));
}

TEST(Avic, ABlockedTargetCostsTheSenderAnIncompleteIpiExit) {
  const RunResult r = avic_bench("mechanism = \"x2avic\"", true);
  const std::uint64_t n = counter(r, "ipis_delivered");
  EXPECT_GT(n, 0u);
  EXPECT_DOUBLE_EQ(sample(r), kRead + kLoop + 5 + 30 + 400 + 900 + 60 + 3000 + kEntry + kLines);
  EXPECT_EQ(counter(r, "avic_incomplete_ipi_exits"), n);
  EXPECT_EQ(counter(r, "vm_exits"), n);
  EXPECT_EQ(counter(r, "target_path.halted_blocked"), n);
}

TEST(Avic, HaltPollingKeepsIsRunningSoNoExit) {
  const RunResult r = avic_bench("mechanism = \"x2avic\"\nhalt_poll_ns = 200000", true);
  EXPECT_DOUBLE_EQ(sample(r), kRead + kLoop + 5 + 30 + 60 + 500 + kEntry + kLines);
  EXPECT_EQ(counter(r, "avic_incomplete_ipi_exits"), 0u);
  EXPECT_EQ(counter(r, "target_path.halted_host_poll"), counter(r, "ipis_delivered"));
}

TEST(Avic, XapicGuestUnderAvicAlsoSendsWithoutAnExit) {
  const RunResult r = avic_bench("mechanism = \"avic\"\nbatch = 10", false, 2000);
  EXPECT_NEAR(sample(r), kRead / 10 + kLoop + 5 + 30 + 60 + 700 + kEntry + kLines, 1e-6);
  EXPECT_EQ(counter(r, "vm_exits"), 0u);
  EXPECT_EQ(counter(r, "avic_icr_writes"), counter(r, "sends"));
}

TEST(Avic, ApicvIsNotAParameterOfAvic) {
  EXPECT_THROW(avic_bench("mechanism = \"x2avic\"\napicv = false", false), InputError);
}

TEST(Avic, AnApicIdAboveTheTableInhibitsX2avic) {
  std::vector<int> pins;
  for (int i = 0; i < 256; ++i) pins.push_back(i);
  auto s = with_avic_profile(make_setup("genoa-2s-192c", "kvm-genoa-avic.toml", pins, 256, {},
                                   "mechanism = \"x2avic\"\nmax_physical_id = 254\nbatch = 10", {}, 400));
  const RunResult r = testing::run(s, "kvm_bench");
  EXPECT_EQ(counter(r, "avic_icr_writes"), 0u);
  EXPECT_EQ(counter(r, "vm_exits"), counter(r, "sends"));
  EXPECT_EQ(counter(r, "target_path.running_guest_exit"), counter(r, "ipis_delivered"));
  bool noted = false;
  for (const auto& n : r.notes) noted |= n.find("x2AVIC inhibited: APIC ID 255") != std::string::npos;
  EXPECT_TRUE(noted);
}

TEST(Xapic, ApicWriteExitWithApicvThreeMmioExitsWithout) {
  const RunResult on = avic_bench("mechanism = \"xapic\"\nbatch = 10", false, 2000);
  EXPECT_NEAR(sample(on), kRead / 10 + kLoop + 5 + 400 + 150 + 100 + 700 + kEntry + kLines, 1e-6);
  EXPECT_EQ(counter(on, "vm_exits"), counter(on, "sends"));
  const RunResult off = avic_bench("mechanism = \"xapic\"\nbatch = 10\napicv = false", false, 2000);
  EXPECT_NEAR(sample(off), kRead / 10 + kLoop + 5 + 3 * (400 + 600) + 150 + 100 + 400 + 250 + kEntry + kLines, 1e-6);
  EXPECT_EQ(counter(off, "vm_exits"), 3 * counter(off, "sends"));
  EXPECT_EQ(counter(off, "target_path.running_guest_exit"), counter(off, "ipis_delivered"));
}

TEST(Xapic, FlatDriverRefusesANinthVcpu) {
  std::vector<int> pins{0, 1, 2, 3, 4, 5, 6, 7, 8};
  auto s = with_avic_profile(make_setup("genoa-2s-192c", "kvm-genoa-avic.toml", pins, 9, {},
                                   "mechanism = \"xapic\"\napic_driver = \"flat\"", {}, 50));
  EXPECT_THROW(testing::run(s, "kvm_bench"), InputError);
}

// A TLB shootdown from vCPU 0 to 1..3 with 2 and 3 preempted.
RunResult shootdown(const std::string& mech, bool pv_flush) {
  auto s = with_avic_profile(make_setup("genoa-2s-192c", "kvm-genoa-avic.toml", {0, 1, 2, 3}, 4, {},
                                   "mechanism = \"" + mech + "\"\nsender = 0\ntargets = 3\nhandler = \"tlb_flush\"\nunit = \"ns\"" +
                                       (mech == "kvm-pv" ? std::string("\npv_tlb_flush = ") + (pv_flush ? "true" : "false") : ""),
                                   {}, 200));
  for (int c : {2, 3}) s.spec.vm.vcpus[static_cast<std::size_t>(c)].initial_state = topology::VcpuState::Preempted;
  return testing::run(s, "multicast");
}

TEST(Preempted, ANativeFlushWaitsForThePreemptedTargets) {
  const RunResult r = shootdown("kvm-pv", false);
  const std::uint64_t sends = counter(r, "sends");
  EXPECT_GT(sends, 0u);
  EXPECT_EQ(counter(r, "target_path.preempted"), 2 * sends);
  EXPECT_EQ(counter(r, "pv_tlb_flush_skips"), 0u);
  EXPECT_GT(r.metrics.at(0).summary.mean, 50000.0);  // vcpu.preempted_wait is on the critical path
}

TEST(Preempted, PvTlbFlushSkipsThemAndWaitsForTheRunningOneOnly) {
  const RunResult r = shootdown("kvm-pv", true);
  const std::uint64_t sends = counter(r, "sends");
  EXPECT_GT(sends, 0u);
  EXPECT_EQ(counter(r, "pv_tlb_flush_skips"), 2 * sends);
  EXPECT_EQ(counter(r, "target_path.preempted"), 0u);
  EXPECT_EQ(counter(r, "target_path.running_guest_posted"), sends);  // vCPU 1 only
  EXPECT_LT(r.metrics.at(0).summary.mean, 10000.0);
}

TEST(Preempted, X2avicTargetsNotRunningExitOnTheSender) {
  const RunResult r = shootdown("x2avic", false);
  const std::uint64_t sends = counter(r, "sends");
  EXPECT_EQ(counter(r, "avic_incomplete_ipi_exits"), 2 * sends);
  EXPECT_EQ(counter(r, "target_path.preempted"), 2 * sends);
}

TEST(Preempted, AMechanismThatDoesNotModelItRefusesTheVm) {
  EXPECT_THROW(shootdown("native-x86", false), InputError);
}

}  // namespace
}  // namespace ipilab::workload
