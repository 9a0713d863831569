#include "trace/buffer_filter.h"

#include <algorithm>

#include <fmt/format.h>

#include "common/error.h"

namespace ipilab::trace {

// Until a buffer is announced the events are the top level's (a trace of one buffer announces none).
BufferFilter::BufferFilter(EventSink& next, std::string buffer)
    : next_(next), want_(std::move(buffer)), pass_(want_.empty()), found_(false) {}

void BufferFilter::on_begin(std::uint32_t cpus) { next_.on_begin(cpus); }

void BufferFilter::on_buffer(std::string_view name) {
  if (std::find(seen_.begin(), seen_.end(), name) == seen_.end()) seen_.emplace_back(name);
  pass_ = name == want_;
  if (pass_) next_.on_buffer(name);
}

void BufferFilter::on_event(const TraceEvent& event) {
  if (seen_.empty()) seen_.emplace_back();  // events before any announcement: the top level's
  if (!pass_) return;
  found_ = true;
  next_.on_event(event);
}

void BufferFilter::on_other_events(std::string_view name, std::uint64_t count) {
  if (seen_.empty()) seen_.emplace_back();
  if (!pass_) return;
  found_ = true;
  next_.on_other_events(name, count);
}

void BufferFilter::on_lost_events(std::uint32_t cpu, std::uint64_t count) {
  if (pass_) next_.on_lost_events(cpu, count);
}

void BufferFilter::check(const std::string& place) const {
  const bool announced = std::find(seen_.begin(), seen_.end(), want_) != seen_.end();
  if (announced || (seen_.empty() && want_.empty()) || found_) return;
  std::string list;
  for (const auto& n : seen_.empty() ? std::vector<std::string>{""} : seen_)
    list += fmt::format("{}'{}'", list.empty() ? "" : ", ", n);
  throw InputError(place, fmt::format("no ring buffer '{}' in this trace (its buffers: {}; '' is the top level)", want_, list));
}

}  // namespace ipilab::trace
