// The core's observer hooks for timelines (vm_run.h Observer: on_mark, on_queue, on_merge,
// on_send_step, on_resource), attached through RunSpec::observer to real workloads: each hook's
// count and order against the core's own conservation counts and the other hooks.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "run_helpers.h"
#include "workload/vm_run.h"

namespace ipilab::workload {
namespace {
using testing::first_n;

using testing::make_setup;
using testing::run;


class Recorder final : public Observer {
 public:
  std::vector<std::uint64_t> marks;
  std::uint64_t queued = 0, requests = 0, sends = 0, merges = 0, merged_arrivals = 0, handlers = 0;
  std::map<std::pair<unsigned, unsigned>, std::int64_t> open_queue;  // (sender, target) -> queued - decided
  std::uint64_t requests_without_queue = 0;
  // IPIs arrived (not merged) and not yet handled, per target; merges into one of them.
  std::map<unsigned, std::set<std::uint64_t>> pending;
  std::map<std::uint64_t, std::uint64_t> merged_into;  // ipi -> into
  std::uint64_t merge_into_unknown = 0, merge_served_elsewhere = 0;
  // Send steps since the last on_send, per sender.
  std::map<unsigned, std::vector<std::pair<sim::Ps, sim::Ps>>> steps;
  std::uint64_t step_count = 0, steps_outside = 0, steps_overlapping = 0;
  std::map<std::string, sim::Ps> busy_until;
  std::uint64_t resource_steps = 0, resource_overlaps = 0, resource_asked_late = 0;
  std::set<std::string> resources;

  void on_mark(sim::Ps, unsigned, std::uint64_t n) override { marks.push_back(n); }
  void on_queue(sim::Ps, unsigned sender, unsigned target, bool) override {
    ++queued;
    ++open_queue[{sender, target}];
  }
  void on_request(sim::Ps, unsigned sender, unsigned target, Served, std::uint64_t, std::string_view) override {
    ++requests;
    auto it = open_queue.find({sender, target});
    if (it == open_queue.end() || it->second == 0) ++requests_without_queue;
    else --it->second;
  }
  void on_arrival(sim::Ps, unsigned target, std::uint64_t ipi, bool merged) override {
    if (merged) ++merged_arrivals;
    else if (ipi) pending[target].insert(ipi);
  }
  void on_merge(sim::Ps, unsigned target, std::uint64_t ipi, std::uint64_t into) override {
    ++merges;
    if (!pending[target].count(into)) ++merge_into_unknown;
    merged_into[ipi] = into;
  }
  void on_handler(unsigned cpu, std::uint64_t ipi, sim::Ps, sim::Ps, sim::Ps) override {
    ++handlers;
    if (ipi) pending[cpu].erase(ipi);
  }
  void on_send_step(unsigned cpu, sim::Ps start, sim::Ps end, std::string_view) override {
    ++step_count;
    steps[cpu].push_back({start, end});
  }
  void on_send(sim::Ps start, sim::Ps end, unsigned sender, std::uint32_t, std::span<const unsigned>) override {
    ++sends;
    sim::Ps prev = start;
    for (const auto& [s, e] : steps[sender]) {
      if (s < start || e > end || e < s) ++steps_outside;
      if (s < prev) ++steps_overlapping;
      prev = e;
    }
    steps[sender].clear();
  }
  void on_resource(std::string_view r, sim::Ps asked, sim::Ps start, sim::Ps end, std::string_view label) override {
    ++resource_steps;
    resources.insert(std::string(r));
    if (asked > start || end < start || label.empty()) ++resource_asked_late;
    auto [it, fresh] = busy_until.try_emplace(std::string(r), end);
    if (!fresh) {
      if (start < it->second) ++resource_overlaps;
      it->second = end;
    }
  }
};

// Marks: one per iteration start, numbered 1.. over all vCPUs; the run stops at warm-up +
// iterations + 1. Every queued CSD gets exactly one decision, after its on_queue.
TEST(Observer_Hooks, MarksAndQueuedCallsOfACallStorm) {
  auto s = make_setup("skylake-2s-40c", "kvm-skylake-pv-ipi.toml", first_n(8), 8192, first_n(8),
                      "mechanism = \"x2apic-cluster\"\nthink_ns = 2000\n", {}, 600);
  s.spec.warmup = 40;
  Recorder rec;
  s.spec.observer = &rec;
  const RunResult r = run(s, "storm");
  ASSERT_EQ(rec.marks.size(), 641u);
  for (std::size_t i = 0; i < rec.marks.size(); ++i) ASSERT_EQ(rec.marks[i], i + 1);
  // 7 targets per call; every request was queued first (no raw IPIs in a call storm).
  EXPECT_GT(rec.queued, 600u * 7);
  EXPECT_EQ(rec.requests_without_queue, 0u);
  std::int64_t undecided = 0;
  for (const auto& [k, n] : rec.open_queue) undecided += n;
  EXPECT_EQ(undecided, 0);
  EXPECT_EQ(rec.requests, rec.queued);
  EXPECT_GT(r.counters.at("coalesced"), 0u);
  // Sender steps: inside their send, in order, one after another.
  EXPECT_GT(rec.step_count, rec.sends);
  EXPECT_EQ(rec.steps_outside, 0u);
  EXPECT_EQ(rec.steps_overlapping, 0u);
  // The hypervisor of each pCPU (the ICR-write exits, HLT exits, wake-ups) runs one step at a time.
  EXPECT_GT(rec.resource_steps, 0u);
  EXPECT_EQ(rec.resource_overlaps, 0u);
  EXPECT_EQ(rec.resource_asked_late, 0u);
  EXPECT_TRUE(rec.resources.count("pcpu0.hypervisor"));
}

// Raw IPIs from 8 senders into one target: later IPIs of the same vector merge into the pending one
// (one IRR bit); on_merge names an IPI that has arrived and is not yet handled, one per merged arrival.
TEST(Observer_Hooks, MergesNameThePendingInterrupt) {
  auto s = make_setup("skylake-2s-40c", "kvm-skylake-pv-ipi.toml", first_n(9), 8192, {},
                      "mechanism = \"x2apic-physical\"\nsend = \"ipi\"\nsenders = 8\ntargets = \"list\"\n"
                      "target_list = [8]\nwait = false\n",
                      {}, 2000);
  Recorder rec;
  s.spec.observer = &rec;
  run(s, "storm");
  EXPECT_GT(rec.merges, 100u);
  EXPECT_EQ(rec.merges, rec.merged_arrivals);
  EXPECT_EQ(rec.merge_into_unknown, 0u);
  EXPECT_EQ(rec.queued, 0u);  // raw IPIs are not queued CSDs
}

// GICv4.1 vSGIs through one ITS: the GITS_SGIR port is a resource the senders queue on.
TEST(Observer_Hooks, ItsPortStepsQueueOneAtATime) {
  auto s = make_setup("kunpeng920-2s", "kunpeng920-2s.toml", first_n(64), 64, {},
                      "mechanism = \"gicv4.1-vsgi\"\nfind_4_1_its = \"pre-seed\"\nsend = \"ipi\"\ntargets = \"next\"\n", {},
                      500);
  Recorder rec;
  s.spec.observer = &rec;
  run(s, "storm");
  // find_4_1_its before the seed: the head of its_nodes (reverse firmware order): socket 1's ITS for all.
  ASSERT_TRUE(rec.resources.count("its1.sgir"));
  EXPECT_FALSE(rec.resources.count("its0.sgir"));
  EXPECT_EQ(rec.resource_overlaps, 0u);
  EXPECT_EQ(rec.resource_asked_late, 0u);
}

}  // namespace
}  // namespace ipilab::workload
