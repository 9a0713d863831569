#include "scenario/replay_join.h"

#include <algorithm>
#include <optional>

#include <fmt/format.h>

#include "common/error.h"
#include "common/output.h"
#include "trace/export.h"
#include "workload/mechanism.h"

namespace ipilab::scenario {

using sim::Ps;

namespace {

// Exact ns with the ps as decimals, on the trace's clock.
std::string trace_ns(std::uint64_t origin_ns, Ps t) {
  const std::int64_t v = std::max<std::int64_t>(0, t.v);
  return fmt::format("{}.{:03}", origin_ns + static_cast<std::uint64_t>(v / 1000), v % 1000);
}
std::string span_ns(Ps d) {
  const std::int64_t v = std::max<std::int64_t>(0, d.v);
  return fmt::format("{}.{:03}", v / 1000, v % 1000);
}

}  // namespace

// ---- the trace side --------------------------------------------------------------------------------

class ReplayJoin::Recorded final : public trace::AnalysisObserver {
 public:
  struct Row {
    std::uint64_t id = 0, send_ns = 0;
    std::uint32_t src = 0, dst = 0;
    IpiKind kind = IpiKind::Unknown;
    trace::SendOutcome outcome = trace::SendOutcome::Unmatched;
    std::optional<std::uint64_t> arrival_ns;
  };
  void on_ipi(const trace::IpiRecord& r) override {
    rows.push_back({r.id, r.send_ns, r.src, r.dst, r.kind, r.outcome, r.arrival_ns});
  }
  std::vector<Row> rows;
};

// ---- the simulated side of one variant ------------------------------------------------------------

class ReplayJoin::Simulated final : public workload::Observer {
 public:
  struct Ipi {
    enum class State : std::uint8_t { InFlight, Raised, Coalesced, Lost };
    State state = State::InFlight;
    Ps start{}, entry{};
    std::string reason;
  };

  Simulated(std::string name, const std::vector<workload::ReplaySend>& sends, workload::Arch arch, unsigned vcpus)
      : name_(std::move(name)), issued_(vcpus), next_(vcpus, 0), pending_(vcpus), stray_(vcpus) {
    // The sends each vCPU's program issues, in order (workload::replay skips those whose kind has
    // no vector on the architecture).
    for (std::size_t i = 0; i < sends.size(); ++i) {
      if (sends[i].targets.empty() || sends[i].src >= vcpus) continue;
      try {
        workload::vector_of(arch, sends[i].kind, "replay");
      } catch (const InputError&) {
        no_vector_.push_back(i);
        continue;
      }
      issued_[sends[i].src].push_back(i);
    }
    result_.resize(sends.size());
  }

  void on_request(Ps, unsigned sender, unsigned target, workload::Served how, std::uint64_t ipi,
                  std::string_view reason) override {
    if (sender >= pending_.size()) return;
    pending_[sender].push_back({target, how, ipi, std::string(reason)});
  }

  void on_send(Ps start, Ps, unsigned sender, std::uint32_t, std::span<const unsigned>) override {
    if (sender >= issued_.size() || next_[sender] >= issued_[sender].size()) return;
    const std::size_t index = issued_[sender][next_[sender]++];
    for (const Request& q : pending_[sender]) {
      Ipi& r = result_[index][q.target];
      r.start = start;
      if (q.how == workload::Served::Lost) {
        r.state = Ipi::State::Lost;
        r.reason = q.reason;
      } else if (q.how == workload::Served::OwnIpi && q.ipi) {
        open_[q.ipi] = {index, q.target};
      }
    }
    pending_[sender].clear();
  }

  void on_merge(Ps, unsigned target, std::uint64_t ipi, std::uint64_t into) override {
    if (!ipi) return;
    if (into) merged_[into].push_back(ipi);
    else if (target < stray_.size()) stray_[target].push_back(ipi);
  }

  void on_handler(unsigned cpu, std::uint64_t ipi, Ps, Ps entry, Ps) override {
    std::vector<std::uint64_t> merged;
    if (ipi) {
      serve(ipi, entry, Ipi::State::Raised);
      if (auto it = merged_.find(ipi); it != merged_.end()) {
        merged = std::move(it->second);
        merged_.erase(it);
      }
    } else if (cpu < stray_.size()) {
      merged.swap(stray_[cpu]);
    }
    for (std::uint64_t m : merged) serve(m, entry, Ipi::State::Coalesced);
  }

  const std::string& name() const { return name_; }
  const std::map<unsigned, Ipi>& of(std::size_t index) const { return result_[index]; }
  bool no_vector(std::size_t index) const { return std::binary_search(no_vector_.begin(), no_vector_.end(), index); }

 private:
  struct Request {
    unsigned target;
    workload::Served how;
    std::uint64_t ipi;
    std::string reason;
  };
  void serve(std::uint64_t ipi, Ps entry, Ipi::State state) {
    auto it = open_.find(ipi);
    if (it == open_.end()) return;
    Ipi& r = result_[it->second.first][it->second.second];
    r.state = state;
    r.entry = entry;
    open_.erase(it);
  }

  std::string name_;
  std::vector<std::vector<std::size_t>> issued_;
  std::vector<std::size_t> next_;
  std::vector<std::vector<Request>> pending_;          // per sender: requests of the send in progress
  std::vector<std::vector<std::uint64_t>> stray_;      // per target: merged into a misdelivered interrupt
  std::map<std::uint64_t, std::pair<std::size_t, unsigned>> open_;  // IPI id -> (send, target vCPU)
  std::map<std::uint64_t, std::vector<std::uint64_t>> merged_;
  std::vector<std::size_t> no_vector_;
  std::vector<std::map<unsigned, Ipi>> result_;        // per replayed send: per target vCPU
};

// ---- the join ---------------------------------------------------------------------------------------

ReplayJoin::ReplayJoin(unsigned vcpus, std::uint64_t max_ipis)
    : vcpus_(vcpus), max_ipis_(max_ipis), recorded_(std::make_unique<Recorded>()) {}

ReplayJoin::~ReplayJoin() = default;

trace::AnalysisObserver* ReplayJoin::recorded() { return recorded_.get(); }

std::uint64_t ReplayJoin::recorded_ipis() const { return recorded_->rows.size(); }

void ReplayJoin::on_trace_send(const trace::IpiSend& s, std::int64_t replay_index, bool beyond_limit) {
  const unsigned vsrc = s.src_cpu % vcpus_;
  std::map<unsigned, std::uint32_t> first_of_vcpu;  // target vCPU -> the first trace CPU mapped onto it
  for (const std::uint32_t t : s.targets) {
    Mapped m;
    m.vsrc = vsrc;
    m.vdst = t % vcpus_;
    if (beyond_limit) {
      m.why_not = fmt::format("not replayed: beyond --max-ipis {}", max_ipis_);
    } else if (m.vdst == vsrc) {
      m.why_not = fmt::format("not replayed: target CPU {} maps onto the sender's vCPU {} in a {}-vCPU VM", t, vsrc, vcpus_);
    } else if (replay_index >= 0) {
      m.index = replay_index;
      auto [it, fresh] = first_of_vcpu.try_emplace(m.vdst, t);
      if (!fresh)
        m.why_not = fmt::format("shares the simulated IPI of CPU {} (both map onto vCPU {})", it->second, m.vdst);
    }
    mapped_[{s.time_ns, s.src_cpu, t}] = std::move(m);
  }
}

workload::Observer* ReplayJoin::observe(const std::string& variant, const std::vector<workload::ReplaySend>& sends,
                                        workload::Arch arch) {
  variants_.push_back(std::make_unique<Simulated>(variant, sends, arch, vcpus_));
  return variants_.back().get();
}

std::string ReplayJoin::csv(std::uint64_t origin_ns, std::map<std::string, std::uint64_t>* counts) const {
  std::string doc =
      "variant,send_ns,src,dst,kind,recorded_served,recorded_latency_ns,vcpu_src,vcpu_dst,simulated_send_ns,"
      "simulated_served,modelled_latency_ns,note\n";
  std::vector<const Recorded::Row*> rows;
  rows.reserve(recorded_->rows.size());
  for (const auto& r : recorded_->rows) rows.push_back(&r);
  std::sort(rows.begin(), rows.end(), [](const auto* a, const auto* b) { return a->id < b->id; });
  for (const auto& v : variants_) {
    for (const Recorded::Row* r : rows) {
      std::string note;
      const std::string recorded_latency =
          r->arrival_ns && *r->arrival_ns >= r->send_ns ? fmt::format("{}", *r->arrival_ns - r->send_ns) : std::string();
      if (recorded_latency.empty()) note = "recorded: no handler entry served it in the trace";
      std::string vsrc, vdst, sim_send, served = "not-replayed", modelled;
      auto add_note = [&](const std::string& n) { note += (note.empty() ? "" : "; ") + n; };
      auto it = mapped_.find({r->send_ns, r->src, r->dst});
      if (it == mapped_.end()) {
        add_note("not replayed: not among the trace's sends");
      } else {
        const Mapped& m = it->second;
        if (m.index >= 0 || m.why_not.rfind("not replayed: target", 0) == 0) {
          vsrc = fmt::format("{}", m.vsrc);
          vdst = fmt::format("{}", m.vdst);
        }
        if (m.index < 0) {
          add_note(m.why_not);
        } else if (v->no_vector(static_cast<std::size_t>(m.index))) {
          add_note("not replayed: its kind has no vector on the mechanism's architecture");
        } else {
          if (!m.why_not.empty()) add_note(m.why_not);
          const auto& targets = v->of(static_cast<std::size_t>(m.index));
          auto t = targets.find(m.vdst);
          if (t == targets.end()) {
            served = "in-flight";
            add_note("simulated: the send had not started when the run stopped");
          } else {
            using S = Simulated::Ipi::State;
            sim_send = trace_ns(origin_ns, t->second.start);
            switch (t->second.state) {
              case S::Raised: served = "raised"; break;
              case S::Coalesced: served = "coalesced"; break;
              case S::Lost: served = "lost"; break;
              case S::InFlight: served = "in-flight"; break;
            }
            if (t->second.state == S::Raised || t->second.state == S::Coalesced) modelled = span_ns(t->second.entry - t->second.start);
            else if (t->second.state == S::Lost) add_note("simulated: lost: " + t->second.reason);
            else add_note("simulated: no handler entry before the run stopped");
          }
        }
      }
      if (counts) ++(*counts)[served];
      doc += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{}\n", output::csv_field(v->name()), r->send_ns, r->src,
                         r->dst, trace::kind_name(r->kind), trace::outcome_name(r->outcome), recorded_latency, vsrc,
                         vdst, sim_send, served, modelled, output::csv_field(note));
    }
  }
  return doc;
}

}  // namespace ipilab::scenario
