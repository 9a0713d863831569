// mmio_read_vgic (kvm-unit-tests arm/micro-bench, test `mmio_read_vgic`): one vCPU reads a vGIC
// distributor register (GICD_IIDR) in a loop. Each read is a stage-2 data abort taken to EL2, which
// KVM handles in the kernel: kvm_handle_guest_abort -> io_mem_abort -> kvm_io_bus_read -> the vgic
// MMIO dispatch (dispatch_mmio_read, the register's read handler) and, on the way back in,
// kvm_handle_mmio_return writing the value to the guest register. No IPI, no other vCPU: the whole
// trapped access is one priced step, gic.vgic_mmio_trap (the same trap and dispatch a guest write
// to its redistributor's SGI frame takes), plus micro-bench's loop. Reported in ns per read, as
// micro-bench prints it (batch timing: one counter read per batch, kvm-unit-tests arm/micro-bench.c).
#include <fmt/format.h>

#include "workload/builtin.h"
#include "workload/counters.h"
#include "workload/run_common.h"

namespace ipilab::workload {
namespace {

using namespace cost::keys;
const IntParam kCpu{"cpu", 0, 0, 65535, "guest CPU that reads (micro-bench CPU0)"};
// The reads send nothing; a mechanism is bound only because every Arm run has one (it prices no step).
constexpr std::string_view kDefaultMechanism = "gicv3-emulated-sgi";

std::vector<ParamInfo> params() { return {info(kCpu), info(kUnitNsParam)}; }

class MmioReadVgic final : public Workload {
 public:
  RunResult run(const RunSpec& spec) const override {
    const int n = spec.vm.size();
    const auto cpu = static_cast<unsigned>(spec.params.get(kCpu, kCpu.def, n - 1));
    const FigureUnit unit = spec.params.get(kUnitNsParam);
    Bound b(spec, kDefaultMechanism);
    require_arch(spec, b, Arch::Arm, "mmio_read_vgic");

    RunConfig cfg = run_config(spec, b);
    cfg.compute_steps = {b.pricer.step("reader", "benchmark loop (loop control)", guest_bench_loop),
                         b.pricer.step("reader", "GICD_IIDR read: data abort to EL2, io_mem_abort -> vgic MMIO "
                                                 "dispatch, the value returned to the guest register",
                                       gic_vgic_mmio_trap, 1, Lane::Exit)};
    cfg.programs.resize(static_cast<std::size_t>(n));
    cfg.programs[cpu] = std::make_unique<LoopProgram>(std::vector<unsigned>{},
                                                      std::vector<Op>{Op::mark(), Op::compute_step(0), Op::compute_step(1)});
    RunOutput out = run_vm(cfg, b.pricer);
    // Binding the mechanism and starting the core priced delivery and handler steps; nothing is
    // delivered here, so the run's provenance keeps only the two steps it ran.
    b.pricer.only_used({guest_bench_loop, gic_vgic_mmio_trap});
    // The trap is a compute step, not a send: count its exit here, one per measured read.
    out.counters[std::string(counters::vm_exits)] += out.measured_iterations;

    const double ppu = ps_per_unit(spec, unit);
    std::vector<Metric> m;
    m.push_back(make_metric("mmio_read", std::string(unit_name(unit)), "micro-bench mmio_read_vgic: one trapped GICD_IIDR read, loop included",
                            std::move(out.iteration), ppu));
    std::vector<std::pair<std::string, std::string>> settings{{"reader", fmt::format("vCPU {}", cpu)},
                                                              {"register", "GICD_IIDR (vGIC distributor, handled in KVM)"}};
    return assemble(spec, b, std::move(out), std::move(m), std::move(settings), spec.iterations);
  }
};

}  // namespace

WorkloadInfo describe_mmio_read_vgic() {
  WorkloadInfo w{"mmio_read_vgic",
                 "Arm kvm-unit-tests micro-bench mmio_read_vgic: a vGIC distributor register read trapped to KVM, in a "
                 "loop; main metric: ns per read",
                 with_mechanism(params(), kDefaultMechanism), [] { return std::make_unique<MmioReadVgic>(); }};
  w.metrics = {"mmio_read"};
  w.cost_keys = {guest_bench_loop, gic_vgic_mmio_trap};
  w.validate = validator("mmio_read_vgic", params(), std::string(kDefaultMechanism), Arch::Arm);
  w.default_mechanism = std::string(kDefaultMechanism);
  return w;
}

}  // namespace ipilab::workload
