#include "kvm/ipi_bench.h"

#include <cstddef>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>

#include "common/error.h"

#include "hv/partition.h"
#include "kvm/guest_program.h"
#include "kvm/hyperv_vmm.h"
#include "x86/cpumask.h"
#include "x86/guest_x2apic.h"
#include "x86/kvm_pv_ipi.h"
#include "x86/vm.h"

namespace ipilab::kvm {

using namespace Xbyak::util;

// Guest check ids (GuestError "check N"):
//   1 — KVM_HC_SEND_IPI returned RAX != 1 (number of vCPUs that accepted the IPI)
//   2 — a Hyper-V IPI hypercall returned a status whose low 16 bits are not HV_STATUS_SUCCESS
enum : std::uint64_t { kCheckPvResult = 1, kCheckHvStatus = 2 };

const char* to_string(Mechanism m) {
  switch (m) {
    case Mechanism::X2apic: return "x2apic";
    case Mechanism::KvmPv: return "kvm-pv";
    case Mechanism::HvFast: return "hv-fast";
    case Mechanism::HvEx: return "hv-ex";
  }
  return "?";
}
const char* to_string(TargetState t) { return t == TargetState::Spin ? "spin" : "halt"; }
const char* to_string(Workload w) { return w == Workload::RoundTrip ? "ipi-roundtrip" : "call-single"; }

namespace {

constexpr unsigned kSender = 0, kTarget = 1;
constexpr std::uint32_t kOff(std::size_t o) { return static_cast<std::uint32_t>(o); }

bool is_hv(Mechanism m) { return m == Mechanism::HvFast || m == Mechanism::HvEx; }

// Emits the send of `vector` from vCPU 0 to vCPU 1 exactly as the Linux guest policy for `m` issues it.
// Clobbers rax, rbx, rcx, rdx, rsi, rdi, r8, r11. On a failed send: Fail ucall.
void emit_send(GuestProgram& g, Mechanism m, std::uint8_t vector, const x86::X86Vm& xvm) {
  switch (m) {
    case Mechanism::X2apic: {
      const x86::GuestSend s = x86::x2apic_send_ipi_one(xvm, x86::X2apicMode::Physical, kTarget, vector);
      for (const x86::MsrWrite& w : s.msr_writes) {
        g.mov(ecx, w.msr);
        g.mov(eax, static_cast<std::uint32_t>(w.value));
        g.mov(edx, static_cast<std::uint32_t>(w.value >> 32));
        g.wrmsr();
      }
      return;
    }
    case Mechanism::KvmPv: {
      const x86::GuestSend s =
          x86::kvm_guest_send_ipi_mask(xvm, x86::Cpumask::of(xvm.nr_vcpus(), {kTarget}), vector);
      for (const x86::PvIpiHypercall& h : s.hypercalls) {
        g.mov(eax, 10);  // KVM_HC_SEND_IPI
        g.mov(rbx, h.a0);
        g.mov(rcx, h.a1);
        g.mov(rdx, h.a2);
        g.mov(rsi, h.a3);
        g.vmcall();
        g.check_eq(rax, 1, kCheckPvResult);
      }
      return;
    }
    case Mechanism::HvFast:
    case Mechanism::HvEx: {
      const HvSendPlan p = linux_hv_send_ipi_one(kTarget, vector, m == Mechanism::HvEx, kHcallGpa);
      if (!p.input.empty()) {
        // The guest writes its per-CPU input page for every call, as hv_apic.c does.
        g.mov(rdi, kHcallGpa);
        for (std::size_t i = 0; i + 8 <= p.input.size(); i += 8) {
          std::uint64_t q = 0;
          for (int b = 7; b >= 0; --b) q = (q << 8) | p.input[i + static_cast<std::size_t>(b)];
          g.mov(rax, q);
          g.mov(qword[rdi + i], rax);
        }
      }
      g.mov(rcx, p.regs.rcx);
      g.mov(rdx, p.regs.rdx);
      g.mov(r8, p.regs.r8);
      g.mov(rax, kHypercallPageGpa);
      g.call(rax);
      g.movzx(eax, ax);  // hv_result_success: only bits 15:0 count
      g.check_eq(rax, 0, kCheckHvStatus);
      return;
    }
  }
}

}  // namespace

ExitBenchResult run_cpuid_exit_bench(std::uint64_t iterations, std::uint64_t warmup) {
  const std::uint64_t total = iterations + warmup;
  if (iterations == 0 || total > kSamplesMaxCount) throw std::invalid_argument("bad CPUID iteration count");
  VmConfig cfg;
  cfg.vcpus = 1;
  Vm vm(cfg);
  ExitBenchResult res;
  res.tsc_khz = vm.tsc_khz();
  GuestProgram g(1);
  Xbyak::Label e, loop;
  g.L(e);
  g.init_cpu();
  g.mov(r14, total);
  g.mov(r13, kSamplesGpa);
  g.L(loop);
  g.rdtsc_ordered();
  g.mov(r12, rax);
  g.xor_(eax, eax);
  g.xor_(ecx, ecx);
  g.cpuid();
  g.rdtsc_ordered();
  g.sub(rax, r12);
  g.mov(qword[r13], rax);
  g.add(r13, 8);
  g.dec(r14);
  g.jnz(loop);
  g.done();
  g.set_entry(0, e);
  vm.load(g.image());
  res.report = vm.run();
  const auto* samples = reinterpret_cast<const std::uint64_t*>(vm.memory(kSamplesGpa, total * 8));
  res.samples_cycles.assign(samples + warmup, samples + total);
  return res;
}

bool kvm_hypercall_works() {
  static std::once_flag once;
  static bool works = false;
  static std::string unavailable;
  std::call_once(once, [] {
    try {
      VmConfig cfg;
      cfg.vcpus = 1;
      cfg.timeout = std::chrono::milliseconds(1000);
      Vm vm(cfg);
      GuestProgram g(1);
      Xbyak::Label e;
      g.L(e);
      g.init_cpu();
      g.mov(eax, 12345);  // no such KVM hypercall: KVM answers -KVM_ENOSYS
      g.vmcall();
      g.mov(qword[r15 + kOff(offsetof(SharedArea, status))], rax);
      g.done();
      g.set_entry(0, e);
      vm.load(g.image());
      vm.run();
      works = vm.shared().status[0].v == static_cast<std::uint64_t>(-1000);
    } catch (const GuestError&) {
      works = false;
    } catch (const UnavailableError& e) {
      unavailable = e.what();
    }
  });
  if (!unavailable.empty()) throw UnavailableError(unavailable);
  return works;
}

BenchResult run_ipi_bench(const BenchConfig& c) {
  if (c.mechanism == Mechanism::KvmPv && !kvm_hypercall_works())
    throw UnavailableError("VMCALL never completes on this KVM (the PVM backend, kvm_pvm, does not handle it "
                           "for ordinary long-mode guests): the KVM PV send-IPI hypercall cannot be measured here");
  if (c.iterations == 0 || c.batches == 0) throw std::invalid_argument("iterations and batches must be > 0");
  const std::uint64_t total = c.warmup + c.iterations * c.batches;
  if (total > kSamplesMaxCount)
    throw std::invalid_argument("warmup + iterations * batches exceeds the guest sample buffer");

  VmConfig vc;
  vc.vcpus = 2;
  vc.host_pus = c.host_pus;
  vc.timeout = c.timeout;
  const bool hv = is_hv(c.mechanism);
  if (hv) {
    vc.signature = HypervisorSignature::HyperV;
    vc.user_msrs = HypervVmm::trapped_msrs();
  }
  Vm vm(vc);
  std::unique_ptr<HypervVmm> hvm;
  if (hv) {
    hvm = std::make_unique<HypervVmm>(hv::PartitionConfig::identity(2), std::vector<std::uint32_t>{0, 1});
    vm.set_exit_handler(hvm.get());
  }
  const x86::X86Vm xvm = x86::X86Vm::identity(2);

  BenchResult res;
  res.config = c;
  res.tsc_khz = vm.tsc_khz();
  res.loop_iterations = total;
  res.host_pus = {vm.host_pu(0), vm.host_pu(1)};
  SharedArea& sh = vm.shared();
  sh.iterations = c.iterations;
  sh.batches = c.batches;
  sh.warmup = c.warmup;
  sh.halt_gap_tsc = static_cast<std::uint64_t>(c.halt_gap_us * static_cast<double>(res.tsc_khz) / 1000.0);
  // param[0] = loop budget in TSC cycles (0 = none); param[1] = iterations the loop completed.
  sh.param[0] = static_cast<std::uint64_t>(c.max_seconds * static_cast<double>(res.tsc_khz) * 1000.0);

  const bool call_single = c.workload == Workload::CallSingle;
  const std::uint8_t vector = call_single ? kBenchVectorCallSingle : kBenchVectorRoundTrip;

  GuestProgram g(2);
  Xbyak::Label sender, target, h_rt, h_csd, csd_func;

  // --- IPI handler (round trip): EOI, count, ack.
  g.L(h_rt);
  g.push(rax); g.push(rcx); g.push(rdx);
  g.eoi();
  g.vcpu_index_from_rsp(rcx);
  g.shl(rcx, 6);
  g.mov(rax, kSharedGpa);
  g.inc(qword[rax + rcx + kOff(offsetof(SharedArea, irqs))]);
  g.mov(qword[rax + kOff(offsetof(SharedArea, ack))], 1);
  g.pop(rdx); g.pop(rcx); g.pop(rax);
  g.iretq();

  // --- IPI handler (call single): EOI first (sysvec_call_function_single), run func(arg), unlock CSD.
  g.L(h_csd);
  for (const auto& r : {rax, rcx, rdx, rsi, rdi, r8, r9, r10, r11}) g.push(r);
  g.eoi();
  g.vcpu_index_from_rsp(rcx);
  g.shl(rcx, 6);
  g.mov(rax, kSharedGpa);
  g.inc(qword[rax + rcx + kOff(offsetof(SharedArea, irqs))]);
  g.mov(rdi, qword[rax + kOff(offsetof(SharedArea, csd) + offsetof(Csd, arg))]);
  g.call(qword[rax + kOff(offsetof(SharedArea, csd) + offsetof(Csd, func))]);
  g.mov(rax, kSharedGpa);
  g.mov(qword[rax + kOff(offsetof(SharedArea, csd) + offsetof(Csd, flags))], 0);  // csd_unlock
  for (const auto& r : {r11, r10, r9, r8, rdi, rsi, rdx, rcx, rax}) g.pop(r);
  g.iretq();

  // --- The queued function: csd_calls += arg.
  g.L(csd_func);
  g.mov(rax, kSharedGpa);
  g.add(qword[rax + kOff(offsetof(SharedArea, csd_calls))], rdi);
  g.ret();

  g.set_vector(kBenchVectorRoundTrip, h_rt);
  g.set_vector(kBenchVectorCallSingle, h_csd);

  // Prepares one send (clears the ack, or locks and fills the CSD) — outside the timed window, as the
  // kvm-unit-tests ipi test does for its flag. The CSD fill is inside Linux's smp_call_function_single;
  // here it is three stores to a line the sender owns, a few cycles.
  auto prepare = [&](std::uint64_t arg) {
    if (call_single) {
      g.mov(qword[r15 + kOff(offsetof(SharedArea, csd) + offsetof(Csd, flags))], 1);
      g.mov(rax, g.gva(csd_func));
      g.mov(qword[r15 + kOff(offsetof(SharedArea, csd) + offsetof(Csd, func))], rax);
      g.mov(qword[r15 + kOff(offsetof(SharedArea, csd) + offsetof(Csd, arg))], static_cast<std::uint32_t>(arg));
    } else {
      g.mov(qword[r15 + kOff(offsetof(SharedArea, ack))], 0);
    }
  };

  // --- Sender (vCPU 0).
  g.L(sender);
  g.init_cpu();
  if (hv) {
    g.mov(ecx, kHvMsrGuestOsId);
    g.mov(rax, kIpilabGuestOsId);
    g.mov(rdx, rax);
    g.shr(rdx, 32);
    g.wrmsr();
    g.mov(ecx, kHvMsrHypercall);
    g.mov(eax, static_cast<std::uint32_t>(kHypercallPageGpa | 1));
    g.xor_(edx, edx);
    g.wrmsr();
  }
  {
    Xbyak::Label wait_ready;
    g.L(wait_ready);
    g.pause();
    g.cmp(qword[r15 + kOff(offsetof(SharedArea, ready) + kTarget * sizeof(Line))], 0);
    g.je(wait_ready);
  }
  g.mov(edi, 1);
  g.ucall(UcallCmd::Sync);  // stage 1: the loop starts (host snapshots exit counts)
  g.mov(r14, total);
  g.mov(r13, kSamplesGpa);
  g.rdtsc_ordered();
  g.mov(rbp, rax);  // loop start, for the budget check
  {
    Xbyak::Label loop, wait_ack, loop_end;
    g.L(loop);
    if (c.target == TargetState::Halt) {
      Xbyak::Label gap;
      g.rdtsc_ordered();
      g.mov(r12, rax);
      g.L(gap);
      g.rdtsc_ordered();
      g.sub(rax, r12);
      g.cmp(rax, qword[r15 + kOff(offsetof(SharedArea, halt_gap_tsc))]);
      g.jb(gap);
    }
    prepare(1);
    g.rdtsc_ordered();
    g.mov(r12, rax);
    emit_send(g, c.mechanism, vector, xvm);
    g.L(wait_ack);  // no PAUSE: the wait is part of the measured latency
    if (call_single) {
      g.cmp(qword[r15 + kOff(offsetof(SharedArea, csd) + offsetof(Csd, flags))], 0);
      g.jne(wait_ack);
    } else {
      g.cmp(qword[r15 + kOff(offsetof(SharedArea, ack))], 0);
      g.je(wait_ack);
    }
    g.rdtsc_ordered();
    g.sub(rax, r12);
    g.mov(qword[r13], rax);
    g.add(r13, 8);
    // Budget check (after the sample is stored, outside the timed window).
    g.cmp(qword[r15 + kOff(offsetof(SharedArea, param))], 0);
    Xbyak::Label no_budget;
    g.je(no_budget);
    g.add(rax, r12);  // rax = end TSC
    g.sub(rax, rbp);
    g.cmp(rax, qword[r15 + kOff(offsetof(SharedArea, param))]);
    g.jae(loop_end, Xbyak::CodeGenerator::T_NEAR);
    g.L(no_budget);
    g.dec(r14);
    g.jnz(loop, Xbyak::CodeGenerator::T_NEAR);
    g.L(loop_end);
    g.mov(rax, r13);
    g.sub(rax, kSamplesGpa);
    g.shr(rax, 3);
    g.mov(qword[r15 + kOff(offsetof(SharedArea, param) + 8)], rax);
  }
  g.mov(edi, 2);
  g.ucall(UcallCmd::Sync);  // stage 2: the loop ended
  // Stop the target and wake it in case it is halted (one more, untimed IPI).
  g.mov(qword[r15 + kOff(offsetof(SharedArea, stop))], 1);
  prepare(0);
  emit_send(g, c.mechanism, vector, xvm);
  g.done();

  // --- Target (vCPU 1).
  g.L(target);
  g.init_cpu();
  g.mov(qword[r15 + kOff(offsetof(SharedArea, ready) + kTarget * sizeof(Line))], 1);
  {
    Xbyak::Label loop, out;
    if (c.target == TargetState::Spin) {
      g.sti();
      g.L(loop);  // a plain load loop, no PAUSE (pause-loop exiting would yield the vCPU)
      g.cmp(qword[r15 + kOff(offsetof(SharedArea, stop))], 0);
      g.je(loop);
      g.cli();
    } else {
      g.L(loop);
      g.cli();
      g.cmp(qword[r15 + kOff(offsetof(SharedArea, stop))], 0);
      g.jne(out);
      g.sti();  // the STI shadow makes `sti; hlt` atomic: no wakeup is lost
      g.hlt();
      g.jmp(loop);
      g.L(out);
    }
  }
  g.done();

  g.set_entry(kSender, sender);
  g.set_entry(kTarget, target);
  vm.load(g.image());

  ExitCounts at_start;
  vm.set_sync_handler([&](unsigned vcpu, std::uint64_t stage) {
    if (vcpu != kSender) return;
    if (stage == 1) at_start = vm.exits_so_far(kSender);
    if (stage == 2) {
      ExitCounts now = vm.exits_so_far(kSender);
      for (auto& [k, v] : now) {
        const std::uint64_t before = at_start.count(k) ? at_start.at(k) : 0;
        const std::uint64_t extra = k == "io:ucall" ? 1 : 0;  // the stage-2 sync itself
        if (v > before + extra) res.sender_loop_exits[k] = v - before - extra;
      }
    }
  });
  res.report = vm.run();

  const std::uint64_t completed = sh.param[1];
  if (completed > total) throw std::runtime_error("guest reported more iterations than it was given");
  res.loop_iterations = completed;
  res.truncated = completed < total;
  const auto* samples = reinterpret_cast<const std::uint64_t*>(vm.memory(kSamplesGpa, total * 8));
  if (completed > c.warmup) res.samples_cycles.assign(samples + c.warmup, samples + completed);
  res.target_irqs = sh.irqs[kTarget].v;
  res.csd_calls = sh.csd_calls.v;
  return res;
}

}  // namespace ipilab::kvm
