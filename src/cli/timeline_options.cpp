#include "cli/timeline_options.h"

#include <string>

namespace ipilab::cli {

void add_timeline_options(CLI::App& cmd, scenario::TimelineOptions& timeline, const TimelineHelp& help) {
  cmd.add_option("--perfetto", timeline.perfetto, help.perfetto)->type_name("FILE.json");
  cmd.add_option("--events", timeline.events, help.events)->type_name("FILE.csv|.jsonl");
  cmd.add_option("--timeline-limit", timeline.limit, help.limit)
      ->type_name("N")
      ->default_str(std::to_string(help.default_limit))
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{10'000'000}));
}

}  // namespace ipilab::cli
