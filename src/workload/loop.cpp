#include "workload/loop.h"

#include <algorithm>
#include <array>
#include <cmath>

#include <fmt/format.h>

#include "common/error.h"
#include "sim/engine.h"

namespace ipilab::workload {
namespace {

struct TargetState {
  sim::Ps busy_until{};
  sim::Ps halted_from = sim::kNever;  ///< the vCPU is in HLT from this time on (kNever: running)
};

Metric make_metric(std::string name, std::string unit, std::string description, sim::Histogram h, double ps_per_unit) {
  Metric m;
  m.name = std::move(name);
  m.unit = std::move(unit);
  m.description = std::move(description);
  m.ps_per_unit = ps_per_unit;
  const sim::Summary s = h.summary();
  m.summary = s;
  for (double* v : {&m.summary.mean, &m.summary.stddev, &m.summary.min, &m.summary.max, &m.summary.p50,
                    &m.summary.p90, &m.summary.p99, &m.summary.p999})
    *v /= ps_per_unit;
  m.histogram = std::move(h);
  return m;
}

class Driver {
 public:
  Driver(const RunSpec& spec, const LoopSpec& loop, sim::Breakdown& bd)
      : spec_(spec), loop_(loop), bd_(bd), rng_(spec.seed), targets_(static_cast<std::size_t>(spec.vm.size())) {
    const auto& prof = spec.profile;
    if (!loop.wake_key.empty()) {
      wake_ = prof.get(loop.wake_key).jitter();
      wake_id_ = bd.step(fmt::format("target: wake the halted vCPU [{}]", loop.wake_key));
    }
    if (!loop.inject_key.empty()) {
      inject_ = prof.get(loop.inject_key).jitter();
      inject_id_ = bd.step(fmt::format("target: interrupt the running vCPU [{}]", loop.inject_key));
    }
    c2c_in_id_ = bd.step("mem: line written by the sender, read by the target [host latency matrix]");
    c2c_ack_id_ = bd.step("mem: acknowledgement line back to the sender [host latency matrix]");
    for (const auto& v : spec.vm.vcpus)
      if (v.initial_state == topology::VcpuState::Halted) targets_[static_cast<std::size_t>(v.cpu)].halted_from = sim::Ps{0};
    its_ports_.resize(16);
    for (const auto& d : loop.plan.deliveries)
      if (d.intended) ++intended_deliveries_;
    total_ = spec.warmup + spec.iterations;
  }

  void run() {
    sim_.at(sim::Ps{0}, [this] { begin(); });
    sim_.run();
  }

  sim::Histogram main, send_cost, delivery;
  std::uint64_t sends = 0, lost_iterations = 0, measured_sends = 0;
  std::uint64_t events() const { return sim_.events_run(); }

 private:
  bool measured() const { return iter_ >= spec_.warmup; }
  /// Cache-line transfer between the sender and guest CPU `cpu`, either way (host latency matrix,
  /// looked up once per CPU: the matrix is static during a run).
  sim::Ps c2c_to(unsigned cpu) { return c2c_cached(cpu, true); }
  sim::Ps c2c_from(unsigned cpu) { return c2c_cached(cpu, false); }
  sim::Ps c2c_cached(unsigned cpu, bool to_target) {
    auto& cache = to_target ? c2c_to_ : c2c_from_;
    if (cache.empty()) cache.assign(targets_.size(), sim::Ps{-1});
    sim::Ps& v = cache[cpu];
    if (v.v < 0) {
      const int s = spec_.vm.pcpu_of(static_cast<int>(loop_.sender));
      const int t = spec_.vm.pcpu_of(static_cast<int>(cpu));
      v = to_target ? spec_.host->c2c(s, t) : spec_.host->c2c(t, s);
    }
    return v;
  }

  void begin() {
    if (iter_ == spec_.warmup) bd_.reset();
    t0_ = sim_.now();
    sim::Ps t = run_steps(loop_.before_send, t0_, rng_, bd_, &its_ports_);
    send_start_ = t;
    const auto& plan = loop_.plan;
    std::size_t next_delivery = 0;
    // Deliveries are stored in sender-step order (the send paths append them that way).
    for (std::size_t k = 0; k < plan.sender.size(); ++k) {
      const sim::Ps d = sample(plan.sender[k], rng_);
      t += d;
      bd_.add(plan.sender[k].id, d);
      while (next_delivery < plan.deliveries.size() && plan.deliveries[next_delivery].after_sender_step <= k) {
        const PlannedDelivery& pd = plan.deliveries[next_delivery];
        const sim::Ps arrival = run_steps(pd.path, t, rng_, bd_, &its_ports_);
        const unsigned cpu = static_cast<unsigned>(pd.target_cpu);
        const bool intended = pd.intended;
        sim_.at(arrival, [this, cpu, intended] { arrive(cpu, intended); });
        ++next_delivery;
      }
    }
    send_end_ = t;
    ++sends;
    if (measured()) {
      ++measured_sends;
      send_cost.record(send_end_ - send_start_);
    }
    pending_ = intended_deliveries_;
    last_entry_ = sim::Ps{0};
    if (intended_deliveries_ == 0) {
      // The IPI is lost: a real sender would spin in csd_lock_wait until the CSD-lock timeout; here
      // the iteration is counted as lost and the loop goes on.
      if (measured()) ++lost_iterations;
      finish_iteration(send_end_, false);
    }
  }

  void arrive(unsigned cpu, bool intended) {
    TargetState& s = targets_[cpu];
    const sim::Ps now = sim_.now();
    sim::Ps t = std::max(now, s.busy_until);
    const bool halted = now >= s.halted_from;
    if (halted) {
      const sim::Ps d = loop_.wake_key.empty() ? sim::Ps{0} : wake_.sample(rng_);
      if (!loop_.wake_key.empty()) bd_.add(wake_id_, d);
      t += d;
    } else if (!loop_.inject_key.empty()) {
      const sim::Ps d = inject_.sample(rng_);
      bd_.add(inject_id_, d);
      t += d;
    }
    s.halted_from = sim::kNever;
    if (!intended) {
      t = run_steps(loop_.stray_handler, t, rng_, bd_);
      t = run_steps(loop_.back_to_idle, t, rng_, bd_);
      if (!loop_.back_to_idle.empty()) s.halted_from = t;
      s.busy_until = t;
      return;
    }
    const sim::Ps entry = t;
    last_entry_ = std::max(last_entry_, entry);
    if (loop_.handler_reads_sender_line) {
      const sim::Ps d = c2c_to(cpu);
      bd_.add(c2c_in_id_, d);
      t += d;
    }
    t = run_steps(loop_.handler_before_ack, t, rng_, bd_);
    const sim::Ps ack = t;
    t = run_steps(loop_.handler_after_ack, t, rng_, bd_);
    t = run_steps(loop_.back_to_idle, t, rng_, bd_);
    if (!loop_.back_to_idle.empty()) s.halted_from = t;
    s.busy_until = t;
    if (loop_.wait_for_ack) {
      const sim::Ps d = c2c_from(cpu);
      bd_.add(c2c_ack_id_, d);
      sim_.at(std::max(ack + d, send_end_), [this] { ack_seen(); });
    } else if (--pending_ == 0) {
      // kick: the metric is send start -> handler entry; the next kick once the target is idle again.
      if (measured()) {
        main.record(entry - send_start_);
        delivery.record(entry - send_start_);
      }
      finish_iteration(std::max(send_end_, s.busy_until) + loop_.think_time, false);
    }
  }

  void ack_seen() {
    if (--pending_ > 0) return;
    if (measured()) {
      main.record(sim_.now() - t0_);
      delivery.record(last_entry_ - send_start_);
    }
    finish_iteration(sim_.now(), false);
  }

  void finish_iteration(sim::Ps next, bool) {
    ++iter_;
    if (iter_ < total_) sim_.at(next, [this] { begin(); });
  }

  const RunSpec& spec_;
  const LoopSpec& loop_;
  sim::Breakdown& bd_;
  sim::Simulator sim_;
  sim::Rng rng_;
  std::vector<TargetState> targets_;
  std::vector<sim::Ps> c2c_to_, c2c_from_;
  std::vector<sim::Resource> its_ports_;
  sim::Jitter wake_, inject_;
  sim::Breakdown::StepId wake_id_ = 0, inject_id_ = 0, c2c_in_id_ = 0, c2c_ack_id_ = 0;
  std::uint64_t iter_ = 0, total_ = 0;
  std::size_t intended_deliveries_ = 0, pending_ = 0;
  sim::Ps t0_{}, send_start_{}, send_end_{}, last_entry_{};
};

}  // namespace

std::vector<PlanStep> target_steps(const Pricer& pricer, const std::vector<std::array<std::string_view, 3>>& steps) {
  std::vector<PlanStep> out;
  for (const auto& s : steps) out.push_back(pricer.step(s[0], s[1], s[2], 1, Lane::Target));
  return out;
}

std::vector<PlanStep> interrupt_tail(const Pricer& pricer) {
  return target_steps(pricer, {{"target", "EOI", "guest.eoi"}, {"target", "interrupt exit", "guest.irq_exit"}});
}

std::vector<PlanStep> stray_handler(const Pricer& pricer) {
  return target_steps(pricer, {{"stray", "interrupt entry (nothing for this CPU)", "guest.irq_entry"},
                               {"stray", "EOI", "guest.eoi"},
                               {"stray", "interrupt exit", "guest.irq_exit"}});
}

RunResult run_loop(const RunSpec& spec, const LoopSpec& loop, sim::Breakdown& breakdown,
                   std::vector<std::pair<std::string, std::string>> settings) {
  if (!spec.host) throw std::logic_error("run_loop: no host");
  for (unsigned t : loop.targets)
    if (t >= static_cast<unsigned>(spec.vm.size()) || t == loop.sender)
      throw InputError(spec.params.place("target"),
                       fmt::format("target CPU {} must be a vCPU of the VM (0..{}) other than the sender", t,
                                   spec.vm.size() - 1));
  const double ghz = spec.profile.clock_ghz();
  if (loop.unit == "cycles" && ghz <= 0)
    throw InputError(spec.profile.file(), "reporting in cycles needs [profile] clock_ghz");
  const double ps_per_unit = loop.unit == "cycles" ? 1000.0 / ghz : 1000.0;

  Driver d(spec, loop, breakdown);
  d.run();

  RunResult r;
  r.metrics.push_back(make_metric(loop.main_metric, loop.unit, loop.main_description, std::move(d.main), ps_per_unit));
  r.metrics.push_back(make_metric("send_cost", loop.unit,
                                  "time inside the send hook on the sender (apic->send_IPI* entry to return, or "
                                  "ICC_SGI1R_EL1 trap to the GITS_SGIR write)",
                                  std::move(d.send_cost), ps_per_unit));
  r.metrics.push_back(make_metric("delivery_latency", loop.unit,
                                  "send start -> first handler instruction on the (last) intended target",
                                  std::move(d.delivery), ps_per_unit));
  for (const auto& [k, v] : loop.plan.counters) r.counters[k] = v * d.measured_sends;
  r.counters["sends"] = d.measured_sends;
  for (const char* k : {"misdelivered", "lost", "native_fallbacks", "hypercalls"})
    if (!r.counters.count(k)) r.counters[k] = 0;
  if (d.lost_iterations) {
    r.notes.push_back(fmt::format(
        "{} of {} iterations lost their IPI (never acknowledged); a real sender would spin in csd_lock_wait "
        "until the CSD-lock timeout, so these iterations are left out of the latency figures",
        d.lost_iterations, spec.iterations));
  }
  for (const auto& n : loop.plan.notes) r.notes.push_back(n);
  const double iters = static_cast<double>(std::max<std::uint64_t>(1, spec.iterations));
  for (const auto& row : breakdown.rows()) {
    if (row.count == 0) continue;
    r.breakdown.push_back({row.name, static_cast<double>(row.total.v) / iters / ps_per_unit, row.share});
  }
  r.provenance = spec.profile.provenance_json();
  r.provenance["host"] = {{"name", spec.host->name}, {"source", spec.host->source},
                          {"latency_source", spec.host->latency.source}};
  r.settings = std::move(settings);
  if (!loop.settings_note.empty()) r.settings.emplace_back("note", loop.settings_note);
  r.events = d.events();
  return r;
}

}  // namespace ipilab::workload
