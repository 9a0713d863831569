#include "trace/live_view.h"

#include <algorithm>
#include <vector>

#include <fmt/format.h>

namespace ipilab::trace {

namespace {

std::string share_pct(std::uint64_t part, std::uint64_t whole) {
  return whole ? fmt::format("{:.1f} %", 100.0 * static_cast<double>(part) / static_cast<double>(whole)) : std::string("—");
}
std::string rate(std::uint64_t n, double seconds) {
  return seconds > 0 ? fmt::format("{:.0f}", static_cast<double>(n) / seconds) : std::string("—");
}

}  // namespace

void LiveView::on_ipi(const IpiRecord& r) {
  // One kind per IPI: the arrival's when a handler served it (as the report's rows count).
  IpiKind kind = r.arrival_ns ? r.arrival_kind : r.kind;
  if (static_cast<std::size_t>(kind) >= kIpiKindCount) kind = IpiKind::Unknown;
  for (Counts* c : {&total_, &now_}) {
    ++c->ipis;
    ++c->by_kind[static_cast<std::size_t>(kind)];
    ++c->pairs[{r.src, r.dst}];
    if (r.outcome == SendOutcome::Coalesced) ++c->coalesced;
    if (r.outcome == SendOutcome::Unmatched || r.outcome == SendOutcome::Expired) ++c->unmatched;
  }
  if (r.outcome == SendOutcome::Raised && r.arrival_ns && *r.arrival_ns >= r.send_ns)
    latency_[static_cast<std::size_t>(kind)].record(static_cast<std::int64_t>(*r.arrival_ns - r.send_ns));
}

void LiveView::on_call(const CallRecord& r) {
  for (Counts* c : {&total_, &now_}) {
    ++c->calls;
    if (r.service == CallService::PollingIdle) ++c->polling_idle;
  }
}

void LiveView::next_interval(double elapsed) {
  now_ = Counts{};
  interval_start_ = elapsed;
}

std::string LiveView::table(double elapsed, std::uint32_t cpus) const {
  const double dt = elapsed - interval_start_;
  std::string s = fmt::format("ipilab trace --live: {:.0f} s, {} CPUs (Ctrl-C: stop and print the full report)\n\n", elapsed,
                              cpus);
  s += fmt::format("  IPIs     {}/s now, {} in total; coalesced {}, unmatched {}\n", rate(now_.ipis, dt), total_.ipis,
                   share_pct(total_.coalesced, total_.ipis), share_pct(total_.unmatched, total_.ipis));
  s += fmt::format("  calls    {}/s now, {} in total; polling-idle (no IPI) {}\n\n", rate(now_.calls, dt), total_.calls,
                   share_pct(total_.polling_idle, total_.calls));
  s += fmt::format("  {:<22} {:>10} {:>10} {:>12} {:>12}\n", "kind", "IPIs/s", "total", "p50 ns", "p99 ns");
  for (std::size_t k = 0; k < kIpiKindCount; ++k) {
    if (!total_.by_kind[k]) continue;
    const sim::Histogram& h = latency_[k];
    s += fmt::format("  {:<22} {:>10} {:>10} {:>12} {:>12}\n", kind_name(static_cast<IpiKind>(k)), rate(now_.by_kind[k], dt),
                     total_.by_kind[k], h.count() ? fmt::format("{:.0f}", h.percentile(50)) : "—",
                     h.count() ? fmt::format("{:.0f}", h.percentile(99)) : "—");
  }
  std::vector<std::pair<std::uint64_t, std::pair<std::uint32_t, std::uint32_t>>> top;
  for (const auto& [p, n] : now_.pairs) top.emplace_back(n, p);
  std::sort(top.begin(), top.end(), [](const auto& a, const auto& b) { return a.first != b.first ? a.first > b.first : a.second < b.second; });
  s += fmt::format("\n  {:<22} {:>10} {:>10}\n", "top pairs (this second)", "IPIs/s", "total");
  for (std::size_t i = 0; i < top.size() && i < 8; ++i) {
    const auto& [n, p] = top[i];
    s += fmt::format("  CPU {:<3} -> CPU {:<9} {:>10} {:>10}\n", p.first, p.second, rate(n, dt), total_.pairs.at(p));
  }
  if (top.empty()) s += "  (no IPI in this interval)\n";
  return s;
}

std::string LiveView::line(double elapsed) const {
  const double dt = elapsed - interval_start_;
  std::string kinds;
  for (std::size_t k = 0; k < kIpiKindCount; ++k) {
    if (!now_.by_kind[k]) continue;
    const sim::Histogram& h = latency_[k];
    kinds += fmt::format("; {} {}/s", kind_name(static_cast<IpiKind>(k)), rate(now_.by_kind[k], dt));
    if (h.count()) kinds += fmt::format(" p50 {:.0f} p99 {:.0f} ns", h.percentile(50), h.percentile(99));
  }
  std::string top;
  std::uint64_t best = 0;
  for (const auto& [p, n] : now_.pairs)
    if (n > best) {
      best = n;
      top = fmt::format("; top pair CPU {} -> {} {}/s", p.first, p.second, rate(n, dt));
    }
  return fmt::format("ipilab: live {:.0f} s: {} IPIs/s ({} in total){}; coalesced {}, polling-idle {} of {} calls{}\n",
                     elapsed, rate(now_.ipis, dt), total_.ipis, kinds, share_pct(total_.coalesced, total_.ipis),
                     share_pct(total_.polling_idle, total_.calls), total_.calls, top);
}

}  // namespace ipilab::trace
