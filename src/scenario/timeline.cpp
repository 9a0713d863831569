#include "scenario/timeline.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <optional>
#include <span>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/error.h"
#include "common/file.h"
#include "common/output.h"
#include "trace/export.h"
#include "trace/timeline.h"
#include "workload/mechanism.h"
#include "workload/run_common.h"
#include "workload/vm_run.h"

namespace ipilab::scenario {

namespace fs = std::filesystem;
namespace tl = ipilab::timeline;
using sim::Ps;
using workload::Served;

namespace {

// The columns of `ipilab trace --events` (trace/export.h), so that rows of a trace and of a
// simulated run go into one table.
constexpr const char* kCsvHeader =
    "buffer,record,send_ns,src,dst,kind,callsite,callback,served,inferred,arrival_ns,arrival_kind,latency_ns,"
    "handler_ns\n";

// Track ids of shared resources, after the vCPUs' (guest CPU numbers are far below).
constexpr int kPcpuTracks = 1'000'000, kItsTracks = 2'000'000, kOtherTracks = 3'000'000;

std::uint64_t ns(Ps t) { return t.v <= 0 ? 0 : static_cast<std::uint64_t>(t.v) / 1000; }
/// A duration drawn from floor(start) to floor(end) in ns, at least `min`.
std::uint64_t dur_ns(Ps start, Ps end, std::uint64_t min) { return std::max(min, ns(end) - std::min(ns(end), ns(start))); }
/// Exact ns with the ps as decimals ("1234.567").
std::string exact_ns(Ps t) {
  const std::int64_t v = std::max<std::int64_t>(0, t.v);
  return fmt::format("{}.{:03}", v / 1000, v % 1000);
}
double ns_value(Ps d) { return static_cast<double>(d.v) / 1000.0; }

bool char_device_or_pipe(const fs::path& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0 && (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode));
}

int resource_tid(std::string_view name, int fallback) {
  auto number = [&](std::string_view prefix) -> int {
    if (name.substr(0, prefix.size()) != prefix) return -1;
    int n = 0;
    std::size_t i = prefix.size();
    if (i >= name.size() || name[i] < '0' || name[i] > '9') return -1;
    for (; i < name.size() && name[i] >= '0' && name[i] <= '9'; ++i) n = n * 10 + (name[i] - '0');
    return i < name.size() && name[i] == '.' && n < 1'000'000 ? n : -1;
  };
  if (const int n = number("pcpu"); n >= 0) return kPcpuTracks + n;
  if (const int n = number("its"); n >= 0) return kItsTracks + n;
  return kOtherTracks + fallback;
}

}  // namespace

void check_timeline_options(const TimelineOptions& o) {
  if (o.limit && !o.any()) throw InputError("--timeline-limit", "draws nothing without --perfetto FILE.json or --events FILE.csv");
  if (!o.perfetto.empty()) {
    if (fs::path(o.perfetto).extension() != ".json" && !char_device_or_pipe(o.perfetto))
      throw InputError("--perfetto", fmt::format("'{}': the file name must end in .json", o.perfetto));
  }
  if (!o.events.empty() && !char_device_or_pipe(o.events))
    trace::row_format(o.events);  // .csv | .jsonl, else InputError("--events")
  output::check_outputs(output_requests(o));
}

std::vector<output::OutputRequest> output_requests(const TimelineOptions& o) {
  return {{"--perfetto", o.perfetto, false}, {"--events", o.events, false}};
}

// ------------------------------------------------------------------------------------------------
// One variant's window (the file comment of timeline.h says what is drawn).

class SimTimeline::Variant final : public workload::Observer {
 public:
  struct Config {
    int pid = 1;
    std::string process;      // process name without the window's description
    std::string buffer;       // --events "buffer" column
    workload::Arch arch = workload::Arch::X86;
    Unit unit = Unit::Iterations;
    std::uint64_t limit = 1, warmup = 0, iterations = 0;
    std::size_t vcpus = 0;
    std::uint64_t origin_ns = 0;  // --perfetto timestamps: simulated time 0 on this clock
    bool perfetto = false, rows = false;
    trace::RowFormat format = trace::RowFormat::Csv;
  };

  explicit Variant(Config c) : c_(std::move(c)) {
    if (c_.perfetto) {
      w_ = std::make_unique<tl::TraceEventWriter>(json_, tl::TraceEventWriter::Fragment{});
      w_->set_origin_ns(c_.origin_ns);
    }
    named_.assign(c_.vcpus, false);
    launched_.resize(c_.vcpus);
    steps_.resize(c_.vcpus);
    awaiting_.resize(c_.vcpus);
    idle_calls_.resize(c_.vcpus);
    stray_merged_.resize(c_.vcpus);
    idle_flush_expected_.assign(c_.vcpus, 0);
    last_send_recorded_.assign(c_.vcpus, 0);
    last_vector_.assign(c_.vcpus, 0);
    using K = workload::IpiKind;
    // CallFunction before CallFunctionSingle: on arm64 both are IPI_CALL_FUNC, which a trace names
    // by its reason string "Function call interrupts" (call-function).
    for (auto [k, name] : {std::pair{K::CallFunction, "call-function"}, std::pair{K::CallFunctionSingle, "call-function-single"},
                           std::pair{K::Reschedule, "reschedule"}, std::pair{K::IrqWork, "irq-work"},
                           std::pair{K::Platform, "platform"}}) {
      try {
        const std::uint32_t v = workload::vector_of(c_.arch, k, "timeline");
        if (std::none_of(kinds_.begin(), kinds_.end(), [&](const auto& p) { return p.first == v; })) kinds_.emplace_back(v, name);
      } catch (const InputError&) {
        // the architecture has no such vector
      }
    }
    if (c_.unit == Unit::Sends) open(Ps{0});
  }

  // ---- Observer -------------------------------------------------------------------------------

  void on_mark(Ps t, unsigned cpu, std::uint64_t n) override {
    marks_ = n;
    if (c_.unit != Unit::Iterations || state_ == State::Done) return;
    if (state_ == State::Before && n == c_.warmup + 1) open(t);
    if (state_ != State::Open) return;
    const std::uint64_t k = n - c_.warmup;  // iteration k starts (k = limit + 1: the window's end)
    if (k <= c_.limit) {
      covered_ = k - 1;
      instant(cpu, t, fmt::format("iteration {}", k), "iteration", {});
    } else {
      covered_ = c_.limit;
      instant(cpu, t, fmt::format("end of the timeline's window ({} iterations)", c_.limit), "iteration", {});
      close();
    }
  }

  void on_queue(Ps t, unsigned sender, unsigned target, bool wake) override {
    if (state_ != State::Open || sender >= c_.vcpus) return;
    const std::uint64_t id = next_call_++;
    calls_[id] = Call{sender, target, t, wake, false};
    awaiting_[sender].emplace_back(target, id);
  }

  void on_request(Ps t, unsigned sender, unsigned target, Served how, std::uint64_t ipi, std::string_view reason) override {
    if (state_ == State::Done || sender >= c_.vcpus || target >= c_.vcpus) return;
    std::uint64_t call = 0;
    auto& aw = awaiting_[sender];
    for (auto it = aw.begin(); it != aw.end(); ++it)
      if (it->first == target) {
        call = it->second;
        aw.erase(it);
        break;
      }
    switch (how) {
      case Served::OwnIpi: {
        Ipi r;
        r.src = sender;
        r.dst = target;
        r.in_window = state_ == State::Open;
        if (call) r.calls.push_back(call);
        ipis_[ipi] = std::move(r);
        launched_[sender].push_back(ipi);
        if (state_ == State::Open) ++outstanding_;
        return;
      }
      case Served::Coalesced: {
        if (!call) return;
        calls_[call].coalesced = true;
        if (ipi) {
          if (auto it = ipis_.find(ipi); it != ipis_.end()) it->second.calls.push_back(call);
        } else {
          idle_calls_[target].push_back(call);  // behind a polling-idle call: the idle loop runs it
        }
        tl::Args a;
        a.strings = {{"served", "coalesced"}, {"served_by", ipi ? fmt::format("IPI #{}", ipi) : "the idle-loop flush"},
                     {"target", fmt::format("CPU {}", target)}};
        instant(sender, t,
                ipi ? fmt::format("call -> CPU {} (coalesced: no IPI of its own, served by IPI #{})", target, ipi)
                    : fmt::format("call -> CPU {} (coalesced: no IPI of its own, served from the idle loop)", target),
                "call,coalesced", a);
        return;
      }
      case Served::Polling: {
        idle_flush_expected_[target] = 1;
        if (!call) return;
        idle_calls_[target].push_back(call);
        tl::Args a;
        a.strings = {{"served", "polling-idle"}, {"target", fmt::format("CPU {}", target)}};
        instant(sender, t, fmt::format("call -> CPU {} (polling-idle: no IPI, target polled in idle)", target),
                "call,polling-idle", a);
        return;
      }
      case Served::Lost: {
        if (!call) call = redecided_call(sender, target);
        tl::Args a;
        a.strings = {{"served", "lost"}, {"reason", std::string(reason)}, {"target", fmt::format("CPU {}", target)}};
        if (call) {
          const Call c = calls_[call];
          calls_.erase(call);
          call_row(c, "lost", std::nullopt, {}, {});
          instant(sender, t, fmt::format("call -> CPU {} lost: {}", target, reason), "call,lost", a);
        } else if (state_ == State::Open || last_send_recorded_[sender]) {
          instant(sender, t, fmt::format("IPI -> CPU {} lost: {}", target, reason), "ipi,lost", a);
          ipi_row(sender, target, t, kind_name(last_vector_[sender]), "lost", std::nullopt, {}, {});
        }
        maybe_done();
        return;
      }
    }
  }

  void on_send_step(unsigned cpu, Ps start, Ps end, std::string_view label) override {
    if (state_ == State::Open && cpu < c_.vcpus) steps_[cpu].push_back({start, end, std::string(label)});
  }

  void on_send(Ps start, Ps end, unsigned sender, std::uint32_t vector, std::span<const unsigned> targets) override {
    ++sends_;
    if (state_ == State::Done || sender >= c_.vcpus) return;
    const bool recorded = state_ == State::Open;
    std::string ipis;
    for (std::uint64_t id : launched_[sender]) {
      auto it = ipis_.find(id);
      if (it == ipis_.end()) continue;
      it->second.vector = vector;
      it->second.send_start = start;
      if (recorded) ipis += fmt::format("{}#{} -> CPU {}", ipis.empty() ? "" : ", ", id, it->second.dst);
    }
    launched_[sender].clear();
    last_send_recorded_[sender] = recorded;
    last_vector_[sender] = vector;
    if (recorded) {
      ++sends_in_window_;
      if (w_) {
        track(sender);
        const std::string kind = kind_name(vector);
        std::vector<unsigned> ts(targets.begin(), targets.end());
        tl::Args a;
        a.strings = {{"targets", workload::cpu_list(ts)}, {"ipis", ipis.empty() ? "none (lost)" : ipis}};
        a.numbers = {{"duration_ns", ns_value(end - start)}};
        w_->slice({c_.pid, static_cast<int>(sender)}, ns(start), dur_ns(start, end, 1),
                  fmt::format("send {} -> CPU {}", kind, workload::cpu_list(ts)), "send", a);
        for (const Step& s : steps_[sender])
          w_->slice({c_.pid, static_cast<int>(sender)}, ns(s.start), dur_ns(s.start, s.end, 0), s.label, "send-step");
        check_size();
      }
    }
    steps_[sender].clear();
    if (recorded && c_.unit == Unit::Sends && sends_in_window_ == c_.limit) {
      covered_ = c_.limit;
      close();
    }
  }

  void on_resource(std::string_view resource, Ps asked, Ps start, Ps end, std::string_view label) override {
    if (state_ != State::Open || !w_) return;
    auto [it, fresh] = resources_.try_emplace(std::string(resource), 0);
    if (fresh) {
      it->second = resource_tid(resource, static_cast<int>(resources_.size()));
      w_->track({c_.pid, it->second}, resource, it->second);
    }
    tl::Args a;
    if (start > asked) a.numbers = {{"queued_ns", ns_value(start - asked)}};
    w_->slice({c_.pid, it->second}, ns(start), dur_ns(start, end, 0), label, "resource", a);
    check_size();
  }

  void on_merge(Ps, unsigned target, std::uint64_t ipi, std::uint64_t into) override {
    if (state_ == State::Done || ipi == 0 || target >= c_.vcpus) return;
    auto it = ipis_.find(ipi);
    if (it == ipis_.end()) return;
    it->second.merged = true;
    if (into) {
      if (auto in = ipis_.find(into); in != ipis_.end()) in->second.merged_in.push_back(ipi);
    } else {
      stray_merged_[target].push_back(ipi);
    }
  }

  void on_handler(unsigned cpu, std::uint64_t ipi, Ps start, Ps entry, Ps end) override {
    if (state_ == State::Done || cpu >= c_.vcpus) return;
    if (ipi) {
      auto it = ipis_.find(ipi);
      if (it == ipis_.end()) return;  // sent after the window closed
      Ipi& r = it->second;
      bool draw = state_ == State::Open || r.in_window || !r.calls.empty();
      for (std::uint64_t m : r.merged_in)
        if (auto mi = ipis_.find(m); mi != ipis_.end() && (mi->second.in_window || !mi->second.calls.empty())) draw = true;
      const std::string kind = kind_name(r.vector);
      if (draw && w_) {
        track(cpu);
        if (entry > start)
          w_->slice({c_.pid, static_cast<int>(cpu)}, ns(start), dur_ns(start, entry, 0), "interrupt entry", "irq");
        tl::Args a;
        a.strings = {{"ipi", fmt::format("#{}", ipi)}, {"from", fmt::format("CPU {}", r.src)}, {"served", "raised"}};
        if (!r.in_window) a.strings.emplace_back("sent", "before the timeline's window");
        std::string merged;
        for (std::uint64_t m : r.merged_in) merged += fmt::format("{}#{}", merged.empty() ? "" : ", ", m);
        if (!merged.empty()) a.strings.emplace_back("also_served (merged)", merged);
        a.numbers = {{"latency_ns", ns_value(entry - r.send_start)}};
        w_->slice({c_.pid, static_cast<int>(cpu)}, ns(entry), dur_ns(entry, end, 1), fmt::format("{} handler", kind),
                  "handler", a);
      }
      const std::vector<std::uint64_t> merged_in = r.merged_in;
      serve(ipi, cpu, entry, end, kind, true, draw);
      for (std::uint64_t m : merged_in) serve(m, cpu, entry, end, kind, false, draw);
    } else if (idle_flush_expected_[cpu] && start == entry) {
      // flush_smp_call_function_queue from the idle loop (the target polled): no interrupt.
      idle_flush_expected_[cpu] = 0;
      auto& calls = idle_calls_[cpu];
      if ((state_ == State::Open || !calls.empty()) && w_) {
        track(cpu);
        tl::Args a;
        a.numbers = {{"calls", static_cast<double>(calls.size())}};
        w_->slice({c_.pid, static_cast<int>(cpu)}, ns(start), dur_ns(start, end, 1),
                  "flush_smp_call_function_queue from polling idle (no IPI)", "call,polling-idle", a);
      }
      for (std::uint64_t id : calls) resolve_call(id, start, end, "polling-idle", "");
      calls.clear();
    } else {
      // An interrupt nobody sent this CPU (a misdelivered IPI), and what merged into it.
      auto& merged = stray_merged_[cpu];
      if ((state_ == State::Open || !merged.empty()) && w_) {
        track(cpu);
        if (entry > start)
          w_->slice({c_.pid, static_cast<int>(cpu)}, ns(start), dur_ns(start, entry, 0), "interrupt entry", "irq");
        w_->slice({c_.pid, static_cast<int>(cpu)}, ns(entry), dur_ns(entry, end, 1),
                  "interrupt handler (misdelivered: no IPI was meant for this CPU)", "handler,misdelivered");
      }
      const std::vector<std::uint64_t> m = merged;
      merged.clear();
      for (std::uint64_t id : m) serve(id, cpu, entry, end, "misdelivered", false, true);
    }
    check_size();
    maybe_done();
  }

  // ---- After the run --------------------------------------------------------------------------

  void finish() {
    if (finished_) return;
    finished_ = true;
    for (const auto& [id, r] : ipis_) {
      if (!r.in_window) continue;
      ++in_flight_;
      ipi_row(r.src, r.dst, r.send_start, kind_name(r.vector), "pending", std::nullopt, {}, {});
    }
    for (const auto& [id, c] : calls_) call_row(c, "pending", std::nullopt, {}, {});
    ipis_.clear();
    calls_.clear();
    if (state_ == State::Open && c_.unit == Unit::Iterations && marks_ > c_.warmup) covered_ = std::min(c_.limit, marks_ - c_.warmup - 1);
    if (state_ == State::Open && c_.unit == Unit::Sends) covered_ = sends_in_window_;
    if (w_) {
      // "simulated (mechanism M) ..." (replay) does not say "simulated" twice.
      std::string win = window();
      if (c_.process.rfind("simulated", 0) == 0 && win.rfind("simulated: ", 0) == 0) win.erase(0, 11);
      w_->group(c_.pid, fmt::format("{} ({})", c_.process, win), c_.pid);
      w_->finish();
    }
  }

  std::string window() const {
    std::string s;
    if (c_.unit == Unit::Iterations) {
      s = covered_ == 0 ? std::string("simulated: no complete iteration in the window")
                        : fmt::format("simulated: iterations 1-{} of {}{}", covered_, c_.iterations,
                                      c_.warmup ? fmt::format(", after {} warm-up", c_.warmup) : "");
    } else {
      s = fmt::format("simulated: sends 1-{} of {}", covered_, sends_);
    }
    if (cut_) s += fmt::format(", CUT at {} events", kMaxTimelineEvents);
    if (in_flight_) s += fmt::format(", {} IPIs still in flight when the run stopped", in_flight_);
    return s;
  }

  std::string json() const { return json_.str(); }
  const std::string& rows() const { return rows_; }
  std::uint64_t row_count() const { return row_count_; }
  std::uint64_t flows() const { return flows_; }
  std::uint64_t covered() const { return covered_; }
  bool cut() const { return cut_; }

 private:
  enum class State : std::uint8_t { Before, Open, Closed, Done };
  struct Ipi {
    unsigned src = 0, dst = 0;
    Ps send_start{};
    std::uint32_t vector = 0;
    bool in_window = false, merged = false;
    std::vector<std::uint64_t> merged_in;  // IPIs merged into this one's pending interrupt
    std::vector<std::uint64_t> calls;      // CSDs / wake entries its flush runs
  };
  struct Call {
    unsigned src = 0, dst = 0;
    Ps queued{};
    bool wake = false;
    bool coalesced = false;  // rides on an earlier IPI or idle-loop flush
  };
  struct Step {
    Ps start, end;
    std::string label;
  };

  void open(Ps) { state_ = State::Open; }
  void close() {
    state_ = State::Closed;
    for (auto& s : steps_) s.clear();
    for (auto& a : awaiting_) a.clear();
    maybe_done();
  }
  void maybe_done() {
    if (state_ == State::Closed && outstanding_ == 0 && calls_.empty()) done();
  }
  void done() {
    state_ = State::Done;
    ipis_.clear();
  }
  void check_size() {
    if (w_ && w_->events() >= kMaxTimelineEvents && state_ != State::Done) {
      cut_ = true;
      if (c_.unit == Unit::Iterations) covered_ = marks_ > c_.warmup ? std::min(c_.limit, marks_ - c_.warmup - 1) : 0;
      else covered_ = sends_in_window_;
      done();
      calls_.clear();
    }
  }

  std::string kind_name(std::uint32_t vector) const {
    for (const auto& [v, name] : kinds_)
      if (v == vector) return name;
    return c_.arch == workload::Arch::X86 ? fmt::format("vector {:#04x}", vector) : fmt::format("SGI {}", vector);
  }

  void track(unsigned cpu) {
    if (named_[cpu]) return;
    named_[cpu] = true;
    w_->track({c_.pid, static_cast<int>(cpu)}, fmt::format("CPU {}", cpu), static_cast<int>(cpu));
  }

  void instant(unsigned cpu, Ps t, const std::string& name, std::string_view cat, const tl::Args& a) {
    if (!w_ || state_ == State::Done || cpu >= c_.vcpus) return;
    track(cpu);
    w_->instant({c_.pid, static_cast<int>(cpu)}, ns(t), name, cat, a);
    check_size();
  }

  // IPI `id` was served by the handler on `cpu` (entry -> end): its arrow, its row, its calls.
  void serve(std::uint64_t id, unsigned cpu, Ps entry, Ps end, const std::string& kind, bool raised, bool draw) {
    auto it = ipis_.find(id);
    if (it == ipis_.end()) return;
    const Ipi r = std::move(it->second);
    ipis_.erase(it);
    if (r.in_window) {
      if (outstanding_) --outstanding_;
      ++flows_;
      if (w_ && draw)
        w_->flow((static_cast<std::uint64_t>(c_.pid) << 40) + id, {c_.pid, static_cast<int>(r.src)}, ns(r.send_start),
                 {c_.pid, static_cast<int>(cpu)}, ns(entry), raised ? "IPI" : "IPI (coalesced)",
                 raised ? "ipi" : "ipi,coalesced");
      ipi_row(r.src, cpu, r.send_start, kind_name(r.vector), raised ? "raised" : "coalesced", entry, kind, end - entry);
    }
    for (std::uint64_t c : r.calls) resolve_call(c, entry, end, "ipi", kind);
  }

  void resolve_call(std::uint64_t id, Ps entry, Ps end, std::string_view how, std::string_view kind) {
    auto it = calls_.find(id);
    if (it == calls_.end()) return;
    const Call c = it->second;
    calls_.erase(it);
    const std::string_view served = c.coalesced ? "coalesced" : how;
    call_row(c, served, entry, kind, end - entry);
  }

  // A CSD decided again as lost (withdrawn behind a lost IPI): the latest one still open.
  std::uint64_t redecided_call(unsigned sender, unsigned target) {
    for (auto it = calls_.rbegin(); it != calls_.rend(); ++it)
      if (it->second.src == sender && it->second.dst == target) {
        const std::uint64_t id = it->first;
        for (auto& [ipi, r] : ipis_) std::erase(r.calls, id);
        for (auto& v : idle_calls_) std::erase(v, id);
        return id;
      }
    return 0;
  }

  void ipi_row(unsigned src, unsigned dst, Ps send, const std::string& kind, std::string_view served, std::optional<Ps> arrival,
               std::string_view arrival_kind, std::optional<Ps> handler) {
    row("ipi", src, dst, send, kind, "", served, arrival, arrival_kind, handler);
  }
  void call_row(const Call& c, std::string_view served, std::optional<Ps> arrival, std::string_view arrival_kind,
                std::optional<Ps> handler) {
    row("call", c.src, c.dst, c.queued, "call", c.wake ? "sched_ttwu_pending" : "", served, arrival, arrival_kind, handler);
  }
  void row(std::string_view record, unsigned src, unsigned dst, Ps send, std::string_view kind, std::string_view callback,
           std::string_view served, std::optional<Ps> arrival, std::string_view arrival_kind, std::optional<Ps> handler) {
    if (!c_.rows) return;
    ++row_count_;
    std::optional<Ps> latency;
    if (arrival) latency = *arrival - send;
    auto ns = [](const std::optional<Ps>& v) {
      return v ? std::optional<trace::RowTime>(trace::RowTime{nlohmann::json(ns_value(*v)), exact_ns(*v)})
               : std::nullopt;
    };
    rows_ += trace::events_row_line({c_.buffer, record, *ns(send), src, dst, kind, "", callback, served, false,
                                     ns(arrival), arrival_kind, ns(latency), ns(handler)},
                                    c_.format);
  }

  Config c_;
  State state_ = State::Before;
  std::ostringstream json_;
  std::unique_ptr<tl::TraceEventWriter> w_;
  std::string rows_;
  std::uint64_t row_count_ = 0;
  std::vector<std::pair<std::uint32_t, std::string>> kinds_;
  std::vector<bool> named_;
  std::map<std::string, int> resources_;

  std::map<std::uint64_t, Ipi> ipis_;  // IPIs launched and not yet served (while not Done)
  std::map<std::uint64_t, Call> calls_;
  std::uint64_t next_call_ = 1;
  std::vector<std::vector<std::uint64_t>> launched_;                           // per sender: this send's IPIs
  std::vector<std::vector<Step>> steps_;                                       // per sender: this send's steps
  std::vector<std::vector<std::pair<unsigned, std::uint64_t>>> awaiting_;      // per sender: queued, undecided
  std::vector<std::vector<std::uint64_t>> idle_calls_;                         // per target: for the idle flush
  std::vector<std::vector<std::uint64_t>> stray_merged_;                       // per target
  std::vector<std::uint8_t> idle_flush_expected_, last_send_recorded_;
  std::vector<std::uint32_t> last_vector_;                                     // per sender: its last send's

  std::uint64_t marks_ = 0, sends_ = 0, sends_in_window_ = 0, covered_ = 0, outstanding_ = 0, flows_ = 0, in_flight_ = 0;
  bool cut_ = false, finished_ = false;
};

// ------------------------------------------------------------------------------------------------

SimTimeline::SimTimeline(TimelineOptions options, Unit unit, std::string command)
    : options_(std::move(options)), unit_(unit), command_(std::move(command)) {
  limit_ = options_.limit ? options_.limit : unit_ == Unit::Iterations ? kDefaultTimelineIterations : kDefaultTimelineSends;
}

SimTimeline::~SimTimeline() = default;

void SimTimeline::observe(workload::RunSpec& spec, const std::string& scenario, const std::string& variant,
                          std::string_view default_mechanism) {
  if (!wanted()) return;
  Variant::Config c;
  c.pid = static_cast<int>(variants_.size()) + 1;
  const workload::MechanismInfo& mechanism = workload::chosen_mechanism(spec.params, default_mechanism);
  c.process = unit_ == Unit::Sends ? fmt::format("simulated (mechanism {}) — {} / {}", mechanism.name, scenario, variant)
                                   : fmt::format("{} {} — {}", command_, scenario, variant);
  c.origin_ns = origin_ns_;
  c.buffer = fmt::format("{} / {}", scenario, variant);
  c.arch = mechanism.arch;
  c.unit = unit_;
  c.limit = limit_;
  c.warmup = unit_ == Unit::Iterations ? spec.warmup : 0;
  c.iterations = spec.iterations;
  c.vcpus = static_cast<std::size_t>(spec.vm.size());
  c.perfetto = !options_.perfetto.empty();
  c.rows = !options_.events.empty();
  if (c.rows && !char_device_or_pipe(options_.events)) c.format = trace::row_format(options_.events);
  else if (c.rows) c.format = fs::path(options_.events).extension() == ".jsonl" ? trace::RowFormat::Jsonl : trace::RowFormat::Csv;
  variants_.push_back(std::make_unique<Variant>(std::move(c)));
  spec.observer = variants_.back().get();
}

std::string SimTimeline::write() {
  output::OutputSet outs;
  std::string note = write(outs);
  outs.commit_all();
  return note;
}

std::string SimTimeline::write(output::OutputSet& outs) {
  if (!wanted()) return {};
  for (auto& v : variants_) v->finish();
  std::string what;
  if (!options_.perfetto.empty()) {
    std::vector<std::string> parts = leading_;
    for (const auto& v : variants_) parts.push_back(v->json());
    outs.write(options_.perfetto, "--perfetto", tl::join_fragments(parts));
  }
  if (!options_.events.empty()) {
    const bool csv = char_device_or_pipe(options_.events) ? fs::path(options_.events).extension() != ".jsonl"
                                                           : trace::row_format(options_.events) == trace::RowFormat::Csv;
    std::string doc = csv ? kCsvHeader : "";
    for (const auto& v : variants_) doc += v->rows();
    outs.write(options_.events, "--events", doc);
  }
  // What the window was, per variant when they differ.
  std::vector<std::string> windows;
  for (const auto& v : variants_)
    if (std::find(windows.begin(), windows.end(), v->window()) == windows.end()) windows.push_back(v->window());
  std::string window;
  for (const auto& w : windows) window += (window.empty() ? "" : "; ") + w;
  std::string files;
  if (!options_.perfetto.empty()) files = options_.perfetto;
  if (!options_.events.empty()) files += (files.empty() ? "" : " and ") + fmt::format("{} ({} rows)", options_.events, rows());
  std::string leading;
  if (!options_.perfetto.empty())
    for (const auto& w : leading_what_) leading += w + "; ";
  what = fmt::format("ipilab: wrote {}: {}the timeline of {} variant{} ({}; --timeline-limit {}), {} flows send -> arrival{}\n",
                     files, leading, variants_.size(), variants_.size() == 1 ? "" : "s", window, limit_, flows(),
                     options_.perfetto.empty() ? "" : "; open it in ui.perfetto.dev");
  return what;
}

std::uint64_t SimTimeline::flows() const {
  std::uint64_t n = 0;
  for (const auto& v : variants_) n += v->flows();
  return n;
}

std::uint64_t SimTimeline::rows() const {
  std::uint64_t n = 0;
  for (const auto& v : variants_) n += v->row_count();
  return n;
}

}  // namespace ipilab::scenario
