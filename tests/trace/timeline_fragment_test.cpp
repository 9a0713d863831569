// trace/timeline.h fragments: parts written apart (one per simulated variant) joined into one
// trace-event document, exactly the events of each part, in order.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "trace/timeline.h"

namespace ipilab::timeline {
namespace {

std::string part(int pid) {
  std::ostringstream out;
  TraceEventWriter w(out, TraceEventWriter::Fragment{});
  w.group(pid, "variant " + std::to_string(pid), pid);
  w.track({pid, 0}, "CPU 0", 0);
  w.slice({pid, 0}, 1000, 250, "send", "send");
  w.flow(static_cast<std::uint64_t>(pid), {pid, 0}, 1000, {pid, 0}, 1000, "IPI", "ipi");
  EXPECT_EQ(w.finish(), 7u);  // 2 + 2 metadata, 1 slice, 2 flow ends
  return out.str();
}

TEST(TimelineFragments, JoinIntoOneDocumentWithEveryPartsEvents) {
  const std::vector<std::string> parts = {part(1), "", part(2)};
  EXPECT_EQ(parts[0].find("traceEvents"), std::string::npos);  // a fragment has no document around it
  const auto doc = nlohmann::json::parse(join_fragments(parts));
  ASSERT_EQ(doc.at("traceEvents").size(), 14u);
  EXPECT_EQ(doc.at("displayTimeUnit"), "ns");
  EXPECT_EQ(doc["traceEvents"][0].at("pid"), 1);
  EXPECT_EQ(doc["traceEvents"][13].at("pid"), 2);
  EXPECT_EQ(doc["traceEvents"][13].at("ph"), "f");
  // No parts: an empty but valid document.
  const auto empty = nlohmann::json::parse(join_fragments({}));
  EXPECT_TRUE(empty.at("traceEvents").empty());
}

}  // namespace
}  // namespace ipilab::timeline
