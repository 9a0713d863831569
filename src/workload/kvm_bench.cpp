// kvm_bench (x86): the guest programs of ipilab's own KVM micro-benchmarks (`ipilab measure kvm`,
// src/kvm/ipi_bench.h) as simulated programs, so a measured case and its model are the same loop:
//
//   ipi-roundtrip  the kvm-unit-tests `ipi` shape: clear the flag, send one IPI (the mechanism's send
//                  path), the target's handler sets the flag (its line comes from the sender first),
//                  the sender spins until it sees it (one more transfer);
//   call-single    ipilab's one-slot CSD: lock the slot and store func + arg (guest.csd_queue), send;
//                  the target's handler reads the CSD (its line from the sender), runs func(arg)
//                  (guest.callback) and releases the slot (guest.csd_unlock); the sender waits until it
//                  sees the release. An Op::Ipi with that body, not Linux's call_single_queue: the
//                  harness has one slot and addresses the IPI itself (kvm-pv: kvm_send_ipi_mask);
//   cpuid-exit     CPUID leaf 0 in a loop: one exit handled in KVM per iteration. vm.exit_entry is what
//                  `ipilab measure` writes from this very case: the distribution of its timed samples
//                  (batch means, loop control included), so a sample here draws it once for its whole
//                  batch (batch x one draw, plus the read); an iteration of the run is one sample.
//
// Timing, as the harness does it (common/estimator.h): one timestamp pair per sample of `batch`
// iterations; a sample is (t1 - t0) / batch, t0 the start of the first read (guest.counter_read: the
// cost the harness's `counter-read` case measures, once per sample) and t1 the end of the last
// iteration; every iteration has its loop control (guest.bench_loop). With a halted target, the sender
// first idles `halt_gap_us` so the target is back in HLT, outside the timed sample. The target's state
// is the VM's ([vm] halted = [1]: HLT; default: running, spinning in guest code).
//
// Where a cache-line transfer (the flag, the CSD, the release) is priced (`line_transfer`): `profile`
// takes the profile's measured mem.cacheline_* entry for the vCPUs' placement (smt, same_node,
// same_socket, cross_socket: what `ipilab measure c2c` writes), `host` the scenario host's latency
// matrix, `auto` the profile's when it has the entry, else the host's; the settings say which.
//
// Main metric `sample` (the harness's per-iteration sample); also `operation` (Op start to flag/release
// seen), `send_cost` and `delivery_latency`. What this model does not hold (vm_run.h): the handler's EOI
// comes after its body here, while the harness (like sysvec_call_function_single) acknowledges first,
// and the simulator has no PVM "next exit" delivery to a spinning target.
#include <algorithm>

#include <fmt/format.h>

#include "common/error.h"
#include "workload/builtin.h"
#include "workload/builtin_parts.h"
#include "workload/counters.h"

namespace ipilab::workload {
namespace {

using namespace cost::keys;
enum class Case : std::uint8_t { IpiRoundtrip, CallSingle, CpuidExit };
constexpr EnumName<Case> kCases[] = {{Case::IpiRoundtrip, "ipi-roundtrip"}, {Case::CallSingle, "call-single"}, {Case::CpuidExit, "cpuid-exit"}};
constexpr EnumName<Addressing> kAddressing[] = {{Addressing::One, "one"}, {Addressing::Mask, "mask"}};
enum class LineSource : std::uint8_t { Auto, Profile, Host };
constexpr EnumName<LineSource> kLine[] = {{LineSource::Auto, "auto"}, {LineSource::Profile, "profile"}, {LineSource::Host, "host"}};
const EnumParam<Case> kCase{"case", Case::IpiRoundtrip, kCases,
                        "the measured case: ipi-roundtrip, call-single (one-slot CSD) or cpuid-exit (the reference)"};
const IntParam kSender{"sender", 0, 0, 65535, "guest CPU that sends (the harness's vCPU 0)"};
const IntParam kTarget{"target", 1, 0, 65535, "guest CPU that takes the IPI (the harness's vCPU 1)"};
const IntParam kVector{"vector", 0xF0, 0, 255, "IPI vector", "240 (0xF0) for ipi-roundtrip, 241 (0xF1) for call-single"};
const EnumParam<Addressing> kAddr{"addressing", Addressing::One, kAddressing,
                        "how the guest addresses its one target: apic->send_IPI (one) or send_IPI_mask of a one-CPU "
                        "mask (mask: the harness's kvm-pv case, kvm_send_ipi_mask)"};
const IntParam kBatch{"batch", 1, 1, 1 << 20,
                      "iterations per timed sample (one counter read each): 1 = timed per iteration, as the harness "
                      "does for a halted target"};
const FloatParam kGap{"halt_gap_us", 30, 0, 1e6, "sender idle time before each timed sample, outside it, us",
                      "30 with a halted target (ipilab measure kvm --halt-gap-us), else 0"};
const EnumParam<LineSource> kLineTransfer{"line_transfer", LineSource::Auto, kLine,
                                "where the flag/CSD cache-line transfers are priced: profile (mem.cacheline_* for "
                                "the vCPUs' placement), host (the latency matrix), auto (profile if it has it)"};
constexpr std::string_view kDefaultMechanism = "x2apic-physical";
constexpr std::uint32_t kVectorRoundTrip = 0xF0, kVectorCallSingle = 0xF1;  // kvm/ipi_bench.h

std::vector<ParamInfo> params() {
  return {info(kCase),  info(kSender), info(kTarget),       info(kVector),
          info(kAddr),  info(kBatch),  info(kGap),          info(kLineTransfer),
          info(kUnitNsParam)};
}

// The sender: [gap] read, then `batch` x (mark, loop control, [the CSD slot], the operation); it times
// its own samples from the instants the core calls next() (the end of the previous operation), like the
// harness's timestamp pair.
class BenchProgram final : public Program {
 public:
  struct Steps {  // indexes into RunConfig::compute_steps; -1 = none
    int read = -1, loop = -1, before = -1;
    bool whole_batch = false;  ///< the operation is one step for the whole sample (count = batch), one mark
  };
  BenchProgram(unsigned target, Op op, Steps steps, sim::Ps gap, std::uint64_t batch, std::uint64_t warmup)
      : target_{target}, op_(op), steps_(steps), gap_(gap), batch_(batch), warmup_(warmup) {
    if (op_.code == Op::Code::Ipi) op_.targets = target_;
  }
  Op next(ProgramCtx& ctx) override {
    for (;;) {
      switch (state_) {
        case State::Gap:
          state_ = State::Read;
          if (gap_ > sim::Ps{0}) return Op::compute(gap_);
          continue;
        case State::Read:
          t0_ = ctx.now;
          done_ = 0;
          measured_ = marks_ >= warmup_;  // the sample's first iteration is a measured one
          state_ = State::Mark;
          return Op::compute_step(steps_.read);
        case State::Mark:
          ++marks_;
          state_ = State::Loop;
          return Op::mark();
        case State::Loop:
          state_ = State::Before;
          if (steps_.loop >= 0) return Op::compute_step(steps_.loop);
          continue;
        case State::Before:
          state_ = State::Operate;
          if (steps_.before >= 0) return Op::compute_step(steps_.before);
          continue;
        case State::Operate:
          state_ = State::Done;
          return op_;
        case State::Done:
          if (!steps_.whole_batch && ++done_ < batch_) {
            state_ = State::Mark;
            continue;
          }
          if (measured_) samples.record(sim::Ps{(ctx.now - t0_).v / static_cast<std::int64_t>(batch_)});
          state_ = State::Gap;
          continue;
      }
    }
  }
  sim::Histogram samples;  ///< ps per iteration, one per timed sample

 private:
  enum class State { Gap, Read, Mark, Loop, Before, Operate, Done };
  unsigned target_[1];
  Op op_;
  Steps steps_;
  sim::Ps gap_;
  std::uint64_t batch_, warmup_;
  State state_ = State::Gap;
  sim::Ps t0_{};
  std::uint64_t done_ = 0, marks_ = 0;
  bool measured_ = false;
};

cost::CostKey line_key(const topology::Host& h, int a, int b) {
  const topology::Cpu& x = h.cpu(a);
  const topology::Cpu& y = h.cpu(b);
  if (x.socket != y.socket) return mem_cacheline_cross_socket;
  if (x.node != y.node) return mem_cacheline_same_socket;
  if (x.core == y.core) return mem_cacheline_smt;
  return mem_cacheline_same_node;
}

class KvmBench final : public Workload {
 public:
  RunResult run(const RunSpec& in) const override {
    const int n = in.vm.size();
    const auto [sender, target] = sender_and_target(in, kSender, kTarget);
    const Case kase = in.params.get(kCase);
    const bool halted = in.vm.vcpus[target].initial_state == topology::VcpuState::Halted;
    const FigureUnit unit = in.params.get(kUnitNsParam);
    const auto batch = static_cast<std::uint64_t>(in.params.get(kBatch));
    const sim::Ps gap = sim::from_ns(1000.0 * in.params.get_float(kGap.name, halted ? kGap.def : 0.0, kGap.min, kGap.max));

    // The line transfers: the profile's measured entry for this placement, or the host's matrix.
    RunSpec spec = in;
    topology::Host host = *in.host;
    const int sp = in.vm.pcpu_of(static_cast<int>(sender)), tp = in.vm.pcpu_of(static_cast<int>(target));
    const cost::CostKey lk = line_key(host, sp, tp);
    const LineSource lt = in.params.get(kLineTransfer);
    std::string line_setting = fmt::format("{:.4g} ns from the host's latency matrix", host.c2c_ns(sp, tp));
    const bool line_from_profile = lt == LineSource::Profile || (lt == LineSource::Auto && in.profile.has(lk.name));
    if (line_from_profile) {
      const double ns = spec.profile.get(lk.name).mean.ns();  // InputError naming the key when absent
      host.latency.pairs.push_back({sp, tp, ns});
      host.latency.pairs.push_back({tp, sp, ns});
      host.finalize();  // rebuilds the pair lookup
      line_setting = fmt::format("{:.4g} ns from the profile's {} ({})", ns, lk.name,
                                 cost::class_name(spec.profile.get(lk.name).cls));
    }
    spec.host = &host;

    Bound b(spec, kDefaultMechanism);
    if (line_from_profile) b.pricer.use(lk);  // the run's provenance names the line it took
    require_arch(spec, b, Arch::X86, "kvm_bench");
    RunConfig cfg = run_config(spec, b);
    cfg.compute_steps = {b.pricer.step("sender", "timestamp pair, once per timed sample", guest_counter_read)};
    BenchProgram::Steps steps;
    steps.read = 0;
    auto add_step = [&](PlanStep s) {
      cfg.compute_steps.push_back(s);
      return static_cast<int>(cfg.compute_steps.size() - 1);
    };
    Op op;
    if (kase == Case::CpuidExit) {
      // vm.exit_entry is this very case's sample distribution (loop control included): one draw per sample.
      op = Op::compute_step(add_step(b.pricer.step("sender", "CPUID: one exit handled in KVM (loop included)", vm_exit_entry,
                                                   static_cast<std::uint32_t>(batch))));
      steps.whole_batch = true;
    } else {
      const bool cs = kase == Case::CallSingle;
      steps.loop = add_step(b.pricer.step("sender", cs ? "loop control" : "loop control and clearing the flag", guest_bench_loop));
      const auto vector = static_cast<std::uint32_t>(
          in.params.get(kVector, cs ? kVectorCallSingle : kVectorRoundTrip, kVector.max));
      HandlerBody body{{}, true};  // the flag: irq_received, or the CSD slot's lock
      if (cs) {
        steps.before = add_step(b.pricer.step("sender", "lock the CSD slot, store func + arg", guest_csd_queue));
        body.steps = {b.pricer.step("target", "func(arg)", guest_callback),
                      b.pricer.step("target", "release the CSD slot", guest_csd_unlock)};
      }
      cfg.ipi_bodies = {body};
      op = Op::ipi({}, vector, 0, true);
      op.addressing = in.params.get(kAddr);
    }
    cfg.programs.resize(static_cast<std::size_t>(n));
    auto prog = std::make_unique<BenchProgram>(target, op, steps, gap, batch, spec.warmup);
    BenchProgram* p = prog.get();
    cfg.programs[sender] = std::move(prog);
    RunOutput out = run_vm(cfg, b.pricer);
    // CPUID is a compute step, not a send, so no mechanism counts its exit: every measured iteration
    // (mark to mark, one timed sample) ran `batch` of them, each one VM exit handled in KVM.
    if (kase == Case::CpuidExit) out.counters[std::string(counters::vm_exits)] += out.measured_iterations * batch;

    MetricList m(spec, unit);
    m.add("sample", "(t1 - t0) / iterations of one timed batch, as ipilab measure kvm times it", std::move(p->samples));
    if (kase != Case::CpuidExit) {
      m.add("operation", "send start -> the sender sees the flag (round trip) or the CSD release (call-single)",
            std::move(out.call));
      m.add("send_cost", "inside the send path on the sender (entry to return to the guest)", std::move(out.send_cost));
      m.add("delivery_latency", "send start -> first handler instruction on the target", std::move(out.delivery));
    }
    Settings settings{{"case", std::string(name_of(kCases, kase))},
                      {"target", halted ? fmt::format("halted (HLT), the sender idles {:.4g} us before each sample",
                                                      gap.ns() / 1000.0)
                                        : std::string("running (spins in guest code)")},
                      {"timing", batch == 1 ? std::string("per iteration (one counter read per sample)")
                                            : fmt::format("batches of {} iterations per counter read", batch)}};
    if (kase != Case::CpuidExit) settings.emplace_back("cache-line transfer", line_setting);
    return finish(spec, b, std::move(out), std::move(m), std::move(settings));
  }
};

}  // namespace

WorkloadInfo describe_kvm_bench() {
  return builtin_workload<KvmBench>(
      {"kvm_bench",
       "ipilab measure kvm's guest programs (IPI round trip, one-slot call-single, CPUID exit) with its timing; main "
       "metric: the timed sample per iteration",
       params(),
       kDefaultMechanism,
       Arch::X86,
       {"sample", "operation", "send_cost", "delivery_latency"},
       {guest_counter_read, guest_bench_loop, guest_csd_queue, guest_callback, guest_csd_unlock, vm_exit_entry,
        mem_cacheline_smt, mem_cacheline_same_node, mem_cacheline_same_socket, mem_cacheline_cross_socket}});
}

}  // namespace ipilab::workload
