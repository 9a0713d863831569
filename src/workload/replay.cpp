#include "workload/replay.h"

#include <algorithm>
#include <map>
#include <memory>
#include <tuple>

#include <fmt/format.h>

#include "sim/engine.h"
#include "workload/loop.h"
#include "workload/plan.h"
#include "workload/send_path.h"

namespace ipilab::workload {
namespace {

struct Target {
  sim::Ps busy_until{};
  sim::Ps halted_from = sim::kNever;
};

}  // namespace

ReplayResult replay(const RunSpec& spec, const std::vector<ReplaySend>& sends, bool gic) {
  ReplayResult out;
  sim::Breakdown bd;
  Pricer pr(spec.profile, bd);
  std::unique_ptr<SendPath> x86;
  std::unique_ptr<VsgiPath> vsgi;
  if (gic) {
    const std::string pol = spec.params.get_choice("find_4_1_its", "post-seed", {"pre-seed", "post-seed"});
    vsgi = std::make_unique<VsgiPath>(*spec.host, spec.vm,
                                      pol == "pre-seed" ? gic::Find41Policy::PreSeed : gic::Find41Policy::PostSeed);
    out.settings = {{"mechanism", "gicv4.1-vsgi"}, {"find_4_1_its", pol}};
  } else {
    x86 = make_x86_send_path(spec.params, spec.vm);
    out.settings = x86->settings();
  }
  const auto n = static_cast<std::size_t>(spec.vm.size());
  std::vector<Target> targets(n);
  std::vector<sim::Ps> sender_busy(n);
  for (const auto& v : spec.vm.vcpus)
    if (v.initial_state == topology::VcpuState::Halted) targets[static_cast<std::size_t>(v.cpu)].halted_from = sim::Ps{0};
  const bool idles_in_hlt = std::any_of(spec.vm.vcpus.begin(), spec.vm.vcpus.end(), [](const topology::Vcpu& v) {
    return v.initial_state == topology::VcpuState::Halted;
  });
  const sim::Jitter wake = spec.profile.get("vcpu.halt_wakeup").jitter();
  sim::Jitter inject;
  const bool has_inject = !gic;
  if (has_inject) inject = spec.profile.get("apic.interrupt_injection").jitter();
  std::vector<PlanStep> handler = target_steps(pr, {{"target", "interrupt entry", "guest.irq_entry"}});
  for (PlanStep& s : interrupt_tail(pr)) handler.push_back(s);
  std::vector<PlanStep> to_idle;
  if (idles_in_hlt) to_idle = target_steps(pr, {{"target", "idle: HLT exit", "vcpu.halt_exit"}});
  const sim::Ps irq_entry = spec.profile.get("guest.irq_entry").mean;

  // Plans are deterministic per (src, targets, vector): build each once.
  std::map<std::tuple<unsigned, std::vector<unsigned>, std::uint32_t>, SendPlan> plans;
  auto plan_of = [&](const ReplaySend& s) -> const SendPlan& {
    auto key = std::make_tuple(s.src, s.targets, s.vector);
    auto it = plans.find(key);
    if (it != plans.end()) return it->second;
    SendPlan p = gic ? vsgi->plan(pr, s.src, s.targets.at(0), static_cast<std::uint8_t>(s.vector & 0xF))
                     : x86->plan(pr, s.src, s.targets, s.targets.size() == 1 ? Addressing::One : Addressing::Mask,
                                 s.vector);
    return plans.emplace(std::move(key), std::move(p)).first->second;
  };

  sim::Simulator sim;
  sim::Rng rng(spec.seed);
  std::vector<sim::Resource> its_ports(16);
  const std::uint64_t t_first = sends.empty() ? 0 : sends.front().time_ns;
  std::uint64_t skipped_gic_multi = 0;
  for (const ReplaySend& s : sends) {
    if (s.targets.empty()) continue;
    if (gic && s.targets.size() > 1) {
      ++skipped_gic_multi;
      continue;
    }
    const sim::Ps at = sim::from_ns(static_cast<double>(s.time_ns - t_first));
    sim.at(at, [&, sp = &s](sim::Simulator& S) {
      const ReplaySend& send = *sp;
      const SendPlan& plan = plan_of(send);
      sim::Ps t = std::max(S.now(), sender_busy[send.src]);
      const sim::Ps start = t;
      std::size_t next = 0;
      for (std::size_t k = 0; k < plan.sender.size(); ++k) {
        t += sample(plan.sender[k], rng);
        while (next < plan.deliveries.size() && plan.deliveries[next].after_sender_step <= k) {
          const PlannedDelivery& d = plan.deliveries[next++];
          const sim::Ps arrival = run_steps(d.path, t, rng, bd, &its_ports);
          const auto cpu = static_cast<std::size_t>(d.target_cpu);
          const std::string* kind = &send.kind;
          S.at(arrival, [&, cpu, start, kind](sim::Simulator& S2) {
            Target& tg = targets[cpu];
            sim::Ps tt = std::max(S2.now(), tg.busy_until);
            if (S2.now() >= tg.halted_from) tt += wake.sample(rng);
            else if (has_inject) tt += inject.sample(rng);
            tg.halted_from = sim::kNever;
            out.latency_by_kind[*kind].record(tt + irq_entry - start);
            tt = run_steps(handler, tt, rng, bd);
            tt = run_steps(to_idle, tt, rng, bd);
            if (!to_idle.empty()) tg.halted_from = tt;
            tg.busy_until = tt;
          });
        }
      }
      sender_busy[send.src] = t;
      for (const auto& [k, v] : plan.counters) out.counters[k] += v;
    });
  }
  sim.run();
  if (skipped_gic_multi)
    out.notes.push_back(fmt::format("{} multi-target sends skipped: the vSGI model replays one target per send",
                                    skipped_gic_multi));
  out.provenance = spec.profile.provenance_json();
  out.provenance["host"] = {{"name", spec.host->name}, {"latency_source", spec.host->latency.source}};
  return out;
}

}  // namespace ipilab::workload
