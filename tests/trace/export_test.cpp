// --perfetto and --events: valid trace-event JSON with one flow per matched IPI, one row per IPI.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "test_util.h"
#include "trace/analysis.h"
#include "trace/export.h"
#include "trace/timeline.h"

namespace ipilab::trace {
namespace {

struct Exported {
  std::uint64_t matched = 0, sent = 0, calls = 0;
  nlohmann::json perfetto;
  std::string rows;
};

Exported run(const std::filesystem::path& trace, RowFormat fmt, const std::filesystem::path& dir) {
  const auto events = dir / (fmt == RowFormat::Csv ? "rows.csv" : "rows.jsonl");
  const auto json = dir / "timeline.json";
  TraceExports x(events, fmt, json, "test");
  TraceAnalysis a({}, std::nullopt, {}, {}, [&](std::string_view b) { return x.observer_for(b); });
  analyse_trace(trace, a);
  x.commit();
  Exported e;
  for (const auto& [name, b] : a.buffers()) {
    e.matched += b->matched();
    e.sent += b->ipis_sent();
    for (const auto& s : b->services()) e.calls += s.count;
  }
  e.perfetto = nlohmann::json::parse(testing::slurp(json));
  e.rows = testing::slurp(events);
  return e;
}

TEST(Perfetto, MixedDatHasOneFlowPerMatchedIpiAndIsValidTraceEventJson) {
  testing::TempDir tmp;
  const Exported e = run(testing::traces_dir() / "mixed.dat", RowFormat::Csv, tmp.path);
  EXPECT_EQ(e.matched, 4501u);
  ASSERT_TRUE(e.perfetto.contains("traceEvents"));
  const auto& ev = e.perfetto["traceEvents"];
  std::map<std::uint64_t, int> starts, finishes;
  std::set<std::pair<int, int>> named;
  std::uint64_t slices = 0, handlers = 0;
  for (const auto& x : ev) {
    ASSERT_TRUE(x.contains("ph") && x.contains("pid") && x.contains("tid")) << x.dump();
    const std::string ph = x["ph"];
    if (ph == "M") {
      if (x["name"] == "thread_name") named.insert({x["pid"].get<int>(), x["tid"].get<int>()});
      continue;
    }
    ASSERT_TRUE(x.contains("ts") && x["ts"].is_number()) << x.dump();
    EXPECT_TRUE(named.count({x["pid"].get<int>(), x["tid"].get<int>()})) << "track named before use: " << x.dump();
    if (ph == "s") ++starts[x["id"].get<std::uint64_t>()];
    else if (ph == "f") {
      ++finishes[x["id"].get<std::uint64_t>()];
      EXPECT_EQ(x["bp"], "e");
    } else if (ph == "X") {
      ++slices;
      EXPECT_TRUE(x["dur"].is_number());
      if (x["cat"] == "handler") ++handlers;
    } else {
      EXPECT_TRUE(ph == "i") << ph;
    }
  }
  EXPECT_EQ(starts.size(), 4501u);  // one flow per matched IPI
  EXPECT_EQ(finishes.size(), 4501u);
  for (const auto& [id, n] : starts) {
    EXPECT_EQ(n, 1);
    EXPECT_EQ(finishes.count(id), 1u);
  }
  EXPECT_EQ(handlers, 4497u + 4u);  // call_function_single and reschedule handler slices
  EXPECT_GT(slices, handlers);
  // CSV: a header, one row per IPI send and per queued call or local run.
  const auto lines = static_cast<std::uint64_t>(std::count(e.rows.begin(), e.rows.end(), '\n'));
  EXPECT_EQ(lines, 1 + e.sent + e.calls);
  EXPECT_EQ(e.rows.substr(0, e.rows.find('\n')),
            "buffer,record,send_ns,src,dst,kind,callsite,callback,served,inferred,arrival_ns,arrival_kind,latency_ns,"
            "handler_ns");
  // mixed.txt line 3: the first send, served 18072 ns later by CPU 0's handler.
  EXPECT_NE(e.rows.find(",ipi,344504323854,1,0,call-function-single,generic_exec_single+0x36,"
                        "generic_smp_call_function_single_interrupt+0x0,raised,0,344504341926,call-function-single,18072,"),
            std::string::npos);
}

TEST(EventsJsonl, OneObjectPerLineWithTheDocumentedKeys) {
  testing::TempDir tmp;
  const Exported e = run(testing::traces_dir() / "pipe.dat", RowFormat::Jsonl, tmp.path);
  std::istringstream in(e.rows);
  std::string line;
  std::uint64_t n = 0, raised = 0;
  while (std::getline(in, line)) {
    const auto j = nlohmann::json::parse(line);
    for (const char* k : {"buffer", "record", "send_ns", "src", "dst", "kind", "callsite", "callback", "served",
                          "inferred", "arrival_ns", "arrival_kind", "latency_ns", "handler_ns"})
      ASSERT_TRUE(j.contains(k)) << k;
    raised += j["served"] == "raised";
    ++n;
  }
  EXPECT_EQ(n, e.sent + e.calls);
  EXPECT_EQ(raised, 32u);
}

TEST(Timeline, InMemoryTimelineWritesBoundFlows) {
  timeline::Timeline t;
  t.groups.emplace_back(1, "sim");
  t.tracks.push_back({{1, 0}, "CPU 0"});
  t.tracks.push_back({{1, 1}, "CPU 1"});
  t.slices.push_back({{1, 1}, 1500, 700, "handler", "handler", {}});
  t.flows.push_back({{1, 0}, {1, 1}, 1000, 1500, "IPI", "ipi"});
  std::ostringstream out;
  write_chrome_json(t, out);
  const auto j = nlohmann::json::parse(out.str());
  int s = 0, f = 0;
  for (const auto& e : j["traceEvents"]) {
    s += e["ph"] == "s";
    f += e["ph"] == "f";
    if (e["ph"] == "s") {
      EXPECT_DOUBLE_EQ(e["ts"].get<double>(), 1.0005);  // µs, half a ns into the slice
    }
  }
  EXPECT_EQ(s, 1);
  EXPECT_EQ(f, 1);
  std::ostringstream esc;
  timeline::write_json_string(esc, std::string("a\"b\\\x01\xff", 6));
  EXPECT_EQ(esc.str(), "\"a\\\"b\\\\\\u0001\\ufffd\"");
}

TEST(Perfetto, TraceMarkerWritesAreInstantsNamedByTheirText) {
  // tests/trace/data/forms/stacktrace-T.dat holds two trace_marker writes (ftrace print events).
  testing::TempDir tmp;
  const auto events = tmp.path / "rows.csv";
  const auto json = tmp.path / "timeline.json";
  TraceExports x(events, RowFormat::Csv, json, "test");
  TraceAnalysis a({}, {}, {}, [&](std::string_view b) { return x.observer_for(b); });
  analyse_trace(std::filesystem::path(IPILAB_SOURCE_DIR) / "tests/trace/data/forms/stacktrace-T.dat", a);
  x.commit();
  EXPECT_EQ(x.markers(), 2u);
  std::vector<std::string> names;
  const auto doc = nlohmann::json::parse(testing::slurp(json));
  for (const auto& e : doc["traceEvents"])
    if (e["ph"] == "i" && e.value("cat", "") == "marker") names.push_back(e["name"]);
  EXPECT_EQ(names, (std::vector<std::string>{"ipilab phase 1 begin", "ipilab phase 1 end"}));
}

}  // namespace
}  // namespace ipilab::trace
