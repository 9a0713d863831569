// `trace record` against the real tracefs — skipped (visibly) where tracefs is not usable.
#include <gtest/gtest.h>

#include <unistd.h>

#include <sstream>

#include "common/error.h"
#include "test_util.h"
#include "trace/record.h"
#include "trace/text_reader.h"

extern "C" {
bool tracefs_instance_exists(const char* name);
}

namespace ipilab::trace {
namespace {

TEST(RecordEvents, ExactlyTheIpiEventsOfIssue4) {
  const auto ev = recorded_events();
  EXPECT_EQ(ev.size(), 16u);
  EXPECT_EQ(ev.front(), (std::pair<std::string, std::string>{"ipi", "ipi_send_cpu"}));
  for (const auto& [sys, name] : ev) EXPECT_TRUE(sys == "ipi" || sys == "csd" || sys == "irq_vectors") << sys;
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

}  // namespace
}  // namespace ipilab::trace
