// smp_call_function_single loop (x86): the benchmark of seed 000 (Vitaly Kuznetsov's 2-vCPU WS2019
// guest, 8043 -> 7761 cycles per iteration). The sender's program, per iteration:
//   loop overhead (guest.bench_loop) -> smp_call_function_single(target, func, info, wait=1): csd lock +
//   llist_add to the target's call_single_queue (guest.csd_queue) -> send_call_function_single_ipi ->
//   apic->send_IPI(target, CALL_FUNCTION_SINGLE_VECTOR 0xFB) through the mechanism -> csd_lock_wait
//   spins until the target's csd_unlock is visible (one cache-line transfer back).
// The target has no program: it rests in its VM state (halted: woken by the IPI, then HLT again;
// running: interrupted). Its handler reads the CSD (a line the sender wrote), runs the callback
// (guest.callback), csd_unlock, EOI and interrupt exit (vm_run.h).
#include "workload/builtin.h"
#include "workload/builtin_parts.h"

namespace ipilab::workload {
namespace {

using namespace cost::keys;
const IntParam kSender{"sender", 0, 0, 65535, "guest CPU that calls smp_call_function_single"};
const IntParam kTarget{"target", 1, 0, 65535, "guest CPU that runs the function"};
const IntParam kVector{"vector", 0xFB, 0, 255, "IPI vector (CALL_FUNCTION_SINGLE_VECTOR)", "251 (0xFB)"};
constexpr std::string_view kDefaultMechanism = "hyperv";

std::vector<ParamInfo> params() {
  return {info(kSender), info(kTarget), info(kVector), info(kUnitCyclesParam), info(kPollingParam)};
}

class SmpCallFunctionSingle final : public Workload {
 public:
  RunResult run(const RunSpec& spec) const override {
    const auto [sender, target] = sender_and_target(spec, kSender, kTarget);
    const FigureUnit unit = spec.params.get(kUnitCyclesParam);
    Bound b(spec, kDefaultMechanism);
    require_arch(spec, b, Arch::X86, "smp_call_function_single");

    RunConfig cfg = run_config(spec, b);
    cfg.uses_calls = true;
    cfg.polling = polling_policy(spec);
    cfg.compute_steps = {b.pricer.step("sender", "benchmark loop (rdtsc, loop control)", guest_bench_loop)};
    cfg.csd_functions = {{{b.pricer.step("target", "the called function", guest_callback)}, false}};
    cfg.programs.resize(static_cast<std::size_t>(spec.vm.size()));
    cfg.programs[sender] = std::make_unique<LoopProgram>(
        std::vector<unsigned>{target},
        std::vector<Op>{Op::mark(), Op::compute_step(0),
                        Op::call({}, static_cast<std::uint32_t>(spec.params.get(kVector)), 0, true, Addressing::One)});
    RunOutput out = run_vm(cfg, b.pricer);

    MetricList m(spec, unit);
    m.add(unit == FigureUnit::Cycles ? "cycles_per_iteration" : "ns_per_iteration",
          "one smp_call_function_single(wait=1) iteration on the sender: queue the CSD, send the IPI, spin until the "
          "target released the CSD",
          std::move(out.iteration));
    m.add("send_cost", "time inside the send hook on the sender (apic->send_IPI entry to return)",
          std::move(out.send_cost));
    m.add("delivery_latency", "send start -> first handler instruction on the target", std::move(out.delivery));
    return finish(spec, b, std::move(out), std::move(m),
                  {{"target idle", std::string(topology::vcpu_state_name(spec.vm.vcpus[target].initial_state))}});
  }
};

}  // namespace

WorkloadInfo describe_smp_call_function_single() {
  return builtin_workload<SmpCallFunctionSingle>(
      {"smp_call_function_single",
       "x86 guest loop of smp_call_function_single(wait=1) from one vCPU to another (seed 000's benchmark); main "
       "metric: cycles per iteration",
       params(),
       kDefaultMechanism,
       Arch::X86,
       {"cycles_per_iteration", "ns_per_iteration", "send_cost", "delivery_latency"},
       {guest_bench_loop, guest_callback}});
}

}  // namespace ipilab::workload
