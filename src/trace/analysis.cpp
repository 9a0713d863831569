#include "trace/analysis.h"

#include <algorithm>
#include <deque>

#include <fmt/format.h>

#include "common/error.h"
#include "trace/buffer_filter.h"
#include "trace/cpumask.h"
#include "trace/tracepoints.h"

namespace ipilab::trace {

// Named, not anonymous: IpiAnalysis::State (declared in the header) holds these maps.
namespace analysis_detail {
struct NameHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
};
template <typename V>
using NameMap = std::unordered_map<std::string, V, NameHash, std::equal_to<>>;
}  // namespace analysis_detail
using analysis_detail::NameMap;

namespace {

std::size_t idx(IpiKind k) { return static_cast<std::size_t>(k); }

constexpr std::size_t kMaxWaiting = 256;
constexpr std::uint64_t kBatchGapNs = 1'000'000;  // a queue batch open longer than 1 ms is closed

bool is_raw_address(std::string_view s) { return s.size() > 2 && s.substr(0, 2) == "0x" && s != "0x0"; }

}  // namespace

struct IpiAnalysis::State {
  struct PendingSend {
    std::uint64_t ts;
    std::uint32_t src;
    std::uint32_t callsite;  // index into callsites
    std::uint32_t callback;  // index into func_names (the send's own callback)
    std::uint64_t id;
    IpiKind kind;
  };
  // The send of a group that raised the latest interrupt: provisionally coalesced sends ride on it.
  struct Raise {
    bool valid = false;
    bool delivered = false;     // on_delivery called (its coalesced count is final)
    bool handler_open = false;  // its handler has not exited yet
    std::uint64_t entry = 0;    // handler entry ts
    IpiKind kind = IpiKind::Unknown;  // of the entry
    std::optional<std::uint64_t> handler_ns;
    PendingSend send{};
    std::uint64_t coalesced = 0;
  };
  // Sends to one target of one kind, oldest first. The first `covered` of them were already waiting
  // when an arrival came that took another send: they are provisionally coalesced onto `last` and
  // are taken, oldest first, by a later arrival that finds no uncovered send waiting.
  struct Group {
    std::vector<PendingSend> v;
    std::size_t head = 0;
    std::size_t covered = 0;
    Raise last;
    std::size_t size() const { return v.size() - head; }
    std::size_t uncovered() const { return size() - covered; }
    bool empty() const { return head == v.size(); }
    const PendingSend& front() const { return v[head]; }
    void pop_front() {
      if (covered > 0) --covered;
      ++head;
      if (head == v.size()) v.clear(), head = 0;
      else if (head > 64 && head * 2 > v.size()) v.erase(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(head)), head = 0;
    }
  };
  struct Served {
    PendingSend s;
    SendOutcome outcome;
  };
  struct OpenHandler {
    std::optional<std::uint64_t> entry;
    std::vector<Served> served;  // only with an observer
  };
  struct Call {
    std::uint64_t ts = 0, csd = 0;
    std::uint32_t src = 0, dst = 0, func = 0, callsite = 0;
    CallService service = CallService::Pending;
    bool classified = false, inferred = false, queue_was_empty = false, finalized = false;
    bool has_csd = false;    // queued with a csd address: its run (csd_function_entry) can be seen
    bool in_flight = false;  // in `inflight`, not yet run
    std::optional<std::uint64_t> run_ns;
  };
  struct OpenFunction {
    std::uint64_t ts;
    std::uint32_t func;
    bool local;
    std::uint32_t src;
  };
  struct CpuState {
    std::array<Group, kIpiKindCount> pending;
    std::array<OpenHandler, kIpiKindCount> handler;
    std::vector<OpenFunction> functions;
    std::vector<std::uint32_t> last_send_targets;  // for ipi_raise de-duplication
    bool last_send_unraised = false;
    std::vector<std::uint32_t> batch;   // call slots queued by this CPU, not yet classified
    std::uint32_t batch_callsite = 0;
    std::uint64_t batch_first_ts = 0;
    std::int64_t queue_depth = 0;       // as a target: queued csd calls not yet run
  };

  SendCallback on_send;
  DeliveryCallback on_delivery;
  AnalysisOptions opt;
  AnalysisObserver* obs = nullptr;

  std::uint32_t header_cpus = 0;
  std::uint32_t max_cpu_seen = 0;
  bool any_cpu = false;
  std::vector<CpuState> cpu_states;
  std::uint64_t first_ts = 0, last_ts = 0, events_with_ts = 0;
  std::uint64_t events_total = 0, lost_events = 0, lost_marks = 0;
  NameMap<std::uint64_t> counts;
  std::map<std::string, std::uint64_t> event_counts, skipped_counts;
  NameMap<std::uint32_t> callsite_index;
  std::deque<CallsiteStats> callsites;  // stable addresses (views handed to the observer)
  std::uint64_t ipis_sent = 0, matched = 0, coalesced = 0, unmatched_sends = 0, expired = 0, overflow = 0;
  std::uint64_t unmatched_arrivals = 0, arrivals = 0, raises_merged = 0, send_ids = 0;
  std::array<KindStats, kIpiKindCount> kinds{};
  // Sends of one kind (first index) served by an arrival of another (second): counted as the latter.
  std::array<std::array<std::uint64_t, kIpiKindCount>, kIpiKindCount> kind_settled{};
  std::uint64_t empty_sends = 0, markers = 0;
  std::uint32_t max_event_cpu = 0;  // highest CPU an event was recorded on (+1), 0 = none
  std::uint32_t cpus_evidence = 0;  // after finish: the CPUs the trace shows exist
  std::map<std::pair<std::uint32_t, std::uint32_t>, PairStats> pairs;
  std::map<std::uint32_t, TargetStats> targets;
  NameMap<std::uint32_t> func_index;
  std::deque<std::string> func_names;
  std::vector<CsdFuncStats> funcs;
  std::map<std::string, CsdFuncStats> csd_funcs;
  std::vector<Call> calls;              // slot pool
  std::vector<std::uint32_t> free_calls;
  std::unordered_map<std::uint64_t, std::uint32_t> inflight;  // csd -> call slot
  std::array<ServiceStats, kCallServiceCount> services{};
  std::uint64_t csd_events = 0, exits = 0, queued_call_sends = 0, wake_idle = 0, wake_idle_resched = 0;
  bool seen_csd_queue = false, seen_queued_call_send = false, queued_after_csd = false, queued_before_csd = false;
  bool seen_wake = false;
  std::vector<std::string> warnings;
  IpiSend send_scratch;

  CpuState& cpu(std::uint32_t c) {
    if (c >= cpu_states.size()) cpu_states.resize(static_cast<std::size_t>(c) + 1);
    if (!any_cpu || c > max_cpu_seen) max_cpu_seen = c;
    any_cpu = true;
    return cpu_states[c];
  }

  // One-entry caches in front of the interning maps: consecutive events mostly repeat a symbol.
  std::string last_callsite, last_func;
  std::uint32_t last_callsite_id = ~0u, last_func_id = ~0u;
  // Counts of our events by (type, kind), named at finish (no hashing per event).
  std::array<std::array<std::uint64_t, kIpiKindCount>, 16> type_counts{};
  std::array<std::string, 16> type_names{};

  std::uint32_t intern_callsite(std::string_view callsite, std::string_view callback) {
    if (last_callsite_id != ~0u && callsite == last_callsite) return last_callsite_id;
    last_callsite_id = intern_callsite_slow(callsite, callback);
    last_callsite.assign(callsite);
    return last_callsite_id;
  }
  std::uint32_t intern_callsite_slow(std::string_view callsite, std::string_view callback) {
    auto it = callsite_index.find(callsite);
    if (it != callsite_index.end()) return it->second;
    const auto id = static_cast<std::uint32_t>(callsites.size());
    CallsiteStats s;
    s.callsite = std::string(callsite);
    s.callback = std::string(callback);
    callsites.push_back(std::move(s));
    callsite_index.emplace(std::string(callsite), id);
    return id;
  }
  // Callsites of queued calls (kept apart from the send callsites, whose first callback is reported).
  NameMap<std::uint32_t> call_site_index;
  std::deque<std::string> call_sites;
  std::uint32_t intern_call_site(std::string_view cs) {
    auto it = call_site_index.find(cs);
    if (it != call_site_index.end()) return it->second;
    const auto id = static_cast<std::uint32_t>(call_sites.size());
    call_sites.emplace_back(cs);
    call_site_index.emplace(std::string(cs), id);
    return id;
  }

  std::uint32_t intern_func(std::string_view f) {
    if (last_func_id != ~0u && f == last_func) return last_func_id;
    last_func_id = intern_func_slow(f);
    last_func.assign(f);
    return last_func_id;
  }
  std::uint32_t intern_func_slow(std::string_view f) {
    auto it = func_index.find(f);
    if (it != func_index.end()) return it->second;
    const auto id = static_cast<std::uint32_t>(func_names.size());
    func_names.emplace_back(f);
    funcs.emplace_back();
    func_index.emplace(std::string(f), id);
    return id;
  }

  // ---- IPIs ----
  void add_send(const TraceEvent& ev, std::string_view callsite) {
    const std::uint32_t cs = intern_callsite(callsite, ev.callback);
    const std::uint32_t cb = obs ? intern_func(ev.callback) : 0;
    for (const std::uint32_t t : ev.targets) {
      ++ipis_sent;
      ++callsites[cs].sends;
      ++pairs[{ev.cpu, t}].sends;
      TargetStats& ts = targets[t];
      ++ts.sends_received;
      ++ts.by_source[ev.cpu];
      ++ts.by_callsite[callsites[cs].callsite];
      Group& g = cpu(t).pending[idx(ev.kind)];
      if (g.size() >= kMaxWaiting) {  // bound: the oldest waiting send gives up
        if (g.covered > 0) {           // it rode on an interrupt: it stays coalesced
          coalesce_front(g, t);
          if (g.covered == 0) settle(g, t);
        } else {
          ++overflow;
          unmatched(g.front(), SendOutcome::Unmatched, t);
          g.pop_front();
        }
      }
      g.v.push_back({ev.ts_ns, ev.cpu, cs, cb, send_ids++, ev.kind});
    }
    if (on_send) {
      send_scratch.time_ns = ev.ts_ns;
      send_scratch.src_cpu = ev.cpu;
      send_scratch.targets = ev.targets;
      send_scratch.kind = ev.kind;
      send_scratch.callsite = std::string(callsite);
      on_send(send_scratch);
    }
  }

  void emit_ipi(const PendingSend& s, std::uint32_t dst, SendOutcome o, std::optional<std::uint64_t> arrival,
                IpiKind arrival_kind, std::optional<std::uint64_t> handler) {
    IpiRecord r;
    r.id = s.id;
    r.send_ns = s.ts;
    r.src = s.src;
    r.dst = dst;
    r.kind = s.kind;
    r.callsite = callsites[s.callsite].callsite;
    r.callback = obs && s.callback < func_names.size() ? std::string_view(func_names[s.callback]) : std::string_view();
    r.outcome = o;
    r.arrival_ns = arrival;
    r.arrival_kind = arrival_kind;
    r.handler_ns = handler;
    obs->on_ipi(r);
  }

  void unmatched(const PendingSend& s, SendOutcome o, std::uint32_t dst = 0) {
    ++unmatched_sends;
    if (o == SendOutcome::Expired) ++expired;
    ++kinds[idx(s.kind)].sends;
    ++kinds[idx(s.kind)].unmatched_sends;
    ++callsites[s.callsite].unmatched;
    if (obs) emit_ipi(s, dst, o, std::nullopt, IpiKind::Unknown, std::nullopt);
  }

  // The group's last raise has its final count of coalesced sends: hand it to on_delivery.
  void settle(Group& g, std::uint32_t target) {
    Raise& r = g.last;
    if (!r.valid || r.delivered) return;
    r.delivered = true;
    if (on_delivery)
      on_delivery(IpiDelivery{r.send.ts, r.entry, r.send.src, target, r.kind, callsites[r.send.callsite].callsite,
                              r.coalesced});
  }

  // The oldest send of `g`, provisionally coalesced, is coalesced for good: it rides on g.last.
  void coalesce_front(Group& g, std::uint32_t target) {
    const PendingSend s = g.front();
    g.pop_front();
    Raise& r = g.last;
    ++r.coalesced;
    KindStats& k = kinds[idx(r.kind)];
    ++matched, ++coalesced, ++k.sends, ++k.matched, ++k.coalesced;
    if (s.kind != r.kind) ++kind_settled[idx(s.kind)][idx(r.kind)];
    ++callsites[s.callsite].matched, ++callsites[s.callsite].coalesced;
    PairStats& pi = pairs[{s.src, target}];
    ++pi.matched, ++pi.coalesced;
    if (!obs) return;
    OpenHandler& h = cpu_states[target].handler[idx(r.kind)];
    if (r.handler_open && h.entry && *h.entry == r.entry) h.served.push_back({s, SendOutcome::Coalesced});
    else emit_ipi(s, target, SendOutcome::Coalesced, r.entry, r.kind, r.handler_ns);
  }

  // The oldest send of `g` raised the interrupt whose handler entered at `ts`.
  void raise_front(Group& g, std::uint32_t target, IpiKind arrival_kind, std::uint64_t ts) {
    settle(g, target);  // the previous raise gets no more coalesced sends (pairing keeps send order)
    const PendingSend s = g.front();
    g.pop_front();
    KindStats& k = kinds[idx(arrival_kind)];
    ++matched, ++k.sends, ++k.matched, ++k.raised;
    if (s.kind != arrival_kind) ++kind_settled[idx(s.kind)][idx(arrival_kind)];
    const auto lat = static_cast<std::int64_t>(ts >= s.ts ? ts - s.ts : 0);
    k.latency.record(lat);
    callsites[s.callsite].latency.record(lat);
    ++callsites[s.callsite].matched;
    PairStats& pi = pairs[{s.src, target}];
    pi.latency.record(lat);
    ++pi.matched;
    if (obs) cpu_states[target].handler[idx(arrival_kind)].served.push_back({s, SendOutcome::Raised});
    g.last = Raise{true, false, true, ts, arrival_kind, std::nullopt, s, 0};
    // Every send still in the group was sent before this entry: provisionally coalesced onto it.
    g.covered = g.size();
    if (g.covered == 0) settle(g, target);
  }

  // Sends sent more than the pairing limit before `now`: provisional ones stay coalesced, waiting
  // ones expire (unmatched).
  void expire(Group& g, std::uint32_t target, std::uint64_t now) {
    bool coalesced_any = false;
    while (!g.empty() && g.front().ts + opt.pair_limit_ns < now) {
      if (g.covered > 0) {
        coalesce_front(g, target);
        coalesced_any = true;
      } else {
        unmatched(g.front(), SendOutcome::Expired, target);
        g.pop_front();
      }
    }
    if (coalesced_any && g.covered == 0) settle(g, target);
  }

  void close_handler(std::uint32_t c, IpiKind k, std::optional<std::uint64_t> exit_ns) {
    OpenHandler& h = cpu_states[c].handler[idx(k)];
    if (!h.entry) return;
    const std::optional<std::uint64_t> dur =
        exit_ns && *exit_ns >= *h.entry ? std::optional<std::uint64_t>(*exit_ns - *h.entry) : std::nullopt;
    // Sends coalesced onto this entry later (a raise that is still its group's last) need its time.
    for (Group& g : cpu_states[c].pending)
      if (g.last.valid && g.last.handler_open && g.last.kind == k && g.last.entry == *h.entry) {
        g.last.handler_open = false;
        g.last.handler_ns = dur;
      }
    if (obs) {
      obs->on_handler(c, k, *h.entry, exit_ns);
      for (const Served& sv : h.served) emit_ipi(sv.s, c, sv.outcome, h.entry, k, dur);
      h.served.clear();
    }
    h.entry.reset();
  }

  // A handler entry takes one send, in send order per target and kind: the oldest send not yet
  // covered by an earlier entry (the sends before it that still wait are then coalesced for good:
  // the APIC delivers a vector's interrupts in the order they were raised); with none, the oldest
  // send that an earlier entry left provisionally coalesced (two entries prove two interrupts).
  // Candidate groups: its own kind; for call-function also call-function-single (both flush
  // call_single_queue); then sends of unknown kind.
  void add_arrival(const TraceEvent& ev) {
    ++arrivals;
    KindStats& k = kinds[idx(ev.kind)];
    ++k.arrivals;
    TargetStats& ts = targets[ev.cpu];
    ++ts.arrivals[idx(ev.kind)];
    CpuState& st = cpu(ev.cpu);
    close_handler(ev.cpu, ev.kind, std::nullopt);  // a previous entry without exit
    st.handler[idx(ev.kind)].entry = ev.ts_ns;
    std::array<Group*, 3> cand{};
    std::size_t n = 0;
    cand[n++] = &st.pending[idx(ev.kind)];
    if (ev.kind == IpiKind::CallFunction) cand[n++] = &st.pending[idx(IpiKind::CallFunctionSingle)];
    if (ev.kind != IpiKind::Unknown) cand[n++] = &st.pending[idx(IpiKind::Unknown)];
    Group* g = nullptr;
    for (std::size_t i = 0; i < n && !g; ++i) {
      expire(*cand[i], ev.cpu, ev.ts_ns);
      if (cand[i]->uncovered() > 0) g = cand[i];
    }
    if (g) {
      while (g->covered > 0) coalesce_front(*g, ev.cpu);
    } else {
      for (std::size_t i = 0; i < n && !g; ++i)
        if (cand[i]->covered > 0) g = cand[i];
    }
    if (g) {
      raise_front(*g, ev.cpu, ev.kind, ev.ts_ns);
    } else {
      ++unmatched_arrivals;
      ++k.unmatched_arrivals;
      ++ts.unmatched_arrivals;
    }
  }

  void add_exit(const TraceEvent& ev) {
    ++exits;
    CpuState& st = cpu(ev.cpu);
    OpenHandler& h = st.handler[idx(ev.kind)];
    if (h.entry && ev.ts_ns >= *h.entry) kinds[idx(ev.kind)].handler.record(static_cast<std::int64_t>(ev.ts_ns - *h.entry));
    close_handler(ev.cpu, ev.kind, ev.ts_ns);
  }

  // ---- queued calls ----
  std::uint32_t new_call() {
    if (!free_calls.empty()) {
      const std::uint32_t i = free_calls.back();
      free_calls.pop_back();
      calls[i] = Call{};
      return i;
    }
    calls.emplace_back();
    return static_cast<std::uint32_t>(calls.size() - 1);
  }

  void finalize_call(std::uint32_t slot, std::optional<std::uint64_t> run_time) {
    Call& c = calls[slot];
    if (c.finalized) return;
    c.finalized = true;
    if (c.run_ns && c.classified && *c.run_ns >= c.ts)
      services[static_cast<std::size_t>(c.service)].queue_to_run.record(static_cast<std::int64_t>(*c.run_ns - c.ts));
    if (obs) {
      CallRecord r;
      r.queue_ns = c.ts;
      r.src = c.src;
      r.dst = c.dst;
      r.func = func_names[c.func];
      r.callsite = call_sites[c.callsite];
      r.service = c.service;
      r.inferred = c.inferred;
      r.run_ns = c.run_ns;
      r.run_time_ns = run_time;
      obs->on_call(r);
    }
    if (c.in_flight) {
      auto it = inflight.find(c.csd);
      if (it != inflight.end() && it->second == slot) inflight.erase(it);
      if (c.dst < cpu_states.size()) --cpu_states[c.dst].queue_depth;
      c.in_flight = false;
    }
    free_calls.push_back(slot);
  }

  void classify(std::uint32_t slot, CallService s, bool inferred) {
    Call& c = calls[slot];
    c.service = s;
    c.inferred = inferred;
    c.classified = true;
    ServiceStats& st = services[static_cast<std::size_t>(s)];
    ++st.count;
    if (inferred) ++st.inferred;
    // A call without csd address never reports its run; one that already ran is complete.
    if (!c.has_csd || c.run_ns) finalize_call(slot, std::nullopt);
  }

  // The trace ended with `src`'s batch open. A call whose function already ran was served without
  // an IPI of its own (none followed before it ran): coalesced onto an earlier IPI to its target,
  // or polling-idle (inferred) when the target's queue was empty, as close_batch decides; the
  // others are pending.
  void pend_batch(std::uint32_t src) {
    CpuState& st = cpu_states[src];
    std::vector<std::uint32_t> batch;
    batch.swap(st.batch);
    for (auto slot : batch) {
      const Call& c = calls[slot];
      if (!c.run_ns) classify(slot, CallService::Pending, false);
      else if (c.queue_was_empty && c.has_csd) classify(slot, CallService::PollingIdle, true);
      else classify(slot, CallService::Coalesced, false);
    }
  }

  // Closes `src`'s batch: `ipi_targets` got their own IPI, `wake_target` a polling-idle wakeup.
  void close_batch(std::uint32_t src, const std::vector<std::uint32_t>* ipi_targets, std::optional<std::uint32_t> wake_target) {
    CpuState& st = cpu_states[src];
    if (st.batch.empty()) return;
    std::vector<std::uint32_t>& batch = batch_scratch;
    batch.swap(st.batch);
    st.batch.clear();
    // The last call queued to each served target is the one whose llist_add found the queue empty.
    std::vector<bool>& served = served_scratch;
    served.assign(batch.size(), false);
    auto mark_last = [&](std::uint32_t target, CallService s) {
      for (std::size_t i = batch.size(); i-- > 0;)
        if (calls[batch[i]].dst == target) {
          classify(batch[i], s, false);
          served[i] = true;
          return true;
        }
      return false;
    };
    if (ipi_targets)
      for (auto t : *ipi_targets) mark_last(t, CallService::Ipi);
    if (wake_target) mark_last(*wake_target, CallService::PollingIdle);
    for (std::size_t i = 0; i < batch.size(); ++i) {
      if (served[i]) continue;
      const Call& c = calls[batch[i]];
      // No IPI of its own: the queue was not empty (coalesced) — or it was, and then the only reason
      // the kernel skips the IPI is a polling-idle target (call_function_single_prep_ipi).
      if (c.queue_was_empty && c.has_csd) classify(batch[i], CallService::PollingIdle, true);
      else classify(batch[i], CallService::Coalesced, false);
    }
    batch.clear();
    if (st.batch.capacity() == 0) st.batch.swap(batch);  // keep the capacity with the CPU
  }
  std::vector<std::uint32_t> batch_scratch;
  std::vector<bool> served_scratch;

  void queue_call(const TraceEvent& ev, std::uint32_t target, std::uint64_t csd_addr) {
    CpuState& st = cpu(ev.cpu);
    const std::uint32_t cs = intern_call_site(ev.callsite);
    if (!st.batch.empty() && (st.batch_callsite != cs || ev.ts_ns > st.batch_first_ts + kBatchGapNs))
      close_batch(ev.cpu, nullptr, std::nullopt);
    const std::uint32_t slot = new_call();
    Call& c = calls[slot];
    c.ts = ev.ts_ns;
    c.src = ev.cpu;
    c.dst = target;
    c.func = intern_func(ev.callback);
    c.callsite = cs;
    c.csd = csd_addr;
    CpuState& tst = cpu(target);
    c.queue_was_empty = tst.queue_depth <= 0;
    if (csd_addr) {
      auto it = inflight.find(csd_addr);
      if (it != inflight.end()) {  // re-queued before it ran (lost events): the old one never runs
        const std::uint32_t old = it->second;
        inflight.erase(it);
        calls[old].in_flight = false;
        calls[old].has_csd = false;
        --tst.queue_depth;
        if (calls[old].classified) finalize_call(old, std::nullopt);
      }
      if (inflight.size() < (1u << 20)) {
        inflight.emplace(csd_addr, slot);
        ++tst.queue_depth;
        calls[slot].has_csd = calls[slot].in_flight = true;
      }
    }
    CpuState& sst = cpu_states[ev.cpu];
    if (sst.batch.empty()) {
      sst.batch_callsite = cs;
      sst.batch_first_ts = ev.ts_ns;
    }
    sst.batch.push_back(slot);
    ++funcs[c.func].queued;
  }

  void function_entry(const TraceEvent& ev) {
    ++csd_events;
    const std::uint32_t f = intern_func(ev.callback);
    ++funcs[f].runs;
    CpuState& st = cpu(ev.cpu);
    bool local = false;
    std::uint32_t src = ev.cpu;
    if (ev.csd == 0) {
      local = true;
      ServiceStats& s = services[static_cast<std::size_t>(CallService::Local)];
      ++s.count;
    } else {
      auto it = inflight.find(ev.csd);
      if (it != inflight.end()) {
        const std::uint32_t slot = it->second;
        Call& c = calls[slot];
        src = c.src;
        inflight.erase(it);
        c.in_flight = false;
        if (c.dst < cpu_states.size()) --cpu_states[c.dst].queue_depth;
        if (c.func == f && ev.ts_ns >= c.ts) funcs[f].queue_to_run.record(static_cast<std::int64_t>(ev.ts_ns - c.ts));
        c.run_ns = ev.ts_ns;
        if (c.classified) finalize_call(slot, std::nullopt);
      }
    }
    st.functions.push_back({ev.ts_ns, f, local, src});
    if (st.functions.size() > 64) st.functions.erase(st.functions.begin());
  }

  void function_exit(const TraceEvent& ev) {
    ++csd_events;
    CpuState& st = cpu(ev.cpu);
    const std::uint32_t f = intern_func(ev.callback);
    for (std::size_t i = st.functions.size(); i-- > 0;) {
      if (st.functions[i].func != f) continue;
      const OpenFunction of = st.functions[i];
      st.functions.erase(st.functions.begin() + static_cast<std::ptrdiff_t>(i));
      if (ev.ts_ns >= of.ts) funcs[f].run_time.record(static_cast<std::int64_t>(ev.ts_ns - of.ts));
      if (obs) {
        obs->on_function(ev.cpu, func_names[f], of.ts, ev.ts_ns);
        if (of.local) {
          CallRecord r;
          r.queue_ns = of.ts;
          r.src = r.dst = ev.cpu;
          r.func = func_names[f];
          r.service = CallService::Local;
          r.run_ns = of.ts;
          if (ev.ts_ns >= of.ts) r.run_time_ns = ev.ts_ns - of.ts;
          obs->on_call(r);
        }
      }
      return;
    }
  }

  // The trace ended: waiting sends become unmatched (or coalesced, for the provisional ones), open
  // batches are closed or pending, open handlers closed.
  void end_of_trace() {
    for (std::size_t c = 0; c < cpu_states.size(); ++c) {
      auto& st = cpu_states[c];
      if (!st.batch.empty() && last_ts > st.batch_first_ts + kBatchGapNs)
        close_batch(static_cast<std::uint32_t>(c), nullptr, std::nullopt);
      pend_batch(static_cast<std::uint32_t>(c));
      for (auto& g : st.pending) {
        // No entry came for the provisional ones: they were coalesced after all.
        while (g.covered > 0) coalesce_front(g, static_cast<std::uint32_t>(c));
        settle(g, static_cast<std::uint32_t>(c));
        while (!g.empty()) {
          unmatched(g.front(), SendOutcome::Unmatched, static_cast<std::uint32_t>(c));
          g.pop_front();
        }
      }
      for (int k = 0; k < kIpiKindCount; ++k) close_handler(static_cast<std::uint32_t>(c), static_cast<IpiKind>(k), std::nullopt);
    }
    // Calls classified but never seen running (their csd_function_entry is past the end).
    for (std::uint32_t slot = 0; slot < calls.size(); ++slot)
      if (!calls[slot].finalized && calls[slot].classified) finalize_call(slot, std::nullopt);
  }

  // Event counts by name: the other events, and ours by (type, kind).
  void name_counts() {
    for (const auto& [name, n] : counts) event_counts[name] = n, skipped_counts[name] = n;
    for (std::size_t t = 0; t < type_counts.size(); ++t) {
      const auto type = static_cast<EventType>(t);
      if (type == EventType::VectorEntry || type == EventType::VectorExit) {
        for (const Tracepoint& tp : tracepoints())  // irq_vectors rows: one name per (type, kind)
          if (tp.type == type)
            if (const auto n = type_counts[t][idx(tp.kind)]) event_counts[std::string(tp.name)] += n;
      } else if (const auto n = type_counts[t][0]) {
        event_counts[type_names[t]] += n;
      }
    }
    for (const auto& [name, id] : func_index)
      if (funcs[id].queued || funcs[id].runs) csd_funcs[name] = std::move(funcs[id]);
  }

  // The notes of finish(): what the reader reported, what the trace lacks, what was inferred.
  void notes(const ReadInfo& info, bool any_send, const std::string& kernel_note,
             const std::function<bool(std::string_view)>& absent) {
    auto& W = warnings;
    for (const auto& w : info.warnings)
      W.push_back(fmt::format("{}: {} record(s), first at {}{}{}", w.what, w.count, w.first_place,
                              w.first_value.empty() ? "" : " ('" + w.first_value.substr(0, 120) + "')",
                              w.first_detail.empty() ? "" : ": " + w.first_detail));
    if (!any_send)
      W.push_back("no send events: enable ipi:ipi_send_cpu and ipi:ipi_send_cpumask (Linux >= 6.4; on Arm "
                  "ipi:ipi_raise) to pair sends with arrivals." + kernel_note);
    if (arrivals == 0)
      W.push_back("no handler entry events: enable irq_vectors:{reschedule,call_function,call_function_single,"
                  "irq_work}_entry/_exit (x86) or ipi:ipi_entry/ipi_exit (Arm); every send is unmatched.");
    else if (exits == 0)
      W.push_back("no handler exit events: enable the matching *_exit events to get handler times.");
    if (csd_events == 0 && queued_call_sends == 0) {
      W.push_back(std::string("no csd events: enable csd:csd_queue_cpu csd:csd_function_entry "
                              "csd:csd_function_exit (Linux >= 6.5) for per-function csd statistics.") +
                  (info.knows_kernel_formats && absent("csd:csd_queue_cpu") ? " The kernel that recorded this trace has no csd events."
                                                                           : ""));
    }
    const ServiceStats& poll = services[static_cast<std::size_t>(CallService::PollingIdle)];
    if (poll.inferred > 0)
      W.push_back(fmt::format("{} queued call(s) found their target's queue empty and got no IPI: the kernel skips the IPI "
                              "only for a polling-idle target, so they are counted polling-idle (inferred){}.",
                              poll.inferred,
                              seen_wake ? "; sched_wake_idle_without_ipi was recorded but not for them (lost events?)"
                                          : "; record sched:sched_wake_idle_without_ipi to see it"));
    if (queued_call_sends > 0 && !seen_wake && services[static_cast<std::size_t>(CallService::Coalesced)].count > 0)
      W.push_back("Linux 6.4 convention without csd events: a queued call with no IPI of its own is counted coalesced; "
                  "without sched:sched_wake_idle_without_ipi in the trace a polling-idle target looks the same.");
    if (expired > 0)
      W.push_back(fmt::format("{} send(s) waited longer than the pairing limit ({} ns) and are unmatched, not paired "
                              "with a later arrival.",
                              expired, opt.pair_limit_ns));
    if (overflow > 0)
      W.push_back(fmt::format("{} send(s) found more than {} sends waiting on one CPU for one kind: the oldest were "
                              "counted unmatched.",
                              overflow, kMaxWaiting));
    if (lost_marks > 0)
      W.push_back(fmt::format("the ring buffer lost events {} time(s) ({} events known lost): some sends or "
                              "arrivals are missing, unmatched counts include them.",
                              lost_marks, lost_events));
    cpu_and_kind_notes();
    if (queued_after_csd || queued_before_csd)
      W.push_back("ipi_send_* events with a queued function as callback appear together with csd events: " +
                  convention_statement(Convention::Mixed) + ".");
  }

  // The one line of a trace whose IPI events were all left out or sent nothing.
  std::string nothing_usable(const ReadInfo& info) const {
    std::uint64_t left_out = 0;
    std::string first;
    for (const auto& w : info.warnings)
      if (w.what.find("left out") != std::string::npos) {
        left_out += w.count;
        if (first.empty()) first = fmt::format(" (first at {}: {})", w.first_place, w.what);
      }
    return fmt::format("nothing to pair: every IPI event of this trace sent nothing or was left out ({} send(s) with an "
                       "empty cpumask, {} record(s) left out{})",
                       empty_sends, left_out, first);
  }

  // Notes on sends to CPUs the trace shows no other sign of, on sends counted under their
  // arrival's kind, and on empty sends.
  void cpu_and_kind_notes() {
    std::uint64_t beyond = 0;
    std::vector<std::uint32_t> which;
    for (const auto& [c, t] : targets)
      if (c >= cpus_evidence && t.sends_received > 0) beyond += t.sends_received, which.push_back(c);
    if (beyond > 0)
      warnings.push_back(fmt::format(
          "{} send(s) name {} that no event line, per-CPU buffer or CPU count of the trace shows (it shows CPUs "
          "0-{}): kept and paired as recorded; if that CPU does not exist, the cpumask was misread",
          beyond, describe_cpus(which), cpus_evidence == 0 ? 0 : cpus_evidence - 1));
    for (int from = 0; from < kIpiKindCount; ++from)
      for (int to = 0; to < kIpiKindCount; ++to)
        if (const auto n = kind_settled[static_cast<std::size_t>(from)][static_cast<std::size_t>(to)])
          warnings.push_back(fmt::format("{} {} send(s) were served by {} handler entries and are counted as {} (one "
                                         "kind per IPI, from send to arrival)",
                                         n, kind_name(static_cast<IpiKind>(from)), kind_name(static_cast<IpiKind>(to)),
                                         kind_name(static_cast<IpiKind>(to))));
    if (empty_sends > 0)
      warnings.push_back(fmt::format("{} send event(s) with an empty cpumask: the kernel sent no IPI, not counted as sends",
                                     empty_sends));
  }

  void count_name(std::string_view name, std::uint64_t n) {
    auto it = counts.find(name);
    if (it == counts.end()) counts.emplace(std::string(name), n);
    else it->second += n;
  }
};

IpiAnalysis::IpiAnalysis(SendCallback on_send, DeliveryCallback on_delivery, AnalysisOptions options)
    : s_(std::make_unique<State>()) {
  s_->on_send = std::move(on_send);
  s_->on_delivery = std::move(on_delivery);
  s_->opt = options;
  s_->obs = options.observer;
}
IpiAnalysis::~IpiAnalysis() = default;
IpiAnalysis::IpiAnalysis(IpiAnalysis&&) noexcept = default;
IpiAnalysis& IpiAnalysis::operator=(IpiAnalysis&&) noexcept = default;

void IpiAnalysis::on_begin(std::uint32_t cpus) { s_->header_cpus = cpus; }

void IpiAnalysis::on_other_events(std::string_view name, std::uint64_t count) {
  s_->events_total += count;
  s_->count_name(name, count);
}

void IpiAnalysis::on_lost_events(std::uint32_t, std::uint64_t count) {
  ++s_->lost_marks;
  s_->lost_events += count;
}

void IpiAnalysis::on_event(const TraceEvent& ev) {
  State& S = *s_;
  ++S.events_total;
  {
    const auto t = static_cast<std::size_t>(ev.type);
    const bool vec = ev.type == EventType::VectorEntry || ev.type == EventType::VectorExit;
    auto& n = S.type_counts[t][vec ? idx(ev.kind) : 0];
    if (n++ == 0 && !vec) S.type_names[t].assign(ev.name);
  }
  S.max_event_cpu = std::max(S.max_event_cpu, ev.cpu + 1);
  if (S.events_with_ts == 0 || ev.ts_ns < S.first_ts) S.first_ts = ev.ts_ns;
  if (ev.ts_ns > S.last_ts || S.events_with_ts == 0) S.last_ts = ev.ts_ns;
  ++S.events_with_ts;
  State::CpuState& st = S.cpu(ev.cpu);
  // A queue batch with nothing that served it for over 1 ms got no IPI of its own.
  if (!st.batch.empty() && ev.ts_ns > st.batch_first_ts + kBatchGapNs) S.close_batch(ev.cpu, nullptr, std::nullopt);
  switch (ev.type) {
    case EventType::IpiSendCpu:
    case EventType::IpiSendCpumask: {
      // v6.4: a queued cross-call traced with its function as callback is not an IPI.
      if (ev.kind == IpiKind::Unknown && !is_raw_address(ev.callback)) {
        ++S.queued_call_sends;
        S.seen_queued_call_send = true;
        if (S.seen_csd_queue) S.queued_after_csd = true;
        for (auto t : ev.targets) S.queue_call(ev, t, 0);
        break;
      }
      if (ev.targets.empty()) {  // an empty cpumask: the kernel sends nothing
        ++S.empty_sends;
        break;
      }
      st.last_send_targets = ev.targets;
      st.last_send_unraised = true;
      if (ev.kind == IpiKind::CallFunction || ev.kind == IpiKind::CallFunctionSingle)
        S.close_batch(ev.cpu, &ev.targets, std::nullopt);
      S.add_send(ev, ev.callsite);
      break;
    }
    case EventType::IpiRaise:
      if (ev.targets.empty()) {
        ++S.empty_sends;
        break;
      }
      if (st.last_send_unraised && st.last_send_targets == ev.targets) {
        st.last_send_unraised = false;
        ++S.raises_merged;
        break;
      }
      S.add_send(ev, "ipi_raise");
      break;
    case EventType::IpiEntry:
    case EventType::VectorEntry:
      S.add_arrival(ev);
      break;
    case EventType::IpiExit:
    case EventType::VectorExit:
      S.add_exit(ev);
      break;
    case EventType::CsdQueueCpu:
      ++S.csd_events;
      if (S.seen_queued_call_send) S.queued_before_csd = true;
      S.seen_csd_queue = true;
      for (auto t : ev.targets) S.queue_call(ev, t, ev.csd);
      break;
    case EventType::CsdFunctionEntry:
      S.function_entry(ev);
      break;
    case EventType::CsdFunctionExit:
      S.function_exit(ev);
      break;
    case EventType::WakeIdleNoIpi: {
      ++S.wake_idle;
      S.seen_wake = true;
      const std::uint32_t t = ev.targets.empty() ? 0 : ev.targets[0];
      S.cpu(t);
      bool for_call = false;
      for (auto slot : S.cpu_states[ev.cpu].batch)
        if (S.calls[slot].dst == t) for_call = true;
      if (for_call) S.close_batch(ev.cpu, nullptr, t);
      else ++S.wake_idle_resched;
      if (S.obs) S.obs->on_wake_idle(ev.ts_ns, ev.cpu, t);
      break;
    }
    case EventType::Marker:
      ++S.markers;
      if (S.obs) S.obs->on_marker(ev.ts_ns, ev.cpu, ev.text);
      break;
  }
}

bool IpiAnalysis::has_ipi_events() const {
  const State& S = *s_;
  if (has_usable_events()) return true;
  if (S.empty_sends > 0) return true;
  // Records of an IPI tracepoint that a reader left out (counted as other events).
  for (const auto& [name, n] : S.counts) {
    const Tracepoint* t = find_tracepoint(name);
    if (n > 0 && t && t->type != EventType::Marker) return true;
  }
  return false;
}

bool IpiAnalysis::has_usable_events() const {
  const State& S = *s_;
  return S.ipis_sent > 0 || S.raises_merged > 0 || S.arrivals > 0 || S.csd_events > 0 || S.wake_idle > 0 ||
         S.queued_call_sends > 0;
}

void IpiAnalysis::finish(const ReadInfo& info, const std::string& place, bool require_events) {
  State& S = *s_;
  S.cpus_evidence = std::max({S.header_cpus, info.header_cpus, info.cpus_seen, S.max_event_cpu});
  S.end_of_trace();
  S.name_counts();
  auto absent = [&](std::string_view ev) {
    return std::find(info.absent_in_kernel.begin(), info.absent_in_kernel.end(), ev) != info.absent_in_kernel.end();
  };
  const std::string kernel_note =
      info.knows_kernel_formats && absent("ipi:ipi_send_cpu")
          ? " The kernel that recorded this trace has no ipi:ipi_send_cpu event (it needs Linux >= 6.4)."
          : "";
  const bool any_send = S.ipis_sent > 0 || S.raises_merged > 0 || S.event_counts.count("ipi_send_cpu") ||
                        S.event_counts.count("ipi_send_cpumask") || S.event_counts.count("ipi_raise");
  if (require_events && !any_send && S.arrivals == 0 && S.csd_events == 0) {
    throw InputError(place,
                     "no IPI events in this trace. Record with: ipi:ipi_send_cpu ipi:ipi_send_cpumask (Linux >= 6.4), "
                     "csd:csd_queue_cpu csd:csd_function_entry csd:csd_function_exit (Linux >= 6.5), and the "
                     "handler entries: on x86 irq_vectors:{reschedule,call_function,call_function_single,irq_work}"
                     "_{entry,exit}; on Arm ipi:ipi_raise ipi:ipi_entry ipi:ipi_exit (Linux >= 3.17). "
                     "'ipilab trace record' enables exactly these." +
                         kernel_note);
  }
  if (require_events && !has_usable_events() && has_ipi_events()) throw InputError(place, S.nothing_usable(info));
  S.notes(info, any_send, kernel_note, absent);
}

const AnalysisOptions& IpiAnalysis::options() const { return s_->opt; }
std::uint32_t IpiAnalysis::cpus() const {
  const std::uint32_t seen = s_->any_cpu ? s_->max_cpu_seen + 1 : 0;
  return std::max({s_->header_cpus, s_->cpus_evidence, seen});
}
std::uint32_t IpiAnalysis::cpus_evidence() const { return s_->cpus_evidence; }
std::uint64_t IpiAnalysis::empty_sends() const { return s_->empty_sends; }
std::uint64_t IpiAnalysis::markers() const { return s_->markers; }
std::uint64_t IpiAnalysis::first_ts() const { return s_->first_ts; }
std::uint64_t IpiAnalysis::last_ts() const { return s_->last_ts; }
std::uint64_t IpiAnalysis::span_ns() const { return s_->events_with_ts ? s_->last_ts - s_->first_ts : 0; }
std::uint64_t IpiAnalysis::events_total() const { return s_->events_total; }
std::uint64_t IpiAnalysis::lost_events() const { return s_->lost_events; }
std::uint64_t IpiAnalysis::lost_event_marks() const { return s_->lost_marks; }
const std::map<std::string, std::uint64_t>& IpiAnalysis::event_counts() const { return s_->event_counts; }
const std::map<std::string, std::uint64_t>& IpiAnalysis::skipped_event_counts() const { return s_->skipped_counts; }
std::uint64_t IpiAnalysis::ipis_sent() const { return s_->ipis_sent; }
std::uint64_t IpiAnalysis::matched() const { return s_->matched; }
std::uint64_t IpiAnalysis::coalesced() const { return s_->coalesced; }
std::uint64_t IpiAnalysis::unmatched_sends() const { return s_->unmatched_sends; }
std::uint64_t IpiAnalysis::expired() const { return s_->expired; }
std::uint64_t IpiAnalysis::unmatched_arrivals() const { return s_->unmatched_arrivals; }
std::uint64_t IpiAnalysis::arrivals() const { return s_->arrivals; }
std::uint64_t IpiAnalysis::raises_merged() const { return s_->raises_merged; }
std::uint64_t IpiAnalysis::queued_call_sends() const { return s_->queued_call_sends; }
std::uint64_t IpiAnalysis::wake_idle_without_ipi() const { return s_->wake_idle; }
Convention IpiAnalysis::convention() const {
  const State& S = *s_;
  if (S.queued_after_csd || S.queued_before_csd) return Convention::Mixed;
  if (S.seen_csd_queue) return Convention::V6_5;
  if (S.seen_queued_call_send) return Convention::V6_4;
  return Convention::Indistinct;
}
const std::array<ServiceStats, kCallServiceCount>& IpiAnalysis::services() const { return s_->services; }
const std::array<KindStats, kIpiKindCount>& IpiAnalysis::by_kind() const { return s_->kinds; }
std::vector<const CallsiteStats*> IpiAnalysis::callsites_by_count() const {
  std::vector<const CallsiteStats*> out;
  for (const auto& c : s_->callsites)
    if (c.sends > 0) out.push_back(&c);
  std::sort(out.begin(), out.end(), [](const CallsiteStats* a, const CallsiteStats* b) {
    return a->sends != b->sends ? a->sends > b->sends : a->callsite < b->callsite;
  });
  return out;
}
const std::map<std::pair<std::uint32_t, std::uint32_t>, PairStats>& IpiAnalysis::pairs() const { return s_->pairs; }
const std::map<std::uint32_t, TargetStats>& IpiAnalysis::targets() const { return s_->targets; }
const std::map<std::string, CsdFuncStats>& IpiAnalysis::csd_functions() const { return s_->csd_funcs; }
const std::vector<std::string>& IpiAnalysis::warnings() const { return s_->warnings; }

}  // namespace ipilab::trace
