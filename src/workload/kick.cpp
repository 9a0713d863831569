// kick (x86): a PV spinlock unlock waking the halted waiter — Hyper-V's hv_qlock_kick sends
// X86_PLATFORM_IPI_VECTOR (0xF7) with apic->send_IPI(cpu) (arch/x86/hyperv/hv_spinlock.c), which is
// __send_ipi_one on an enlightened guest (seed 000: "send_ipi_one() is important for PV spinlock
// kick"). The target sits in HLT; the metric is the wake latency: send start -> the target's first
// handler instruction. The sender does not wait; the next kick comes once the target halted again.
#include "workload/builtin.h"
#include "workload/loop.h"

namespace ipilab::workload {
namespace {

std::vector<ParamInfo> params() {
  std::vector<ParamInfo> p = x86_send_params();
  p.push_back({"sender", "int", "0", "guest CPU that releases the lock and kicks"});
  p.push_back({"target", "int", "1", "halted guest CPU that is kicked"});
  p.push_back({"vector", "int", "247 (0xF7)", "IPI vector (X86_PLATFORM_IPI_VECTOR)"});
  p.push_back({"think_ns", "float", "1000", "sender idle time between kicks, ns"});
  p.push_back({"unit", "string", "\"cycles\"", "unit of the figures: cycles (profile clock) or ns"});
  return p;
}

class Kick final : public Workload {
 public:
  RunResult run(const RunSpec& spec) const override {
    spec.params.reject_unknown(params());
    const int n = spec.vm.size();
    LoopSpec loop;
    loop.sender = static_cast<unsigned>(spec.params.get_int("sender", 0, 0, n - 1));
    loop.targets = {static_cast<unsigned>(spec.params.get_int("target", 1, 0, n - 1))};
    const auto vector = static_cast<std::uint32_t>(spec.params.get_int("vector", 0xF7, 0, 0xFFFF));
    loop.think_time = sim::from_ns(spec.params.get_float("think_ns", 1000, 0, 1e9));
    loop.unit = spec.params.get_choice("unit", "cycles", {"cycles", "ns"});
    loop.main_metric = "wake_latency";
    loop.main_description = "kick start on the sender -> first handler instruction on the halted target";
    loop.wait_for_ack = false;

    sim::Breakdown bd;
    Pricer pr(spec.profile, bd);
    auto path = make_x86_send_path(spec.params, spec.vm);
    loop.plan = path->plan(pr, loop.sender, loop.targets, Addressing::One, vector);
    loop.handler_reads_sender_line = false;
    loop.handler_before_ack = target_steps(pr, {{"target", "interrupt entry", "guest.irq_entry"}});
    loop.handler_after_ack = interrupt_tail(pr);
    loop.back_to_idle = target_steps(pr, {{"target", "lock still contended: HLT exit, vCPU blocks", "vcpu.halt_exit"}});
    loop.stray_handler = stray_handler(pr);
    auto settings = path->settings();
    settings.emplace_back("target idle", "HLT (kicked)");
    return run_loop(spec, loop, bd, std::move(settings));
  }
};

}  // namespace

WorkloadInfo describe_kick() {
  return {"kick",
          "x86 PV spinlock kick: one IPI to a halted vCPU (hv_qlock_kick -> send_IPI); main metric: wake latency",
          params(), [] { return std::make_unique<Kick>(); }};
}

}  // namespace ipilab::workload
