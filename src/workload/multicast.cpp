// multicast (x86): one sender interrupts N targets and waits for all of them, as
// smp_call_function_many(mask, func, info, wait=1) does for a TLB shootdown (flush_tlb_func on each
// target): queue one CSD per target (guest.csd_queue each), send one IPI to the mask through the
// mechanism's send_IPI_mask (Hyper-V: HvCallSendSyntheticClusterIpi if every VP < 64, else the Ex
// call with a sparse vpset; x2APIC physical: one ICR write per target; cluster: one per cluster of 16;
// KVM PV: one hypercall per 128-APIC-ID window), then csd_lock_wait on every target.
#include <algorithm>

#include <fmt/format.h>

#include "common/error.h"
#include "workload/builtin.h"
#include "workload/builtin_parts.h"

namespace ipilab::workload {
namespace {

using namespace cost::keys;
constexpr EnumName<Addressing> kAddressing[] = {{Addressing::Mask, "mask"}, {Addressing::MaskAllButSelf, "allbutself"}};
const IntParam kSender{"sender", 0, 0, 65535, "guest CPU that sends"};
const IntParam kTargets{"targets", 0, 1, 65535, "number of targets: guest CPUs sender+1, sender+2, ... (wrapping)",
                        "every other vCPU"};
const EnumParam<Addressing> kAddr{"addressing", Addressing::Mask, kAddressing, "apic->send_IPI_mask or send_IPI_mask_allbutself"};
const IntParam kVector{"vector", 0xFC, 0, 255, "IPI vector (CALL_FUNCTION_VECTOR)", "252 (0xFC)"};
const EnumParam<CallHandler> kHandler{"handler", CallHandler::TlbFlush, kCallHandlerNames,
                           "target work: tlb_flush (guest.tlb_flush_handler) or callback (guest.callback)"};
constexpr std::string_view kDefaultMechanism = "hyperv";

std::vector<ParamInfo> params() {
  return {info(kSender), info(kTargets), info(kAddr), info(kVector), info(kHandler), info(kUnitCyclesParam)};
}

class Multicast final : public Workload {
 public:
  RunResult run(const RunSpec& spec) const override {
    const int n = spec.vm.size();
    const auto sender = static_cast<unsigned>(spec.params.get(kSender, kSender.def, n - 1));
    if (n < 2) throw InputError(spec.params.place("targets"), "multicast needs a VM of at least 2 vCPUs");
    const auto count = spec.params.get(kTargets, n - 1, n - 1);
    std::vector<unsigned> targets;
    for (std::int64_t i = 1; i <= count; ++i) targets.push_back(static_cast<unsigned>((sender + i) % n));
    std::sort(targets.begin(), targets.end());
    const Addressing addressing = spec.params.get(kAddr);
    const bool tlb_flush = spec.params.get(kHandler) == CallHandler::TlbFlush;
    const FigureUnit unit = spec.params.get(kUnitCyclesParam);
    Bound b(spec, kDefaultMechanism);
    require_arch(spec, b, Arch::X86, "multicast");

    RunConfig cfg = run_config(spec, b);
    cfg.uses_calls = true;
    cfg.call_single_vector = vector_of(Arch::X86, IpiKind::CallFunctionSingle, "");
    cfg.compute_steps = {b.pricer.step("sender", "benchmark loop", guest_bench_loop)};
    cfg.csd_functions = {{{tlb_flush ? b.pricer.step("target", "flush_tlb_func", guest_tlb_flush_handler)
                                     : b.pricer.step("target", "the called function", guest_callback)},
                          false, tlb_flush}};
    cfg.programs.resize(static_cast<std::size_t>(n));
    cfg.programs[sender] = std::make_unique<LoopProgram>(
        targets, std::vector<Op>{Op::mark(), Op::compute_step(0),
                                 Op::call({}, static_cast<std::uint32_t>(spec.params.get(kVector)), 0, true,
                                          addressing)});
    RunOutput out = run_vm(cfg, b.pricer);

    MetricList m(spec, unit);
    m.add("completion", "smp_call_function_many(wait=1): from the loop's start until every target released its CSD",
          std::move(out.iteration));
    m.add("send_cost", "time inside the send hook on the sender (apic->send_IPI_mask entry to return)",
          std::move(out.send_cost));
    m.add("delivery_latency", "send start -> first handler instruction on the last target", std::move(out.delivery));
    return finish(spec, b, std::move(out), std::move(m),
                  {{"targets", std::to_string(count)}, {"addressing", std::string(name_of(kAddressing, addressing))}});
  }
};

}  // namespace

WorkloadInfo describe_multicast() {
  return builtin_workload<Multicast>(
      {"multicast",
       "x86 one-to-many IPI (smp_call_function_many, e.g. a TLB shootdown): mask vs Ex vs native vs PV; main metric: "
       "time until every target acknowledged",
       params(),
       kDefaultMechanism,
       Arch::X86,
       {"completion", "send_cost", "delivery_latency"},
       {guest_bench_loop, guest_tlb_flush_handler, guest_callback}});
}

}  // namespace ipilab::workload
