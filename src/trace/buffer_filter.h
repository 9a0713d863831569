// ipilab/trace/buffer_filter.h — keeps the events of one ring buffer of a trace (the top level or a
// tracefs instance) and drops the others', in front of any EventSink: how `ipilab trace --buffer`
// and the replay pick a buffer, without the analysis knowing about the choice.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "trace/event.h"

namespace ipilab::trace {

class BufferFilter : public EventSink {
 public:
  /// Passes to `next` what belongs to buffer `buffer` ("" = the top level).
  BufferFilter(EventSink& next, std::string buffer);

  void on_begin(std::uint32_t cpus) override;
  void on_buffer(std::string_view name) override;
  void on_event(const TraceEvent& event) override;
  void on_other_events(std::string_view name, std::uint64_t count) override;
  void on_lost_events(std::uint32_t cpu, std::uint64_t count) override;

  /// After the read: throws InputError(place, reason) when the trace has no such buffer, naming
  /// the buffers it has.
  void check(const std::string& place) const;
  /// The buffers the trace announced, in file order ("" = top level; a trace that announces none
  /// has the top level only).
  const std::vector<std::string>& buffers() const { return seen_; }

 private:
  EventSink& next_;
  std::string want_;
  bool pass_;
  bool found_;
  std::vector<std::string> seen_;
};

}  // namespace ipilab::trace
