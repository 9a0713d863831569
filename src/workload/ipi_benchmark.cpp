// ipi_benchmark (x86): Yury Norov's IPI benchmark kernel module (LKML
// <20171219085010.4081-1-ynorov@caviumnetworks.com>, never merged; the module behind the Normal IPI
// figures of KVM's PV send-IPI commit 4180bf1b655a and of the Intel IPIv cover letter) in the shape
// its code has. Every case runs send_ipi(flags) NTIMES times in __bench_ipi's loop, and the module
// prints per case the sum of the per-IPI delivery times and the loop's total; per operation, the
// total / NTIMES is this workload's main metric `round_trip`.
//
//   normal     (POKE_ANY) cpu = cpumask_any_but(cpu_online_mask, self); time = ktime_get();
//              smp_call_function_single(cpu, handle_ipi, &time, 1). handle_ipi does
//              *time = ktime_get() - *time: it reads and writes the SENDER's stack variable `time`,
//              and the sender reads it back when the call returns.
//   self       (POKE_SELF) the same to its own CPU: smp_call_function_single runs handle_ipi locally
//              with interrupts off (generic_exec_single: csd_unlock, func(info)), no IPI at all.
//   broadcast  (POKE_ALL) smp_call_function_many(cpu_online_mask, handle_ipi, NULL, 1): every other
//              online CPU, no clock read (handle_ipi's `if (time)`); with one other CPU it is one
//              call-single IPI (smp_call_function_single before Linux 5.10,
//              send_call_function_single_ipi after), otherwise send_IPI_mask of the mask.
//
// Priced per iteration (normal): the loop without the send (guest.ipi_bench_dry_run: what the
// module's Dry-run case measures), cpumask_any_but (guest.cpumask_word), ktime_get
// (guest.clock_read), then smp_call_function_single: llist_add on the target's call_single_queue
// head, whose line the target last wrote (its llist_del_all) — one line transfer; the CSD
// (guest.csd_queue) and the mechanism's send; the target's handler takes the queue head back
// (one transfer), reads the CSD (one transfer, the core), runs handle_ipi: ktime_get, the `time` line
// from the sender (one transfer), the subtraction and store (guest.callback), then csd_unlock, which
// the waiting sender sees one transfer later (the core); the sender reads `time` back (one transfer).
// Every transfer is priced from the host's latency matrix for the two vCPUs' host CPUs, one per hand-over
// of a line the other side wrote last; a store to a line both hold (an upgrade) is not priced apart,
// as the core prices the CSD and the flag. Assumed: `time` (send_ipi's frame) and the on-stack CSD
// (smp_call_function_single's frame) lie in different cache lines; in one line the `time` read
// would come with the CSD's and one transfer less would be paid. Not held: 4.19's handler
// acknowledges before its body (smp_call_function_single_interrupt: ipi_entering_ack_irq), the
// core after it (vm_run.h), so guest.eoi is off the modelled path where the kernel pays it on it.
#include <fmt/format.h>

#include "common/error.h"
#include "common/ipi_kind.h"
#include "workload/builtin.h"
#include "workload/run_common.h"

namespace ipilab::workload {
namespace {

using namespace cost::keys;
// This workload's own keys (catalogued in cost/catalog.cpp; their constants belong in cost/catalog.h
// beside the others, which every workload and mechanism includes).
constexpr cost::CostKey guest_clock_read{"guest.clock_read"};
constexpr cost::CostKey guest_ipi_bench_dry_run{"guest.ipi_bench_dry_run"};
enum class Case : std::uint8_t { Normal, Self, Broadcast };
constexpr EnumName<Case> kCases[] = {{Case::Normal, "normal"}, {Case::Self, "self"}, {Case::Broadcast, "broadcast"}};
constexpr auto kUnits = unit_choices(FigureUnit::Ns, FigureUnit::Cycles);
const EnumParam<Case> kCase{"case", Case::Normal, kCases,
                        "the module's case: normal (POKE_ANY, smp_call_function_single to cpumask_any_but(online, "
                        "self)), self (POKE_SELF, run locally) or broadcast (POKE_ALL, smp_call_function_many to the "
                        "other online CPUs)"};
const IntParam kSender{"sender", 0, 0, 65535, "guest CPU the module's init runs on"};
const EnumParam<FigureUnit> kUnit{"unit", FigureUnit::Ns, kUnits, "unit of the figures: ns (as the module prints) or cycles (profile clock)"};
constexpr std::string_view kDefaultMechanism = "x2apic-physical";

std::vector<ParamInfo> params() { return {info(kCase), info(kSender), info(kUnit), info(kPollingParam)}; }

class IpiBenchmark final : public Workload {
 public:
  RunResult run(const RunSpec& spec) const override {
    const int n = spec.vm.size();
    const auto sender = static_cast<unsigned>(spec.params.get(kSender, kSender.def, n - 1));
    const Case kase = spec.params.get(kCase);
    const FigureUnit unit = spec.params.get(kUnit);
    if (kase != Case::Self && n < 2)
      throw InputError(spec.params.place("case"), fmt::format("case {} needs a VM of at least 2 vCPUs", name_of(kCases, kase)));
    // cpumask_any_but(cpu_online_mask, self): the first online CPU that is not the sender.
    const unsigned target = sender == 0 ? 1u : 0u;
    Bound b(spec, kDefaultMechanism);
    require_arch(spec, b, Arch::X86, "ipi_benchmark");

    RunConfig cfg = run_config(spec, b);
    cfg.uses_calls = kase != Case::Self;
    cfg.polling = polling_policy(spec);
    cfg.call_single_vector = vector_of(Arch::X86, IpiKind::CallFunctionSingle, "");
    auto add = [&](PlanStep s) {
      cfg.compute_steps.push_back(s);
      return Op::compute_step(static_cast<int>(cfg.compute_steps.size() - 1));
    };
    const topology::Host& host = *spec.host;
    const int sp = spec.vm.pcpu_of(static_cast<int>(sender)), tp = kase == Case::Self ? sp : spec.vm.pcpu_of(static_cast<int>(target));
    const double to_target_ns = host.c2c_ns(sp, tp), to_sender_ns = host.c2c_ns(tp, sp);
    const std::string line_src = "host latency matrix, the two vCPUs' host CPUs";
    // A line the other side wrote last, fetched by `who` (the target: from the sender, and back).
    auto line = [&](std::string_view who, std::string_view what) {
      return b.pricer.fixed(who, what, line_src, sim::from_ns(who == "target" ? to_target_ns : to_sender_ns), Lane::Guest);
    };
    std::vector<Op> ops{Op::mark(), add(b.pricer.step("sender", "the module's loop without the send (Dry-run)", guest_ipi_bench_dry_run))};
    std::vector<unsigned> targets;
    if (kase == Case::Self) {
      ops.push_back(add(b.pricer.step("sender", "time = ktime_get()", guest_clock_read)));
      ops.push_back(add(b.pricer.step("sender", "generic_exec_single to self: csd_unlock", guest_csd_unlock)));
      ops.push_back(add(b.pricer.step("sender", "handle_ipi: ktime_get()", guest_clock_read)));
      ops.push_back(add(b.pricer.step("sender", "handle_ipi: *time = now - *time", guest_callback)));
    } else if (kase == Case::Normal) {
      targets = {target};
      ops.push_back(add(b.pricer.step("sender", "cpumask_any_but(cpu_online_mask, self)", guest_cpumask_word)));
      ops.push_back(add(b.pricer.step("sender", "time = ktime_get()", guest_clock_read)));
      ops.push_back(add(line("sender", "llist_add: the target's call_single_queue head (last written by its llist_del_all)")));
      ops.push_back(Op::call({}, cfg.call_single_vector, 0, true, Addressing::One));
      ops.push_back(add(line("sender", "return time: the `time` line from the target (its handler stored it)")));
      cfg.csd_functions = {{{line("target", "llist_del_all: the call_single_queue head (the sender's llist_add wrote it)"),
                             b.pricer.step("target", "handle_ipi: ktime_get()", guest_clock_read),
                             line("target", "handle_ipi: the `time` line from the sender's stack"),
                             b.pricer.step("target", "handle_ipi: *time = now - *time", guest_callback)},
                            false}};
    } else {
      for (int c = 0; c < n; ++c)
        if (static_cast<unsigned>(c) != sender) targets.push_back(static_cast<unsigned>(c));
      ops.push_back(Op::call({}, cfg.call_single_vector, 0, true, targets.size() == 1 ? Addressing::One : Addressing::Mask));
      cfg.csd_functions = {{{b.pricer.step("target", "handle_ipi(NULL): returns at `if (time)`", guest_callback)},
                            false}};
    }
    cfg.programs.resize(static_cast<std::size_t>(n));
    cfg.programs[sender] = std::make_unique<LoopProgram>(targets, std::move(ops));
    RunOutput out = run_vm(cfg, b.pricer);

    const double ppu = ps_per_unit(spec, unit);
    std::vector<Metric> m;
    m.push_back(make_metric("round_trip", std::string(unit_name(unit)), "one send_ipi() of the module's loop: its total column / NTIMES",
                            std::move(out.iteration), ppu));
    if (kase != Case::Self) {
      m.push_back(make_metric("send_cost", std::string(unit_name(unit)), "inside the send path on the sender (entry to return to the guest)",
                              std::move(out.send_cost), ppu));
      m.push_back(make_metric("call", std::string(unit_name(unit)), "smp_call_function_*() start -> the sender sees every CSD released",
                              std::move(out.call), ppu));
    }
    auto settings = b.mechanism->settings();
    settings.emplace_back("case", std::string(name_of(kCases, kase)));
    if (kase == Case::Normal) settings.emplace_back("target", fmt::format("CPU {} (cpumask_any_but(cpu_online_mask, {}))", target, sender));
    if (kase != Case::Self) settings.emplace_back("cache-line transfer", fmt::format("{:.4g} ns to the target, {:.4g} ns back, from the host's latency matrix", to_target_ns, to_sender_ns));
    return assemble(spec, b, std::move(out), std::move(m), std::move(settings), spec.iterations);
  }
};

}  // namespace

WorkloadInfo describe_ipi_benchmark() {
  WorkloadInfo w{"ipi_benchmark",
                 "x86 guest running Yury Norov's IPI benchmark module (Normal IPI, Self-IPI, Broadcast IPI cases); main "
                 "metric: the loop's time per operation",
                 with_mechanism(params(), kDefaultMechanism), [] { return std::make_unique<IpiBenchmark>(); }};
  w.metrics = {"round_trip", "send_cost", "call"};
  w.cost_keys = {guest_ipi_bench_dry_run, guest_clock_read, guest_cpumask_word, guest_csd_unlock, guest_callback};
  w.validate = validator("ipi_benchmark", params(), std::string(kDefaultMechanism), Arch::X86);
  w.default_mechanism = std::string(kDefaultMechanism);
  return w;
}

}  // namespace ipilab::workload
