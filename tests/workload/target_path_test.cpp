// Target paths (target_path.h): each delivery takes the path of its target's state, priced by that
// path's own cost keys and counted; host and guest halt-polling, APICv off, IPIv, the ICR fastpath,
// bare metal and the all-but-self shorthand change what the sender and the target pay.
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

// Every key of the x86 mechanisms, kvm_bench and the core: the listed ones to these ns, the rest 0.
const std::map<std::string, double> kTargetPathNs = {
    {"guest.counter_read", 1000},   {"guest.bench_loop", 10},           {"guest.ipi_path_call", 5},
    {"vm.exit_entry", 400},         {"x2apic.icr_write_exit", 200},     {"x2apic.icr_dest_per_target", 100},
    {"vcpu.halt_wakeup", 3000},     {"apic.interrupt_injection", 700},  {"guest.irq_entry", 100},
    {"guest.eoi", 60},              {"guest.irq_exit", 50},             {"vcpu.halt_exit", 1500},
    {"mem.cacheline_same_node", 60}, {"vcpu.halt_poll_wakeup", 500},    {"apic.event_injection", 250},
    {"ipiv.icr_write", 50},         {"ipiv.pid_post", 80},              {"x2apic.native_icr_write", 30},
    {"cpu.idle_exit", 800},         {"x2apic.icr_write_fastpath", 120}, {"vcpu.kick_blocked", 900}};

RunResult target_path_run(const std::string& toml, bool halted, std::uint64_t iterations = 400) {
  auto s = make_setup("skylake-2s-40c", "kvm-skylake-pv-ipi.toml", {0, 1}, 2,
                      halted ? std::vector<int>{1} : std::vector<int>{}, toml, {}, iterations);
  std::set<std::string> keys;
  for (const auto* m : list_mechanisms())
    if (m->arch == Arch::X86)
      for (const auto& k : m->cost_keys) keys.emplace(k.name);
  for (const auto& k : find_workload("kvm_bench", "test").cost_keys) keys.emplace(k.name);
  for (const auto& k : core_cost_keys()) keys.emplace(k.name);
  for (const std::string& k : keys) {
    const auto it = kTargetPathNs.find(k);
    s.spec.profile.set(k, it == kTargetPathNs.end() ? 0.0 : it->second, cost::Unit::Ns, 0, "test");
  }
  return testing::run(s, "kvm_bench");
}

double sample(const RunResult& r) {
  for (const auto& m : r.metrics)
    if (m.name == "sample") return m.summary.mean;
  ADD_FAILURE() << "no sample metric";
  return 0;
}


// Only `path` was taken, once per delivery.
void only_path(const RunResult& r, TargetPath path) {
  const std::uint64_t n = counter(r, "ipis_delivered");
  EXPECT_GT(n, 0u);
  for (std::size_t p = 0; p < kTargetPaths; ++p) {
    const std::string name(target_path_counter(static_cast<TargetPath>(p)));
    EXPECT_EQ(counter(r, name), static_cast<TargetPath>(p) == path ? n : 0u) << name;
  }
}

constexpr double kRead = 1000, kLoop = 10, kSend = 5 + 400 + 200 + 100, kEntry = 100, kLines = 120;
constexpr double kKick = 900;  // vcpu.kick_blocked: the sender's exit wakes a sleeping target thread

TEST(TargetPaths, BlockedTargetPaysTheWakeUp) {
  const RunResult r = target_path_run("mechanism = \"x2apic-physical\"", true);
  EXPECT_DOUBLE_EQ(sample(r), kRead + kLoop + kSend + kKick + 3000 + kEntry + kLines);
  only_path(r, TargetPath::HaltedBlocked);
}

TEST(TargetPaths, HostHaltPollingCatchesTheShortHaltsOnceItsWindowGrew) {
  // 30 us between samples: the window grows 0 -> 10 -> 20 -> 40 us in the warm-up, then catches each.
  const RunResult r = target_path_run("mechanism = \"x2apic-physical\"\nhalt_poll_ns = 200000", true);
  EXPECT_DOUBLE_EQ(sample(r), kRead + kLoop + kSend + 500 + kEntry + kLines);
  only_path(r, TargetPath::HaltedHostPoll);
}

TEST(TargetPaths, HostHaltPollingWindowTooSmallBlocks) {
  // A maximum below the 30 us halts: the window never covers one, so every target thread is asleep
  // when the send comes and the sender's exit wakes it, exactly as with no polling at all.
  const RunResult r = target_path_run("mechanism = \"x2apic-physical\"\nhalt_poll_ns = 20000", true);
  EXPECT_DOUBLE_EQ(sample(r), kRead + kLoop + kSend + kKick + 3000 + kEntry + kLines);
  only_path(r, TargetPath::HaltedBlocked);
  EXPECT_DOUBLE_EQ(sample(r), sample(target_path_run("mechanism = \"x2apic-physical\"", true)));
}

// KVM delivers an emulated xAPIC ICR write as an x2APIC one (kvm_apic_send_ipi -> __apic_accept_irq
// -> kvm_vcpu_kick): a blocked target's thread is woken on the sender's pCPU either way. (xapic's own
// exit keys are 0 here: with APICv its write is one APIC-write exit, vm.exit_entry.)
TEST(TargetPaths, XapicBlockedTargetIsKickedToo) {
  const RunResult r = target_path_run("mechanism = \"xapic\"", true);
  EXPECT_DOUBLE_EQ(sample(r), kRead + kLoop + (5 + 400 + 100) + kKick + 3000 + kEntry + kLines);
  only_path(r, TargetPath::HaltedBlocked);
}

// The kick follows the target's thread at each send: with a window that catches some halts and not
// others (it grows and shrinks), the sender pays it exactly for the deliveries that found the thread
// asleep. PV send-IPI's per-destination kick follows the same rule.
TEST(TargetPaths, HostHaltPollingKicksOnlyTheThreadsAsleep) {
  for (const char* mech : {"x2apic-physical", "kvm-pv"}) {
    const std::string m = std::string("mechanism = \"") + mech + "\"";
    const RunResult caught = target_path_run(m + "\nhalt_poll_ns = 200000", true);
    const RunResult blocked = target_path_run(m + "\nhalt_poll_ns = 20000", true);
    EXPECT_EQ(counter(caught, "target_path.halted_blocked"), 0u) << mech;
    EXPECT_EQ(counter(blocked, "target_path.halted_host_poll"), 0u) << mech;
    // The two differ by the wake-up on the target (3000 vs 500) and the kick on the sender.
    EXPECT_DOUBLE_EQ(sample(blocked) - sample(caught), 3000 - 500 + kKick) << mech;
  }
}

TEST(TargetPaths, GuestHaltPollKeepsTheTargetInGuestModeAndTurnsHostPollingOff) {
  const RunResult r = target_path_run("mechanism = \"x2apic-physical\"\nguest_halt_poll_ns = 200000\nhalt_poll_ns = 200000", true);
  EXPECT_DOUBLE_EQ(sample(r), kRead + kLoop + kSend + 700 + kEntry + kLines);
  only_path(r, TargetPath::HaltedGuestPoll);
}

TEST(TargetPaths, RunningTargetWithoutApicvIsKickedAndInjected) {
  const RunResult posted = target_path_run("mechanism = \"x2apic-physical\"\nbatch = 10", false, 2000);
  EXPECT_NEAR(sample(posted), kRead / 10 + kLoop + kSend + 700 + kEntry + kLines, 1e-6);
  only_path(posted, TargetPath::RunningGuestPosted);
  const RunResult exit = target_path_run("mechanism = \"x2apic-physical\"\nbatch = 10\napicv = false", false, 2000);
  EXPECT_NEAR(sample(exit), kRead / 10 + kLoop + kSend + 400 + 250 + kEntry + kLines, 1e-6);
  only_path(exit, TargetPath::RunningGuestExit);
}

TEST(TargetPaths, IpivSendsWithoutAnExit) {
  const RunResult r = target_path_run("mechanism = \"ipiv\"\nbatch = 10", false, 2000);
  EXPECT_NEAR(sample(r), kRead / 10 + kLoop + 5 + 50 + 80 + 700 + kEntry + kLines, 1e-6);
  EXPECT_EQ(counter(r, "vm_exits"), 0u);
  EXPECT_EQ(counter(r, "ipiv_icr_writes"), counter(r, "icr_writes"));
  EXPECT_EQ(counter(r, "icr_writes"), counter(r, "ipis_delivered"));
  only_path(r, TargetPath::RunningGuestPosted);
}

TEST(TargetPaths, IcrFastpathReplacesTheFullEmulation) {
  const RunResult r = target_path_run("mechanism = \"x2apic-physical\"\nbatch = 10\nicr_fastpath = true", false, 2000);
  EXPECT_NEAR(sample(r), kRead / 10 + kLoop + 5 + 400 + 120 + 100 + 700 + kEntry + kLines, 1e-6);
  EXPECT_EQ(counter(r, "icr_fastpath_exits"), counter(r, "vm_exits"));
  EXPECT_EQ(counter(r, "vm_exits"), counter(r, "ipis_delivered"));
}

TEST(TargetPaths, BareMetalHasNoExitAndLeavesTheCState) {
  const RunResult r = target_path_run("mechanism = \"native-x86\"", true);
  EXPECT_DOUBLE_EQ(sample(r), kRead + kLoop + 5 + 30 + 800 + kEntry + kLines);
  EXPECT_EQ(counter(r, "vm_exits"), 0u);
  only_path(r, TargetPath::HaltedNative);
}

TEST(TargetPaths, HaltPollingIsAMechanismParameterOfX86Only) {
  EXPECT_THROW(target_path_run("mechanism = \"native-x86\"\nhalt_poll_ns = 1000", true), InputError);
}

// A call-function IPI to every other vCPU: one all-but-self ICR write with shorthands, one per target
// without (x2APIC physical), whatever the PV send-IPI setting for the shorthand.
TEST(TargetPaths, AllButSelfShorthandIsOneIcrWrite) {
  for (const char* mech : {"x2apic-physical", "kvm-pv", "ipiv"}) {
    for (bool sh : {false, true}) {
      const bool spr = std::string(mech) == "ipiv";  // IPIv lives on the Sapphire Rapids profile
      auto s = make_setup(spr ? "spr-2s-112c" : "skylake-2s-40c", spr ? "kvm-spr-ipiv.toml" : "kvm-skylake-pv-ipi.toml",
                          {0, 1, 2, 3, 4, 5, 6, 7}, 8, {},
                          std::string("mechanism = \"") + mech + "\"\nsender = 0\ntargets = 7\nvector = 252\nhandler = \"callback\"\nshorthand = " +
                              (sh ? "true" : "false"),
                          {}, 50);
      const RunResult r = testing::run(s, "multicast");
      const std::uint64_t sends = counter(r, "sends");
      ASSERT_GT(sends, 0u) << mech;
      if (sh) {
        EXPECT_EQ(counter(r, "icr_writes"), sends) << mech;
        EXPECT_EQ(counter(r, "vm_exits"), sends) << mech << ": a shorthand is an exit even with IPIv";
        EXPECT_EQ(counter(r, "hypercalls"), 0u) << mech;
      } else if (std::string(mech) == "kvm-pv") {
        EXPECT_EQ(counter(r, "hypercalls"), sends);
      } else {
        EXPECT_EQ(counter(r, "icr_writes"), 7 * sends) << mech;
      }
    }
  }
}

}  // namespace
}  // namespace ipilab::workload
