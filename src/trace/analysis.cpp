#include "trace/analysis.h"

#include <algorithm>

#include <fmt/format.h>

#include "common/error.h"

namespace ipilab::trace {

namespace {
std::size_t idx(IpiKind k) { return static_cast<std::size_t>(k); }
}  // namespace

IpiAnalysis::IpiAnalysis(SendCallback on_send, DeliveryCallback on_delivery)
    : on_send_(std::move(on_send)), on_delivery_(std::move(on_delivery)) {}

void IpiAnalysis::on_begin(std::uint32_t cpus) { header_cpus_ = cpus; }

IpiAnalysis::CpuState& IpiAnalysis::cpu_state(std::uint32_t cpu) {
  if (cpu >= cpu_states_.size()) cpu_states_.resize(static_cast<std::size_t>(cpu) + 1);
  if (!any_cpu_ || cpu > max_cpu_seen_) max_cpu_seen_ = cpu;
  any_cpu_ = true;
  return cpu_states_[cpu];
}

std::uint32_t IpiAnalysis::cpus() const {
  const std::uint32_t seen = any_cpu_ ? max_cpu_seen_ + 1 : 0;
  return std::max(header_cpus_, seen);
}

std::uint32_t IpiAnalysis::intern_callsite(std::string_view callsite, std::string_view callback) {
  auto it = callsite_index_.find(std::string(callsite));
  if (it != callsite_index_.end()) return it->second;
  const auto id = static_cast<std::uint32_t>(callsites_.size());
  CallsiteStats s;
  s.callsite = std::string(callsite);
  s.callback = std::string(callback);
  callsites_.push_back(std::move(s));
  callsite_index_.emplace(std::string(callsite), id);
  return id;
}

void IpiAnalysis::on_other_event(std::string_view name) {
  ++events_total_;
  auto it = event_counts_.find(std::string(name));
  if (it == event_counts_.end()) event_counts_.emplace(std::string(name), 1);
  else ++it->second;
}

void IpiAnalysis::on_lost_events(std::uint32_t, std::uint64_t count) {
  ++lost_marks_;
  lost_events_ += count;
}

void IpiAnalysis::on_event(const TraceEvent& ev) {
  ++events_total_;
  {
    auto it = event_counts_.find(std::string(ev.name));
    if (it == event_counts_.end()) event_counts_.emplace(std::string(ev.name), 1);
    else ++it->second;
  }
  if (events_with_ts_ == 0 || ev.ts_ns < first_ts_) first_ts_ = ev.ts_ns;
  if (ev.ts_ns > last_ts_ || events_with_ts_ == 0) last_ts_ = ev.ts_ns;
  ++events_with_ts_;
  CpuState& st = cpu_state(ev.cpu);
  switch (ev.type) {
    case EventType::IpiSendCpu:
    case EventType::IpiSendCpumask:
      st.last_send_targets = ev.targets;
      st.last_send_unraised = true;
      add_send(ev, ev.callsite);
      break;
    case EventType::IpiRaise:
      if (st.last_send_unraised && st.last_send_targets == ev.targets) {
        st.last_send_unraised = false;
        ++raises_merged_;
        break;
      }
      add_send(ev, "ipi_raise");
      break;
    case EventType::IpiEntry:
    case EventType::VectorEntry:
      add_arrival(ev);
      break;
    case EventType::IpiExit:
    case EventType::VectorExit:
      add_exit(ev);
      break;
    case EventType::CsdQueueCpu: {
      ++csd_events_;
      auto& f = csd_funcs_[std::string(ev.callback)];
      ++f.queued;
      if (ev.csd != 0) {
        if (csd_inflight_.size() >= 65536) csd_inflight_.clear();  // bound; never reached by a sane kernel
        csd_inflight_[ev.csd] = {ev.ts_ns, std::string(ev.callback)};
      }
      for (auto t : ev.targets) cpu_state(t);
      break;
    }
    case EventType::CsdFunctionEntry: {
      ++csd_events_;
      auto& f = csd_funcs_[std::string(ev.callback)];
      ++f.runs;
      if (ev.csd != 0) {
        auto it = csd_inflight_.find(ev.csd);
        if (it != csd_inflight_.end()) {
          if (it->second.second == ev.callback && ev.ts_ns >= it->second.first)
            f.queue_to_run.add(ev.ts_ns - it->second.first);
          csd_inflight_.erase(it);
        }
      }
      st.csd_open_ts = ev.ts_ns;
      st.csd_open_func = std::string(ev.callback);
      break;
    }
    case EventType::CsdFunctionExit: {
      ++csd_events_;
      if (st.csd_open_ts && st.csd_open_func == ev.callback && ev.ts_ns >= *st.csd_open_ts)
        csd_funcs_[st.csd_open_func].run_time.add(ev.ts_ns - *st.csd_open_ts);
      st.csd_open_ts.reset();
      break;
    }
  }
}

void IpiAnalysis::add_send(const TraceEvent& ev, std::string_view callsite) {
  const std::uint32_t cs = intern_callsite(callsite, ev.callback);
  for (const std::uint32_t t : ev.targets) {
    ++ipis_sent_;
    ++kinds_[idx(ev.kind)].sends;
    ++callsites_[cs].sends;
    ++pairs_[{ev.cpu, t}].sends;
    TargetStats& ts = targets_[t];
    ++ts.sends_received;
    ++ts.by_source[ev.cpu];
    ++ts.by_callsite[callsites_[cs].callsite];
    PendingGroup& g = cpu_state(t).pending[idx(ev.kind)];
    g.kind = ev.kind;
    if (g.sends.size() < kMaxRemembered) g.sends.push_back({ev.ts_ns, ev.cpu, cs});
    else ++g.forgotten;
  }
  if (on_send_) {
    send_scratch_.time_ns = ev.ts_ns;
    send_scratch_.src_cpu = ev.cpu;
    send_scratch_.targets = ev.targets;
    send_scratch_.kind = ev.kind;
    send_scratch_.callsite = std::string(callsite);
    on_send_(send_scratch_);
  }
}

void IpiAnalysis::serve(PendingGroup& g, std::uint32_t target, IpiKind arrival_kind, std::uint64_t ts) {
  KindStats& k = kinds_[idx(arrival_kind)];
  const std::uint64_t n = g.sends.size() + g.forgotten;
  matched_ += n;
  coalesced_ += n - 1;
  k.matched += n;
  k.coalesced += n - 1;
  const PendingSend& first = g.sends.front();
  const std::uint64_t lat = ts >= first.ts ? ts - first.ts : 0;
  k.latency.add(lat);
  callsites_[first.callsite].latency.add(lat);
  PairStats& p = pairs_[{first.src, target}];
  p.latency.add(lat);
  for (std::size_t i = 0; i < g.sends.size(); ++i) {
    ++callsites_[g.sends[i].callsite].matched;
    PairStats& pi = pairs_[{g.sends[i].src, target}];
    ++pi.matched;
    if (i > 0) {
      ++callsites_[g.sends[i].callsite].coalesced;
      ++pi.coalesced;
    }
  }
  if (on_delivery_)
    on_delivery_(IpiDelivery{first.ts, ts, first.src, target, arrival_kind, callsites_[first.callsite].callsite, n - 1});
  g.sends.clear();
  g.forgotten = 0;
}

void IpiAnalysis::add_arrival(const TraceEvent& ev) {
  ++arrivals_;
  KindStats& k = kinds_[idx(ev.kind)];
  ++k.arrivals;
  TargetStats& ts = targets_[ev.cpu];
  ++ts.arrivals[idx(ev.kind)];
  CpuState& st = cpu_state(ev.cpu);
  PendingGroup* g = &st.pending[idx(ev.kind)];
  if (g->sends.empty() && ev.kind == IpiKind::CallFunction) g = &st.pending[idx(IpiKind::CallFunctionSingle)];
  if (g->sends.empty()) g = &st.pending[idx(IpiKind::Unknown)];
  if (!g->sends.empty()) {
    serve(*g, ev.cpu, ev.kind, ev.ts_ns);
  } else {
    ++unmatched_arrivals_;
    ++k.unmatched_arrivals;
    ++ts.unmatched_arrivals;
  }
  st.open_entry[idx(ev.kind)] = ev.ts_ns;
}

void IpiAnalysis::add_exit(const TraceEvent& ev) {
  ++exits_;
  CpuState& st = cpu_state(ev.cpu);
  auto& open = st.open_entry[idx(ev.kind)];
  if (open && ev.ts_ns >= *open) kinds_[idx(ev.kind)].handler.add(ev.ts_ns - *open);
  open.reset();
}

void IpiAnalysis::unmatched_group(PendingGroup& g) {
  const std::uint64_t n = g.sends.size() + g.forgotten;
  unmatched_sends_ += n;
  kinds_[idx(g.kind)].unmatched_sends += n;
  for (const auto& s : g.sends) ++callsites_[s.callsite].unmatched;
  // Forgotten sends (beyond kMaxRemembered) are counted in the totals and per kind only.
  g.sends.clear();
  g.forgotten = 0;
}

std::vector<const CallsiteStats*> IpiAnalysis::callsites_by_count() const {
  std::vector<const CallsiteStats*> out;
  out.reserve(callsites_.size());
  for (const auto& c : callsites_) out.push_back(&c);
  std::sort(out.begin(), out.end(), [](const CallsiteStats* a, const CallsiteStats* b) {
    return a->sends != b->sends ? a->sends > b->sends : a->callsite < b->callsite;
  });
  return out;
}

void IpiAnalysis::finish(const ReadInfo& info, const std::string& place) {
  for (auto& st : cpu_states_)
    for (auto& g : st.pending)
      if (!g.sends.empty() || g.forgotten) unmatched_group(g);

  auto absent = [&](std::string_view ev) {
    return std::find(info.absent_in_kernel.begin(), info.absent_in_kernel.end(), ev) != info.absent_in_kernel.end();
  };
  const std::string kernel_note =
      info.knows_kernel_formats && absent("ipi:ipi_send_cpu")
          ? " The kernel that recorded this trace has no ipi:ipi_send_cpu event (it needs Linux >= 6.4)."
          : "";
  const bool any_send = ipis_sent_ > 0 || raises_merged_ > 0 || event_counts_.count("ipi_send_cpu") ||
                        event_counts_.count("ipi_send_cpumask") || event_counts_.count("ipi_raise");
  if (!any_send && arrivals_ == 0) {
    throw InputError(place,
                     "no IPI events in this trace. Record with: ipi:ipi_send_cpu ipi:ipi_send_cpumask (Linux >= 6.4), "
                     "csd:csd_queue_cpu csd:csd_function_entry csd:csd_function_exit (Linux >= 6.5), and the "
                     "handler entries: on x86 irq_vectors:{reschedule,call_function,call_function_single,irq_work}"
                     "_{entry,exit}; on Arm ipi:ipi_raise ipi:ipi_entry ipi:ipi_exit (Linux >= 3.17). "
                     "'ipilab trace record' enables exactly these." +
                         kernel_note);
  }
  if (!any_send)
    warnings_.push_back("no send events: enable ipi:ipi_send_cpu and ipi:ipi_send_cpumask (Linux >= 6.4; on Arm "
                        "ipi:ipi_raise) to pair sends with arrivals." + kernel_note);
  if (arrivals_ == 0)
    warnings_.push_back("no handler entry events: enable irq_vectors:{reschedule,call_function,call_function_single,"
                        "irq_work}_entry/_exit (x86) or ipi:ipi_entry/ipi_exit (Arm); every send is unmatched.");
  else if (exits_ == 0)
    warnings_.push_back("no handler exit events: enable the matching *_exit events to get handler times.");
  if (csd_events_ == 0) {
    warnings_.push_back(std::string("no csd events: enable csd:csd_queue_cpu csd:csd_function_entry "
                                    "csd:csd_function_exit (Linux >= 6.5) for per-function csd statistics.") +
                        (info.knows_kernel_formats && absent("csd:csd_queue_cpu")
                             ? " The kernel that recorded this trace has no csd events."
                             : ""));
  }
  if (lost_marks_ > 0)
    warnings_.push_back(fmt::format("the ring buffer lost events {} time(s) ({} events known lost): some sends or "
                                    "arrivals are missing, unmatched counts include them.",
                                    lost_marks_, lost_events_));
}

ReadInfo analyse_trace(const std::filesystem::path& path, IpiAnalysis& analysis) {
  const ReadInfo info = read_trace(path, analysis);
  analysis.finish(info, path.string());
  return info;
}

void for_each_ipi_send(const std::filesystem::path& path, const std::function<void(const IpiSend&)>& fn) {
  IpiAnalysis a(fn);
  analyse_trace(path, a);
}

void for_each_ipi_delivery(const std::filesystem::path& path, const std::function<void(const IpiDelivery&)>& fn) {
  IpiAnalysis a({}, fn);
  analyse_trace(path, a);
}

std::vector<IpiSend> read_ipi_sends(const std::filesystem::path& path) {
  std::vector<IpiSend> out;
  for_each_ipi_send(path, [&](const IpiSend& s) { out.push_back(s); });
  return out;
}

}  // namespace ipilab::trace
