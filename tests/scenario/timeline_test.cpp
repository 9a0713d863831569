// The simulated timeline (scenario/timeline.h) of real built-in scenarios, read back with
// nlohmann-json: one flow per IPI delivered in the window (against the core's counter and against an
// observer counting on its own), coalesced calls with a marker naming the IPI that served them and no
// flow of their own, polling-idle calls marked and flushed from the idle loop, lost IPIs marked,
// merged IPIs as "ipi,coalesced" flows, valid trace-event JSON whose slices nest on every track,
// the same bytes for the same seed, the run's results unchanged by observing it, replay's first N
// sends, the --events columns of `ipilab trace`, and bad outputs refused before anything runs.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/error.h"
#include "common/output.h"
#include "common/file.h"
#include "scenario/catalog.h"
#include "scenario/replay.h"
#include "scenario/report.h"
#include "scenario/runner.h"
#include "scenario/scenario.h"
#include "scenario/timeline.h"
#include "trace/analysis.h"
#include "trace/export.h"
#include "workload/vm_run.h"

namespace ipilab::scenario {
namespace {

namespace fs = std::filesystem;
using workload::Served;

using output::TempDir;  // the one temporary-folder helper (common/output.h)

/// Counts on its own what the window holds: IPIs launched between the mark that opens it and the
/// one that closes it (or in the first N sends), and the coalesced / polling / lost decisions there;
/// forwards everything to the timeline's observer.
class Tee final : public workload::Observer {
 public:
  Tee(workload::Observer* inner, std::uint64_t warmup, std::uint64_t limit, bool by_sends)
      : in_(inner), warmup_(warmup), limit_(limit), by_sends_(by_sends), open_(by_sends) {}
  std::set<std::uint64_t> own;  // IPIs of the window
  std::uint64_t coalesced = 0, polling = 0, lost = 0, sends = 0;

  void on_mark(sim::Ps t, unsigned c, std::uint64_t n) override {
    if (!by_sends_ && n == warmup_ + 1) open_ = true;
    if (!by_sends_ && n == warmup_ + limit_ + 1) open_ = false;
    in_->on_mark(t, c, n);
  }
  void on_request(sim::Ps t, unsigned s, unsigned d, Served how, std::uint64_t ipi, std::string_view r) override {
    if (open_) {
      if (how == Served::OwnIpi) own.insert(ipi);
      if (how == Served::Coalesced) ++coalesced;
      if (how == Served::Polling) ++polling;
      if (how == Served::Lost) ++lost;
    }
    in_->on_request(t, s, d, how, ipi, r);
  }
  void on_send(sim::Ps a, sim::Ps b, unsigned s, std::uint32_t v, std::span<const unsigned> ts) override {
    in_->on_send(a, b, s, v, ts);
    if (by_sends_ && open_ && ++sends == limit_) open_ = false;
  }
  void on_arrival(sim::Ps t, unsigned d, std::uint64_t i, bool m) override { in_->on_arrival(t, d, i, m); }
  void on_handler(unsigned c, std::uint64_t i, sim::Ps a, sim::Ps b, sim::Ps e) override { in_->on_handler(c, i, a, b, e); }
  void on_queue(sim::Ps t, unsigned s, unsigned d, bool w) override { in_->on_queue(t, s, d, w); }
  void on_merge(sim::Ps t, unsigned d, std::uint64_t i, std::uint64_t into) override { in_->on_merge(t, d, i, into); }
  void on_send_step(unsigned c, sim::Ps a, sim::Ps b, std::string_view l) override { in_->on_send_step(c, a, b, l); }
  void on_resource(std::string_view r, sim::Ps q, sim::Ps a, sim::Ps b, std::string_view l) override {
    in_->on_resource(r, q, a, b, l);
  }

 private:
  workload::Observer* in_;
  std::uint64_t warmup_, limit_;
  bool by_sends_, open_;
};

std::string fmt_limit(std::uint64_t limit) { return "--timeline-limit " + std::to_string(limit); }

struct Observed {
  ScenarioResult result;
  std::vector<std::unique_ptr<Tee>> tees;  // per variant
  nlohmann::json doc;
  std::string bytes, rows;
  std::uint64_t flows = 0;
};

Observed run_observed(const std::string& scenario, const std::vector<std::string>& variants, std::uint64_t iterations,
                      std::uint64_t limit, const std::string& rows_ext = ".csv") {
  TempDir dir("ipilab-timeline-test");
  RunOverrides ov;
  ov.iterations = iterations;
  ov.variants = variants;
  PreparedScenario ps = prepare(load_scenario(resolve_scenario(scenario)), ov, workload::find_workload);
  TimelineOptions o;
  o.perfetto = dir.file("t.json");
  o.events = dir.file("t" + rows_ext);
  o.limit = limit;
  check_timeline_options(o);
  SimTimeline tl(o, SimTimeline::Unit::Iterations, "ipilab run");
  Observed out;
  for (auto& v : ps.variants) {
    tl.observe(v.spec, ps.name, v.name, ps.info->default_mechanism);
    out.tees.push_back(std::make_unique<Tee>(v.spec.observer, v.spec.warmup, limit, false));
    v.spec.observer = out.tees.back().get();
  }
  out.result = run(ps);
  const std::string note = tl.write();
  EXPECT_NE(note.find(fmt_limit(limit)), std::string::npos) << note;
  out.flows = tl.flows();
  out.bytes = read_text_file(o.perfetto);
  out.rows = read_text_file(o.events);
  out.doc = nlohmann::json::parse(out.bytes);
  return out;
}

std::vector<nlohmann::json> events_of(const nlohmann::json& doc, int pid, const std::string& ph, const std::string& cat = "") {
  std::vector<nlohmann::json> v;
  for (const auto& e : doc.at("traceEvents"))
    if (e.at("pid") == pid && e.at("ph") == ph && (cat.empty() || e.value("cat", "") == cat)) v.push_back(e);
  return v;
}

/// One CSV line's fields (RFC 4180 quoting).
std::vector<std::string> csv_fields(const std::string& line) {
  std::vector<std::string> f(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') f.back() += line[++i];
      else if (c == '"') quoted = false;
      else f.back() += c;
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      f.emplace_back();
    } else {
      f.back() += c;
    }
  }
  return f;
}

std::int64_t ns_of(const nlohmann::json& us) { return std::llround(us.get<double>() * 1000.0); }

/// Every event has ph, pid, tid (and ts unless metadata; dur for X; id for s/f; bp "e" for f);
/// X slices nest on each track (disjoint or contained); every flow end lies inside a slice of its
/// track. Returns the number of flows.
std::size_t check_trace_event_json(const nlohmann::json& doc) {
  EXPECT_TRUE(doc.at("traceEvents").is_array());
  std::map<std::pair<int, int>, std::vector<std::pair<std::int64_t, std::int64_t>>> tracks;
  std::map<std::uint64_t, std::vector<nlohmann::json>> flows;
  for (const auto& e : doc.at("traceEvents")) {
    EXPECT_TRUE(e.contains("ph") && e.contains("pid") && e.contains("tid")) << e.dump();
    const std::string ph = e.at("ph");
    EXPECT_TRUE(ph == "M" || ph == "X" || ph == "i" || ph == "s" || ph == "f") << e.dump();
    if (ph != "M") {
      EXPECT_TRUE(e.contains("ts") && e.at("ts").is_number()) << e.dump();
    }
    if (ph == "X") {
      EXPECT_TRUE(e.contains("dur") && e.at("dur").get<double>() >= 0) << e.dump();
      const std::int64_t s = ns_of(e.at("ts"));
      tracks[{e.at("pid"), e.at("tid")}].emplace_back(s, s + ns_of(e.at("dur")));
    }
    if (ph == "s" || ph == "f") {
      EXPECT_TRUE(e.contains("id")) << e.dump();
      if (ph == "f") {
        EXPECT_EQ(e.value("bp", ""), "e");
      }
      flows[e.at("id").get<std::uint64_t>()].push_back(e);
    }
  }
  std::size_t improper = 0;
  for (auto& [k, v] : tracks) {
    std::sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.first != b.first ? a.first < b.first : a.second > b.second; });
    std::vector<std::int64_t> ends;
    for (const auto& [s, e] : v) {
      while (!ends.empty() && ends.back() <= s) ends.pop_back();
      if (!ends.empty() && e > ends.back()) ++improper;
      ends.push_back(e);
    }
  }
  EXPECT_EQ(improper, 0u) << "slices that overlap without nesting";
  std::size_t unbound = 0;
  for (const auto& [id, ends] : flows) {
    EXPECT_EQ(ends.size(), 2u) << id;
    for (const auto& e : ends) {
      const double t = e.at("ts").get<double>() * 1000.0;
      const auto& sl = tracks[{e.at("pid"), e.at("tid")}];
      if (std::none_of(sl.begin(), sl.end(), [&](const auto& p) { return p.first <= t && t <= p.second; })) ++unbound;
    }
  }
  EXPECT_EQ(unbound, 0u) << "flow ends outside any slice of their track";
  return flows.size();
}

std::string process_name(const nlohmann::json& doc, int pid) {
  for (const auto& e : doc.at("traceEvents"))
    if (e.at("ph") == "M" && e.at("pid") == pid && e.at("name") == "process_name") return e.at("args").at("name");
  return {};
}

// One call per iteration (smp_call_function_single, wait=1): with the window as long as the run,
// the flows are exactly the interrupts the core counted in its measured window.
TEST(SimTimeline, FlowsEqualTheCoreIpisDeliveredInTheMeasuredWindow) {
  const Observed o = run_observed("seed000-send-ipi-one", {"pre-seed", "mainline"}, 60, 60);
  EXPECT_EQ(check_trace_event_json(o.doc), 120u);
  EXPECT_EQ(o.flows, 120u);
  for (int pid : {1, 2}) {
    const auto& r = o.result.variants[static_cast<std::size_t>(pid - 1)].result;
    EXPECT_EQ(events_of(o.doc, pid, "s", "ipi").size(), r.counters.at("ipis_delivered")) << pid;
    EXPECT_EQ(r.counters.at("ipis_delivered"), 60u);
    EXPECT_EQ(events_of(o.doc, pid, "X", "send").size(), 60u);
    EXPECT_EQ(events_of(o.doc, pid, "X", "handler").size(), 60u);
    EXPECT_EQ(events_of(o.doc, pid, "i", "iteration").size(), 61u);  // 60 starts and the window's end
    EXPECT_EQ(process_name(o.doc, pid),
              fmt::format("ipilab run seed000-send-ipi-one — {} (simulated: iterations 1-60 of 60, after 200 warm-up)",
                          pid == 1 ? "pre-seed" : "mainline"));
    // Tracks: the two vCPUs, named as a guest trace's CPUs, and the sender's hypervisor.
    std::set<std::string> names;
    for (const auto& e : events_of(o.doc, pid, "M"))
      if (e.at("name") == "thread_name") names.insert(e.at("args").at("name").get<std::string>());
    EXPECT_TRUE(names.count("CPU 0") && names.count("CPU 1")) << ::testing::PrintToString(names);
    EXPECT_TRUE(std::any_of(names.begin(), names.end(), [](const std::string& n) { return n.find(".hypervisor") != std::string::npos; }));
    // Each flow goes from CPU 0's send to CPU 1's call-function-single handler, and the handler's
    // latency is the flow's span.
    for (const auto& f : events_of(o.doc, pid, "f", "ipi")) EXPECT_EQ(f.at("tid"), 1);
    for (const auto& h : events_of(o.doc, pid, "X", "handler")) {
      EXPECT_EQ(h.at("name"), "call-function-single handler");
      EXPECT_GT(h.at("args").at("latency_ns").get<double>(), 1000.0);
    }
  }
  // The sender's steps are nested in its send: the pre-seed path's hypercall is there by name.
  bool hypercall = false;
  for (const auto& s : events_of(o.doc, 1, "X", "send-step"))
    hypercall |= s.at("name").get<std::string>().find("hv.hypercall_entry_exit") != std::string::npos;
  EXPECT_TRUE(hypercall);
}

// A TLB-shootdown storm (every vCPU calls all others): most CSDs find the target's queue busy.
// Flows = the IPIs launched in the window (counted by the Tee), coalesced calls have a marker naming
// their IPI and no flow; the named IPI's flow ends on the call's target.
TEST(SimTimeline, CoalescedCallsCarryAMarkerNamingTheIpiThatServedThem) {
  const Observed o = run_observed("tlb-shootdown-storm", {"8 vCPUs, x2apic physical", "8 vCPUs, KVM PV"}, 400, 40);
  check_trace_event_json(o.doc);
  for (int pid : {1, 2}) {
    const Tee& tee = *o.tees[static_cast<std::size_t>(pid - 1)];
    const auto flows = events_of(o.doc, pid, "f");
    EXPECT_EQ(flows.size(), tee.own.size()) << pid;
    EXPECT_GT(tee.own.size(), 40u);
    const auto markers = events_of(o.doc, pid, "i", "call,coalesced");
    EXPECT_EQ(markers.size(), tee.coalesced) << pid;
    EXPECT_GT(tee.coalesced, 40u);
    std::map<std::uint64_t, int> flow_target;
    for (const auto& f : flows) flow_target[f.at("id").get<std::uint64_t>() & ((1ull << 40) - 1)] = f.at("tid");
    const std::regex re(R"(call -> CPU (\d+) \(coalesced: no IPI of its own, served by IPI #(\d+)\))");
    std::size_t named_in_window = 0;
    for (const auto& m : markers) {
      std::smatch g;
      const std::string name = m.at("name");
      ASSERT_TRUE(std::regex_match(name, g, re)) << name;
      const std::uint64_t ipi = std::stoull(g[2]);
      if (!tee.own.count(ipi)) continue;  // served by an IPI sent before the window opened
      ++named_in_window;
      ASSERT_TRUE(flow_target.count(ipi)) << name;
      EXPECT_EQ(flow_target[ipi], std::stoi(g[1])) << name;
    }
    EXPECT_GT(named_in_window * 10, markers.size() * 9);  // nearly all: the window is long
  }
  // --events: one "ipi" row per IPI of the window, one "call" row per CSD queued in it.
  std::istringstream rows(o.rows);
  std::string line;
  std::getline(rows, line);
  std::map<std::string, std::uint64_t> served;
  std::uint64_t ipi_rows = 0;
  while (std::getline(rows, line)) {
    const std::vector<std::string> f = csv_fields(line);
    ASSERT_EQ(f.size(), 14u) << line;
    EXPECT_TRUE(f[0] == "tlb-shootdown-storm / 8 vCPUs, x2apic physical" || f[0] == "tlb-shootdown-storm / 8 vCPUs, KVM PV") << f[0];
    if (f[1] == "ipi") ++ipi_rows;
    else ++served[f[8]];
  }
  EXPECT_EQ(ipi_rows, o.tees[0]->own.size() + o.tees[1]->own.size());
  EXPECT_EQ(served["coalesced"], o.tees[0]->coalesced + o.tees[1]->coalesced);
  EXPECT_EQ(served["ipi"], ipi_rows);  // a call storm: every IPI was sent for one CSD
}

// Polling-idle targets under skip-if-polling get no IPI: a marker on the sender, the flush from the
// idle loop on the target, no flow; always-ipi sends one IPI per call. (The variants whose calls are
// 2 us apart: back to back, each call finds its target in schedule_idle(), not polling.)
TEST(SimTimeline, PollingIdleCallsAreMarkedAndFlushedFromTheIdleLoop) {
  const Observed o = run_observed("polling-idle-calls", {"2 us apart, always-ipi", "2 us apart, skip-if-polling"}, 300,
                                  50, ".jsonl");
  check_trace_event_json(o.doc);
  const Tee& always = *o.tees[0];
  const Tee& skip = *o.tees[1];
  EXPECT_EQ(always.polling, 0u);
  EXPECT_EQ(events_of(o.doc, 1, "f").size(), always.own.size());
  EXPECT_GE(always.own.size(), 40u);
  EXPECT_GE(skip.polling, 40u);
  EXPECT_EQ(events_of(o.doc, 2, "i", "call,polling-idle").size(), skip.polling);
  EXPECT_EQ(events_of(o.doc, 2, "f").size(), skip.own.size());  // the few calls that found the target not polling
  const auto flushes = events_of(o.doc, 2, "X", "call,polling-idle");
  EXPECT_GE(flushes.size(), 1u);
  for (const auto& f : flushes) EXPECT_GE(f.at("tid").get<int>(), 8);  // on the targets, vCPUs 8-15
  // JSONL rows: every polling-idle call ran (arrival and latency set), none by an IPI of its own.
  std::istringstream rows(o.rows);
  std::uint64_t polling_rows = 0;
  for (std::string line; std::getline(rows, line);) {
    const auto j = nlohmann::json::parse(line);
    if (j.at("served") != "polling-idle") continue;
    ++polling_rows;
    EXPECT_EQ(j.at("record"), "call");
    EXPECT_TRUE(j.at("latency_ns").is_number());
    EXPECT_GT(j.at("latency_ns").get<double>(), 0.0);
  }
  EXPECT_EQ(polling_rows, skip.polling);
}

// Seed v2 sends VP 70's IPI elsewhere: the sender's marker says so, in words.
TEST(SimTimeline, LostIpisAreMarkedWithTheModelsReason) {
  const Observed o = run_observed("seed000-vp-index", {"seed v2", "seed v3 / mainline"}, 30, 30);
  check_trace_event_json(o.doc);
  const auto lost = events_of(o.doc, 1, "i", "call,lost");
  EXPECT_EQ(lost.size(), o.tees[0]->lost);
  EXPECT_EQ(lost.size(), 30u);
  EXPECT_EQ(events_of(o.doc, 1, "f").size(), 0u);
  EXPECT_EQ(events_of(o.doc, 2, "i", "call,lost").size(), 0u);
  EXPECT_EQ(events_of(o.doc, 2, "f").size(), 30u);
  EXPECT_FALSE(lost.front().at("args").at("reason").get<std::string>().empty());
}

// Raw IPIs from 8 vCPUs into one: a later IPI of the vector merges into the pending one (one IRR
// bit), and is drawn as an "ipi,coalesced" flow to the handler that served both.
TEST(SimTimeline, MergedIpisAreCoalescedFlowsToTheHandlerThatServedThem) {
  TempDir dir("ipilab-timeline-test");
  const std::string toml = R"(
[scenario]
name = "merge"
workload = "storm"
iterations = 400
warmup = 20
[host]
preset = "skylake-2s-40c"
[profile]
file = "profiles/kvm-skylake-pv-ipi.toml"
[vm]
vcpus = 9
pin = "first"
[workload]
mechanism = "x2apic-physical"
send = "ipi"
senders = 8
targets = "list"
target_list = [8]
wait = false
[[variant]]
name = "8 into 1"
)";
  const std::string file = dir.file("merge.toml");
  std::ofstream(file) << toml;
  PreparedScenario ps = prepare(load_scenario(file), {}, workload::find_workload);
  TimelineOptions opt;
  opt.perfetto = dir.file("m.json");
  opt.limit = 100;
  SimTimeline tl(opt, SimTimeline::Unit::Iterations, "ipilab run");
  tl.observe(ps.variants[0].spec, ps.name, ps.variants[0].name, ps.info->default_mechanism);
  Tee tee(ps.variants[0].spec.observer, 20, 100, false);
  ps.variants[0].spec.observer = &tee;
  run(ps);
  tl.write();
  const auto doc = nlohmann::json::parse(read_text_file(opt.perfetto));
  EXPECT_EQ(check_trace_event_json(doc), tee.own.size());
  const auto merged = events_of(doc, 1, "f", "ipi,coalesced");
  EXPECT_GT(merged.size(), 10u);
  EXPECT_EQ(events_of(doc, 1, "f", "ipi").size() + merged.size(), tee.own.size());
  for (const auto& f : merged) EXPECT_EQ(f.at("tid"), 8);
}

// Same seed -> the same bytes; the figures do not depend on being observed.
TEST(SimTimeline, SameSeedSameBytesAndTheRunIsUnchanged) {
  const Observed a = run_observed("tlb-shootdown-storm", {"8 vCPUs, Hyper-V"}, 200, 30);
  const Observed b = run_observed("tlb-shootdown-storm", {"8 vCPUs, Hyper-V"}, 200, 30);
  EXPECT_EQ(a.bytes, b.bytes);
  EXPECT_EQ(a.rows, b.rows);
  RunOverrides ov;
  ov.iterations = 200;
  ov.variants = {"8 vCPUs, Hyper-V"};
  const ScenarioResult plain = run(prepare(load_scenario(resolve_scenario("tlb-shootdown-storm")), ov, workload::find_workload));
  EXPECT_EQ(to_json({plain}).dump(), to_json({a.result}).dump());
}

// Replay: the first N sends of data/traces/mixed.dat, one flow per IPI they sent; the CSV has the
// columns of `ipilab trace --events` on the same trace.
TEST(SimTimeline, ReplayDrawsTheFirstNSendsInTheTracesColumns) {
  TempDir dir("ipilab-timeline-test");
  const std::string trace = std::string(IPILAB_SOURCE_DIR) + "/data/traces/mixed.dat";
  ReplayOptions a;
  a.trace = trace;
  a.scenario = "seed000-send-ipi-one";
  a.variants = {"mainline"};
  a.timeline.perfetto = dir.file("r.json");
  a.timeline.events = dir.file("r.csv");
  a.timeline.limit = 250;
  std::ostringstream out, err;
  run_replay_command(a, out, err);
  EXPECT_NE(err.str().find("sends 1-250 of"), std::string::npos) << err.str();
  const auto doc = nlohmann::json::parse(read_text_file(a.timeline.perfetto));
  const std::size_t flows = check_trace_event_json(doc);
  EXPECT_EQ(events_of(doc, 1, "X", "send").size(), 250u);
  std::size_t targets = 0;
  for (const auto& s : events_of(doc, 1, "X", "send")) {
    const std::string t = s.at("args").at("targets");
    targets += static_cast<std::size_t>(std::count(t.begin(), t.end(), ',')) + 1;
  }
  // every IPI of the window arrived (a replay sends raw IPIs); as many flows in the recorded group
  EXPECT_EQ(process_name(doc, 1).rfind("simulated (mechanism hyperv) — seed000-send-ipi-one / mainline (sends 1-250 of ", 0), 0u);
  // The recorded group: the trace's own first 250 sends, every one answered in mixed.dat.
  EXPECT_EQ(process_name(doc, 1000), "recorded — mixed.dat");
  EXPECT_EQ(events_of(doc, 1000, "X", "send").size(), 250u);
  EXPECT_EQ(events_of(doc, 1000, "s", "ipi").size() + events_of(doc, 1000, "s", "ipi,coalesced").size(), 250u);
  EXPECT_EQ(flows, 2 * targets);

  // The header line of the trace's own --events of that file.
  trace::TraceExports x(dir.file("t.csv"), trace::RowFormat::Csv, {}, "t");
  trace::TraceAnalysis an({}, std::nullopt, {}, {}, [&](std::string_view b) { return x.observer_for(b); });
  trace::analyse_trace(trace, an);
  x.commit();
  const std::string trace_rows = read_text_file(dir.file("t.csv"));
  const std::string sim_rows = read_text_file(a.timeline.events);
  EXPECT_EQ(sim_rows.substr(0, sim_rows.find('\n')), trace_rows.substr(0, trace_rows.find('\n')));
}

// Replay --perfetto on the stacktrace fixture (tests/trace/data/forms: 158 sends, 95 raised and 63
// coalesced, 2 trace_marker writes): one document, a recorded group above the simulated one, on one
// clock, with the exact flows of both; --ipi-csv joins each recorded IPI with its simulated one.
TEST(ReplayTimeline, RecordedAndSimulatedGroupsInOneFile) {
  TempDir dir("ipilab-timeline-test");
  ReplayOptions a;
  a.trace = std::string(IPILAB_SOURCE_DIR) + "/tests/trace/data/forms/stacktrace-T.dat";
  a.scenario = "seed000-send-ipi-one";
  a.variants = {"mainline"};
  a.timeline.perfetto = dir.file("r.json");
  a.ipi_csv = dir.file("r.csv");
  std::ostringstream out, err;
  run_replay_command(a, out, err);
  const auto doc = nlohmann::json::parse(read_text_file(a.timeline.perfetto));
  EXPECT_EQ(check_trace_event_json(doc), 158u + 158u);
  EXPECT_EQ(process_name(doc, 1000), "recorded — stacktrace-T.dat");
  EXPECT_EQ(process_name(doc, 1), "simulated (mechanism hyperv) — seed000-send-ipi-one / mainline (sends 1-158 of 158)");
  EXPECT_EQ(events_of(doc, 1000, "s", "ipi").size(), 95u);
  EXPECT_EQ(events_of(doc, 1000, "s", "ipi,coalesced").size(), 63u);
  EXPECT_EQ(events_of(doc, 1000, "X", "send").size(), 158u);
  EXPECT_EQ(events_of(doc, 1000, "i", "marker").size(), 2u);
  EXPECT_EQ(events_of(doc, 1, "s", "ipi").size(), 158u);  // raw IPIs, none merged at this rate
  EXPECT_EQ(events_of(doc, 1, "X", "send").size(), 158u);
  // Every flow id distinct and exact as a double (below 2^53), so that no JSON reader merges flows.
  std::set<std::uint64_t> flow_ids;
  std::size_t flow_starts = 0;
  for (const auto& e : doc.at("traceEvents"))
    if (e.value("ph", "") == "s") {
      const std::uint64_t id = e.at("id").get<std::uint64_t>();
      EXPECT_LT(id, std::uint64_t{1} << 53) << e.dump();
      flow_ids.insert(id);
      ++flow_starts;
    }
  EXPECT_EQ(flow_ids.size(), flow_starts);
  EXPECT_EQ(flow_starts, 95u + 63u + 158u);
  for (int pid : {1, 1000}) {
    std::set<std::string> names;
    for (const auto& e : events_of(doc, pid, "M"))
      if (e.at("name") == "thread_name") names.insert(e.at("args").at("name").get<std::string>());
    EXPECT_TRUE(names.count("CPU 0") && names.count("CPU 1")) << pid << ::testing::PrintToString(names);
  }
  // One clock: the first simulated send starts when the first recorded one was sent (its vCPU idle).
  auto first_send = [&](int pid) {
    std::int64_t t = INT64_MAX;
    for (const auto& e : events_of(doc, pid, "X", "send")) t = std::min(t, ns_of(e.at("ts")));
    return t;
  };
  EXPECT_EQ(first_send(1), first_send(1000));
  EXPECT_GT(first_send(1000), 1'000'000'000);  // the trace's clock, not 0
  EXPECT_NE(err.str().find("the recorded timeline (first 158 sends of the trace, 158 flows send -> arrival)"),
            std::string::npos) << err.str();

  // The join: one row per recorded IPI; the recorded latency is the trace's own (its --events).
  std::istringstream csv(read_text_file(a.ipi_csv));
  std::string line;
  std::getline(csv, line);
  EXPECT_EQ(line, "variant,send_ns,src,dst,kind,recorded_served,recorded_latency_ns,vcpu_src,vcpu_dst,simulated_send_ns,"
                  "simulated_served,modelled_latency_ns,note");
  trace::TraceExports x(dir.file("t.csv"), trace::RowFormat::Csv, {}, "t");
  trace::TraceAnalysis an({}, std::nullopt, {}, {}, [&](std::string_view b) { return x.observer_for(b); });
  trace::analyse_trace(a.trace, an);
  x.commit();
  std::map<std::pair<std::string, std::string>, std::string> latency;  // (send_ns, dst) -> latency
  std::istringstream tr(read_text_file(dir.file("t.csv")));
  for (std::getline(tr, line); std::getline(tr, line);) {
    const auto f = csv_fields(line);
    if (f[1] == "ipi") latency[{f[2], f[4]}] = f[12];
  }
  std::size_t rows = 0, raised = 0, recorded_raised = 0;
  while (std::getline(csv, line)) {
    const auto f = csv_fields(line);
    ASSERT_EQ(f.size(), 13u) << line;
    ++rows;
    EXPECT_EQ(f[0], "mainline");
    EXPECT_EQ(f[6], latency.at({f[1], f[3]})) << line;
    EXPECT_EQ(f[7], f[2]);  // 2 trace CPUs onto 2 vCPUs: c -> c
    if (f[5] == "raised") ++recorded_raised;
    if (f[10] == "raised") {
      ++raised;
      EXPECT_GT(std::stod(f[11]), 100.0) << line;
      EXPECT_GE(std::stod(f[9]), std::stod(f[1])) << line;  // never before the recorded send
      EXPECT_EQ(f[12], "") << line;
    }
  }
  EXPECT_EQ(rows, 158u);
  EXPECT_EQ(recorded_raised, 95u);
  EXPECT_EQ(raised, 158u);
}

// --max-ipis: the sends beyond it are in the join with a blank simulated side and the reason, and
// the recorded timeline covers the same first sends as the simulated one.
TEST(ReplayTimeline, SendsBeyondMaxIpisAreJoinedBlankWithTheirReason) {
  TempDir dir("ipilab-timeline-test");
  ReplayOptions a;
  a.trace = std::string(IPILAB_SOURCE_DIR) + "/tests/trace/data/forms/stacktrace-T.dat";
  a.scenario = "seed000-send-ipi-one";
  a.variants = {"mainline", "pre-seed"};
  a.max_ipis = 100;
  a.timeline.perfetto = dir.file("r.json");
  a.ipi_csv = dir.file("r.csv");
  std::ostringstream out, err;
  run_replay_command(a, out, err);
  const auto doc = nlohmann::json::parse(read_text_file(a.timeline.perfetto));
  check_trace_event_json(doc);
  EXPECT_EQ(events_of(doc, 1000, "X", "send").size(), 100u);
  EXPECT_EQ(events_of(doc, 1, "X", "send").size(), 100u);
  EXPECT_EQ(events_of(doc, 2, "X", "send").size(), 100u);
  std::istringstream csv(read_text_file(a.ipi_csv));
  std::string line;
  std::getline(csv, line);
  std::map<std::string, std::map<std::string, std::size_t>> served;  // variant -> simulated_served -> rows
  while (std::getline(csv, line)) {
    const auto f = csv_fields(line);
    ASSERT_EQ(f.size(), 13u) << line;
    ++served[f[0]][f[10]];
    if (f[10] == "not-replayed") {
      EXPECT_EQ(f[11], "");
      EXPECT_NE(f[12].find("not replayed: beyond --max-ipis 100"), std::string::npos) << line;
    }
  }
  for (const std::string v : {"mainline", "pre-seed"}) {
    EXPECT_EQ(served[v]["raised"], 100u) << v;
    EXPECT_EQ(served[v]["not-replayed"], 58u) << v;
  }
  EXPECT_NE(err.str().find("158 recorded IPIs x 2 variants"), std::string::npos) << err.str();
}

TEST(ReplayTimeline, IpiCsvMustBeACsvFile) {
  ReplayOptions a;
  a.trace = std::string(IPILAB_SOURCE_DIR) + "/data/traces/mixed.dat";
  a.scenario = "seed000-send-ipi-one";
  a.ipi_csv = "/tmp/x.json";
  std::ostringstream out, err;
  try {
    run_replay_command(a, out, err);
    ADD_FAILURE() << "accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("--ipi-csv"), std::string::npos) << e.what();
  }
}

TEST(SimTimeline, BadOutputsAreRefusedBeforeAnythingRuns) {
  TempDir dir("ipilab-timeline-test");
  auto bad = [](TimelineOptions o, const std::string& fragment) {
    try {
      check_timeline_options(o);
      ADD_FAILURE() << "accepted: " << fragment;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
    }
  };
  TimelineOptions o;
  o.perfetto = "/no/such/folder/t.json";
  bad(o, "--perfetto");
  o.perfetto = dir.file("t.txt");
  bad(o, "must end in .json");
  o.perfetto = dir.path().string();
  bad(o, "--perfetto");
  o.perfetto = "";
  o.events = dir.file("t.json");
  bad(o, "--events");
  o.events = "/no/such/folder/t.csv";
  bad(o, "does not exist");
  o.events = "";
  o.limit = 5;
  bad(o, "--timeline-limit");
  o.limit = 0;
  // Devices are written straight through.
  o.events = "/dev/null";
  o.perfetto = "/dev/null";
  EXPECT_NO_THROW(check_timeline_options(o));
  EXPECT_TRUE(fs::is_character_file("/dev/null"));
}

}  // namespace
}  // namespace ipilab::scenario
