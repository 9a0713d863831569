// ipilab/cli/timeline_options.h — the simulated-timeline options 'ipilab run' and 'ipilab replay'
// share (--perfetto, --events, --timeline-limit; scenario/timeline.h), each command with its own
// help words.
#pragma once

#include <cstdint>

#include <CLI/CLI.hpp>

#include "scenario/timeline.h"

namespace ipilab::cli {

struct TimelineHelp {
  const char* perfetto;
  const char* events;
  const char* limit;
  std::uint64_t default_limit;
};

void add_timeline_options(CLI::App& cmd, scenario::TimelineOptions& timeline, const TimelineHelp& help);

}  // namespace ipilab::cli
