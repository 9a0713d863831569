// Timed ITS commands of the gicv4.1-vsgi mechanism (see gicv4_1_its_commands.h).
#include "workload/mechanisms/gicv4_1_its_commands.h"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

#include "workload/mechanism.h"
#include "workload/counters.h"

namespace ipilab::workload {

using namespace cost::keys;

std::string_view its_command_kind_name(ItsCommandKind kind) { return name_of(kItsCommandKindNames, kind); }

namespace {

constexpr std::string_view kHost = "host";
constexpr std::uint32_t kQueue = gic::kLinuxItsQueueBytes;

std::uint64_t commands_in(const gic::ItsWaitTicket& t) {
  return (t.to >= t.from ? t.to - t.from : t.to + kQueue - t.from) / gic::kItsCommandSize;
}

int worse(gic::WaitOutcome o) {
  switch (o) {
    case gic::WaitOutcome::Completed: return 0;
    case gic::WaitOutcome::CompletedEarly: return 1;
    case gic::WaitOutcome::TimedOutAfterCompletion: return 2;
    case gic::WaitOutcome::TimedOut: return 3;
  }
  return 0;
}

}  // namespace

ItsCommandModel::ItsCommandModel(const topology::Host& host, const topology::Vm& vm, VmGic& gic, gic::Find41Policy policy,
                                 gic::WaitPredicate predicate, Pricer& pricer)
    : host_(&host), gic_(&gic), policy_(policy), predicate_(predicate), pricer_(&pricer) {
  gic.driver->defer_waits(true);
  gic.driver->behaviour().wait = predicate;
  its_.resize(gic.system->its_count());
  for (std::size_t i = 0; i < its_.size(); ++i) its_[i].base = gic.driver->cmd_write(static_cast<int>(i));
  ops_.resize(static_cast<std::size_t>(vm.size()));
  priority_.assign(static_cast<std::size_t>(vm.size()), 0xA0);
  // Every counter exists from the start, so a run reports its zeros too.
  for (CounterKey c : {counters::its_commands, counters::its_batches, counters::its_creadr_reads, counters::its_wait_polls,
                       counters::its_lock_waits, counters::its_waits_completed_early,
                       counters::its_waits_spun_after_completion, counters::its_waits_timed_out,
                       counters::its_waits_timed_out_after_completion, counters::vm_exits})
    pricer.counters().id(c);
}

void ItsCommandModel::Books::add(sim::Ps arrival, sim::Ps start, sim::Ps end) {
  if (arrival < horizon_ || start < arrival || end < start)
    throw std::logic_error("its_commands: a resource item out of time order");
  live_.push_back(Item{arrival, start, end});
  next_ = std::min(next_, arrival);
}

void ItsCommandModel::Books::take(sim::Ps t, bool inclusive) {
  auto before = [&](sim::Ps x) { return inclusive ? x <= t : x < t; };
  struct Event {
    sim::Ps at;
    bool ends;  // at equal times an item arrives before it ends (zero-length items)
    std::size_t item;
  };
  std::vector<Event> ev;
  for (std::size_t i = 0; i < live_.size(); ++i) {
    const Item& it = live_[i];
    if (!it.arrived && before(it.arrival)) ev.push_back({it.arrival, false, i});
    if (before(it.end)) ev.push_back({it.end, true, i});
  }
  std::sort(ev.begin(), ev.end(), [](const Event& a, const Event& b) {
    return a.at != b.at ? a.at < b.at : a.ends != b.ends ? !a.ends : a.item < b.item;
  });
  for (const Event& e : ev) {
    Item& it = live_[e.item];
    area_.advance(e.at);
    if (!e.ends) {
      area_.add(1);
      it.arrived = true;
      if (it.arrival >= window_start_) {
        ++arrivals_;
        const sim::Ps w = it.start - it.arrival;
        waits_.record(w.v);
        total_wait_ += w;
        max_wait_ = std::max(max_wait_, w);
      }
    } else {
      area_.add(-1);
      busy_ += static_cast<double>((it.end - std::max(it.start, window_start_)).v);
      if (it.arrival >= window_start_) sojourn_ += static_cast<double>((it.end - it.arrival).v);
      else carried_ += static_cast<double>((it.end - window_start_).v);
    }
  }
  std::erase_if(live_, [&](const Item& it) { return before(it.end); });
  next_ = sim::kNever;
  for (const Item& it : live_) next_ = std::min(next_, it.arrived ? it.end : it.arrival);
  horizon_ = std::max(horizon_, t);
}

void ItsCommandModel::Books::reset(sim::Ps now) {
  if (now < horizon_) throw std::logic_error("its_commands: the window starts before the model's last call");
  take(now, false);
  area_.reset(now);
  window_start_ = now;
  total_wait_ = max_wait_ = sim::Ps{};
  arrivals_ = 0;
  busy_ = sojourn_ = carried_ = 0;
  waits_.reset();
}

sim::ResourceStats ItsCommandModel::Books::stats(sim::Ps end) const {
  if (end < horizon_) throw std::logic_error("its_commands: resources asked for before the model's last call");
  Books b = *this;  // close the books at `end` on a copy: items still inside count up to `end`
  b.take(end, true);
  sim::ResourceStats s;
  s.little_exact = b.area_.advance(end);
  s.elapsed_ps = static_cast<double>((end - window_start_).v);
  s.arrivals = b.arrivals_;
  if (s.elapsed_ps <= 0) return s;
  double busy = b.busy_, sojourn = b.sojourn_, carried = b.carried_;
  for (const Item& it : b.live_) {
    const sim::Ps from = std::max(it.start, window_start_);
    if (from < end) busy += static_cast<double>((end - from).v);
    if (!it.arrived) continue;
    if (it.arrival >= window_start_) sojourn += static_cast<double>((end - it.arrival).v);
    else carried += static_cast<double>((end - window_start_).v);
  }
  s.utilisation = busy / s.elapsed_ps;
  s.wait_mean_ps = b.arrivals_ ? static_cast<double>(b.total_wait_.v) / static_cast<double>(b.arrivals_) : 0.0;
  s.wait_p99_ps = b.waits_.percentile_ps(99);
  s.wait_max_ps = static_cast<double>(b.max_wait_.v);
  s.l_time_average = b.area_.area() / s.elapsed_ps;
  s.lambda_per_ps = static_cast<double>(b.arrivals_) / s.elapsed_ps;
  s.w_mean_ps = b.arrivals_ ? sojourn / static_cast<double>(b.arrivals_) : 0.0;
  s.carried = carried / s.elapsed_ps;
  return s;
}

void ItsCommandModel::begin_window(sim::Ps now) {
  for (auto& tl : its_) {
    tl.lock.reset(now);
    tl.queue.reset(now);
  }
}

std::vector<MechanismResource> ItsCommandModel::resources(sim::Ps end) const {
  std::vector<MechanismResource> r;
  for (std::size_t i = 0; i < its_.size(); ++i) {
    r.push_back({fmt::format("its{}.command_queue", i), "its_command_queue", its_[i].queue.stats(end)});
    r.push_back({fmt::format("its{}.lock", i), "its_lock", its_[i].lock.stats(end)});
  }
  return r;
}

ItsCommandModel::Timeline& ItsCommandModel::timeline(int its) { return its_.at(static_cast<std::size_t>(its)); }

void ItsCommandModel::prune(sim::Ps now) {
  for (auto& tl : its_) {
    tl.lock.advance(now);
    tl.queue.advance(now);
    while (!tl.done.empty() && tl.done.front() <= now) {
      tl.done.pop_front();
      ++tl.folded;
    }
  }
}

std::uint64_t ItsCommandModel::consumed(int its, sim::Ps t) {
  const Timeline& tl = timeline(its);
  const auto n = static_cast<std::uint64_t>(std::upper_bound(tl.done.begin(), tl.done.end(), t) - tl.done.begin());
  return tl.folded + n;
}

std::uint32_t ItsCommandModel::creadr(int its, sim::Ps t) {
  const Timeline& tl = timeline(its);
  return static_cast<std::uint32_t>((tl.base + consumed(its, t) * gic::kItsCommandSize) % kQueue);
}

void ItsCommandModel::count(std::string_view name, std::uint64_t n) {
  Counters& c = pricer_->counters();
  c.add(c.id(name), n);
}

sim::Ps ItsCommandModel::crossing(int from_node, int to_node, sim::Rng& rng) {
  if (auto s = interconnect_step(*pricer_, *host_, from_node, to_node, "GITS_CREADR / GITS_CWRITER access to the ITS's node")) {
    const sim::Ps d = s->sample(rng);
    pricer_->breakdown().add(s->id, d);
    return d;
  }
  return sim::Ps{};
}

sim::Ps ItsCommandModel::read(int pcpu, int its, const PlanStep& what, sim::Rng& rng) {
  const sim::Ps d = what.sample(rng);
  pricer_->breakdown().add(what.id, d);
  const int cpu_node = host_->cpu(pcpu).node;
  const int its_node = host_->its[static_cast<std::size_t>(its)].node;
  count(counters::its_creadr_reads);
  return d + crossing(cpu_node, its_node, rng) + crossing(its_node, cpu_node, rng);
}

ItsCommandModel::Batch ItsCommandModel::post(const gic::ItsWaitTicket& t, int pcpu, sim::Ps arrive, sim::Rng& rng,
                                             ItsOpResult& r) {
  Pricer& pr = *pricer_;
  Timeline& tl = timeline(t.its);
  const std::uint64_t n = commands_in(t);
  const auto expect = static_cast<std::uint32_t>((tl.base + tl.posted * gic::kItsCommandSize) % kQueue);
  if (t.from != expect)
    throw std::logic_error(fmt::format("its_commands: ITS {} batch at {:#x}, the timed queue expected {:#x}", t.its, t.from, expect));
  if (tl.posted + n - consumed(t.its, arrive) >= kQueue / gic::kItsCommandSize)
    throw std::logic_error("its_commands: the ITS command queue would be full (not modelled)");
  if (!process_.size()) {
    for (std::size_t i = 0; i < its_.size(); ++i)
      process_.push_back(pr.step(fmt::format("ITS{}", i), "execute one queued command", its_command_process, 1, Lane::Wire,
                                 static_cast<int>(i)));
  }
  // 1. its->lock, FIFO.
  const sim::Ps acquired = std::max(arrive, tl.lock_free);
  r.lock_wait += acquired - arrive;
  if (acquired > arrive) count(counters::its_lock_waits);
  // 2. Under the lock: per slot its_queue_full's CREADR read and the command write; the snapshot.
  sim::Ps t_ = acquired;
  for (std::uint64_t k = 0; k < n; ++k) {
    t_ += read(pcpu, t.its, *alloc_read_, rng);
    const sim::Ps w = write_->sample(rng);
    pr.breakdown().add(write_->id, w);
    t_ += w;
  }
  Batch b;
  b.ticket = t;
  b.pcpu = pcpu;
  if (predicate_ == gic::WaitPredicate::Linear) {
    b.ticket.snapshot = creadr(t.its, t_);  // rd_idx: CREADR as the ITS has it when the read is issued
    r.ahead += tl.posted - consumed(t.its, t_);
    t_ += read(pcpu, t.its, *snap_read_, rng);
  } else {
    b.ticket.snapshot = t.from;  // before a050fa5476d4 there was no snapshot; the predicate ignores it
  }
  // GITS_CWRITER (posted), unlock.
  b.release = t_;
  tl.lock_free = t_;
  tl.lock.add(arrive, acquired, t_);
  const sim::Ps cw = cwriter_->sample(rng);
  pr.breakdown().add(cwriter_->id, cw);
  const int cpu_node = host_->cpu(pcpu).node;
  const int its_node = host_->its[static_cast<std::size_t>(t.its)].node;
  const sim::Ps seen = t_ + cw + crossing(cpu_node, its_node, rng);
  // 3. The ITS runs the batch once it sees CWRITER, after what is queued before it.
  sim::Ps at = std::max(seen, tl.busy_until);
  const sim::Ps first = at;
  const PlanStep& p = process_[static_cast<std::size_t>(t.its)];
  for (std::uint64_t k = 0; k < n; ++k) {
    const sim::Ps d = p.sample(rng);
    pr.breakdown().add(p.id, d);
    at += d;
    tl.done.push_back(at);
  }
  tl.busy_until = at;
  tl.queue.add(seen, first, at);
  tl.posted += n;
  b.end_seq = tl.posted;
  count(counters::its_commands, n);
  count(counters::its_batches);
  ++r.batches;
  return b;
}

sim::Ps ItsCommandModel::begin(const ItsOpRequest& req, sim::Ps now, sim::Rng& rng) {
  Pricer& pr = *pricer_;
  if (steps_ready_ == 0) {
    trap_ = pr.step(kHost, "guest MMIO write to the GICR SGI frame traps to KVM and returns", gic_vgic_mmio_trap, 1, Lane::Exit);
    alloc_read_ = pr.step(kHost, "its_allocate_entry: GITS_CREADR read per queue slot (its_queue_full)", its_creadr_read, 1, Lane::Exit);
    snap_read_ = pr.step(kHost, "GITS_CREADR snapshot under its->lock (rd_idx)", its_creadr_read, 1, Lane::Exit);
    poll_read_ = pr.step(kHost, "its_wait_for_range_completion: GITS_CREADR read", its_creadr_read, 1, Lane::Exit);
    write_ = pr.step(kHost, "write one command into the ITS queue", its_command_write, 1, Lane::Exit);
    cwriter_ = pr.step("in flight", "GITS_CWRITER write (posted MMIO)", its_cwriter_write, 1, Lane::Wire);
    udelay_ = pr.step(kHost, "udelay(1) between GITS_CREADR reads", its_wait_udelay, 1, Lane::Exit);
    steps_ready_ = 1;
  }
  Active& a = ops_.at(req.cpu);
  if (a.busy) throw std::logic_error("its_commands: an operation began while the previous one runs");
  prune(now);
  a = Active{};
  a.busy = true;
  a.result.start = now;
  sim::Ps t = now;
  const auto vpe = static_cast<std::uint16_t>(req.cpu);
  gic::ItsCall call;
  switch (req.kind) {
    case ItsCommandKind::Vsgi: {
      const sim::Ps d = trap_->sample(rng);
      pr.breakdown().add(trap_->id, d);
      t += d;
      count(counters::vm_exits);
      auto& prio = priority_.at(req.cpu);
      prio = prio == 0xA0 ? 0x90 : 0xA0;  // a priority write that changes it (vgic_update_vsgi)
      call = gic_->driver->configure_vsgi(policy_, req.pcpu, vpe, 1, gic::VsgiConfig{true, prio, true});
      break;
    }
    case ItsCommandKind::Invdb: call = gic_->driver->send_invdb(policy_, req.pcpu, vpe); break;
    case ItsCommandKind::Vmovp: call = gic_->driver->move_vpe(vpe, req.pcpu); break;
  }
  if (call.refused) throw std::logic_error("its_commands: the driver refused: " + *call.refused);
  for (const gic::ItsWaitTicket& tk : call.tickets) {
    a.batches.push_back(post(tk, req.pcpu, t, rng, a.result));
    t = a.batches.back().release;
  }
  if (a.batches.empty()) {
    a.result.nothing_sent = true;
    a.finishing = true;
  }
  return t - now;
}

std::optional<sim::Ps> ItsCommandModel::next(unsigned cpu, sim::Ps now, sim::Rng& rng) {
  Active& a = ops_.at(cpu);
  if (!a.busy) throw std::logic_error("its_commands: next() without an operation");
  prune(now);
  if (a.finishing) {
    a.busy = false;
    a.result.end = now;
    return std::nullopt;
  }
  Batch& b = a.batches[a.current];
  if (!a.pred) a.pred.emplace(predicate_, b.ticket);
  // One loop iteration of its_wait_for_range_completion: the read is issued now.
  const std::uint32_t rd = creadr(b.ticket.its, now);
  ++a.polls;
  ++a.result.polls;
  count(counters::its_wait_polls);
  const sim::Ps r = read(b.pcpu, b.ticket.its, *poll_read_, rng);
  const bool done = a.pred->poll(rd);
  const bool out = !done && a.polls >= gic::kLinuxItsWaitPolls;
  if (!done && !out) {
    if (!a.missed && consumed(b.ticket.its, now) >= b.end_seq) {  // the batch ran, the predicate did not see it
      a.missed = true;
      count(counters::its_waits_spun_after_completion);
    }
    const sim::Ps u = udelay_->sample(rng);
    pricer_->breakdown().add(udelay_->id, u);
    return r + u;
  }
  // The wait of this batch ends when the last read's value is back.
  const bool truly = consumed(b.ticket.its, now) >= b.end_seq;
  gic::WaitOutcome o = done ? (truly ? gic::WaitOutcome::Completed : gic::WaitOutcome::CompletedEarly)
                            : (truly ? gic::WaitOutcome::TimedOutAfterCompletion : gic::WaitOutcome::TimedOut);
  if (o == gic::WaitOutcome::CompletedEarly) count(counters::its_waits_completed_early);
  if (o == gic::WaitOutcome::TimedOut) count(counters::its_waits_timed_out);
  if (o == gic::WaitOutcome::TimedOutAfterCompletion) count(counters::its_waits_timed_out_after_completion);
  if (out && a.result.linux_message.empty()) {
    const std::string timeout = predicate_ == gic::WaitPredicate::Linear
                                    ? fmt::format("ITS queue timeout ({} {})", a.pred->to_linear(), a.pred->linear())
                                    : fmt::format("ITS queue timeout ({} {} {})", b.ticket.from, b.ticket.to, rd);
    a.result.linux_message = fmt::format("{}; ITS cmd {} failed", timeout, b.ticket.builder);
  }
  if (worse(o) > worse(a.result.outcome)) a.result.outcome = o;
  a.result.completion_wait += now + r - b.release;
  a.pred.reset();
  a.polls = 0;
  a.missed = false;
  if (++a.current == a.batches.size()) a.finishing = true;
  return r;
}

const ItsOpResult& ItsCommandModel::result(unsigned cpu) const { return ops_.at(cpu).result; }

std::vector<int> ItsCommandModel::targets(ItsCommandKind kind, int pcpu) const {
  if (kind == ItsCommandKind::Vmovp) return gic_->driver->vmovp_targets();
  if (auto its = gic_->driver->find_4_1_its(pcpu, policy_)) return {*its};
  return {};
}

}  // namespace ipilab::workload
