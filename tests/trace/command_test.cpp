// `ipilab trace` called as a function (src/trace/command.h), without the executable.
#include "trace/command.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "common/error.h"
#include "test_util.h"

namespace ipilab::trace {
namespace {

using testing::TempDir;
using testing::traces_dir;

TEST(TraceCommand, TextReport_SummaryOfTheShippedTrace) {
  TraceOptions o;
  o.file = (traces_dir() / "mixed.txt").string();
  std::ostringstream out, err;
  trace_command(o, out, err);
  const std::string s = out.str();
  EXPECT_TRUE(s.starts_with("IPI trace " + o.file + " (trace-cmd report text)\n\nSummary\n")) << s;
  EXPECT_NE(s.find("\n  events         35004\n  IPIs sent      4501 (58318.1/s)\n  matched        4501 (of which coalesced 0)\n"),
            std::string::npos)
      << s;
  EXPECT_EQ(err.str(), "");
}

TEST(TraceCommand, JsonToOut_InsteadOfTheText_SameCounts) {
  TraceOptions o;
  o.file = (traces_dir() / "mixed.dat").string();
  o.json = "-";
  std::ostringstream out, err;
  trace_command(o, out, err);
  const auto j = nlohmann::json::parse(out.str());
  EXPECT_EQ(j["summary"]["events"], 35004);
  EXPECT_EQ(j["summary"]["ipis_sent"], 4501);
  EXPECT_EQ(j["summary"]["cpus"], 2);
  EXPECT_EQ(out.str().find("Summary\n"), std::string::npos);
}

TEST(TraceCommand, Events_WrittenAndNamedOnErr_TheReportOnOut) {
  TempDir dir;
  TraceOptions o;
  o.file = (traces_dir() / "mixed.dat").string();
  o.events = (dir.path / "ipis.csv").string();
  std::ostringstream out, err;
  trace_command(o, out, err);
  EXPECT_EQ(err.str(), "ipilab: wrote " + o.events + " (13002 rows)\n");
  const std::string csv = testing::slurp(o.events);
  EXPECT_TRUE(csv.starts_with("buffer,record,send_ns,src,dst,kind,callsite,callback,served,inferred,arrival_ns,"
                              "arrival_kind,latency_ns,handler_ns\n"))
      << csv.substr(0, 200);
  EXPECT_NE(out.str().find("IPIs sent      4501"), std::string::npos);
}

InputError input_error(const TraceOptions& o) {
  std::ostringstream out, err;
  try {
    trace_command(o, out, err);
  } catch (const InputError& e) {
    EXPECT_EQ(out.str(), "");
    EXPECT_EQ(err.str(), "");
    return e;
  }
  ADD_FAILURE() << "no InputError";
  return InputError("", "");
}

TEST(TraceCommand, BadForms_InputErrorNamingTheOption_NothingWritten) {
  TraceOptions o;
  EXPECT_EQ(input_error(o).place(), "FILE");  // neither FILE nor --live
  o.file = (traces_dir() / "mixed.dat").string();
  o.pair_limit = "10xs";
  const InputError e = input_error(o);
  EXPECT_EQ(e.place(), "--pair-limit");
  EXPECT_EQ(e.reason(), "'10xs': unit 'xs' (use ns, us, ms or s)");
  o.pair_limit = "10ms";
  o.save = "x.dat";
  EXPECT_EQ(input_error(o).what(), std::string("--save: only with --live"));
  o.save.clear();
  o.live = true;
  EXPECT_EQ(input_error(o).what(), std::string("FILE: --live reads this machine's tracefs: give no FILE"));
  o.file.clear();
  o.buffer = "";
  EXPECT_EQ(input_error(o).place(), "--buffer");
}

TEST(TraceCommand, Buffer_OnlyThatRingBuffer) {
  TraceOptions o;
  o.file = (traces_dir() / "instance-extract.dat").string();
  o.json = "-";
  std::ostringstream all, one, err;
  trace_command(o, all, err);
  o.buffer = "bigdat";
  trace_command(o, one, err);
  const auto j = nlohmann::json::parse(one.str());
  EXPECT_EQ(j["buffer"], "bigdat");
  EXPECT_EQ(nlohmann::json::parse(all.str())["buffers"].size(), 2u);
  o.buffer = "nosuch";
  const InputError e = input_error(o);
  EXPECT_EQ(e.place(), o.file);
  EXPECT_EQ(e.reason(), "no ring buffer 'nosuch' in this trace (its buffers: '', 'bigdat'; '' is the top level)");
}

}  // namespace
}  // namespace ipilab::trace
