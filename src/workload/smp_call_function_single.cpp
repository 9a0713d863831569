// smp_call_function_single loop (x86): the benchmark of seed 000 (Vitaly Kuznetsov's 2-vCPU WS2019
// guest, 8043 -> 7761 cycles per iteration). Each iteration, on the sender:
//   loop overhead -> smp_call_function_single(target, func, info, wait=1): csd lock + llist_add to the
//   target's call_single_queue (guest.csd_queue) -> send_call_function_single_ipi -> apic->send_IPI(
//   target, CALL_FUNCTION_SINGLE_VECTOR 0xFB) through the chosen mechanism -> csd_lock_wait spins
//   until the target's csd_unlock is visible (one cache-line transfer back).
// On the target: wake from HLT (idle) or interrupt while running -> irq entry -> read the CSD (line
// written by the sender) -> callback -> csd_unlock -> EOI, irq exit -> back to HLT if idle.
#include "workload/builtin.h"
#include "workload/loop.h"

namespace ipilab::workload {
namespace {

std::vector<ParamInfo> params() {
  std::vector<ParamInfo> p = x86_send_params();
  p.push_back({"sender", "int", "0", "guest CPU that calls smp_call_function_single"});
  p.push_back({"target", "int", "1", "guest CPU that runs the function"});
  p.push_back({"vector", "int", "251 (0xFB)", "IPI vector (CALL_FUNCTION_SINGLE_VECTOR)"});
  p.push_back({"unit", "string", "\"cycles\"", "unit of the figures: cycles (profile clock) or ns"});
  return p;
}

class SmpCallFunctionSingle final : public Workload {
 public:
  RunResult run(const RunSpec& spec) const override {
    spec.params.reject_unknown(params());
    const int n = spec.vm.size();
    LoopSpec loop;
    loop.sender = static_cast<unsigned>(spec.params.get_int("sender", 0, 0, n - 1));
    loop.targets = {static_cast<unsigned>(spec.params.get_int("target", 1, 0, n - 1))};
    const auto vector = static_cast<std::uint32_t>(spec.params.get_int("vector", 0xFB, 0, 0xFFFF));
    loop.unit = spec.params.get_choice("unit", "cycles", {"cycles", "ns"});
    loop.main_metric = loop.unit == "cycles" ? "cycles_per_iteration" : "ns_per_iteration";
    loop.main_description =
        "one smp_call_function_single(wait=1) iteration on the sender: queue the CSD, send the IPI, spin "
        "until the target released the CSD";

    sim::Breakdown bd;
    Pricer pr(spec.profile, bd);
    auto path = make_x86_send_path(spec.params, spec.vm);
    loop.before_send = {pr.step("sender", "benchmark loop (rdtsc, loop control)", "guest.bench_loop"),
                        pr.step("sender", "smp_call_function_single: lock and queue the CSD", "guest.csd_queue")};
    loop.plan = path->plan(pr, loop.sender, loop.targets, Addressing::One, vector);
    loop.handler_before_ack = target_steps(pr, {{"target", "interrupt entry", "guest.irq_entry"},
                                                {"target", "the called function", "guest.callback"},
                                                {"target", "csd_unlock", "guest.csd_unlock"}});
    loop.handler_after_ack = interrupt_tail(pr);
    loop.stray_handler = stray_handler(pr);
    const bool target_idles_in_hlt =
        spec.vm.vcpus[loop.targets[0]].initial_state == topology::VcpuState::Halted;
    if (target_idles_in_hlt)
      loop.back_to_idle = target_steps(pr, {{"target", "idle: HLT exit, vCPU blocks", "vcpu.halt_exit"}});
    else
      loop.wake_key.clear();
    auto settings = path->settings();
    settings.emplace_back("target idle", target_idles_in_hlt ? "HLT (woken by the IPI)" : "running (polling)");
    return run_loop(spec, loop, bd, std::move(settings));
  }
};

}  // namespace

WorkloadInfo describe_smp_call_function_single() {
  return {"smp_call_function_single",
          "x86 guest loop of smp_call_function_single(wait=1) from one vCPU to another (seed 000's benchmark); "
          "main metric: cycles per iteration",
          params(), [] { return std::make_unique<SmpCallFunctionSingle>(); }};
}

}  // namespace ipilab::workload
