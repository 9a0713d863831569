// Timed ITS commands (mechanisms/gicv4_1_its_commands.h) with every cost fixed (no spread), so each
// time is exact: Linux's BUILD_SINGLE_CMD_FUNC (its_queue_full's GITS_CREADR read per slot, the
// rd_idx snapshot of a050fa5476d4, GITS_CWRITER) and its_wait_for_range_completion (reads with
// udelay(1) between them, 1,000,000 at most), both predicates, on seed 003's 2-socket host (a
// socket crossing costs 50 ns one way there). Also the core's host-work op (interrupts wait), the
// workload's figures and its bad inputs.
#include <algorithm>
#include <map>
#include <stdexcept>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/error.h"
#include "run_helpers.h"
#include "workload/mechanisms/arm_common.h"
#include "workload/mechanisms/gicv4_1_its_commands.h"
#include "workload/run_common.h"
#include "workload/vm_run.h"

namespace ipilab::workload {
namespace {

using sim::Ps;
using testing::make_setup;
using testing::run;
using testing::Setup;

Ps ns(std::int64_t v) { return Ps{v * 1000}; }

// Kunpeng 920 2-socket host, vCPU i on pCPU pcpus[i]; the ITS keys fixed at the profile's means.
struct Rig {
  explicit Rig(std::vector<int> pcpus, gic::Find41Policy policy = gic::Find41Policy::PostSeed,
               gic::WaitPredicate pred = gic::WaitPredicate::Linear, std::size_t traffic_to = 0)
      : host(topology::load_preset("kunpeng920-2s")),
        profile(cost::Profile::load_file(testing::source_dir() + "/profiles/kunpeng920-2s.toml")) {
    vm = topology::Vm::make(host, static_cast<int>(pcpus.size()), pcpus, 64);
    for (const char* k : {"its.creadr_read", "its.command_write", "its.cwriter_write", "its.command_process",
                          "its.wait_udelay", "gic.vgic_mmio_trap"})
      profile.set(k, profile.get(k).mean.v / 1000.0, cost::Unit::Ns, 0, "test: fixed");
    pricer = std::make_unique<Pricer>(profile, bd, counters);
    gic = std::make_unique<VmGic>(host, vm, policy);
    if (traffic_to) {  // other CPUs' SYNCs bring ITS 0's queue to `traffic_to` before the timed part
      const std::uint32_t at = gic->driver->cmd_write(0);
      const std::size_t n = ((traffic_to - at) % gic::kLinuxItsQueueBytes) / gic::kItsCommandSize;
      if (n) gic->driver->post_sync_traffic(0, 0, n);
    }
    model = std::make_unique<ItsCommandModel>(host, vm, *gic, policy, pred, *pricer);
  }
  /// Runs cpu's operation begun at `start` to its end; returns its result.
  ItsOpResult finish(unsigned cpu, Ps at) {
    while (auto d = model->next(cpu, at, rng)) at += *d;
    return model->result(cpu);
  }
  std::uint64_t counter(const std::string& n) const { return counters.value(n); }

  topology::Host host;
  topology::Vm vm;
  cost::Profile profile;
  sim::Breakdown bd;
  Counters counters;
  std::unique_ptr<Pricer> pricer;
  std::unique_ptr<VmGic> gic;
  std::unique_ptr<ItsCommandModel> model;
  sim::Rng rng{7};
};

// VSGI from a vCPU on socket 0 to its local ITS 0: trap 1000; under the lock 2 x (CREADR 200 +
// write 30) + snapshot 200 = 660 -> unlock at 1660; the ITS sees CWRITER at 1720 and is done at 2120;
// read 1 (issued at 1660) sees nothing, udelay(1), read 2 at 2860 sees both: back at 3060.
TEST(ItsCommandModel, UncontendedVsgiOnTheLocalIts_ExactTimes) {
  Rig r({0, 1});
  EXPECT_EQ(r.model->targets(ItsCommandKind::Vsgi, 0), std::vector<int>{0});
  EXPECT_EQ(r.model->begin({0, ItsCommandKind::Vsgi, 0}, Ps{}, r.rng), ns(1660));
  const ItsOpResult res = r.finish(0, ns(1660));
  EXPECT_EQ(res.end, ns(3060));
  EXPECT_EQ(res.polls, 2u);
  EXPECT_EQ(res.lock_wait, Ps{});
  EXPECT_EQ(res.completion_wait, ns(1400));
  EXPECT_EQ(res.outcome, gic::WaitOutcome::Completed);
  EXPECT_EQ(r.counter("its_commands"), 2u);        // VSGI + VSYNC
  EXPECT_EQ(r.counter("its_creadr_reads"), 5u);    // 2 its_queue_full + snapshot + 2 polls
  EXPECT_EQ(r.counter("vm_exits"), 1u);
}

// Before f1a3fac4095c find_4_1_its() is the head of its_nodes (ITS 1, socket 1): every GITS_CREADR
// read crosses the sockets there and back (+100 ns) and CWRITER once (+50 ns).
TEST(ItsCommandModel, PreSeedVsgiGoesToTheRemoteIts_EveryReadCrossesTwice) {
  Rig r({0, 1}, gic::Find41Policy::PreSeed);
  EXPECT_EQ(r.model->targets(ItsCommandKind::Vsgi, 0), std::vector<int>{1});
  EXPECT_EQ(r.model->begin({0, ItsCommandKind::Vsgi, 0}, Ps{}, r.rng), ns(1960));
  const ItsOpResult res = r.finish(0, ns(1960));
  EXPECT_EQ(res.end, ns(3560));
  EXPECT_EQ(res.completion_wait, ns(1600));
}

// its->lock: a second CPU beginning at the same instant waits for the first one's 660 ns.
TEST(ItsCommandModel, SecondPosterWaitsForTheLock) {
  Rig r({0, 1});
  r.model->begin({0, ItsCommandKind::Vsgi, 0}, Ps{}, r.rng);
  EXPECT_EQ(r.model->begin({1, ItsCommandKind::Vsgi, 1}, Ps{}, r.rng), ns(2320));
  EXPECT_EQ(r.counter("its_lock_waits"), 1u);
  const ItsOpResult b = r.finish(1, ns(2320));
  EXPECT_EQ(b.lock_wait, ns(660));
  EXPECT_EQ(b.ahead, 0u);  // by its snapshot (2120) the ITS has run A's two commands: nothing ahead
}

// VMOVP: one to the head of its_nodes when every ITS has GITS_TYPER.VMOVP (its_send_vmovp).
TEST(ItsCommandModel, VmovpGoesToTheHeadOfItsNodes) {
  Rig r({0, 1});
  EXPECT_EQ(r.model->targets(ItsCommandKind::Vmovp, 0), std::vector<int>{1});
  r.model->begin({0, ItsCommandKind::Vmovp, 2}, Ps{}, r.rng);  // vPE 0 moves to pCPU 2
  r.finish(0, ns(10000));
  EXPECT_EQ(r.gic->driver->vpe_cpu(0), 2);
  EXPECT_EQ(r.counter("its_batches"), 1u);
}

// a050fa5476d4's case: CPU A posts INVDB + VSYNC at 0xffa0..0xffe0, CPU B right behind it at
// 0xffe0..0x20. Offsets predicate: A's first read (CREADR 0xffa0) is too early, its second sees 0x20:
// from < to and rd < to, so it never holds; A spins its 1,000,000 reads although both commands ran.
TEST(ItsCommandModel, OffsetsPredicateSpinsToTheTimeoutWhenCreadrWraps_A050fa5476d4) {
  Rig r({0, 1}, gic::Find41Policy::PostSeed, gic::WaitPredicate::Offsets, 0xffa0);
  const Ps a0 = r.model->begin({0, ItsCommandKind::Invdb, 0}, Ps{}, r.rng);  // unlock at 460
  const Ps b0 = r.model->begin({1, ItsCommandKind::Invdb, 1}, Ps{}, r.rng);  // lock 460..920
  EXPECT_EQ(a0, ns(460));
  EXPECT_EQ(b0, ns(920));
  const ItsOpResult b = r.finish(1, b0);
  EXPECT_EQ(b.outcome, gic::WaitOutcome::Completed);  // B's wrapped batch: rd 0x20 is in [to, from)
  EXPECT_EQ(b.polls, 2u);
  const ItsOpResult a = r.finish(0, a0);
  EXPECT_EQ(a.outcome, gic::WaitOutcome::TimedOutAfterCompletion);
  EXPECT_EQ(a.polls, gic::kLinuxItsWaitPolls);
  EXPECT_EQ(a.linux_message, "ITS queue timeout (65440 65504 32); ITS cmd its_build_invdb_cmd failed");
  // 1,000,000 reads of 200 ns and 999,999 udelay(1)s.
  EXPECT_EQ(a.completion_wait, ns(1'000'000LL * 200 + 999'999LL * 1000));
  EXPECT_EQ(r.counter("its_waits_spun_after_completion"), 1u);
  EXPECT_EQ(r.counter("its_waits_timed_out_after_completion"), 1u);
}

// The same two batches with today's linear predicate: A's second read completes it.
TEST(ItsCommandModel, LinearPredicateSurvivesTheWrap) {
  Rig r({0, 1}, gic::Find41Policy::PostSeed, gic::WaitPredicate::Linear, 0xffa0);
  const Ps a0 = r.model->begin({0, ItsCommandKind::Invdb, 0}, Ps{}, r.rng);
  r.model->begin({1, ItsCommandKind::Invdb, 1}, Ps{}, r.rng);
  const ItsOpResult a = r.finish(0, a0);
  EXPECT_EQ(a.outcome, gic::WaitOutcome::Completed);
  EXPECT_EQ(a.polls, 2u);
  EXPECT_EQ(r.counter("its_waits_timed_out_after_completion"), 0u);
}

// ---- Resources: each ITS's command queue and its->lock over the measured window ----

const MechanismResource& find_resource(const std::vector<MechanismResource>& rs, const std::string& name) {
  const auto it = std::find_if(rs.begin(), rs.end(), [&](const MechanismResource& x) { return x.name == name; });
  if (it == rs.end()) throw std::logic_error("no resource " + name);
  return *it;
}
const ResourceReport& find_resource(const std::vector<ResourceReport>& rs, const std::string& name) {
  const auto it = std::find_if(rs.begin(), rs.end(), [&](const ResourceReport& x) { return x.name == name; });
  if (it == rs.end()) throw std::logic_error("no resource " + name);
  return *it;
}

/// Runs the operations begun at `at` (cpu -> its first step's time) to their ends, every call in
/// simulated-time order as the core makes them; returns the last end.
Ps finish_in_time_order(Rig& r, std::map<unsigned, Ps> at) {
  Ps last{};
  while (!at.empty()) {
    auto it = std::min_element(at.begin(), at.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
    if (auto d = r.model->next(it->first, it->second, r.rng)) {
      it->second += *d;
    } else {
      last = std::max(last, it->second);
      at.erase(it);
    }
  }
  return last;
}

// A window that begins inside a batch: VSGI A at 0 holds its->lock 1000..1660 and the ITS runs it
// 1720..2120; the window starts at 1800; A again at 3060: lock 4060..4720, ITS 4780..5180; books
// closed at 5000. Queue: busy 320 (carried in) + 220 of 3200 ns, one arrival (4780) that has not
// left (sojourn clipped: 220), the carried batch's 320 ns in `carried`; lock: one arrival, 660 ns.
TEST(ItsCommandModelResources, WindowClipsBusyTimeAndCarriesTheBatchInFlight_Exact) {
  Rig r({0, 1});
  r.model->begin_window(Ps{});
  ASSERT_EQ(r.model->begin({0, ItsCommandKind::Vsgi, 0}, Ps{}, r.rng), ns(1660));
  ASSERT_EQ(r.model->next(0, ns(1660), r.rng), ns(1200));  // read + udelay(1): not done yet
  r.model->begin_window(ns(1800));
  ASSERT_EQ(r.model->next(0, ns(2860), r.rng), ns(200));   // the second read sees both commands
  ASSERT_FALSE(r.model->next(0, ns(3060), r.rng));
  ASSERT_EQ(r.model->begin({0, ItsCommandKind::Vsgi, 0}, ns(3060), r.rng), ns(1660));
  const auto rs = r.model->resources(ns(5000));
  ASSERT_EQ(rs.size(), 4u);  // two ITSs, two resources each
  const double window = 3200e3;
  const sim::ResourceStats& q = find_resource(rs, "its0.command_queue").stats;
  EXPECT_EQ(find_resource(rs, "its0.command_queue").kind, "its_command_queue");
  EXPECT_EQ(q.elapsed_ps, window);
  EXPECT_EQ(q.arrivals, 1u);
  EXPECT_DOUBLE_EQ(q.utilisation, 540e3 / window);
  EXPECT_EQ(q.wait_mean_ps, 0.0);
  EXPECT_DOUBLE_EQ(q.l_time_average, 540e3 / window);
  EXPECT_DOUBLE_EQ(q.lambda_per_ps * q.w_mean_ps, 220e3 / window);
  EXPECT_DOUBLE_EQ(q.carried, 320e3 / window);
  EXPECT_TRUE(q.little_exact);
  const sim::ResourceStats& l = find_resource(rs, "its0.lock").stats;
  EXPECT_EQ(find_resource(rs, "its0.lock").kind, "its_lock");
  EXPECT_EQ(l.arrivals, 1u);
  EXPECT_DOUBLE_EQ(l.utilisation, 660e3 / window);
  EXPECT_DOUBLE_EQ(l.l_time_average, 660e3 / window);
  EXPECT_EQ(l.carried, 0.0);
  EXPECT_EQ(find_resource(rs, "its1.command_queue").stats.arrivals, 0u);  // not used
  EXPECT_EQ(find_resource(rs, "its1.lock").stats.utilisation, 0.0);
  // The books close on a copy, as late as the model's last call and no earlier.
  EXPECT_EQ(r.model->resources(ns(5000))[0].stats.utilisation, rs[0].stats.utilisation);
  EXPECT_THROW(r.model->resources(ns(3000)), std::logic_error);
}

// Two CPUs post a VSGI each at 0 to ITS 0, commands of 1000 ns: A holds its->lock 1000..1660, B
// waits 660 and holds it 1660..2320; the ITS runs A's batch 1720..3720, B's CWRITER reaches it at
// 2380 and B's batch waits 1340 ns, runs 3720..5720; B's wait ends last, at 6120.
TEST(ItsCommandModelResources, TwoPostersAtOnce_LockAndQueueWaitsExact) {
  Rig r({0, 1});
  r.profile.set("its.command_process", 1000, cost::Unit::Ns, 0, "test: fixed");  // priced on first use
  r.model->begin_window(Ps{});
  const Ps a = r.model->begin({0, ItsCommandKind::Vsgi, 0}, Ps{}, r.rng);
  const Ps b = r.model->begin({1, ItsCommandKind::Vsgi, 1}, Ps{}, r.rng);
  ASSERT_EQ(a, ns(1660));
  ASSERT_EQ(b, ns(2320));
  const Ps end = finish_in_time_order(r, {{0u, a}, {1u, b}});
  ASSERT_EQ(end, ns(6120));
  const auto rs = r.model->resources(end);
  const double window = 6120e3;
  const sim::ResourceStats& q = find_resource(rs, "its0.command_queue").stats;
  EXPECT_EQ(q.arrivals, 2u);
  EXPECT_DOUBLE_EQ(q.utilisation, 4000e3 / window);
  EXPECT_DOUBLE_EQ(q.wait_mean_ps, 670e3);
  EXPECT_EQ(q.wait_max_ps, 1340e3);
  EXPECT_NEAR(q.wait_p99_ps, 1340e3, 1340e3 * sim::Histogram::kMaxRelativeError);
  EXPECT_DOUBLE_EQ(q.l_time_average, (2000e3 + 3340e3) / window);  // A in 1720..3720, B in 2380..5720
  EXPECT_DOUBLE_EQ(q.lambda_per_ps * q.w_mean_ps, q.l_time_average);
  const sim::ResourceStats& l = find_resource(rs, "its0.lock").stats;
  EXPECT_EQ(l.arrivals, 2u);
  EXPECT_DOUBLE_EQ(l.utilisation, 1320e3 / window);
  EXPECT_DOUBLE_EQ(l.wait_mean_ps, 330e3);
  EXPECT_NEAR(l.wait_p99_ps, 660e3, 660e3 * sim::Histogram::kMaxRelativeError);
  EXPECT_DOUBLE_EQ(l.l_time_average, (660e3 + 1320e3) / window);  // A in 1000..1660, B in 1000..2320
  EXPECT_EQ(r.counter("its_lock_waits"), 1u);
}

// The core's host work: an IPI reaching a vCPU busy with host work waits until the work ends,
// while guest work (Op::compute) takes it at once.
class Script final : public Program {
 public:
  explicit Script(std::vector<Op> ops) : ops_(std::move(ops)) {}
  Op next(ProgramCtx&) override { return i_ < ops_.size() ? ops_[i_++] : Op::stop(); }

 private:
  std::vector<Op> ops_;
  std::size_t i_ = 0;
};

struct Entries final : public Observer {
  std::vector<Ps> entry;
  void on_handler(unsigned cpu, std::uint64_t, Ps, Ps e, Ps) override {
    if (cpu == 0) entry.push_back(e);
  }
};

Ps first_entry_on_cpu0(bool host) {
  auto s = make_setup("kunpeng920-2s", "kunpeng920-2s.toml", {0, 1}, 64, {}, "mechanism = \"gicv4.1-vsgi\"\n", {}, 0);
  Bound b(s.spec, "gicv4.1-vsgi");
  RunConfig cfg;
  cfg.spec = &s.spec;
  cfg.mechanism = b.mechanism.get();
  cfg.ipi_bodies = {HandlerBody{}};
  Entries e;
  cfg.observer = &e;
  static const unsigned kTarget[] = {0};
  cfg.programs.push_back(std::make_unique<Script>(std::vector<Op>{host ? Op::host_work(ns(10000)) : Op::compute(ns(10000))}));
  cfg.programs.push_back(std::make_unique<Script>(std::vector<Op>{Op::sleep_until(ns(1000)), Op::ipi(kTarget, 1, 0, false)}));
  run_vm(cfg, b.pricer);
  return e.entry.empty() ? Ps{-1} : e.entry.front();
}

TEST(VmRunHostWork, InterruptsWaitUntilHostWorkEnds) {
  const Ps guest = first_entry_on_cpu0(false);
  const Ps host = first_entry_on_cpu0(true);
  EXPECT_GT(guest, ns(1000));
  EXPECT_LT(guest, ns(3000));   // the vSGI is taken during the guest work
  EXPECT_GE(host, ns(10000));   // held until the host work is done
  EXPECT_LT(host, ns(10200));
}

// The workload end to end: exact counters per operation; the figures are the model's.
TEST(ItsCommandsWorkload, CountsPerOperationAndTheWaitFigure) {
  auto s = make_setup("kunpeng920-2s", "kunpeng920-2s.toml", {0, 1}, 64, {}, "command = \"vsgi\"\n", {}, 500);
  const RunResult r = run(s, "its_commands");
  EXPECT_EQ(r.metrics[0].name, "command_latency");
  EXPECT_EQ(r.counters.at("its_batches"), 500u);
  EXPECT_EQ(r.counters.at("its_commands"), 1000u);
  EXPECT_EQ(r.counters.at("its_wait_polls"), 1000u);
  EXPECT_EQ(r.counters.at("its_creadr_reads"), 2500u);
  EXPECT_EQ(r.metrics[0].summary.count, 500u);
  // completion wait = read + udelay(1) + read = 200 + 1000 + 200 ns (reads have a 5 % spread).
  EXPECT_NEAR(r.metrics[2].summary.mean, 1400, 14);
  EXPECT_NEAR(r.metrics[0].summary.mean, 3060, 60);
  auto o = make_setup("kunpeng920-2s", "kunpeng920-2s.toml", {0, 1}, 64, {}, "command = \"vsgi\"\nits_wait = \"offsets\"\n",
                      {}, 500);
  EXPECT_EQ(run(o, "its_commands").counters.at("its_creadr_reads"), 2000u);  // no rd_idx snapshot before a050fa5476d4
}

/// The ITS keys of a workload run fixed at the profile's means (command_process_ns > 0: that instead).
void fix_its_costs(Setup& s, double command_process_ns = 0) {
  for (const char* k : {"its.creadr_read", "its.command_write", "its.cwriter_write", "its.command_process",
                        "its.wait_udelay", "gic.vgic_mmio_trap"})
    s.spec.profile.set(k, s.spec.profile.get(k).mean.v / 1000.0, cost::Unit::Ns, 0, "test: fixed");
  if (command_process_ns > 0) s.spec.profile.set("its.command_process", command_process_ns, cost::Unit::Ns, 0, "test: fixed");
}

// One sender back to back on its local ITS: nobody else takes its->lock, nothing queues at the ITS;
// each operation is trap + 2 x (CREADR read + command write) + snapshot read under the lock, then
// read, udelay(1), read (the ITS is done before the second read); the window is 500 of them after a
// warm-up of 50, the ITS is busy 2 x its.command_process of each and the lock held for the posting.
TEST(ItsCommandsWorkload, OneSenderBackToBack_LockNeverWaits_QueueBusyIsCommandTimeOverTheWindow) {
  auto s = make_setup("kunpeng920-2s", "kunpeng920-2s.toml", {0, 1}, 64, {}, "command = \"vsgi\"\n", {}, 500);
  fix_its_costs(s);
  auto key = [&](const char* k) { return s.spec.profile.get(k).mean.v; };  // ps
  const std::int64_t read = key("its.creadr_read"), write = key("its.command_write"),
                     process = key("its.command_process"), udelay = key("its.wait_udelay");
  const std::int64_t hold = 2 * (read + write) + read;
  const std::int64_t op = key("gic.vgic_mmio_trap") + hold + read + udelay + read;
  ASSERT_LT(key("its.cwriter_write") + 2 * process, read + udelay);  // done before the second read
  const RunResult r = run(s, "its_commands");
  const double window = 500.0 * static_cast<double>(op);
  EXPECT_DOUBLE_EQ(r.throughput.window_ns * 1000, window);
  ASSERT_EQ(r.resources.size(), 2u);  // nothing else is shared: no IPIs, no exits on the core's lanes
  const ResourceReport& q = r.resources[0];
  EXPECT_EQ(q.name, "its0.command_queue");
  EXPECT_EQ(q.kind, "its_command_queue");
  EXPECT_EQ(q.arrivals, 500u);
  EXPECT_DOUBLE_EQ(q.utilisation, 500.0 * static_cast<double>(2 * process) / window);
  EXPECT_EQ(q.wait_mean, 0.0);
  EXPECT_EQ(q.wait_p99, 0.0);
  EXPECT_DOUBLE_EQ(q.little_l, q.utilisation);  // a batch is in the system only while it runs
  EXPECT_DOUBLE_EQ(q.little_lambda_w, q.little_l);
  EXPECT_EQ(q.little_carried, 0.0);             // the warm-up's last batch ran before its wait ended
  const ResourceReport& l = r.resources[1];
  EXPECT_EQ(l.name, "its0.lock");
  EXPECT_EQ(l.kind, "its_lock");
  EXPECT_EQ(l.arrivals, 500u);
  EXPECT_DOUBLE_EQ(l.utilisation, 500.0 * static_cast<double>(hold) / window);
  EXPECT_EQ(l.wait_mean, 0.0);
  EXPECT_EQ(r.counters.at("its_lock_waits"), 0u);
}

// Two senders on ITS 0, both posting at k x 20 us, commands of 1000 ns (so the second batch queues
// at the ITS): per burst as in TwoPostersAtOnce_LockAndQueueWaitsExact (ends at 4260 and 6120). The
// 51st mark (warm-up 50, two marks at 0 and two per burst) is the first end of burst 25, the last
// mark the first end of burst 75: the window is 50 bursts long and begins while burst 25's second
// batch is queued (2380) and runs (3720..5720): 1460 ns of it are carried in, and as much of burst
// 75's second batch falls after the window's end.
TEST(ItsCommandsWorkload, TwoSendersOnOneIts_ExactWaitsAndACarriedInBatch) {
  auto s = make_setup("kunpeng920-2s", "kunpeng920-2s.toml", {0, 1}, 64, {},
                      "command = \"vsgi\"\nsenders = 2\nperiod_ns = 20000\n", {}, 100);
  fix_its_costs(s, 1000);
  const RunResult r = run(s, "its_commands");
  constexpr double kBursts = 50, kPeriod = 20000;  // ns
  EXPECT_DOUBLE_EQ(r.throughput.window_ns, kBursts * kPeriod);
  const ResourceReport& q = find_resource(r.resources, "its0.command_queue");
  EXPECT_EQ(q.arrivals, 100u);
  EXPECT_DOUBLE_EQ(q.utilisation, 4000 / kPeriod);  // 2 batches x 2 commands x 1000 ns per burst
  EXPECT_DOUBLE_EQ(q.wait_mean, 670);               // 0 and 1340 ns
  EXPECT_NEAR(q.wait_p99, 1340, 1340 * sim::Histogram::kMaxRelativeError);
  EXPECT_DOUBLE_EQ(q.little_l, 5340 / kPeriod);      // 2000 + 3340 ns in the system per burst
  EXPECT_DOUBLE_EQ(q.little_carried, 1460 / (kBursts * kPeriod));
  EXPECT_DOUBLE_EQ(q.little_lambda_w, (kBursts * 5340 - 1460) / (kBursts * kPeriod));
  EXPECT_TRUE(q.little_exact);
  const ResourceReport& l = find_resource(r.resources, "its0.lock");
  EXPECT_EQ(l.arrivals, 100u);
  EXPECT_DOUBLE_EQ(l.utilisation, 1320 / kPeriod);
  EXPECT_DOUBLE_EQ(l.wait_mean, 330);  // 0 and 660 ns
  EXPECT_EQ(l.little_carried, 0.0);
  EXPECT_EQ(r.counters.at("its_lock_waits"), 50u);
}

// Eight senders back to back on one ITS with the profile's spreads: its->lock is the bottleneck;
// Little's law holds on both resources, and the lock's waits per batch are the workload's lock_wait
// (one batch per operation; the two count slightly different sets at the window's edges).
TEST(ItsCommandsWorkload, EightSendersSaturateTheLock_LittlesLawHolds) {
  auto s = make_setup("kunpeng920-2s", "kunpeng920-2s.toml", {0, 1, 2, 3, 4, 5, 6, 7}, 64, {},
                      "command = \"invdb\"\nsenders = 8\n", {}, 4000);
  const RunResult r = run(s, "its_commands");
  ASSERT_EQ(r.resources.size(), 2u);
  for (const ResourceReport& x : r.resources) {
    EXPECT_TRUE(x.little_exact) << x.name;
    EXPECT_NEAR(x.little_l, x.little_lambda_w + x.little_carried, 1e-9 * x.little_l) << x.name;
    EXPECT_GE(x.utilisation, 0.0);
    EXPECT_LE(x.utilisation, 1.0 + 1e-9);
  }
  const ResourceReport& l = find_resource(r.resources, "its0.lock");
  EXPECT_GT(l.utilisation, 0.95);
  EXPECT_NEAR(l.wait_mean, r.metrics[1].summary.mean, 0.01 * r.metrics[1].summary.mean);
  EXPECT_NEAR(static_cast<double>(l.arrivals), 4000, 8);
}

std::string run_error(Setup& s) {
  try {
    run(s, "its_commands");
  } catch (const InputError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no InputError";
  return {};
}

TEST(ItsCommandsWorkload, BadInputsNameTheKey) {
  auto v3 = make_setup("kunpeng920-2s", "kunpeng920-2s.toml", {0, 1}, 64, {}, "mechanism = \"gicv3-emulated-sgi\"\n", {}, 10);
  EXPECT_THAT(run_error(v3), ::testing::HasSubstr("workload.mechanism: mechanism \"gicv3-emulated-sgi\" sends no ITS commands"));
  auto both = make_setup("kunpeng920-2s", "kunpeng920-2s.toml", {0, 1}, 64, {}, "think_ns = 5\nperiod_ns = 100\n", {}, 10);
  EXPECT_THAT(run_error(both), ::testing::HasSubstr("workload.think_ns: give think_ns or period_ns, not both"));
  auto mig = make_setup("kunpeng920-2s", "kunpeng920-2s.toml", {0, 1}, 64, {}, "migrate_offset = 2\n", {}, 10);
  EXPECT_THAT(run_error(mig), ::testing::HasSubstr("workload.migrate_offset: only meaningful with command = \"vmovp\""));
  auto self = make_setup("kunpeng920-2s", "kunpeng920-2s.toml", {0, 1}, 64, {}, "command = \"vmovp\"\nmigrate_offset = 64\n",
                         {}, 10);
  EXPECT_THAT(run_error(self), ::testing::HasSubstr("would move from host CPU 0 to itself"));
  auto x86 = make_setup("ws2019-2s-e5-2420v2", "hyperv-ws2019.toml", {0, 1}, 64, {}, "mechanism = \"hyperv\"\n", {}, 10);
  EXPECT_THAT(run_error(x86), ::testing::HasSubstr("workload its_commands needs an arm64 mechanism"));
}

}  // namespace
}  // namespace ipilab::workload
