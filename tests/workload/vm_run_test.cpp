// The simulation core (vm_run.h) through real workloads, mechanisms and profiles: call_single_queue
// coalescing, the polling policy, conservation of requests and IPIs, Little's law on every resource
// of a storm, determinism (also from several threads at once), memory flat in iterations.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <thread>

#include "common/error.h"
#include "run_helpers.h"
#include "workload/run_common.h"
#include "workload/vm_run.h"

namespace ipilab::workload {
namespace {
using testing::first_n;

using testing::make_setup;
using testing::run;


void set_state(testing::Setup& s, topology::VcpuState st) {
  for (auto& v : s.spec.vm.vcpus) v.initial_state = st;
}

// Two senders call one idle target at the same instant; the second CSD finds the call_single_queue
// busy and sends no IPI of its own (Linux __smp_call_single_queue): one interrupt serves both.
TEST(VmRun_CallSingleQueue, ACallQueuedOnABusyQueueSendsNoIpi) {
  auto s = make_setup("skylake-2s-40c", "kvm-skylake-pv-ipi.toml", first_n(3), 8192, {2},
                      "mechanism = \"x2apic-physical\"\nsenders = 2\ntargets = \"list\"\ntarget_list = [2]\n"
                      "handler = \"callback\"\n",
                      {}, 2000);
  s.spec.warmup = 0;
  const RunResult r = run(s, "storm");
  const auto coalesced = r.counters.at("coalesced");
  const auto ipis = r.counters.at("ipis_delivered");
  EXPECT_GT(coalesced, 0u);
  // Every call reached the target: each one either had an IPI or was coalesced behind one.
  EXPECT_EQ(ipis + coalesced, 2000u);
  EXPECT_EQ(r.counters.at("sends"), ipis);
  EXPECT_EQ(r.counters.at("lost"), 0u);
}

// skip-if-polling: a polling target gets need_resched instead of an IPI (b2a02fc43a1f); always-ipi
// sends every one; a target in HLT is not polling, so the policy cannot skip. The skipping senders
// think 2 us between calls, longer than the target's schedule_idle() after each flush (500 ns), so
// each call finds it polling again.
TEST(VmRun_PollingPolicy, SkipIfPollingSendsNoIpiToPollingTargetsOnly) {
  const char* base = "mechanism = \"x2apic-physical\"\nsenders = 2\ntargets = \"partner\"\npartner_offset = 2\n"
                     "handler = \"callback\"\n";
  auto skip = make_setup("skylake-2s-40c", "kvm-skylake-pv-ipi.toml", first_n(4), 8192, {},
                         std::string(base) + "polling = \"skip-if-polling\"\nthink_ns = 2000\n", {}, 1000);
  set_state(skip, topology::VcpuState::Polling);
  auto always = make_setup("skylake-2s-40c", "kvm-skylake-pv-ipi.toml", first_n(4), 8192, {},
                           std::string(base) + "polling = \"always-ipi\"\n", {}, 1000);
  set_state(always, topology::VcpuState::Polling);
  auto hlt = make_setup("skylake-2s-40c", "kvm-skylake-pv-ipi.toml", first_n(4), 8192, {},
                        std::string(base) + "polling = \"skip-if-polling\"\n", {}, 1000);
  set_state(hlt, topology::VcpuState::Halted);
  const RunResult rs = run(skip, "storm"), ra = run(always, "storm"), rh = run(hlt, "storm");
  EXPECT_EQ(rs.counters.at("sends"), 0u);
  EXPECT_EQ(rs.counters.at("polling_skips"), 1000u);
  EXPECT_EQ(ra.counters.at("sends"), 1000u);
  EXPECT_EQ(ra.counters.at("polling_skips"), 0u);
  EXPECT_EQ(rh.counters.at("sends"), 1000u);
  // Skipping the ICR-write exit and the injection is the whole point: far faster.
  EXPECT_LT(rs.metrics[0].summary.mean * 5, ra.metrics[0].summary.mean);
  // HLT targets pay the wake-up on top of the IPI.
  EXPECT_GT(rh.metrics[0].summary.mean, ra.metrics[0].summary.mean + 1000);
}

// Back to back, the next call comes while the target is still in schedule_idle() after the last
// flush (not polling, interrupts off): it gets an IPI, taken when schedule_idle() ends, so skipping
// saves nothing there (the skip path is not free).
TEST(VmRun_PollingPolicy, BackToBackCallsFindTheTargetInScheduleIdle) {
  const char* base = "mechanism = \"x2apic-physical\"\nsenders = 2\ntargets = \"partner\"\npartner_offset = 2\n"
                     "handler = \"callback\"\n";
  auto skip = make_setup("skylake-2s-40c", "kvm-skylake-pv-ipi.toml", first_n(4), 8192, {},
                         std::string(base) + "polling = \"skip-if-polling\"\n", {}, 1000);
  set_state(skip, topology::VcpuState::Polling);
  auto always = make_setup("skylake-2s-40c", "kvm-skylake-pv-ipi.toml", first_n(4), 8192, {},
                           std::string(base) + "polling = \"always-ipi\"\n", {}, 1000);
  set_state(always, topology::VcpuState::Polling);
  const RunResult rs = run(skip, "storm"), ra = run(always, "storm");
  EXPECT_GT(rs.counters.at("sends"), 900u);
  EXPECT_GT(rs.metrics[0].summary.mean, 0.9 * ra.metrics[0].summary.mean);
}

// Every request is served by its own IPI, coalesced, served by a polling flush or lost, and every
// IPI sent is delivered, merged, lost or in flight — checked by an observer counting on its own.
class Tally final : public Observer {
 public:
  std::map<Served, std::uint64_t> served;
  std::uint64_t arrivals = 0, merged = 0, handlers = 0, sends = 0;
  bool ordered = true;
  void on_send(sim::Ps start, sim::Ps end, unsigned, std::uint32_t, std::span<const unsigned>) override {
    ++sends;
    ordered &= end >= start;
  }
  void on_request(sim::Ps, unsigned, unsigned, Served how, std::uint64_t, std::string_view) override { ++served[how]; }
  void on_arrival(sim::Ps, unsigned, std::uint64_t, bool m) override {
    ++arrivals;
    merged += m;
  }
  void on_handler(unsigned, std::uint64_t, sim::Ps start, sim::Ps entry, sim::Ps end) override {
    ++handlers;
    ordered &= start <= entry && entry <= end;
  }
};

TEST(VmRun_Conservation, CountsAddUpForEveryMechanismAndPolicy) {
  struct Case {
    const char* preset;
    const char* profile;
    int vcpus;
    std::string params;
    topology::VcpuState state;
  };
  const std::vector<Case> cases = {
      {"skylake-2s-40c", "kvm-skylake-pv-ipi.toml", 16, "mechanism = \"x2apic-physical\"\n", topology::VcpuState::Halted},
      {"skylake-2s-40c", "kvm-skylake-pv-ipi.toml", 16, "mechanism = \"x2apic-cluster\"\n", topology::VcpuState::Running},
      {"skylake-2s-40c", "kvm-skylake-pv-ipi.toml", 16, "mechanism = \"kvm-pv\"\nthink_ns = 3000\narrivals = \"poisson\"\n",
       topology::VcpuState::Halted},
      {"skylake-2s-40c", "kvm-skylake-pv-ipi.toml", 16, "mechanism = \"hyperv\"\n", topology::VcpuState::Halted},
      {"skylake-2s-40c", "kvm-skylake-pv-ipi.toml", 16,
       "mechanism = \"x2apic-physical\"\nsenders = 8\ntargets = \"partner\"\npolling = \"skip-if-polling\"\n",
       topology::VcpuState::Polling},
      {"kunpeng920-2s", "kunpeng920-2s.toml", 64, "mechanism = \"gicv4.1-vsgi\"\nsend = \"ipi\"\ntargets = \"next\"\n",
       topology::VcpuState::Running},
      {"kunpeng920-2s", "kunpeng920-2s.toml", 8, "mechanism = \"gicv3-emulated-sgi\"\nsend = \"ipi\"\n",
       topology::VcpuState::Running},
  };
  for (const auto& c : cases) {
    auto s = make_setup(c.preset, c.profile, first_n(c.vcpus), 8192, {}, c.params, {}, 2000);
    set_state(s, c.state);
    if (std::string(c.preset) == "kunpeng920-2s") s.spec.vm.nr_cpus = 64;
    Tally t;
    Bound b(s.spec, "x2apic-physical");
    const std::string why = c.params;
    // Run through the workload (it builds its own Bound); the observer needs the core directly.
    RunConfig cfg;
    cfg.spec = &s.spec;
    cfg.mechanism = b.mechanism.get();
    const bool ipi = c.params.find("send = \"ipi\"") != std::string::npos;
    cfg.uses_calls = !ipi;
    cfg.polling = c.params.find("skip-if-polling") != std::string::npos ? PollingPolicy::SkipIfPolling
                                                                         : PollingPolicy::AlwaysIpi;
    cfg.iterations = 2000;
    cfg.warmup = 100;
    cfg.observer = &t;
    if (!ipi) cfg.csd_functions = {{{b.pricer.step("target", "flush", cost::keys::guest_callback)}, false}};
    cfg.ipi_bodies = {HandlerBody{{}, true}};
    const bool partner = c.params.find("partner") != std::string::npos;
    cfg.programs.resize(static_cast<std::size_t>(c.vcpus));
    for (int i = 0; i < (partner ? c.vcpus / 2 : c.vcpus); ++i) {
      std::vector<unsigned> targets;
      if (partner) {
        targets = {static_cast<unsigned>(i + c.vcpus / 2)};
      } else if (ipi) {
        targets = {static_cast<unsigned>((i + 1) % c.vcpus)};
      } else {
        for (int k = 0; k < c.vcpus; ++k)
          if (k != i) targets.push_back(static_cast<unsigned>(k));
      }
      const Op op = ipi ? Op::ipi({}, 1, 0, true)
                        : Op::call({}, targets.size() == 1 ? 0xFB : 0xFC, 0, true,
                                   targets.size() == 1 ? Addressing::One : Addressing::Mask);
      cfg.programs[static_cast<std::size_t>(i)] = std::make_unique<LoopProgram>(targets, std::vector<Op>{Op::mark(), op});
    }
    const RunOutput out = run_vm(cfg, b.pricer);
    const Conservation& k = out.conservation;
    EXPECT_TRUE(k.holds()) << why;
    EXPECT_GT(k.requests, 0u) << why;
    // The observer saw the same decisions the core counted.
    EXPECT_EQ(t.served[Served::Coalesced], k.coalesced) << why;
    EXPECT_EQ(t.served[Served::Polling], k.polling) << why;
    EXPECT_EQ(t.served[Served::Lost], k.lost_requests) << why;
    EXPECT_EQ(t.served[Served::OwnIpi], k.own_ipi) << why;
    // Arrivals: at least the IPIs taken (delivered or merged), at most every IPI that went out.
    EXPECT_GE(t.arrivals, k.ipis_delivered + k.ipis_merged) << why;
    EXPECT_LE(t.arrivals, k.ipis_sent - k.ipis_lost + k.misdelivered) << why;
    EXPECT_EQ(k.ipis_sent, k.ipis_delivered + k.ipis_merged + k.ipis_lost + k.ipis_in_flight) << why;
    EXPECT_TRUE(t.ordered) << why;
  }
}

// Little's law, L = lambda * W (+ the items carried into the window), on every resource of a storm:
// the time-average number in the system is integrated from n(t); the sojourns are summed per item.
TEST(VmRun_LittlesLaw, HoldsOnEveryResourceOfAStorm) {
  for (const char* mech : {"x2apic-physical", "kvm-pv", "hyperv"}) {
    auto s = make_setup("skylake-2s-40c", "kvm-skylake-pv-ipi.toml", first_n(32), 8192, first_n(32),
                        std::string("mechanism = \"") + mech + "\"\nthink_ns = 2000\n", {}, 5000);
    const RunResult r = run(s, "storm");
    ASSERT_GT(r.resources.size(), 64u);
    std::map<std::string, int> kinds;
    for (const auto& x : r.resources) {
      ++kinds[x.kind];
      EXPECT_TRUE(x.little_exact) << x.name;
      EXPECT_NEAR(x.little_l, x.little_lambda_w + x.little_carried, 1e-9 * std::max(1.0, x.little_l)) << mech << " " << x.name;
      if (x.little_l > 0.05) {
        EXPECT_LT(x.little_carried, 0.1 * x.little_l) << x.name;  // the window is long: lambda * W alone is close
      }
      EXPECT_GE(x.utilisation, 0.0);
      EXPECT_LE(x.utilisation, 1.0 + 1e-9);
    }
    EXPECT_EQ(kinds["call_single_queue"], 32);
    EXPECT_EQ(kinds["interrupts"], 32);
    EXPECT_EQ(kinds["hypervisor"], 32);
  }
  // The ITS port of a vSGI storm through one ITS is saturated, and Little's law holds there too.
  auto v = make_setup("kunpeng920-2s", "kunpeng920-2s.toml", first_n(64), 64, {},
                      "mechanism = \"gicv4.1-vsgi\"\nfind_4_1_its = \"pre-seed\"\nsend = \"ipi\"\ntargets = \"next\"\n", {}, 5000);
  const RunResult rv = run(v, "storm");
  const auto its = std::find_if(rv.resources.begin(), rv.resources.end(), [](const ResourceReport& x) { return x.kind == "its_sgir"; });
  ASSERT_NE(its, rv.resources.end());
  EXPECT_EQ(its->name, "its1.sgir");
  EXPECT_GT(its->utilisation, 0.99);
  EXPECT_NEAR(its->little_l, its->little_lambda_w + its->little_carried, 1e-9 * its->little_l);
}

TEST(VmRun_Determinism, SameSeedSameResultsAlsoFromParallelThreads) {
  auto make = [] {
    return make_setup("skylake-2s-40c", "kvm-skylake-pv-ipi.toml", first_n(16), 8192, first_n(16),
                      "mechanism = \"kvm-pv\"\nthink_ns = 1000\narrivals = \"poisson\"\n", {}, 3000);
  };
  auto a = make();
  const RunResult ra = run(a, "storm");
  // Four runs of the same variant at once (the sweep does this): nothing may be shared.
  std::vector<RunResult> par(4);
  std::vector<testing::Setup> setups;
  for (int i = 0; i < 4; ++i) setups.push_back(make());
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) threads.emplace_back([&, i] { par[static_cast<std::size_t>(i)] = run(setups[static_cast<std::size_t>(i)], "storm"); });
  for (auto& t : threads) t.join();
  for (const auto& r : par) {
    EXPECT_EQ(r.metrics[0].summary.mean, ra.metrics[0].summary.mean);
    EXPECT_EQ(r.metrics[0].summary.p99, ra.metrics[0].summary.p99);
    EXPECT_EQ(r.counters, ra.counters);
    EXPECT_EQ(r.events, ra.events);
  }
  auto b = make();
  b.spec.seed = 8;
  EXPECT_NE(run(b, "storm").metrics[0].summary.mean, ra.metrics[0].summary.mean);
}

TEST(VmRun_Memory, EventSlotsDoNotGrowWithIterations) {
  auto slots = [](std::uint64_t iterations) {
    auto s = make_setup("skylake-2s-40c", "kvm-skylake-pv-ipi.toml", first_n(32), 8192, first_n(32),
                        "mechanism = \"x2apic-cluster\"\n", {}, iterations);
    Bound b(s.spec, "x2apic-cluster");
    RunConfig cfg;
    cfg.spec = &s.spec;
    cfg.mechanism = b.mechanism.get();
    cfg.uses_calls = true;
    cfg.iterations = iterations;
    cfg.csd_functions = {{{b.pricer.step("target", "flush", cost::keys::guest_callback)}, false}};
    cfg.programs.resize(32);
    for (unsigned i = 0; i < 32; ++i) {
      std::vector<unsigned> t;
      for (unsigned k = 0; k < 32; ++k)
        if (k != i) t.push_back(k);
      cfg.programs[i] = std::make_unique<LoopProgram>(t, std::vector<Op>{Op::mark(), Op::call({}, 0xFC, 0, true, Addressing::Mask)});
    }
    return run_vm(cfg, b.pricer).event_slots;
  };
  const std::size_t small = slots(2000), big = slots(20000);
  EXPECT_EQ(small, big);
  EXPECT_LE(big, std::size_t{4096});
}

// A vCPU pinned next to another on one host CPU would need time-sharing, which is not modelled.
TEST(VmRun_Input, TwoVcpusOnOneHostCpuIsAnInputError) {
  auto s = make_setup("skylake-2s-40c", "kvm-skylake-pv-ipi.toml", {0, 0}, 8192, {}, "mechanism = \"x2apic-physical\"\n");
  try {
    run(s, "smp_call_function_single");
    FAIL() << "no InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("vm.pin"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("host CPU 0"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace ipilab::workload

namespace ipilab::workload {
namespace {

// Seed 000 v2 misroutes VP 70's IPI (BIT_ULL(70) shifts to VP 6): two senders calling CPU 2 (VP 70)
// both lose every call; the CSDs are withdrawn with the reason, so nothing strands and the run ends.
TEST(VmRun_LostIpi, EveryCallToAMisroutedVpIsLostWithItsReason) {
  auto s = make_setup("ws2019-2s-e5-2420v2", "hyperv-ws2019.toml", {0, 1, 2}, 8192, {2},
                      "mechanism = \"hyperv\"\nsend_ipi_one = \"seed-v2\"\nsenders = 2\ntargets = \"list\"\n"
                      "target_list = [2]\nhandler = \"callback\"\n",
                      {{2, 70}}, 400);
  s.spec.warmup = 0;
  // Through the storm workload's result:
  const RunResult r = run(s, "storm");
  EXPECT_EQ(r.counters.at("ipis_delivered"), 0u);
  EXPECT_GT(r.counters.at("lost"), 0u);
  EXPECT_EQ(r.metrics[0].summary.count, 0u);  // no call completed with its callback
  bool reason = false;
  for (const auto& n : r.notes) reason |= n.find("oracle: CPU") != std::string::npos && n.find("lost {2}") != std::string::npos;
  EXPECT_TRUE(reason);
  for (const auto& n : r.notes) EXPECT_EQ(n.find("MODEL ERROR"), std::string::npos) << n;
}

}  // namespace
}  // namespace ipilab::workload
