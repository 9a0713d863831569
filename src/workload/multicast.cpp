// multicast (x86): one sender interrupts N targets and waits for all of them, as
// smp_call_function_many(mask, func, info, wait=1) does for a TLB shootdown (flush_tlb_func on each
// target): queue one CSD per target (guest.csd_queue each), send one IPI to the mask through the
// chosen mechanism's send_IPI_mask (Hyper-V: HvCallSendSyntheticClusterIpi if every VP < 64, else the
// Ex call with a sparse vpset; x2APIC physical: one ICR write per target; cluster: one per cluster of
// 16; KVM PV: one hypercall per 128-APIC-ID window), then csd_lock_wait on every target.
#include "workload/builtin.h"
#include "workload/loop.h"

namespace ipilab::workload {
namespace {

std::vector<ParamInfo> params() {
  std::vector<ParamInfo> p = x86_send_params();
  p.push_back({"sender", "int", "0", "guest CPU that sends"});
  p.push_back({"targets", "int", "every other vCPU", "number of targets: guest CPUs sender+1, sender+2, ... (wrapping)"});
  p.push_back({"addressing", "string", "\"mask\"", "mask (apic->send_IPI_mask) or allbutself (send_IPI_mask_allbutself)"});
  p.push_back({"vector", "int", "252 (0xFC)", "IPI vector (CALL_FUNCTION_VECTOR)"});
  p.push_back({"handler", "string", "\"tlb_flush\"", "target work: tlb_flush (guest.tlb_flush_handler) or callback (guest.callback)"});
  p.push_back({"unit", "string", "\"cycles\"", "unit of the figures: cycles (profile clock) or ns"});
  return p;
}

class Multicast final : public Workload {
 public:
  RunResult run(const RunSpec& spec) const override {
    spec.params.reject_unknown(params());
    const int n = spec.vm.size();
    LoopSpec loop;
    loop.sender = static_cast<unsigned>(spec.params.get_int("sender", 0, 0, n - 1));
    const auto count = spec.params.get_int("targets", n - 1, 1, n - 1);
    for (std::int64_t i = 1; i <= count; ++i) loop.targets.push_back(static_cast<unsigned>((loop.sender + i) % n));
    const std::string addressing = spec.params.get_choice("addressing", "mask", {"mask", "allbutself"});
    const auto vector = static_cast<std::uint32_t>(spec.params.get_int("vector", 0xFC, 0, 0xFFFF));
    const std::string handler = spec.params.get_choice("handler", "tlb_flush", {"tlb_flush", "callback"});
    loop.unit = spec.params.get_choice("unit", "cycles", {"cycles", "ns"});
    loop.main_metric = "completion";
    loop.main_description = "smp_call_function_many(wait=1): from queueing the first CSD until every target released its CSD";

    sim::Breakdown bd;
    Pricer pr(spec.profile, bd);
    auto path = make_x86_send_path(spec.params, spec.vm);
    loop.before_send = {pr.step("sender", "benchmark loop", "guest.bench_loop"),
                        pr.step("sender", "queue one CSD per target", "guest.csd_queue", static_cast<std::uint32_t>(count))};
    loop.plan = path->plan(pr, loop.sender, loop.targets,
                           addressing == "mask" ? Addressing::Mask : Addressing::MaskAllButSelf, vector);
    loop.handler_before_ack =
        target_steps(pr, {{"target", "interrupt entry", "guest.irq_entry"},
                          handler == "tlb_flush" ? std::array<std::string_view, 3>{"target", "flush_tlb_func", "guest.tlb_flush_handler"}
                                                 : std::array<std::string_view, 3>{"target", "the called function", "guest.callback"},
                          {"target", "csd_unlock", "guest.csd_unlock"}});
    loop.handler_after_ack = interrupt_tail(pr);
    loop.stray_handler = stray_handler(pr);
    bool any_halted = false;
    for (unsigned t : loop.targets) any_halted |= spec.vm.vcpus[t].initial_state == topology::VcpuState::Halted;
    if (any_halted) loop.back_to_idle = target_steps(pr, {{"target", "idle: HLT exit, vCPU blocks", "vcpu.halt_exit"}});
    else loop.wake_key.clear();
    auto settings = path->settings();
    settings.emplace_back("targets", std::to_string(count));
    settings.emplace_back("addressing", addressing);
    return run_loop(spec, loop, bd, std::move(settings));
  }
};

}  // namespace

WorkloadInfo describe_multicast() {
  return {"multicast",
          "x86 one-to-many IPI (smp_call_function_many, e.g. a TLB shootdown): mask vs Ex vs native vs PV; main "
          "metric: time until every target acknowledged",
          params(), [] { return std::make_unique<Multicast>(); }};
}

}  // namespace ipilab::workload
