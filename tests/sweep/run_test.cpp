// Running sweeps: real points of seed 003's scenario, determinism across worker counts, failures,
// interruption, outputs and plots.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <filesystem>
#include <set>
#include <sstream>
#include <utility>
#include <vector>

#include <unistd.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/error.h"
#include "common/output.h"
#include "common/file.h"
#include "sweep/base.h"
#include "sweep/command.h"
#include "sweep/exec.h"
#include "sweep/output.h"
#include "sweep/plot.h"
#include "sweep/progress.h"
#include "sweep/result.h"
#include "workload/workload.h"

namespace ipilab::sweep {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

const std::string kData = std::string(IPILAB_SOURCE_DIR) + "/tests/sweep/data/";

// The real workloads, plus "ipi_hw" wrapped so that sgi = 13 fails while running (not while checked)
// and, when `stop` is given, the first real run sets it (a Ctrl-C in the middle of the sweep).
struct Lookup {
  std::atomic<bool>* stop = nullptr;
  std::shared_ptr<workload::WorkloadInfo> wrapped = std::make_shared<workload::WorkloadInfo>();

  scenario::WorkloadLookup get() {
    const workload::WorkloadInfo& real = workload::find_workload("ipi_hw", "test");
    *wrapped = real;
    std::atomic<bool>* st = stop;
    const workload::WorkloadInfo* r = &real;
    wrapped->make = [st, r]() -> std::unique_ptr<workload::Workload> {
      struct W : workload::Workload {
        std::unique_ptr<workload::Workload> inner;
        std::atomic<bool>* stop;
        workload::RunResult run(const workload::RunSpec& spec) const override {
          if (spec.iterations > 1) {
            if (spec.params.has("sgi") && spec.params.table().get("sgi")->value_or<std::int64_t>(0) == 13)
              throw std::runtime_error("boom: SGI 13 is not modelled here");
            if (stop) stop->store(true);
          }
          return inner->run(spec);
        }
      };
      auto w = std::make_unique<W>();
      w->inner = r->make();
      w->stop = st;
      return w;
    };
    auto info = wrapped;
    return [info](std::string_view name, std::string_view place) -> const workload::WorkloadInfo& {
      if (name == "ipi_hw") return *info;
      return workload::find_workload(name, place);
    };
  }
};

struct Outputs {
  int rc = 0;
  std::string out, err, csv, json;
};

// Temporary folders: output::TempDir, the one ipilab writes its own temporary files to.
using output::TempDir;

Outputs run_sweep(const std::string& spec, unsigned jobs, scenario::WorkloadLookup lookup, const std::atomic<bool>* stop = nullptr) {
  TempDir tmp(fmt::format("ipilab-sweep-test-{}", jobs));
  const fs::path& dir = tmp.path();
  SweepOptions o;
  o.spec = spec;
  o.jobs = jobs;
  o.csv = (dir / "out.csv").string();
  o.json = (dir / "out.json").string();
  o.stop = stop;
  std::ostringstream out, err;
  auto exec = local_executor();
  Outputs r;
  r.rc = sweep_command(o, out, err, lookup, *exec);
  r.out = out.str();
  r.err = err.str();
  if (fs::exists(o.csv)) r.csv = read_text_file(o.csv);
  if (fs::exists(o.json)) r.json = read_text_file(o.json);
  return r;
}

TEST(SweepRun, SmallSweepGivesTheModelsValuesAndIdenticalOutputsForAnyWorkerCount) {
  Lookup l;
  const Outputs one = run_sweep(kData + "small.toml", 1, l.get());
  const Outputs four = run_sweep(kData + "small.toml", 4, l.get());
  ASSERT_EQ(one.rc, 0) << one.err;
  EXPECT_EQ(one.csv, four.csv);
  EXPECT_EQ(one.json, four.json);
  EXPECT_EQ(one.out.substr(0, one.out.find("CSV written")), four.out.substr(0, four.out.find("CSV written")));

  const auto j = nlohmann::json::parse(one.json);
  EXPECT_EQ(j["points_total"], 12);
  EXPECT_EQ(j["counts"]["ok"], 10);
  EXPECT_EQ(j["counts"]["skipped"], 2);
  EXPECT_EQ(j["complete"], true);
  const auto& pts = j["points"];
  // sockets=2, socket:0, pre-seed: the ITS of socket 1 (remote) for every one of the 300 sends; seed 003: ~850 ns.
  EXPECT_EQ(pts[0]["label"], "sockets=2, placement=socket:0, its=pre-seed");
  EXPECT_EQ(pts[0]["counters"]["its_remote"], 300);
  EXPECT_NEAR(pts[0]["metrics"]["ipi_round_trip"]["mean"].get<double>(), 850, 850 * 0.03);
  // post-seed: local ITS, ~750 ns, about -11.8 % against the pre-seed point of the same placement.
  EXPECT_EQ(pts[1]["counters"]["its_local"], 300);
  EXPECT_NEAR(pts[1]["metrics"]["ipi_round_trip"]["mean"].get<double>(), 750, 750 * 0.03);
  EXPECT_EQ(pts[1]["baseline"], 0);
  EXPECT_NEAR(pts[1]["change_pct"].get<double>(), -11.8, 1.0);
  // sockets=4, socket:3, pre-seed: the first v4.1 ITS of its_nodes is socket 3's, local.
  EXPECT_EQ(pts[10]["label"], "sockets=4, placement=socket:3, its=pre-seed");
  EXPECT_EQ(pts[10]["counters"]["its_local"], 300);
  EXPECT_EQ(pts[4]["status"], "skipped");
  EXPECT_EQ(pts[4]["error"], "a 2-socket host has no socket 3");
  // Same settings, same seed: point 0's seed is the documented function of its settings.
  EXPECT_EQ(pts[0]["seed"].get<std::uint64_t>(),
            point_seed(1, "host.preset = \"kunpeng920-2s\"\nvm.pin = \"socket:0\"\nworkload.find_4_1_its = \"pre-seed\"\n"));

  const std::string head = one.csv.substr(0, one.csv.find('\n'));
  EXPECT_EQ(head, "point,sockets,placement,its,status,metric,unit,mean,p50,p99,change_pct,baseline,coalesced,deliveries,"
                  "hypercalls,ipis_delivered,ipis_in_flight_at_end,ipis_in_flight_at_start,ipis_sent,its_local,its_remote,"
                  "lost,misdelivered,native_fallbacks,polling_skips,requests,requests_lost,requests_pending_at_end,"
                  "requests_pending_at_start,sends,"
                  "sgir_writes,target_path.halt_entry,target_path.halted_blocked,target_path.halted_guest_poll,"
                  "target_path.halted_host_poll,target_path.halted_native,target_path.polling_idle,"
                  "target_path.running_guest_exit,target_path.running_guest_posted,target_path.running_host,"
                  "target_path.running_native,vm_exits,events,seed,error");
  EXPECT_THAT(one.csv, HasSubstr("\n4,2,socket:3,pre-seed,skipped,,,,,,,4,,,,,,,,,,,"));
  EXPECT_THAT(one.out, HasSubstr("2 points: a 2-socket host has no socket 3"));
}

TEST(SweepRun, APointRunAloneGivesWhatItGaveInTheSweep) {
  Lookup l;
  const auto lookup = l.get();
  const Spec spec = load_spec(kData + "small.toml");
  const Base base = Base::load(spec);
  const auto pts = expand(spec, 1);
  const Outputs all = run_sweep(kData + "small.toml", 2, lookup);
  const auto j = nlohmann::json::parse(all.json);
  for (std::size_t i : {std::size_t{7}, std::size_t{11}}) {
    const PointResult r = base.run_point(spec, pts[i], 300, lookup);
    ASSERT_EQ(r.status, PointResult::Status::Ok) << r.error;
    EXPECT_EQ(r.metrics[0].summary.mean, j["points"][i]["metrics"]["ipi_round_trip"]["mean"].get<double>());
    EXPECT_EQ(r.metrics[0].summary.p99, j["points"][i]["metrics"]["ipi_round_trip"]["p99"].get<double>());
  }
}

TEST(SweepRun, AFailingPointIsReportedAndTheOthersRun) {
  Lookup l;
  TempDir tmp("ipilab-sweep-fail");
  const fs::path& dir = tmp.path();
  write_file_atomically(dir / "f.toml", "[sweep]\nscenario = \"seed003-ipi-hw\"\niterations = 100\n"
                                        "[[axis]]\nname = \"sgi\"\nkey = \"workload.sgi\"\nvalues = [1, 13, 2]\n");
  const Outputs r = run_sweep((dir / "f.toml").string(), 2, l.get());
  EXPECT_EQ(r.rc, 1);
  const auto j = nlohmann::json::parse(r.json);
  EXPECT_EQ(j["points"][0]["status"], "ok");
  EXPECT_EQ(j["points"][1]["status"], "failed");
  EXPECT_THAT(j["points"][1]["error"].get<std::string>(), HasSubstr("boom: SGI 13"));
  EXPECT_EQ(j["points"][2]["status"], "ok");
  EXPECT_THAT(r.err, HasSubstr("1 of 3 points failed"));
  EXPECT_THAT(r.out, HasSubstr("point 1 (sgi=13): boom"));
}

// A point that runs but measures nothing (seed v2 loses every IPI to VP 64: BIT_ULL(64) wraps to VP 0)
// is "ok" with an empty mean: the table says so above and lists it below, never leaving it out quietly.
TEST(SweepRun, APointWithoutAMeasuredValueIsCountedAndListed) {
  Lookup l;
  TempDir tmp("ipilab-sweep-novalue");
  const fs::path& dir = tmp.path();
  write_file_atomically(dir / "v.toml", "[sweep]\nscenario = \"seed000-send-ipi-one\"\nvariant = \"mainline\"\n"
                                        "iterations = 100\n[[axis]]\nname = \"target VP\"\nkey = \"vm.vp_index\"\n"
                                        "values = [{ 1 = 1 }, { 1 = 64 }]\nlabels = [\"1\", \"64\"]\n"
                                        "[[axis]]\nname = \"path\"\nkey = \"workload.send_ipi_one\"\nvalues = [\"seed-v2\"]\n");
  const Outputs r = run_sweep((dir / "v.toml").string(), 1, l.get());
  EXPECT_EQ(r.rc, 0);
  EXPECT_THAT(r.out, HasSubstr("2 ok (1 of them without a measured value: listed below), 0 failed"));
  EXPECT_THAT(r.out, HasSubstr("1 point ran but measured no value of the main metric"));
  EXPECT_THAT(r.out, HasSubstr("point 1 (target VP=64, path=seed-v2): 100 intended targets lost, 100 requests lost"));
  const auto j = nlohmann::json::parse(r.json);
  EXPECT_EQ(j["points"][1]["status"], "ok");
  EXPECT_EQ(j["points"][1]["counters"]["lost"], 100);
}

TEST(SweepRun, StoppingKeepsTheFinishedPointsAndMarksTheRest) {
  Lookup l;
  std::atomic<bool> stop{false};
  l.stop = &stop;
  const Outputs r = run_sweep(kData + "small.toml", 1, l.get(), &stop);
  EXPECT_EQ(r.rc, 130);
  const auto j = nlohmann::json::parse(r.json);
  EXPECT_EQ(j["complete"], false);
  EXPECT_EQ(j["counts"]["ok"], 1);  // the point that set the flag finished; no other started
  EXPECT_EQ(j["counts"]["not-run"], 9);
  EXPECT_EQ(j["points"][0]["status"], "ok");
  EXPECT_EQ(j["points"][1]["status"], "not-run");
  EXPECT_THAT(r.err, HasSubstr("interrupted: 9 points did not run"));
}

TEST(SweepRun, BadValueIsAnInputErrorAtTheSpecsLineBeforeAnythingRuns) {
  Lookup l;
  try {
    (void)run_sweep(kData + "bad-value.toml", 2, l.get());
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("bad-value.toml:8:23: axis[0].values[1]: vm.pin = \"socket:7\": socket 7 does not exist"));
    EXPECT_THAT(e.what(), HasSubstr("[point placement=socket:7]"));
  }
}

TEST(SweepRun, EveryBuiltinSweepChecksOut) {
  // Every value of every axis is checked once (the first point that has it and is not skipped):
  // enough to catch a bad value, and fast under ASan. The CI smoke run and the determinism script
  // run the built-in sweeps whole.
  Lookup l;
  const auto lookup = l.get();
  const auto list = list_builtin_sweeps();
  ASSERT_GE(list.size(), 2u);
  for (const auto& b : list) {
    ASSERT_TRUE(b.error.empty()) << b.name << ": " << b.error;
    const Spec spec = load_spec(b.file);
    const Base base = Base::load(spec);
    const auto pts = expand(spec, 1);
    std::set<std::size_t> chosen;
    for (std::size_t a = 0; a < spec.axes.size(); ++a)
      for (std::size_t j = 0; j < spec.axes[a].values.size(); ++j)
        for (const auto& p : pts)
          if (!p.skip && p.value[a] == j) {
            chosen.insert(p.index);
            break;
          }
    std::size_t ok = 0;
    for (auto i : chosen) {
      const std::string e = base.check(spec, pts[i], lookup);
      if (e.empty()) ++ok;
      else EXPECT_TRUE(spec.skip_invalid) << b.name << " " << pts[i].label << ": " << e;
    }
    EXPECT_GE(ok, chosen.size() / 2) << b.name;
  }
  // By name (sorted), with their points: 4 sizes x 2 mechanisms x 2 shorthand settings; 5 halt_poll_ns x 4 gaps.
  std::vector<std::pair<std::string, std::size_t>> got;
  for (const auto& b : list) got.emplace_back(b.name, b.points);
  const std::vector<std::pair<std::string, std::size_t>> want{
      {"broadcast-shorthand", 16}, {"halt-poll-window", 20}, {"hyperv-send-path", 256}, {"its-local-gain", 168}};
  EXPECT_EQ(got, want);
}

TEST(SweepExec, LocalExecutorStopsStartingTasksAndKeepsFinishedOnes) {
  auto exec = local_executor();
  std::atomic<bool> stop{false};
  ExecOptions o;
  o.jobs = 1;
  o.stop = &stop;
  std::vector<std::size_t> todo = {10, 11, 12, 13, 14};
  const auto out = exec->run(todo, [&](std::size_t i) {
    if (i == 12) stop = true;
    return std::to_string(i * 2);
  }, o);
  ASSERT_EQ(out.size(), 5u);
  EXPECT_EQ(out[0], "20");
  EXPECT_EQ(out[2], "24");
  EXPECT_FALSE(out[3].has_value());
  EXPECT_FALSE(out[4].has_value());
}

TEST(SweepExec, ManyThreadsRunEveryTaskOnce) {
  auto exec = local_executor();
  std::vector<std::size_t> todo(500);
  for (std::size_t i = 0; i < todo.size(); ++i) todo[i] = i;
  std::atomic<int> calls{0};
  ExecOptions o;
  o.jobs = 8;
  std::size_t last = 0;
  o.on_done = [&](std::size_t n, const std::string&) { last = n; };
  const auto out = exec->run(todo, [&](std::size_t i) { ++calls; return std::to_string(i); }, o);
  EXPECT_EQ(calls.load(), 500);
  EXPECT_EQ(last, 500u);
  for (std::size_t i = 0; i < out.size(); ++i) EXPECT_EQ(out[i], std::to_string(i));
}

TEST(SweepResult, WireFormRoundTripsExactly) {
  PointResult r;
  r.status = PointResult::Status::Ok;
  r.metrics.push_back({"m", "ns", "d", {}});
  r.metrics[0].summary.count = 3;
  r.metrics[0].summary.mean = 0.1 + 0.2;
  r.metrics[0].summary.p99 = 1.0 / 3.0;
  r.metrics[0].summary.stddev = std::nan("");
  r.counters["lost"] = 18446744073709551615ull;
  r.settings = {{"a", "b"}};
  r.notes = {"n"};
  r.events = 42;
  const PointResult b = from_wire(to_wire(r));
  EXPECT_EQ(b.metrics[0].summary.mean, 0.1 + 0.2);
  EXPECT_EQ(b.metrics[0].summary.p99, 1.0 / 3.0);
  EXPECT_TRUE(std::isnan(b.metrics[0].summary.stddev));
  EXPECT_EQ(b.counters.at("lost"), 18446744073709551615ull);
  EXPECT_EQ(to_wire(b), to_wire(r));
  EXPECT_THROW(from_wire("{\"s\": 9}"), std::runtime_error);
}

TEST(SweepProgress, LineShowsCountsRateAndEta) {
  EXPECT_EQ(Progress::line("its", 10, 40, 1, 5.0, 8), "its [##......] 10/40 points, 1 failed, 2.0/s, ETA 0:15");
  EXPECT_EQ(Progress::line("its", 0, 40, 0, 0.0, 4), "its [....] 0/40 points");
  EXPECT_EQ(format_duration(3723), "1:02:03");
}

TEST(SweepPlot, LineAndHeatmapScriptsCarryTheValuesUnitsAndGaps) {
  Lookup l;
  const auto lookup = l.get();
  const Spec spec = load_spec(kData + "small.toml");
  const Base base = Base::load(spec);
  SweepRun run;
  run.spec = &spec;
  run.points = expand(spec, 1);
  run.iterations = 300;
  for (const auto& p : run.points) {
    PointResult r;
    if (p.skip) {
      r.status = PointResult::Status::Skipped;
      r.error = *p.skip;
    } else {
      r = base.run_point(spec, p, 300, lookup);
    }
    run.results.push_back(r);
  }
  PlotSpec line;
  line.x = 1;        // placement
  line.second = 0;   // one line per socket count
  line.value = "mean";
  line.where = {{2, 1}};  // post-seed
  const SweepPlotScript ls = plot_script(run, line, "d.txt", "o.svg", false);
  EXPECT_THAT(ls.script, HasSubstr("set ylabel 'ipi_round_trip mean (ns)'"));
  EXPECT_THAT(ls.script, HasSubstr("title 'sockets=4'"));
  EXPECT_THAT(ls.script, HasSubstr("set title \"small: small\\nits=post-seed; 300 iterations per point"));
  EXPECT_THAT(ls.data, HasSubstr("# 2\n0 "));
  EXPECT_THAT(ls.data, HasSubstr("2 NaN\n"));  // 2 sockets, socket:3: skipped
  // A series that stops says why in its legend.
  EXPECT_THAT(ls.script, HasSubstr("title 'sockets=2 (no value from socket:3 on: skipped)'"));
  PlotSpec hm;
  hm.kind = PlotSpec::Kind::Heatmap;
  hm.x = 1;
  hm.second = 0;
  hm.value = "change_pct";
  const SweepPlotScript hs = plot_script(run, hm, "d.txt", "o.png", true);
  EXPECT_THAT(hs.script, HasSubstr("set terminal pngcairo"));
  EXPECT_THAT(hs.script, HasSubstr("set cblabel 'ipi_round_trip mean: change vs its=pre-seed (%)'"));
  EXPECT_THAT(hs.data, HasSubstr("2 0 NaN\n"));
  EXPECT_THAT(hs.data, HasSubstr("2 0 \"skipped\"\n"));
  EXPECT_THAT(hs.data, HasSubstr("\"-11.8%\""));
  EXPECT_FALSE(hs.empty);
  // gnuplot misplaces image cells after a 'missing' one: NaN must stay plain undefined.
  EXPECT_THAT(hs.script + ls.script, ::testing::Not(HasSubstr("datafile missing")));
}

// Axis labels name the axis once ("vCPUs (vCPUs; target = last vCPU)" was the built-in its-local-gain's).
TEST(SweepPlot, AxisLabelNamesTheAxisOnce) {
  Spec spec = load_spec(kData + "small.toml");
  SweepRun run;
  run.spec = &spec;
  run.points = expand(spec, 1);
  run.results.resize(run.points.size());
  PlotSpec line;
  line.x = 1;  // placement
  line.second = 0;
  line.value = "mean";
  auto xlabel = [&](const std::string& unit) {
    spec.axes[1].unit = unit;
    const std::string s = plot_script(run, line, "d.txt", "o.svg", false).script;
    const auto b = s.find("set xlabel ");
    return b == std::string::npos ? s : s.substr(b, s.find('\n', b) - b);
  };
  EXPECT_EQ(xlabel(""), "set xlabel 'placement' noenhanced");
  EXPECT_EQ(xlabel("placement"), "set xlabel 'placement' noenhanced");
  EXPECT_EQ(xlabel("Placement; socket of vCPU 0"), "set xlabel 'placement (socket of vCPU 0)' noenhanced");
  EXPECT_EQ(xlabel("socket of vCPU 0"), "set xlabel 'placement (socket of vCPU 0)' noenhanced");
  EXPECT_EQ(xlabel("placements"), "set xlabel 'placement (placements)' noenhanced");  // another word
  // The built-in its-local-gain's vCPUs axis, on this plot.
  const Spec its = load_spec(std::string(IPILAB_SOURCE_DIR) + "/scenarios/sweeps/its-local-gain.toml");
  ASSERT_EQ(its.axes[1].name, "vCPUs");
  spec.axes[1].name = its.axes[1].name;
  EXPECT_EQ(xlabel(its.axes[1].unit), "set xlabel 'vCPUs (target = last vCPU)' noenhanced");
}

}  // namespace
}  // namespace ipilab::sweep
