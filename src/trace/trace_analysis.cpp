// TraceAnalysis (one IpiAnalysis per ring buffer) and the entry points that read a file into an
// analysis: analyse_trace, the replay API (for_each_ipi_send / _delivery, read_ipi_sends).
#include <algorithm>

#include <fmt/format.h>

#include "common/error.h"
#include "trace/analysis.h"
#include "trace/buffer_filter.h"

namespace ipilab::trace {

// ---------------------------------------------------------------- several buffers

TraceAnalysis::TraceAnalysis(AnalysisOptions options, IpiAnalysis::SendCallback on_send,
                             IpiAnalysis::DeliveryCallback on_delivery, ObserverFactory observer_for)
    : options_(options), on_send_(std::move(on_send)), on_delivery_(std::move(on_delivery)),
      observer_for_(std::move(observer_for)) {}

void TraceAnalysis::on_begin(std::uint32_t cpus) { cpus_ = cpus; }

void TraceAnalysis::on_buffer(std::string_view name) {
  for (std::size_t i = 0; i < names_.size(); ++i)
    if (names_[i] == name) {
      current_ = analyses_[i].get();
      return;
    }
  names_.emplace_back(name);
  AnalysisOptions o = options_;
  if (observer_for_) o.observer = observer_for_(name);
  analyses_.push_back(std::make_unique<IpiAnalysis>(on_send_, on_delivery_, o));
  analyses_.back()->on_begin(cpus_);
  current_ = analyses_.back().get();
}

IpiAnalysis& TraceAnalysis::current() {
  if (!current_) on_buffer("");
  return *current_;
}

void TraceAnalysis::on_event(const TraceEvent& ev) { current().on_event(ev); }
void TraceAnalysis::on_other_events(std::string_view name, std::uint64_t count) { current().on_other_events(name, count); }
void TraceAnalysis::on_lost_events(std::uint32_t cpu, std::uint64_t count) { current().on_lost_events(cpu, count); }

void TraceAnalysis::finish(const ReadInfo& info, const std::string& place) {
  if (!current_) on_buffer("");
  auto listed = [&] {
    std::string s;
    for (const auto& n : names_) s += fmt::format("{}'{}'", s.empty() ? "" : ", ", n);
    return s;
  };
  std::size_t with_events = 0, usable = 0;
  for (const auto& a : analyses_) {
    if (a->has_ipi_events()) ++with_events;
    if (a->has_usable_events()) ++usable;
  }
  for (std::size_t i = 0; i < analyses_.size(); ++i) {
    // Only the only buffer must have IPI events.
    const bool must = with_events == 0 && analyses_.size() == 1;
    if (!must && !analyses_[i]->has_ipi_events()) continue;
    try {
      analyses_[i]->finish(info, place, must || with_events == 0 || usable == 0);
    } catch (const InputError& e) {
      if (names_.size() > 1) throw InputError(e.place(), e.reason() + fmt::format(" (buffers in this trace: {})", listed()));
      throw;
    }
  }
  if (with_events == 0 && analyses_.size() > 1) {
    // No buffer holds IPI events: the first buffer's error says what to record.
    analyses_.front()->finish(info, place, true);
  }
}

std::vector<std::pair<std::string, const IpiAnalysis*>> TraceAnalysis::buffers() const {
  std::vector<std::pair<std::string, const IpiAnalysis*>> out;
  for (std::size_t i = 0; i < analyses_.size(); ++i) {
    if (!analyses_[i]->has_ipi_events() && analyses_.size() > 1) continue;
    out.emplace_back(names_[i], analyses_[i].get());
  }
  return out;
}

// ---------------------------------------------------------------- entry points

namespace {

// Feeds one IpiAnalysis from the single buffer that has IPI events.
class SingleBufferSink : public EventSink {
 public:
  SingleBufferSink(IpiAnalysis& a, std::string place) : a_(a), place_(std::move(place)) {}
  void on_begin(std::uint32_t cpus) override { a_.on_begin(cpus); }
  void on_buffer(std::string_view name) override {
    current_ = std::string(name);
    if (std::find(seen_.begin(), seen_.end(), current_) == seen_.end()) seen_.push_back(current_);
  }
  void on_event(const TraceEvent& ev) override {
    if (!chosen_) chosen_ = current_;
    if (*chosen_ != current_) {
      std::string s;
      for (const auto& n : seen_) s += fmt::format("{}'{}'", s.empty() ? "" : ", ", n);
      throw InputError(place_, fmt::format("IPI events in several buffers ({}): name the one to read", s));
    }
    a_.on_event(ev);
  }
  void on_other_events(std::string_view name, std::uint64_t count) override {
    others_.push_back({current_, std::string(name), count});
  }
  void on_lost_events(std::uint32_t cpu, std::uint64_t count) override {
    if (!chosen_ || *chosen_ == current_) a_.on_lost_events(cpu, count);
  }
  /// Hands over the counts of the chosen buffer (the first if none had IPI events).
  void flush() {
    const std::string b = chosen_ ? *chosen_ : (seen_.empty() ? std::string() : seen_.front());
    for (const auto& o : others_)
      if (o.buffer == b) a_.on_other_events(o.name, o.count);
  }

 private:
  struct Other {
    std::string buffer, name;
    std::uint64_t count;
  };
  IpiAnalysis& a_;
  std::string place_;
  std::string current_;
  std::optional<std::string> chosen_;
  std::vector<std::string> seen_;
  std::vector<Other> others_;
};

}  // namespace

ReadInfo analyse_trace(const std::filesystem::path& path, TraceAnalysis& analysis,
                       const std::optional<std::string>& buffer) {
  const std::string place = path == "-" ? std::string("<stdin>") : path.string();
  if (!buffer) {
    const ReadInfo info = read_trace(path, analysis);
    analysis.finish(info, place);
    return info;
  }
  BufferFilter filter(analysis, *buffer);
  const ReadInfo info = read_trace(path, filter);
  filter.check(place);
  try {
    analysis.finish(info, place);
  } catch (const InputError& e) {
    throw InputError(e.place(), fmt::format("buffer '{}': {}", *buffer, e.reason()));
  }
  return info;
}

ReadInfo analyse_trace(const std::filesystem::path& path, IpiAnalysis& analysis) {
  const std::string place = path == "-" ? std::string("<stdin>") : path.string();
  SingleBufferSink sink(analysis, place);
  const ReadInfo info = read_trace(path, sink);
  sink.flush();
  analysis.finish(info, place);
  return info;
}

void for_each_ipi_send(const std::filesystem::path& path, const std::function<void(const IpiSend&)>& fn,
                       const std::optional<std::string>& buffer) {
  if (buffer) {
    TraceAnalysis a({}, fn);
    analyse_trace(path, a, buffer);
    return;
  }
  IpiAnalysis a(fn);
  analyse_trace(path, a);
}

void for_each_ipi_delivery(const std::filesystem::path& path, const std::function<void(const IpiDelivery&)>& fn,
                           const std::optional<std::string>& buffer) {
  if (buffer) {
    TraceAnalysis a({}, {}, fn);
    analyse_trace(path, a, buffer);
    return;
  }
  IpiAnalysis a({}, fn);
  analyse_trace(path, a);
}

std::vector<IpiSend> read_ipi_sends(const std::filesystem::path& path) {
  std::vector<IpiSend> out;
  for_each_ipi_send(path, [&](const IpiSend& s) { out.push_back(s); });
  return out;
}

}  // namespace ipilab::trace
