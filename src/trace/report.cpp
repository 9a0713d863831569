#include "trace/report.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace ipilab::trace {

namespace {

constexpr IpiKind kAllKinds[] = {IpiKind::Reschedule, IpiKind::CallFunction, IpiKind::CallFunctionSingle,
                                 IpiKind::IrqWork,    IpiKind::TimerBroadcast, IpiKind::Other,
                                 IpiKind::Unknown};

double per_second(std::uint64_t n, std::uint64_t span_ns) {
  return span_ns ? static_cast<double>(n) * 1e9 / static_cast<double>(span_ns) : 0.0;
}

// Percentiles of integer-ns samples, printed to the ns (a bucket midpoint may end in .5).
std::uint64_t pct(const Histogram& h, double p) {
  if (h.count() == 0) return 0;
  if (p >= 1.0) return static_cast<std::uint64_t>(h.max());
  return static_cast<std::uint64_t>(std::llround(h.percentile(p * 100.0)));
}

std::string lat_cell(const Histogram& h, double p) { return h.count() ? fmt::format("{}", pct(h, p)) : "-"; }

constexpr CallService kAllServices[] = {CallService::Ipi, CallService::Coalesced, CallService::PollingIdle,
                                        CallService::Local, CallService::Pending};

// "print 1,204, function 88,310" (most first).
std::string counts_line(const std::map<std::string, std::uint64_t>& counts) {
  std::vector<std::pair<std::string, std::uint64_t>> v(counts.begin(), counts.end());
  std::stable_sort(v.begin(), v.end(), [](const auto& x, const auto& y) { return x.second > y.second; });
  std::string o;
  for (const auto& [name, n] : v) o += fmt::format("{}{} {}", o.empty() ? "" : ", ", name, n);
  return o;
}

// Where the CPU count comes from, when the header alone would say otherwise.
std::string cpus_note(const IpiAnalysis& a, const ReadInfo& info) {
  std::string o;
  if (info.online_cpus && info.online_cpus != a.cpus())
    o += fmt::format("; {} online when the trace was read (#P:{}), the highest CPU number comes from the events",
                     info.online_cpus, info.online_cpus);
  if (a.cpus() > a.cpus_evidence())
    o += fmt::format("; sends name CPUs up to {}, the trace shows only 0-{} (see the notes)", a.cpus() - 1,
                     a.cpus_evidence() ? a.cpus_evidence() - 1 : 0);
  return o.empty() ? o : " (" + o.substr(2) + ")";
}


// The summary, the CPU evidence, the event counts and the per-kind rows.
void json_summary(nlohmann::json& j, const IpiAnalysis& a, const ReadInfo& info, const std::string& file,
                  const std::string& buffer) {
  using nlohmann::json;
  j["file"] = file;
  j["format"] = std::string(format_name(info.format));
  j["buffer"] = buffer;
  j["summary"] = {{"span_ns", a.span_ns()},         {"first_ts_ns", a.first_ts()}, {"last_ts_ns", a.last_ts()},
                  {"cpus", a.cpus()},               {"events", a.events_total()}, {"ipis_sent", a.ipis_sent()},
                  {"ipis_per_second", per_second(a.ipis_sent(), a.span_ns())},
                  {"lost_events", a.lost_events()}, {"lost_event_marks", a.lost_event_marks()},
                  {"empty_sends", a.empty_sends()}, {"markers", a.markers()}};
  j["cpus"] = {{"count", a.cpus()},
               {"shown_by_trace", a.cpus_evidence()},
               {"header", info.header_cpus},
               {"online_when_read", info.online_cpus},
               {"highest_with_events_plus_one", info.cpus_seen}};
  j["ipis_sent"] = a.ipis_sent();
  j["matched"] = a.matched();
  j["coalesced"] = a.coalesced();
  j["unmatched_sends"] = a.unmatched_sends();
  j["unmatched_arrivals"] = a.unmatched_arrivals();
  j["arrivals"] = a.arrivals();
  j["events"] = json::object();
  for (const auto& [name, n] : a.event_counts()) j["events"][name] = n;
  j["events_skipped"] = json::object();
  for (const auto& [name, n] : a.skipped_event_counts()) j["events_skipped"][name] = n;
  j["lines_skipped"] = json::object();
  for (const auto& [what, n] : info.skipped_lines) j["lines_skipped"][what] = n;
  j["by_kind"] = json::object();
  for (IpiKind k : kAllKinds) {
    const KindStats& s = a.by_kind()[static_cast<std::size_t>(k)];
    j["by_kind"][std::string(kind_name(k))] = {{"count", s.arrivals},
                                               {"sends", s.sends},
                                               {"raised", s.raised},
                                               {"matched", s.matched},
                                               {"coalesced", s.coalesced},
                                               {"unmatched_sends", s.unmatched_sends},
                                               {"unmatched_arrivals", s.unmatched_arrivals},
                                               {"latency_ns", latency_json(s.latency)},
                                               {"handler_ns", latency_json(s.handler)}};
  }
}

// Per callsite, per (source, target) pair, per target CPU.
void json_breakdowns(nlohmann::json& j, const IpiAnalysis& a) {
  using nlohmann::json;
  j["by_callsite"] = json::array();
  for (const CallsiteStats* c : a.callsites_by_count()) {
    j["by_callsite"].push_back(
        {{"callsite", c->callsite},
         {"callback", c->callback},
         {"count", c->sends},
         {"share", a.ipis_sent() ? static_cast<double>(c->sends) / static_cast<double>(a.ipis_sent()) : 0.0},
         {"matched", c->matched},
         {"coalesced", c->coalesced},
         {"unmatched", c->unmatched},
         {"latency_ns", latency_json(c->latency)}});
  }
  j["pairs"] = json::array();
  for (const auto& [key, p] : a.pairs())
    j["pairs"].push_back({{"src", key.first},
                          {"dst", key.second},
                          {"count", p.sends},
                          {"matched", p.matched},
                          {"coalesced", p.coalesced},
                          {"latency_ns", latency_json(p.latency)}});
  j["targets"] = json::array();
  for (const auto& [cpu, t] : a.targets()) {
    json src = json::array(), cs = json::array(), arr = json::object();
    for (const auto& [s, n] : t.by_source) src.push_back({{"src", s}, {"count", n}});
    std::vector<std::pair<std::string, std::uint64_t>> sites(t.by_callsite.begin(), t.by_callsite.end());
    std::stable_sort(sites.begin(), sites.end(), [](const auto& x, const auto& y) { return x.second > y.second; });
    for (const auto& [name, n] : sites) cs.push_back({{"callsite", name}, {"count", n}});
    for (IpiKind k : kAllKinds)
      if (t.arrivals[static_cast<std::size_t>(k)]) arr[std::string(kind_name(k))] = t.arrivals[static_cast<std::size_t>(k)];
    j["targets"].push_back({{"cpu", cpu},
                            {"sends_received", t.sends_received},
                            {"unmatched_arrivals", t.unmatched_arrivals},
                            {"sources", src},
                            {"callsites", cs},
                            {"arrivals", arr}});
  }
}

// The csd functions, the queued calls, the convention, the input and the notes.
void json_calls_and_input(nlohmann::json& j, const IpiAnalysis& a, const ReadInfo& info) {
  using nlohmann::json;
  j["csd_functions"] = json::array();
  for (const auto& [func, f] : a.csd_functions())
    j["csd_functions"].push_back({{"func", func},
                                  {"queued", f.queued},
                                  {"runs", f.runs},
                                  {"queue_to_run_ns", latency_json(f.queue_to_run)},
                                  {"run_time_ns", latency_json(f.run_time)}});
  j["calls"] = json::object();
  for (CallService c : kAllServices) {
    const ServiceStats& st = a.services()[static_cast<std::size_t>(c)];
    j["calls"][std::string(service_name(c))] = {
        {"count", st.count}, {"inferred", st.inferred}, {"queue_to_run_ns", latency_json(st.queue_to_run)}};
  }
  j["wake_idle_without_ipi"] = a.wake_idle_without_ipi();
  j["convention"] = {{"name", std::string(convention_name(a.convention()))},
                     {"statement", convention_statement(a.convention())},
                     {"queued_call_sends", a.queued_call_sends()}};
  j["pairing"] = {{"limit_ns", a.options().pair_limit_ns}, {"expired", a.expired()}};
  json forms = json::object();
  for (int f = 0; f < kCpumaskFormCount; ++f)
    if (info.cpumask_forms[static_cast<std::size_t>(f)])
      forms[std::string(cpumask_form_name(static_cast<CpumaskForm>(f)))] = info.cpumask_forms[static_cast<std::size_t>(f)];
  j["input"] = {{"compression", std::string(compression_name(info.compression))},
                {"buffers", info.buffers},
                {"cpumask_forms", forms}};
  if (info.format == TraceFormat::TraceDat)
    j["input"]["trace_dat"] = {{"version", info.dat_version},          {"compression", info.dat_compression},
                               {"big_endian", info.big_endian},        {"long_size", info.long_size},
                               {"kernel_long_size", info.kernel_long_size}, {"direct_decode", info.direct_decode}};
  j["statistics"] = kStatisticsNote;
  j["warnings"] = a.warnings();
}

// The title line and the summary.
void text_summary(std::string& o, const IpiAnalysis& a, const ReadInfo& info, const std::string& file,
                  const std::string& buffer) {
  auto out = std::back_inserter(o);
  std::string how(format_name(info.format));
  if (info.compression != Compression::None) how += fmt::format(", {}-compressed", compression_name(info.compression));
  if (info.format == TraceFormat::TraceDat)
    how += fmt::format(", v{} {}, {}-endian, {}-byte longs", info.dat_version,
                       info.dat_compression == "none" ? std::string("uncompressed") : info.dat_compression,
                       info.big_endian ? "big" : "little", info.long_size);
  fmt::format_to(out, "IPI trace {} ({}){}\n\n", file, how,
                 buffer.empty() ? std::string() : fmt::format(", buffer '{}'", buffer));
  fmt::format_to(out, "Summary\n");
  fmt::format_to(out, "  span           {:.6f} s ({} .. {} ns)\n", static_cast<double>(a.span_ns()) / 1e9, a.first_ts(),
                 a.last_ts());
  fmt::format_to(out, "  CPUs           {}{}\n", a.cpus(), cpus_note(a, info));
  fmt::format_to(out, "  events         {}{}\n", a.events_total(),
                 a.lost_event_marks() ? fmt::format(" ({} lost in {} place(s))", a.lost_events(), a.lost_event_marks())
                                      : std::string());
  fmt::format_to(out, "  IPIs sent      {} ({:.1f}/s)\n", a.ipis_sent(), per_second(a.ipis_sent(), a.span_ns()));
  fmt::format_to(out, "  matched        {} (of which coalesced {})\n", a.matched(), a.coalesced());
  fmt::format_to(out, "  unmatched      {} sends ({} waited longer than the pairing limit of {}), {} arrivals\n",
                 a.unmatched_sends(), a.expired(), fmt::format("{} ms", static_cast<double>(a.options().pair_limit_ns) / 1e6),
                 a.unmatched_arrivals());
  fmt::format_to(out, "  convention     {}\n", convention_statement(a.convention()));
  if (a.markers()) fmt::format_to(out, "  markers        {} (trace_marker writes)\n", a.markers());
  if (a.empty_sends()) fmt::format_to(out, "  empty sends    {} (a cpumask with no CPU: no IPI)\n", a.empty_sends());
  if (!a.skipped_event_counts().empty()) fmt::format_to(out, "  events skipped {}\n", counts_line(a.skipped_event_counts()));
  if (!info.skipped_lines.empty()) {
    std::uint64_t n = 0;
    for (const auto& [what, k] : info.skipped_lines) n += k;
    fmt::format_to(out, "  lines skipped  {} (not events: {})\n", n, counts_line(info.skipped_lines));
  }
  fmt::format_to(out, "  event counts  ");
  for (const auto& [name, n] : a.event_counts()) fmt::format_to(out, " {}={}", name, n);
  fmt::format_to(out, "\n\n");

}

// Per kind, per callsite, per (source, target) pair.
void text_tables(std::string& o, const IpiAnalysis& a) {
  auto out = std::back_inserter(o);
  fmt::format_to(out, "Per kind (latency = send -> handler entry; handler = entry -> exit; ns)\n");
  fmt::format_to(out, "  (one kind per IPI, send to arrival: sends = raised + coalesced + unm.send, arrivals = raised + "
                      "unm.arr)\n");
  fmt::format_to(out, "  {:<21} {:>8} {:>8} {:>8} {:>9} {:>9} {:>8} {:>8} {:>8} {:>8} {:>8} {:>9} {:>8} {:>9}\n", "kind",
                 "sends", "arrivals", "raised", "matched", "coalesced", "unm.send", "unm.arr", "p50", "p90", "p99", "max",
                 "hdl.p50", "hdl.max");
  for (IpiKind k : kAllKinds) {
    const KindStats& s = a.by_kind()[static_cast<std::size_t>(k)];
    if (!s.sends && !s.arrivals && !s.matched && !s.unmatched_sends) continue;
    fmt::format_to(out, "  {:<21} {:>8} {:>8} {:>8} {:>8} {:>9} {:>9} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>9}\n",
                   kind_name(k), s.sends, s.arrivals, s.raised, s.matched, s.coalesced, s.unmatched_sends, s.unmatched_arrivals,
                   lat_cell(s.latency, 0.5), lat_cell(s.latency, 0.9), lat_cell(s.latency, 0.99),
                   lat_cell(s.latency, 1.0), lat_cell(s.handler, 0.5), lat_cell(s.handler, 1.0));
  }
  fmt::format_to(out, "\nPer callsite (sends; latency of the sends that raised the interrupt, ns)\n");
  fmt::format_to(out, "  {:<44} {:>8} {:>7} {:>9} {:>9} {:>8} {:>8} {:>8}  {}\n", "callsite", "sends", "share",
                 "coalesced", "unmatched", "p50", "p99", "max", "callback");
  for (const CallsiteStats* c : a.callsites_by_count())
    fmt::format_to(out, "  {:<44} {:>8} {:>6.1f}% {:>9} {:>9} {:>8} {:>8} {:>8}  {}\n", c->callsite, c->sends,
                   a.ipis_sent() ? 100.0 * static_cast<double>(c->sends) / static_cast<double>(a.ipis_sent()) : 0.0,
                   c->coalesced, c->unmatched, lat_cell(c->latency, 0.5), lat_cell(c->latency, 0.99),
                   lat_cell(c->latency, 1.0), c->callback);
  fmt::format_to(out, "\nPer (source CPU -> target CPU)\n");
  fmt::format_to(out, "  {:>5} {:>5} {:>8} {:>8} {:>9} {:>8}\n", "src", "dst", "sends", "matched", "coalesced",
                 "p50 ns");
  for (const auto& [key, p] : a.pairs())
    fmt::format_to(out, "  {:>5} {:>5} {:>8} {:>8} {:>9} {:>8}\n", key.first, key.second, p.sends, p.matched,
                   p.coalesced, lat_cell(p.latency, 0.5));
}

// Per target CPU: who interrupts it.
void text_targets(std::string& o, const IpiAnalysis& a) {
  auto out = std::back_inserter(o);
  fmt::format_to(out, "\nPer target CPU: who interrupts it\n");
  for (const auto& [cpu, t] : a.targets()) {
    fmt::format_to(out, "  CPU {}: {} IPIs sent to it", cpu, t.sends_received);
    if (t.sends_received) {
      fmt::format_to(out, "; from");
      for (const auto& [s, n] : t.by_source)
        fmt::format_to(out, " CPU {} {} ({:.1f}%)", s, n, 100.0 * static_cast<double>(n) / static_cast<double>(t.sends_received));
    }
    fmt::format_to(out, "\n    handler entries:");
    bool any = false;
    for (IpiKind k : kAllKinds)
      if (t.arrivals[static_cast<std::size_t>(k)]) {
        fmt::format_to(out, " {} {}", kind_name(k), t.arrivals[static_cast<std::size_t>(k)]);
        any = true;
      }
    if (!any) fmt::format_to(out, " none");
    fmt::format_to(out, "; with no send: {}\n", t.unmatched_arrivals);
    if (!t.by_callsite.empty()) {
      std::vector<std::pair<std::string, std::uint64_t>> sites(t.by_callsite.begin(), t.by_callsite.end());
      std::stable_sort(sites.begin(), sites.end(), [](const auto& x, const auto& y) { return x.second > y.second; });
      fmt::format_to(out, "    top callsites:");
      for (std::size_t i = 0; i < sites.size() && i < 5; ++i) fmt::format_to(out, " {} {}", sites[i].first, sites[i].second);
      fmt::format_to(out, "\n");
    }
  }
}

// csd functions, queued calls by service, cpumask renderings and the notes.
void text_calls_and_notes(std::string& o, const IpiAnalysis& a, const ReadInfo& info) {
  auto out = std::back_inserter(o);
  if (!a.csd_functions().empty()) {
    fmt::format_to(out, "\ncsd functions (queue = csd_queue_cpu -> csd_function_entry; run = entry -> exit; ns)\n");
    fmt::format_to(out, "  {:<32} {:>8} {:>8} {:>10} {:>10} {:>8} {:>8}\n", "func", "queued", "runs", "queue.p50",
                   "queue.p99", "run.p50", "run.max");
    for (const auto& [func, f] : a.csd_functions())
      fmt::format_to(out, "  {:<32} {:>8} {:>8} {:>10} {:>10} {:>8} {:>8}\n", func, f.queued, f.runs,
                     lat_cell(f.queue_to_run, 0.5), lat_cell(f.queue_to_run, 0.99), lat_cell(f.run_time, 0.5),
                     lat_cell(f.run_time, 1.0));
  }
  {
    bool any = false;
    for (CallService c : kAllServices) any = any || a.services()[static_cast<std::size_t>(c)].count > 0;
    if (any || a.wake_idle_without_ipi()) {
      fmt::format_to(out, "\nQueued cross-calls by how they were served (queue = queue -> csd_function_entry; ns)\n");
      fmt::format_to(out, "  {:<14} {:>8} {:>9} {:>10} {:>10} {:>10}\n", "served by", "calls", "inferred", "queue.p50",
                     "queue.p99", "queue.max");
      for (CallService c : kAllServices) {
        const ServiceStats& st = a.services()[static_cast<std::size_t>(c)];
        if (!st.count) continue;
        fmt::format_to(out, "  {:<14} {:>8} {:>9} {:>10} {:>10} {:>10}\n", service_name(c), st.count, st.inferred,
                       lat_cell(st.queue_to_run, 0.5), lat_cell(st.queue_to_run, 0.99), lat_cell(st.queue_to_run, 1.0));
      }
      fmt::format_to(out, "  (ipi: raised its own IPI; coalesced: rode on an earlier IPI; polling-idle: no IPI, the "
                          "target polled in idle; local: ran on the calling CPU. None of these is unmatched.)\n");
      if (a.wake_idle_without_ipi())
        fmt::format_to(out, "  sched_wake_idle_without_ipi: {} wakeups of a polling-idle CPU without an IPI\n",
                       a.wake_idle_without_ipi());
    }
  }
  {
    std::string forms;
    for (int f = 0; f < kCpumaskFormCount; ++f)
      if (info.cpumask_forms[static_cast<std::size_t>(f)])
        forms += fmt::format(" {} {}", cpumask_form_name(static_cast<CpumaskForm>(f)), info.cpumask_forms[static_cast<std::size_t>(f)]);
    if (!forms.empty()) fmt::format_to(out, "\ncpumask renderings seen:{}\n", forms);
  }
  fmt::format_to(out, "\nStatistics: {}.\n", kStatisticsNote);
  for (const auto& w : a.warnings()) fmt::format_to(out, "note: {}\n", w);
}

}  // namespace

nlohmann::json latency_json(const Histogram& h) {
  return {{"count", h.count()},  {"min", h.min()},      {"p50", pct(h, 0.5)}, {"p90", pct(h, 0.9)},
          {"p99", pct(h, 0.99)}, {"max", h.max()}, {"mean", h.mean()}};
}

nlohmann::json report_json(const IpiAnalysis& a, const ReadInfo& info, const std::string& file,
                           const std::string& buffer) {
  nlohmann::json j;
  json_summary(j, a, info, file, buffer);
  json_breakdowns(j, a);
  json_calls_and_input(j, a, info);
  return j;
}

nlohmann::json report_json(const TraceAnalysis& a, const ReadInfo& info, const std::string& file) {
  const auto bufs = a.buffers();
  if (bufs.size() == 1) return report_json(*bufs[0].second, info, file, bufs[0].first);
  nlohmann::json j;
  j["file"] = file;
  j["format"] = std::string(format_name(info.format));
  j["buffers"] = nlohmann::json::array();
  for (const auto& [name, an] : bufs) j["buffers"].push_back(report_json(*an, info, file, name));
  return j;
}

std::string report_text(const TraceAnalysis& a, const ReadInfo& info, const std::string& file) {
  const auto bufs = a.buffers();
  std::string o;
  for (std::size_t i = 0; i < bufs.size(); ++i) {
    if (i) o += "\n";
    o += report_text(*bufs[i].second, info, file, bufs.size() > 1 || !bufs[i].first.empty() ? bufs[i].first : std::string());
  }
  if (bufs.size() > 1)
    o += fmt::format("\n{} buffers hold IPI events; each is paired on its own.\n", bufs.size());
  return o;
}

std::string report_text(const IpiAnalysis& a, const ReadInfo& info, const std::string& file,
                        const std::string& buffer) {
  std::string o;
  text_summary(o, a, info, file, buffer);
  text_tables(o, a);
  text_targets(o, a);
  text_calls_and_notes(o, a, info);
  return o;
}

}  // namespace ipilab::trace
