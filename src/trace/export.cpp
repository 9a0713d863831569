#include "trace/export.h"

#include <unistd.h>

#include <cstdio>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/error.h"
#include "common/output.h"

namespace ipilab::trace {

RowFormat row_format(const std::filesystem::path& path) {
  const std::string ext = path.extension().string();
  if (ext == ".csv") return RowFormat::Csv;
  if (ext == ".jsonl") return RowFormat::Jsonl;
  throw InputError("--events", fmt::format("'{}': the file name must end in .csv or .jsonl", path.string()));
}

std::string events_row_line(const EventsRow& r, RowFormat format) {
  auto text = [](const std::optional<RowTime>& t) { return t ? t->text : std::string(); };
  if (format == RowFormat::Csv)
    return fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", output::csv_field(r.buffer), r.record,
                       r.send.text, r.src, r.dst, r.kind, output::csv_field(r.callsite), output::csv_field(r.callback),
                       r.served, r.inferred ? 1 : 0, text(r.arrival), r.arrival_kind, text(r.latency), text(r.handler));
  auto num = [](const std::optional<RowTime>& t) { return t ? t->json : nlohmann::json(nullptr); };
  const nlohmann::json j = {
      {"buffer", r.buffer},
      {"record", r.record},
      {"send_ns", r.send.json},
      {"src", r.src},
      {"dst", r.dst},
      {"kind", r.kind},
      {"callsite", r.callsite},
      {"callback", r.callback},
      {"served", r.served},
      {"inferred", r.inferred},
      {"arrival_ns", num(r.arrival)},
      {"arrival_kind", r.arrival_kind.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.arrival_kind)},
      {"latency_ns", num(r.latency)},
      {"handler_ns", num(r.handler)}};
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + '\n';
}

namespace {


}  // namespace

class TraceExports::BufferObserver : public AnalysisObserver {
 public:
  BufferObserver(TraceExports& x, std::string name, int group, int sort_index)
      : x_(x), name_(std::move(name)), group_(group) {
    if (x_.timeline_)
      x_.timeline_->group(group_, name_.empty() ? x_.title_ : fmt::format("{} — buffer '{}'", x_.title_, name_),
                          sort_index);
  }

  void on_ipi(const IpiRecord& r) override {
    const std::optional<std::uint64_t> latency =
        r.arrival_ns && *r.arrival_ns >= r.send_ns ? std::optional<std::uint64_t>(*r.arrival_ns - r.send_ns) : std::nullopt;
    row("ipi", r.send_ns, r.src, r.dst, kind_name(r.kind), r.callsite, r.callback, outcome_name(r.outcome), false,
        r.arrival_ns, r.arrival_ns ? kind_name(r.arrival_kind) : std::string_view(), latency, r.handler_ns);
    if (!x_.timeline_ || !x_.sent_in_window(r.send_ns)) return;
    auto& w = *x_.timeline_;
    const timeline::Track from{group_, static_cast<int>(r.src)}, to{group_, static_cast<int>(r.dst)};
    track(r.src);
    timeline::Args args;
    args.strings = {{"callsite", std::string(r.callsite)}, {"callback", std::string(r.callback)},
                    {"served", std::string(outcome_name(r.outcome))}, {"target", fmt::format("CPU {}", r.dst)}};
    if (latency) args.numbers.emplace_back("latency_ns", static_cast<double>(*latency));
    const char* suffix = r.outcome == SendOutcome::Coalesced ? " (coalesced)"
                         : r.outcome == SendOutcome::Raised  ? ""
                                                             : " (unmatched)";
    w.slice(from, r.send_ns, 1, fmt::format("send {} -> CPU {}{}", kind_name(r.kind), r.dst, suffix), "send", args);
    if (r.arrival_ns) {
      track(r.dst);
      // Flow ids stay below 2^53: JSON readers (Perfetto's UI, jq) hold numbers as doubles, and ids
      // above that merge. The group in bits 40 and up, as the simulated timeline's (scenario/timeline.cpp).
      w.flow(r.id + 1 + (static_cast<std::uint64_t>(group_) << 40), from, r.send_ns, to, *r.arrival_ns,
             r.outcome == SendOutcome::Coalesced ? "IPI (coalesced)" : "IPI",
             r.outcome == SendOutcome::Coalesced ? "ipi,coalesced" : "ipi");
    }
  }

  void on_call(const CallRecord& r) override {
    const std::optional<std::uint64_t> latency =
        r.run_ns && *r.run_ns >= r.queue_ns ? std::optional<std::uint64_t>(*r.run_ns - r.queue_ns) : std::nullopt;
    row("call", r.queue_ns, r.src, r.dst, "call", r.callsite, r.func, service_name(r.service), r.inferred, r.run_ns,
        {}, latency, r.run_time_ns);
    if (!x_.timeline_ || !x_.sent_in_window(r.queue_ns)) return;
    if (r.service != CallService::Coalesced && r.service != CallService::PollingIdle) return;
    auto& w = *x_.timeline_;
    track(r.src);
    timeline::Args args;
    args.strings = {{"func", std::string(r.func)}, {"callsite", std::string(r.callsite)},
                    {"served", std::string(service_name(r.service))}};
    if (r.inferred) args.strings.emplace_back("inferred", "no sched_wake_idle_without_ipi in the trace");
    const std::string what = r.service == CallService::Coalesced ? "coalesced: no IPI of its own"
                                                                  : "polling-idle: no IPI, target polled in idle";
    w.instant({group_, static_cast<int>(r.src)}, r.queue_ns, fmt::format("call {} -> CPU {} ({})", r.func, r.dst, what),
              r.service == CallService::Coalesced ? "call,coalesced" : "call,polling-idle", args);
    if (r.service == CallService::PollingIdle && r.run_ns) {
      track(r.dst);
      w.instant({group_, static_cast<int>(r.dst)}, *r.run_ns, fmt::format("{} runs from polling idle", r.func),
                "call,polling-idle", args);
    }
  }

  void on_handler(std::uint32_t cpu, IpiKind kind, std::uint64_t entry_ns, std::optional<std::uint64_t> exit_ns) override {
    if (!x_.timeline_ || !x_.in_window(entry_ns)) return;
    track(cpu);
    const std::uint64_t dur = exit_ns && *exit_ns > entry_ns ? *exit_ns - entry_ns : 1;
    timeline::Args args;
    if (!exit_ns) args.strings.emplace_back("exit", "not in the trace");
    x_.timeline_->slice({group_, static_cast<int>(cpu)}, entry_ns, dur, fmt::format("{} handler", kind_name(kind)),
                        "handler", args);
  }

  void on_function(std::uint32_t cpu, std::string_view func, std::uint64_t entry_ns,
                   std::optional<std::uint64_t> exit_ns) override {
    if (!x_.timeline_ || !x_.in_window(entry_ns)) return;
    track(cpu);
    const std::uint64_t dur = exit_ns && *exit_ns > entry_ns ? *exit_ns - entry_ns : 1;
    x_.timeline_->slice({group_, static_cast<int>(cpu)}, entry_ns, dur, func, "csd-function");
  }

  void on_wake_idle(std::uint64_t ts, std::uint32_t src, std::uint32_t dst) override {
    if (!x_.timeline_ || !x_.in_window(ts)) return;
    track(src);
    x_.timeline_->instant({group_, static_cast<int>(src)}, ts, fmt::format("wake CPU {} without IPI (polling idle)", dst),
                          "wake-idle");
  }

  // A trace_marker write: an instant named by its text, where users mark the phases of a run.
  void on_marker(std::uint64_t ts, std::uint32_t cpu, std::string_view text) override {
    if (!x_.timeline_ || !x_.in_window(ts)) return;
    track(cpu);
    x_.timeline_->instant({group_, static_cast<int>(cpu)}, ts, text.empty() ? std::string_view("marker") : text,
                          "marker");
    ++x_.markers_;
  }

 private:
  void track(std::uint32_t cpu) {
    if (cpu >= named_.size()) named_.resize(cpu + 1, false);
    if (named_[cpu]) return;
    named_[cpu] = true;
    x_.timeline_->track({group_, static_cast<int>(cpu)}, fmt::format("CPU {}", cpu), static_cast<int>(cpu));
  }

  void row(std::string_view record, std::uint64_t send, std::uint32_t src, std::uint32_t dst, std::string_view kind,
           std::string_view callsite, std::string_view callback, std::string_view served, bool inferred,
           std::optional<std::uint64_t> arrival, std::string_view arrival_kind, std::optional<std::uint64_t> latency,
           std::optional<std::uint64_t> handler) {
    if (!x_.rows_out_) return;
    ++x_.rows_;
    x_.rows_out_->stream() << events_row_line({name_, record, ns(send), src, dst, kind, callsite, callback, served,
                                               inferred, ns(arrival), arrival_kind, ns(latency), ns(handler)},
                                              x_.format_);
  }
  static RowTime ns(std::uint64_t v) { return {nlohmann::json(v), fmt::format("{}", v)}; }
  static std::optional<RowTime> ns(const std::optional<std::uint64_t>& v) {
    return v ? std::optional<RowTime>(ns(*v)) : std::nullopt;
  }

  TraceExports& x_;
  std::string name_;
  int group_;
  std::vector<bool> named_;
};

TraceExports::TraceExports(const std::filesystem::path& events, RowFormat rows, const std::filesystem::path& perfetto,
                           std::string title)
    : format_(rows), title_(std::move(title)) {
  if (!events.empty()) {
    rows_out_ = std::make_unique<AtomicOutput>(events, "--events");
    if (format_ == RowFormat::Csv)
      rows_out_->stream() << "buffer,record,send_ns,src,dst,kind,callsite,callback,served,inferred,arrival_ns,"
                             "arrival_kind,latency_ns,handler_ns\n";
  }
  if (!perfetto.empty()) {
    perfetto_out_ = std::make_unique<AtomicOutput>(perfetto, "--perfetto");
    timeline_ = std::make_unique<timeline::TraceEventWriter>(perfetto_out_->stream());
  }
}

TraceExports::TraceExports(std::ostream& fragment, std::string title, int group, int sort_index)
    : title_(std::move(title)), fragment_group_(group), fragment_sort_(sort_index) {
  timeline_ = std::make_unique<timeline::TraceEventWriter>(fragment, timeline::TraceEventWriter::Fragment{});
}

TraceExports::~TraceExports() = default;

AnalysisObserver* TraceExports::observer_for(std::string_view buffer) {
  if (!any() && !timeline_) return nullptr;
  const int group = fragment_group_ ? fragment_group_ + static_cast<int>(buffers_.size()) : static_cast<int>(buffers_.size()) + 1;
  buffers_.push_back(std::make_unique<BufferObserver>(*this, std::string(buffer), group,
                                                      fragment_group_ ? fragment_sort_ + static_cast<int>(buffers_.size()) : group));
  return buffers_.back().get();
}

std::uint64_t TraceExports::flows() const { return timeline_ ? timeline_->flows() : 0; }

void TraceExports::prepare() {
  if (timeline_ && !finished_) timeline_->finish();
  finished_ = true;
  if (rows_out_) rows_out_->prepare();
  if (perfetto_out_) perfetto_out_->prepare();
}

void TraceExports::commit() {
  prepare();
  if (rows_out_) rows_out_->commit();
  if (perfetto_out_) perfetto_out_->commit();
}

}  // namespace ipilab::trace
