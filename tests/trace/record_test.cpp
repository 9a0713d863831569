// `trace record` against the real tracefs — skipped (visibly) where tracefs is not usable.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <map>
#include <sstream>

#include "common/error.h"
#include "test_util.h"
#include "trace/reader.h"
#include "trace/record.h"
#include "trace/text_reader.h"

extern "C" {
bool tracefs_instance_exists(const char* name);
}

namespace ipilab::trace {
namespace {

TEST(RecordEvents, ExactlyTheIpiEvents) {
  const auto ev = recorded_events();
  EXPECT_EQ(ev.size(), 17u);
  EXPECT_EQ(ev.front(), (std::pair<std::string, std::string>{"ipi", "ipi_send_cpu"}));
  EXPECT_EQ(ev.back(), (std::pair<std::string, std::string>{"sched", "sched_wake_idle_without_ipi"}));
  for (const auto& [sys, name] : ev)
    EXPECT_TRUE(sys == "ipi" || sys == "csd" || sys == "irq_vectors" || sys == "sched") << sys;
}

TEST(Record, BadOutputFolderIsInputError) {
  RecordOptions o;
  o.output = "/nonexistent-folder/x.txt";
  EXPECT_THROW(record_trace(o), InputError);
}

TEST(Record, RecordsACommandIntoReadableTextAndRemovesItsInstance) {
  if (::geteuid() != 0 || !tracefs_usable()) GTEST_SKIP() << "tracefs not usable here (needs root and tracefs)";
  testing::TempDir tmp;
  RecordOptions o;
  o.output = tmp.path / "rec.txt";
  o.text = true;
  o.instance = "ipilab-test";
  o.command = {"sh", "-c", "for i in 1 2 3 4 5; do taskset -c 0 true; taskset -c 1 true 2>/dev/null; done"};
  o.duration_s = 5;
  const RecordResult r = record_trace(o);
  EXPECT_EQ(r.command_status, 0);
  EXPECT_FALSE(tracefs_instance_exists("ipilab-test"));
  const std::string text = testing::slurp(o.output);
  EXPECT_EQ(text.rfind("cpus=", 0), 0u);
  testing::CollectingSink sink;
  std::istringstream in(text);
  read_text_trace(in, o.output.string(), sink);  // every line parses
  EXPECT_EQ(sink.events.size() + sink.other_total, r.events);
  for (std::size_t i = 1; i < sink.events.size(); ++i) EXPECT_LE(sink.events[i - 1].ts_ns, sink.events[i].ts_ns);
  // Nothing half-written next to the output.
  std::size_t files = 0;
  for (const auto& e : std::filesystem::directory_iterator(tmp.path)) files += e.is_regular_file();
  EXPECT_EQ(files, 1u);
}

// The round trip of the issue: `trace record` -> trace.dat -> `trace-cmd report` -> `ipilab trace`,
// with equal event counts everywhere (the events the recorder counted in the pages, the lines of
// trace-cmd report, ipilab's reading of the .dat and of that report text).
TEST(Record, TraceDatRoundTripsThroughTraceCmdReport) {
  if (::geteuid() != 0 || !tracefs_usable()) GTEST_SKIP() << "tracefs not usable here (needs root and tracefs)";
  if (!testing::have_program("trace-cmd")) GTEST_SKIP() << "trace-cmd not installed: cannot cross-check the trace.dat";
  testing::TempDir tmp;
  RecordOptions o;
  o.output = tmp.path / "rec.dat";
  o.instance = "ipilab-test-dat";
  o.command = {"sh", "-c", "for i in 1 2 3 4 5 6 7 8; do taskset -c 0 true; taskset -c 1 true 2>/dev/null; done"};
  o.duration_s = 5;
  const RecordResult r = record_trace(o);
  EXPECT_EQ(r.command_status, 0);
  EXPECT_FALSE(tracefs_instance_exists("ipilab-test-dat"));
  ASSERT_GT(r.events, 0u);
  const auto txt = tmp.path / "rec.txt";
  ASSERT_EQ(std::system(("trace-cmd report '" + o.output.string() + "' > '" + txt.string() + "' 2>/dev/null").c_str()), 0);
  // trace-cmd report: one line per event after "cpus=N".
  const std::string report = testing::slurp(txt);
  EXPECT_EQ(report.rfind("cpus=", 0), 0u);
  const auto lines = static_cast<std::uint64_t>(std::count(report.begin(), report.end(), '\n'));
  EXPECT_EQ(lines - 1, r.events);
  auto counts = [](const std::filesystem::path& p) {
    testing::CollectingSink sink;
    read_trace(p, sink);
    std::map<std::string, std::uint64_t> c = sink.others;
    for (const auto& e : sink.events) ++c[e.name];
    return c;
  };
  const auto from_dat = counts(o.output), from_report = counts(txt);
  EXPECT_EQ(from_dat, from_report);
  std::uint64_t total = 0;
  for (const auto& [name, n] : from_dat) total += n;
  EXPECT_EQ(total, r.events);
  EXPECT_GT(from_dat.count("ipi_send_cpu") + from_dat.count("reschedule_entry"), 0u);
  std::size_t files = 0;
  for (const auto& e : std::filesystem::directory_iterator(tmp.path)) files += e.is_regular_file();
  EXPECT_EQ(files, 2u);  // rec.dat and the report written here; no temporary left
}

}  // namespace
}  // namespace ipilab::trace
