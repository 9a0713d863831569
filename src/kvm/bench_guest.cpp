#include "kvm/bench_guest.h"

#include <cstddef>
#include <stdexcept>

#include "kvm/guest_program.h"
#include "kvm/hyperv_vmm.h"
#include "x86/cpumask.h"
#include "x86/guest_x2apic.h"
#include "x86/kvm_pv_ipi.h"
#include "x86/vm.h"

namespace ipilab::kvm {

using namespace Xbyak::util;

namespace {

constexpr auto kNear = Xbyak::CodeGenerator::T_NEAR;


// The chunk code's registers (emit_send and the bodies clobber rax, rbx, rcx, rdx, rsi, rdi, r8, r11):
//   r9 = this case's CaseCtl, r10 = iterations left in the batch, r12 = t0, r13 = next record,
//   r14 = samples left, rbp = the chunk's first timestamp (budget), r15 = SharedArea.

class BenchGuest {
 public:
  BenchGuest(const std::vector<BenchCase>& cases, const BenchGuestOptions& o)
      : cases_(cases), o_(o), g_(2), xvm_(x86::X86Vm::identity(2)) {}

  GuestImage build() {
    emit_handlers();
    emit_sender();
    emit_target();
    for (std::size_t i = 0; i < cases_.size(); ++i) emit_chunk(i);
    g_.set_entry(kSenderVcpu, sender_);
    g_.set_entry(kTargetVcpu, target_);
    return g_.image();
  }

 private:
  // One timestamp into rax (clobbers rdx): LFENCE; RDTSC; LFENCE, or the fake counter.
  void read_counter() {
    if (o_.fake_counter) {
      g_.mov(rax, qword[r15 + disp32(offsetof(SharedArea, fake_clock))]);
      g_.lea(rdx, ptr[rax + o_.fake_counter->read_cost]);
      g_.mov(qword[r15 + disp32(offsetof(SharedArea, fake_clock))], rdx);
    } else {
      g_.rdtsc_ordered();
    }
  }

  // Physical x2APIC send of `vector` to the target (one WRMSR 0x830).
  void emit_x2apic_send(std::uint8_t vector) {
    const x86::GuestSend s = x86::x2apic_send_ipi_one(xvm_, x86::X2apicMode::Physical, kTargetVcpu, vector);
    for (const x86::MsrWrite& w : s.msr_writes) {
      g_.mov(ecx, w.msr);
      g_.mov(eax, static_cast<std::uint32_t>(w.value));
      g_.mov(edx, static_cast<std::uint32_t>(w.value >> 32));
      g_.wrmsr();
    }
  }

  // The send of `vector` from vCPU 0 to vCPU 1 exactly as the Linux guest policy for `m` issues it.
  void emit_send(Mechanism m, std::uint8_t vector) {
    switch (m) {
      case Mechanism::X2apic:
        emit_x2apic_send(vector);
        return;
      case Mechanism::KvmPv: {
        const x86::GuestSend s =
            x86::kvm_guest_send_ipi_mask(xvm_, x86::Cpumask::of(xvm_.nr_vcpus(), {kTargetVcpu}), vector);
        for (const x86::PvIpiHypercall& h : s.hypercalls) {
          g_.mov(eax, 10);  // KVM_HC_SEND_IPI
          g_.mov(rbx, h.a0);
          g_.mov(rcx, h.a1);
          g_.mov(rdx, h.a2);
          g_.mov(rsi, h.a3);
          g_.vmcall();
          g_.check_eq(rax, 1, kCheckPvResult);
        }
        return;
      }
      case Mechanism::HvFast:
      case Mechanism::HvEx: {
        const HvSendPlan p = linux_hv_send_ipi_one(kTargetVcpu, vector, m == Mechanism::HvEx, kHcallGpa);
        if (!p.input.empty()) {
          // The guest writes its per-CPU input page for every call, as hv_apic.c does.
          g_.mov(rdi, kHcallGpa);
          for (std::size_t i = 0; i + 8 <= p.input.size(); i += 8) {
            std::uint64_t q = 0;
            for (int b = 7; b >= 0; --b) q = (q << 8) | p.input[i + static_cast<std::size_t>(b)];
            g_.mov(rax, q);
            g_.mov(qword[rdi + i], rax);
          }
        }
        g_.mov(rcx, p.regs.rcx);
        g_.mov(rdx, p.regs.rdx);
        g_.mov(r8, p.regs.r8);
        g_.mov(rax, kHypercallPageGpa);
        g_.call(rax);
        g_.movzx(eax, ax);  // hv_result_success: only bits 15:0 count
        g_.check_eq(rax, 0, kCheckHvStatus);
        return;
      }
    }
  }

  // One iteration of case `c` (not counter-read). The CSD fill / flag clear is part of the iteration;
  // it is three stores (one) to lines the sender owns or is about to wait on.
  void emit_iteration(const BenchCase& c) {
    if (o_.fake_counter) g_.add(qword[r15 + disp32(offsetof(SharedArea, fake_clock))], o_.fake_counter->op_cost);
    switch (c.kind) {
      case CaseKind::CounterRead:
      case CaseKind::Loop:
        return;
      case CaseKind::CpuidExit:
        g_.xor_(eax, eax);
        g_.xor_(ecx, ecx);
        g_.cpuid();
        return;
      case CaseKind::Ipi:
        break;
    }
    const bool call_single = c.workload == Workload::CallSingle;
    if (call_single) {
      g_.mov(qword[r15 + disp32(offsetof(SharedArea, csd) + offsetof(Csd, flags))], 1);
      g_.mov(rax, g_.gva(csd_func_));
      g_.mov(qword[r15 + disp32(offsetof(SharedArea, csd) + offsetof(Csd, func))], rax);
      g_.mov(qword[r15 + disp32(offsetof(SharedArea, csd) + offsetof(Csd, arg))], 1);
    } else {
      g_.mov(qword[r15 + disp32(offsetof(SharedArea, ack))], 0);
    }
    emit_send(c.mechanism, call_single ? kBenchVectorCallSingle : kBenchVectorRoundTrip);
    Xbyak::Label wait;
    g_.L(wait);  // no PAUSE: the wait is part of the measured latency
    if (call_single) {
      g_.cmp(qword[r15 + disp32(offsetof(SharedArea, csd) + offsetof(Csd, flags))], 0);
      g_.jne(wait, kNear);
    } else {
      g_.cmp(qword[r15 + disp32(offsetof(SharedArea, ack))], 0);
      g_.je(wait, kNear);
    }
  }

  // Halted target: idle halt_gap_tsc (real TSC, outside any timed window) so the target is back in HLT.
  void emit_idle_gap() {
    Xbyak::Label gap;
    g_.rdtsc_ordered();
    g_.mov(r11, rax);
    g_.L(gap);
    g_.rdtsc_ordered();
    g_.sub(rax, r11);
    g_.cmp(rax, qword[r15 + disp32(offsetof(SharedArea, halt_gap_tsc))]);
    g_.jb(gap, kNear);
  }

  void emit_chunk(std::size_t i) {
    const BenchCase& c = cases_[i];
    const bool gap = c.kind == CaseKind::Ipi && c.target == TargetState::Halt;
    const bool has_body = c.kind != CaseKind::CounterRead;
    g_.L(chunk_[i]);
    g_.mov(r9, kCaseCtlGpa + i * sizeof(CaseCtl));
    if (has_body) {
      Xbyak::Label wu, wu_end;
      g_.mov(r14, qword[r9 + disp32(offsetof(CaseCtl, warmup))]);
      g_.test(r14, r14);
      g_.jz(wu_end, kNear);
      g_.L(wu);
      if (gap) emit_idle_gap();
      emit_iteration(c);
      g_.dec(r14);
      g_.jnz(wu, kNear);
      g_.L(wu_end);
    }
    Xbyak::Label sample, inner, end;
    g_.mov(r13, qword[r9 + disp32(offsetof(CaseCtl, records_gpa))]);
    g_.mov(r14, qword[r9 + disp32(offsetof(CaseCtl, samples_max))]);
    g_.xor_(eax, eax);
    g_.mov(qword[r9 + disp32(offsetof(CaseCtl, samples_done))], rax);
    g_.mov(qword[r9 + disp32(offsetof(CaseCtl, truncated))], rax);
    read_counter();
    g_.mov(rbp, rax);
    g_.L(sample);
    if (gap) emit_idle_gap();
    read_counter();  // t0 — the barriers sit here and at t1, never between iterations
    g_.mov(r12, rax);
    if (has_body) {
      g_.mov(r10, qword[r9 + disp32(offsetof(CaseCtl, batch_n))]);
      g_.L(inner);
      emit_iteration(c);
      g_.dec(r10);
      g_.jnz(inner, kNear);
    }
    read_counter();  // t1
    g_.mov(rcx, rax);
    g_.sub(rax, r12);
    g_.mov(qword[r13], rax);
    g_.mov(rax, qword[r9 + disp32(offsetof(CaseCtl, batch_n))]);
    g_.mov(qword[r13 + 8], rax);
    g_.add(r13, 16);
    g_.inc(qword[r9 + disp32(offsetof(CaseCtl, samples_done))]);
    g_.dec(r14);
    g_.jz(end, kNear);
    // The budget: t1 doubles as "now", no extra read.
    g_.mov(rax, qword[r9 + disp32(offsetof(CaseCtl, slice))]);
    g_.test(rax, rax);
    g_.jz(sample, kNear);
    g_.sub(rcx, rbp);
    g_.cmp(rcx, rax);
    g_.jb(sample, kNear);
    g_.mov(qword[r9 + disp32(offsetof(CaseCtl, truncated))], 1);
    g_.L(end);
    g_.ret();
  }

  // Puts the target in `m` and waits until it says it is there; a halted target is woken first.
  void emit_set_target_mode(TargetMode m) {
    const auto v = static_cast<std::uint32_t>(m);
    Xbyak::Label wait, done;
    g_.mov(rax, qword[r15 + disp32(offsetof(SharedArea, target_mode))]);
    g_.cmp(rax, v);
    g_.je(done, kNear);
    g_.mov(qword[r15 + disp32(offsetof(SharedArea, target_mode))], v);
    g_.cmp(rax, static_cast<std::uint32_t>(TargetMode::Halt));
    g_.jne(wait, kNear);
    emit_x2apic_send(kBenchVectorRoundTrip);  // untimed wake-up; the handler only sets `ack`
    g_.L(wait);
    g_.pause();
    g_.cmp(qword[r15 + disp32(offsetof(SharedArea, target_mode_ack))], v);
    g_.jne(wait, kNear);
    g_.L(done);
  }

  void emit_handlers() {
    // Round trip: EOI, count, ack.
    g_.L(h_rt_);
    g_.push(rax); g_.push(rcx); g_.push(rdx);
    g_.eoi_and_count_irq();
    g_.mov(qword[rax + disp32(offsetof(SharedArea, ack))], 1);
    g_.pop(rdx); g_.pop(rcx); g_.pop(rax);
    g_.iretq();
    // Call single: EOI first (sysvec_call_function_single), run func(arg), unlock the CSD.
    g_.L(h_csd_);
    for (const auto& r : {rax, rcx, rdx, rsi, rdi, r8, r9, r10, r11}) g_.push(r);
    g_.eoi_and_count_irq();
    g_.mov(rdi, qword[rax + disp32(offsetof(SharedArea, csd) + offsetof(Csd, arg))]);
    g_.call(qword[rax + disp32(offsetof(SharedArea, csd) + offsetof(Csd, func))]);
    g_.mov(rax, kSharedGpa);
    g_.mov(qword[rax + disp32(offsetof(SharedArea, csd) + offsetof(Csd, flags))], 0);  // csd_unlock
    for (const auto& r : {r11, r10, r9, r8, rdi, rsi, rdx, rcx, rax}) g_.pop(r);
    g_.iretq();
    // The queued function: csd_calls += arg.
    g_.L(csd_func_);
    g_.mov(rax, kSharedGpa);
    g_.add(qword[rax + disp32(offsetof(SharedArea, csd_calls))], rdi);
    g_.ret();
    g_.set_vector(kBenchVectorRoundTrip, h_rt_);
    g_.set_vector(kBenchVectorCallSingle, h_csd_);
  }

  void emit_sender() {
    g_.L(sender_);
    g_.init_cpu();
    if (o_.hyperv) g_.enable_hv_hypercalls(kIpilabGuestOsId);
    Xbyak::Label wait_ready, round;
    g_.L(wait_ready);
    g_.pause();
    g_.cmp(qword[r15 + disp32(offsetof(SharedArea, ready) + kTargetVcpu * sizeof(Line))], 0);
    g_.je(wait_ready, kNear);
    g_.L(round);
    for (std::size_t i = 0; i < cases_.size(); ++i) {
      const BenchCase& c = cases_[i];
      emit_set_target_mode(c.kind == CaseKind::Ipi && c.target == TargetState::Spin ? TargetMode::Spin
                                                                                     : TargetMode::Halt);
      g_.mov(edi, static_cast<std::uint32_t>(i << 8 | kSyncChunkStart));
      g_.ucall(UcallCmd::Sync);
      g_.call(chunk_[i]);
      g_.mov(edi, static_cast<std::uint32_t>(i << 8 | kSyncChunkEnd));
      g_.ucall(UcallCmd::Sync);
    }
    g_.inc(qword[r15 + disp32(offsetof(SharedArea, round))]);
    g_.mov(rax, qword[r15 + disp32(offsetof(SharedArea, round))]);
    g_.cmp(rax, qword[r15 + disp32(offsetof(SharedArea, rounds_total))]);
    g_.jb(round, kNear);
    emit_set_target_mode(TargetMode::Stop);
    g_.done();
  }

  void emit_target() {
    g_.L(target_);
    g_.init_cpu();
    g_.mov(qword[r15 + disp32(offsetof(SharedArea, ready) + kTargetVcpu * sizeof(Line))], 1);
    Xbyak::Label top, halt, spin, spin_loop, out;
    const auto mode = qword[r15 + disp32(offsetof(SharedArea, target_mode))];
    g_.L(top);
    g_.cli();
    g_.mov(rax, mode);
    g_.mov(qword[r15 + disp32(offsetof(SharedArea, target_mode_ack))], rax);
    g_.cmp(rax, static_cast<std::uint32_t>(TargetMode::Stop));
    g_.je(out, kNear);
    g_.cmp(rax, static_cast<std::uint32_t>(TargetMode::Spin));
    g_.je(spin, kNear);
    g_.L(halt);
    g_.cli();
    g_.cmp(mode, static_cast<std::uint32_t>(TargetMode::Halt));
    g_.jne(top, kNear);
    g_.sti();  // the STI shadow makes `sti; hlt` atomic: no wake-up is lost
    g_.hlt();
    g_.jmp(halt, kNear);
    g_.L(spin);
    g_.sti();
    g_.L(spin_loop);  // a plain load loop, no PAUSE (pause-loop exiting would yield the vCPU)
    g_.cmp(mode, static_cast<std::uint32_t>(TargetMode::Spin));
    g_.je(spin_loop, kNear);
    g_.jmp(top, kNear);
    g_.L(out);
    g_.done();
  }

  const std::vector<BenchCase>& cases_;
  BenchGuestOptions o_;
  GuestProgram g_;
  x86::X86Vm xvm_;
  Xbyak::Label sender_, target_, h_rt_, h_csd_, csd_func_;
  std::vector<Xbyak::Label> chunk_ = std::vector<Xbyak::Label>(kMaxBenchCases);
};

}  // namespace

GuestImage build_bench_guest(const std::vector<BenchCase>& cases, const BenchGuestOptions& options) {
  if (cases.size() > kMaxBenchCases) throw std::invalid_argument("too many benchmark cases for one guest");
  for (const BenchCase& c : cases)
    if (c.is_hyperv_ipi() && !options.hyperv)
      throw std::invalid_argument("a Hyper-V case needs BenchGuestOptions::hyperv");
  return BenchGuest(cases, options).build();
}

}  // namespace ipilab::kvm
