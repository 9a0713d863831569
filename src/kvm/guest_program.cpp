#include "kvm/guest_program.h"

#include <stdexcept>

namespace ipilab::kvm {

namespace {
// Vectors for which the CPU pushes an error code (Intel SDM vol. 3 §6.13).
bool has_error_code(unsigned v) { return v == 8 || (v >= 10 && v <= 14) || v == 17 || v == 21 || v == 29 || v == 30; }
}  // namespace

GuestProgram::GuestProgram(unsigned vcpus)
    : Xbyak::CodeGenerator(kCodeMaxBytes, Xbyak::DontSetProtectRWE), vcpus_(vcpus) {
  if (vcpus == 0 || vcpus > kMaxVcpus) throw std::invalid_argument("GuestProgram: bad vCPU count");
  emit_stubs();
}

std::uint64_t GuestProgram::gva(const Xbyak::Label& l) const {
  const auto* p = l.getAddress();
  if (p == nullptr) throw std::logic_error("GuestProgram: label not defined");
  return kCodeGpa + static_cast<std::uint64_t>(p - getCode());
}

void GuestProgram::set_entry(unsigned vcpu, const Xbyak::Label& entry) {
  if (vcpu >= vcpus_) throw std::invalid_argument("GuestProgram: no such vCPU");
  entry_[vcpu] = entry;
  has_entry_[vcpu] = true;
}

void GuestProgram::set_vector(unsigned vector, const Xbyak::Label& handler) {
  if (vector > 255) throw std::invalid_argument("GuestProgram: vector must be 0..255");
  vec_[vector] = handler;
  has_vec_[vector] = true;
}

void GuestProgram::emit_stubs() {
  Xbyak::Label exc_common, irq_common;
  for (unsigned v = 0; v < 256; ++v) {
    L(stub_[v]);
    if (v < 32) {
      if (!has_error_code(v)) push(0);
      push(v);
      jmp(exc_common, T_NEAR);
    } else {
      push(0);
      push(v);
      jmp(irq_common, T_NEAR);
    }
  }
  // Stack: [rsp] = vector, [rsp+8] = error code (or 0), [rsp+16] = RIP of the interrupted instruction.
  L(exc_common);
  mov(rdi, ptr[rsp]);
  mov(rdx, ptr[rsp + 8]);
  mov(rsi, ptr[rsp + 16]);
  ucall(UcallCmd::Exception);
  halt_forever();
  L(irq_common);
  mov(rdi, ptr[rsp]);
  mov(rsi, ptr[rsp + 16]);
  ucall(UcallCmd::Unexpected);
  halt_forever();
}

void GuestProgram::halt_forever() {
  Xbyak::Label dead;
  L(dead);
  cli();
  hlt();
  jmp(dead);
}

void GuestProgram::init_cpu() {
  mov(r15, kSharedGpa);
  mov(ecx, kMsrApicBase);
  rdmsr();
  or_(eax, 0xC00);  // EN | EXTD: x2APIC mode
  wrmsr();
  mov(ecx, kMsrX2apicSvr);
  mov(eax, 0x1FF);  // APIC software enable, spurious vector 0xFF
  xor_(edx, edx);
  wrmsr();
}

void GuestProgram::ucall(UcallCmd cmd) {
  mov(eax, static_cast<std::uint32_t>(cmd));
  out_(static_cast<std::uint8_t>(kUcallPort), eax);
}

void GuestProgram::eoi() {
  mov(ecx, kMsrX2apicEoi);
  xor_(eax, eax);
  xor_(edx, edx);
  wrmsr();
}

void GuestProgram::eoi_and_count_irq() {
  eoi();
  vcpu_index_from_rsp(rcx);
  shl(rcx, 6);
  mov(rax, kSharedGpa);
  inc(qword[rax + rcx + static_cast<std::uint32_t>(offsetof(SharedArea, irqs))]);
}

void GuestProgram::enable_hv_hypercalls(std::uint64_t guest_os_id) {
  mov(ecx, kHvMsrGuestOsId);
  mov(rax, guest_os_id);
  mov(rdx, rax);
  shr(rdx, 32);
  wrmsr();
  mov(ecx, kHvMsrHypercall);
  mov(eax, static_cast<std::uint32_t>(kHypercallPageGpa | 1));
  xor_(edx, edx);
  wrmsr();
}

void GuestProgram::rdtsc_ordered() {
  lfence();
  rdtsc();
  lfence();
  shl(rdx, 32);
  or_(rax, rdx);
}

void GuestProgram::vcpu_index_from_rsp(const Xbyak::Reg64& dst) {
  mov(dst, rsp);
  sub(dst, kStackGpa);
  shr(dst, 16);  // kStackBytes == 64 KiB
}

void GuestProgram::check_eq(const Xbyak::Reg64& reg, std::uint64_t expected, std::uint64_t check_id) {
  Xbyak::Label ok;
  mov(r11, expected);
  cmp(reg, r11);
  je(ok, T_NEAR);
  mov(rsi, reg);
  mov(rdx, r11);
  mov(rdi, check_id);
  ucall(UcallCmd::Fail);
  Xbyak::Label dead;
  L(dead);
  cli();
  hlt();
  jmp(dead);
  L(ok);
}

void GuestProgram::done() {
  ucall(UcallCmd::Done);
  Xbyak::Label dead;
  L(dead);
  cli();
  hlt();
  jmp(dead);
}

GuestImage GuestProgram::image() {
  GuestImage img;
  img.code.assign(getCode(), getCode() + getSize());
  img.idt.resize(256);
  for (unsigned v = 0; v < 256; ++v) img.idt[v] = has_vec_[v] ? gva(vec_[v]) : gva(stub_[v]);
  for (unsigned i = 0; i < vcpus_; ++i) {
    if (!has_entry_[i]) throw std::logic_error("GuestProgram: vCPU without an entry point");
    img.entry.push_back(gva(entry_[i]));
  }
  return img;
}

}  // namespace ipilab::kvm
