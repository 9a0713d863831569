// storm: many senders at once — the shape of AMD's ipistorm module and of a TLB-shootdown storm. N
// senders (the first `senders` vCPUs), each sending to a target set (every other vCPU, a partner, the
// next vCPU, or a list) back to back or after a think time (fixed or Poisson), with or without waiting:
//   send = "call"  smp_call_function_single / _many(targets, func, wait): the CSD queue rules apply
//                  (a target whose call_single_queue is busy gets no IPI of its own), and the polling
//                  policy for single-target calls;
//   send = "ipi"   one IPI per target with micro-bench's handler (sets a flag the sender spins on when
//                  waiting): the ipi_hw shape, for the GIC mechanisms.
// Every vCPU is also a target; what a vCPU does between its own sends (or when it is not a sender) is
// its VM state. Iterations count sends over all senders. Reports per-call latency, per-sender means,
// throughput (IPIs/s, calls/s) and every resource's utilisation and queue wait.
#include <cmath>

#include <fmt/format.h>

#include "common/error.h"
#include "workload/builtin.h"
#include "workload/builtin_parts.h"

namespace ipilab::workload {
namespace {

using namespace cost::keys;
enum class SendKind : std::uint8_t { Call, Ipi };
constexpr EnumName<SendKind> kSendKinds[] = {{SendKind::Call, "call"}, {SendKind::Ipi, "ipi"}};
enum class TargetSet : std::uint8_t { AllButSelf, Partner, Next, List };
constexpr EnumName<TargetSet> kTargetSets[] = {
    {TargetSet::AllButSelf, "all-but-self"}, {TargetSet::Partner, "partner"}, {TargetSet::Next, "next"}, {TargetSet::List, "list"}};
constexpr auto kUnits = unit_choices(FigureUnit::Ns, FigureUnit::Cycles, FigureUnit::Us);
const IntParam kSenders{"senders", 0, 1, 65536, "the first N vCPUs send", "every vCPU"};
const EnumParam<TargetSet> kTargets{"targets", TargetSet::AllButSelf, kTargetSets,
                           "each sender's targets: every other vCPU, its partner (sender + partner_offset), the next "
                           "vCPU, or target_list"};
const IntParam kOffset{"partner_offset", 0, 1, 65535, "targets = \"partner\": sender + offset (mod vCPUs)", "vCPUs / 2"};
const IntListParam kList{"target_list", "targets = \"list\": the guest CPUs every sender sends to (itself skipped)", "(none)"};
const EnumParam<SendKind> kSend{"send", SendKind::Call, kSendKinds,
                        "call: smp_call_function_single/_many through the call_single_queue; ipi: one IPI per target "
                        "with micro-bench's flag handler"};
const BoolParam kWait{"wait", true, "the sender waits for every callback (csd_lock_wait) / flag before its next send"};
const EnumParam<CallHandler> kHandler{"handler", CallHandler::TlbFlush, kCallHandlerNames,
                           "send = \"call\": the function on each target: tlb_flush (guest.tlb_flush_handler) or callback"};
const FloatParam kThink{"think_ns", 0, 0, 1e12, "guest work between a sender's sends, ns (0: back to back)"};
const EnumParam<Arrivals> kArr{"arrivals", Arrivals::Fixed, kArrivalsNames,
                               "think_ns is fixed, or the mean of an exponential (Poisson sends)"};
const IntParam kVector{"vector", -1, -1, 255,
                       "vector / SGI to send (default: CALL_FUNCTION_SINGLE or CALL_FUNCTION for calls by target "
                       "count, IPI_CALL_FUNC on arm64)",
                       "by kind"};
const EnumParam<FigureUnit> kUnit{"unit", FigureUnit::Ns, kUnits, "unit of the figures: ns, us or cycles (profile clock)"};
constexpr std::string_view kDefaultMechanism = "x2apic-physical";

std::vector<ParamInfo> params() {
  return {info(kSenders), info(kTargets), info(kOffset), info(kList),  info(kSend),         info(kWait),
          info(kHandler), info(kThink),   info(kArr),    info(kVector), info(kPollingParam), info(kUnit)};
}

class StormProgram final : public Program {
 public:
  StormProgram(std::vector<unsigned> targets, Op send, sim::Ps think, bool poisson)
      : targets_(std::move(targets)), send_(send), think_(think), poisson_(poisson) {
    send_.targets = targets_;
  }
  Op next(ProgramCtx& ctx) override {
    switch (phase_++ % 3) {
      case 0: return Op::mark();
      case 1:
        if (think_.v > 0) {
          if (!poisson_) return Op::compute(think_);
          const double u = ctx.rng->uniform01();
          return Op::compute(sim::Ps{static_cast<std::int64_t>(std::llround(-std::log1p(-u) * static_cast<double>(think_.v)))});
        }
        ++phase_;
        return send_;
      default: return send_;
    }
  }

 private:
  std::vector<unsigned> targets_;
  Op send_;
  sim::Ps think_;
  bool poisson_;
  std::uint64_t phase_ = 0;
};

class Storm final : public Workload {
 public:
  RunResult run(const RunSpec& spec) const override {
    const int n = spec.vm.size();
    if (n < 2) throw InputError(spec.params.place("senders"), "a storm needs a VM of at least 2 vCPUs");
    const auto senders = static_cast<int>(spec.params.get(kSenders, n, n));
    const TargetSet tset = spec.params.get(kTargets);
    const auto offset = static_cast<int>(spec.params.get(kOffset, std::max(1, n / 2), n - 1));
    const SendKind send = spec.params.get(kSend);
    const bool wait = spec.params.get(kWait);
    const FigureUnit unit = spec.params.get(kUnit);
    std::vector<std::int64_t> list;
    if (tset == TargetSet::List) {
      if (!spec.params.has(kList.name)) throw InputError(spec.params.place("target_list"), "targets = \"list\" needs target_list");
      list = spec.params.get(kList, {});
      for (std::size_t i = 0; i < list.size(); ++i)
        if (list[i] < 0 || list[i] >= n)
          throw InputError(spec.params.place("target_list"), fmt::format("target_list[{}] = {} is not a vCPU (0..{})", i, list[i], n - 1));
    } else if (spec.params.has(kList.name)) {
      throw InputError(spec.params.place("target_list"), "only meaningful with targets = \"list\"");
    }
    Bound b(spec, kDefaultMechanism);
    const Arch arch = b.arch();
    const bool call = send == SendKind::Call;

    RunConfig cfg = run_config(spec, b);
    cfg.uses_calls = call;
    const PollingPolicy polling = polling_policy(spec);
    cfg.polling = polling;
    cfg.call_single_vector = vector_of(arch, IpiKind::CallFunctionSingle, spec.params.place("mechanism"));
    if (call) {
      const bool tlb_flush = spec.params.get(kHandler) == CallHandler::TlbFlush;
      cfg.csd_functions = {{{tlb_flush ? b.pricer.step("target", "flush_tlb_func", guest_tlb_flush_handler)
                                       : b.pricer.step("target", "the called function", guest_callback)},
                            false, tlb_flush}};
    } else {
      cfg.ipi_bodies = {HandlerBody{{}, true}};
      if (spec.params.has(kHandler.name)) throw InputError(spec.params.place("handler"), "only meaningful with send = \"call\"");
    }
    const sim::Ps think = sim::from_ns(spec.params.get(kThink));
    const Arrivals arrivals = spec.params.get(kArr);
    const bool poisson = arrivals == Arrivals::Poisson;
    cfg.programs.resize(static_cast<std::size_t>(n));
    std::size_t max_targets = 0;
    for (int s = 0; s < senders; ++s) {
      std::vector<unsigned> t;
      if (tset == TargetSet::AllButSelf) {
        for (int c = 0; c < n; ++c)
          if (c != s) t.push_back(static_cast<unsigned>(c));
      } else if (tset == TargetSet::Partner) {
        t.push_back(static_cast<unsigned>((s + offset) % n));
      } else if (tset == TargetSet::Next) {
        t.push_back(static_cast<unsigned>((s + 1) % n));
      } else {
        for (auto c : list)
          if (c != s && std::find(t.begin(), t.end(), static_cast<unsigned>(c)) == t.end()) t.push_back(static_cast<unsigned>(c));
        std::sort(t.begin(), t.end());
      }
      if (t.empty()) continue;
      max_targets = std::max(max_targets, t.size());
      const IpiKind kind = t.size() == 1 ? IpiKind::CallFunctionSingle : IpiKind::CallFunction;
      const std::int64_t vp = spec.params.get(kVector);
      const auto vector = vp >= 0 ? static_cast<std::uint32_t>(vp) : vector_of(arch, kind, spec.params.place("mechanism"));
      const Op op = call ? Op::call({}, vector, 0, wait, t.size() == 1 ? Addressing::One : Addressing::Mask)
                         : Op::ipi({}, vector, 0, wait);
      cfg.programs[static_cast<std::size_t>(s)] = std::make_unique<StormProgram>(std::move(t), op, think, poisson);
    }
    RunOutput out = run_vm(cfg, b.pricer);

    MetricList m(spec, unit);
    sim::Histogram per_sender;
    for (const auto& [mean, count] : out.per_sender_call)
      if (count) per_sender.record(static_cast<std::int64_t>(std::llround(mean)));
    if (wait)
      m.add("call_latency",
            call
                ? "one smp_call_function_*(wait=1) on a sender: queue the CSDs, send, spin until every target released "
                  "its CSD"
                : "one IPI round trip per sender: send, spin until every target's handler set the flag",
            std::move(out.call));
    m.add("send_cost", "time inside the send hook on a sender", std::move(out.send_cost));
    m.add("delivery_latency", "send start -> first handler instruction of the call's last target",
          std::move(out.delivery));
    if (wait)
      m.add("sender_mean_latency", "each sender's mean call latency (one sample per sender)", std::move(per_sender));
    Settings settings{{"senders", std::to_string(senders)},
                      {"targets", tset == TargetSet::Partner ? fmt::format("partner (+{})", offset)
                                                             : std::string(name_of(kTargetSets, tset))},
                      {"send", fmt::format("{}{}", name_of(kSendKinds, send), wait ? ", wait" : ", no wait")}};
    if (call && max_targets == 1) settings.emplace_back("polling", std::string(name_of(kPollingPolicyNames, polling)));
    settings.emplace_back("think", think.v == 0 ? std::string("back to back")
                                                : fmt::format("{} ns ({})", spec.params.get(kThink), name_of(kArrivalsNames, arrivals)));
    return finish(spec, b, std::move(out), std::move(m), std::move(settings));
  }
};

}  // namespace

WorkloadInfo describe_storm() {
  return builtin_workload<Storm>(
      {"storm",
       "many senders at once (ipistorm, TLB-shootdown storms): every sender's calls or IPIs contend for the targets' "
       "queues, the hypervisor and the ITSs; main metric: call latency",
       params(),
       kDefaultMechanism,
       std::nullopt,
       {"call_latency", "send_cost", "delivery_latency", "sender_mean_latency"},
       {guest_tlb_flush_handler, guest_callback}});
}

}  // namespace ipilab::workload
