#include "kvm/hyperv_cases.h"

#include <array>
#include <cstddef>
#include <memory>

#include <fmt/format.h>

#include "hv/abi.h"
#include "hv/partition.h"
#include "kvm/guest_program.h"
#include "kvm/hyperv_vmm.h"

namespace ipilab::kvm {

using namespace Xbyak::util;

namespace {

constexpr std::uint8_t kVec = 0xFE;  // the selftest's IPI vector
constexpr std::uint16_t kSuccess = 0x0, kInvalidCode = 0x2, kInvalidInput = 0x3;

struct Case {
  std::string name;
  std::uint64_t rcx = 0;
  std::uint64_t rdx = kHcallGpa;   // slow default: the input page
  std::uint64_t r8 = kHcallGpa + 4096;
  bool load_xmm = false;
  std::array<std::array<std::uint64_t, 2>, 6> xmm{};
  std::vector<std::uint64_t> input;  // QWORDs written at kHcallGpa (after zeroing the page)
  std::uint16_t expected_status = kSuccess;
  std::uint64_t d1 = 0, d2 = 0;      // deliveries expected at R1 (VP 2) and R2 (VP 65)
};

std::uint64_t ctl(std::uint16_t code, bool fast, std::uint16_t varhead = 0, std::uint16_t rep = 0,
                  std::uint64_t reserved = 0) {
  return hv::encode_control({.call_code = code, .fast = fast, .var_header_qwords = varhead, .rep_count = rep,
                             .rep_start = 0, .reserved = reserved});
}

std::vector<Case> cases() {
  using hv::HVCALL_SEND_IPI, hv::HVCALL_SEND_IPI_EX;
  std::vector<Case> v;
  auto slow_ipi = [](std::uint64_t vector, std::uint64_t mask) { return std::vector<std::uint64_t>{vector, mask}; };
  auto slow_ex = [](std::uint64_t vector, std::uint64_t format, std::uint64_t vbm, std::vector<std::uint64_t> banks) {
    std::vector<std::uint64_t> q{vector, format, vbm};
    q.insert(q.end(), banks.begin(), banks.end());
    return q;
  };
  Case c;
  // ---- The ten hyperv_ipi selftest cases, all SUCCESS.
  c = {}; c.name = "selftest 1: SEND_IPI slow, mask 1<<2 (VP 2)";
  c.rcx = ctl(HVCALL_SEND_IPI, false); c.input = slow_ipi(kVec, 1ull << 2); c.d1 = 1; v.push_back(c);
  c = {}; c.name = "selftest 2: SEND_IPI fast, R8 = 1<<2 (VP 2)";
  c.rcx = ctl(HVCALL_SEND_IPI, true); c.rdx = kVec; c.r8 = 1ull << 2; c.d1 = 1; v.push_back(c);
  c = {}; c.name = "selftest 3: SEND_IPI_EX slow, valid_bank_mask 0x1, bank[0] 1<<2 (VP 2)";
  c.rcx = ctl(HVCALL_SEND_IPI_EX, false, 1); c.input = slow_ex(kVec, 0, 0x1, {1ull << 2}); c.d1 = 1; v.push_back(c);
  c = {}; c.name = "selftest 4: SEND_IPI_EX XMM fast, XMM0 {0x1, 1<<2} (VP 2)";
  c.rcx = ctl(HVCALL_SEND_IPI_EX, true, 1); c.rdx = kVec; c.r8 = 0; c.load_xmm = true; c.xmm[0] = {0x1, 1ull << 2};
  c.d1 = 1; v.push_back(c);
  c = {}; c.name = "selftest 5: SEND_IPI_EX slow, valid_bank_mask 0x2, bank[0] 1<<1 (VP 65, compact)";
  c.rcx = ctl(HVCALL_SEND_IPI_EX, false, 1); c.input = slow_ex(kVec, 0, 0x2, {1ull << 1}); c.d2 = 1; v.push_back(c);
  c = {}; c.name = "selftest 6: SEND_IPI_EX XMM fast, XMM0 {0x2, 1<<1} (VP 65)";
  c.rcx = ctl(HVCALL_SEND_IPI_EX, true, 1); c.rdx = kVec; c.r8 = 0; c.load_xmm = true; c.xmm[0] = {0x2, 1ull << 1};
  c.d2 = 1; v.push_back(c);
  c = {}; c.name = "selftest 7: SEND_IPI_EX slow, valid_bank_mask 0x3 (VP 2, 65)";
  c.rcx = ctl(HVCALL_SEND_IPI_EX, false, 2); c.input = slow_ex(kVec, 0, 0x3, {1ull << 2, 1ull << 1});
  c.d1 = 1; c.d2 = 1; v.push_back(c);
  c = {}; c.name = "selftest 8: SEND_IPI_EX XMM fast, XMM0 {0x3, 1<<2}, XMM1 {1<<1, 0} (VP 2, 65)";
  c.rcx = ctl(HVCALL_SEND_IPI_EX, true, 2); c.rdx = kVec; c.r8 = 0; c.load_xmm = true;
  c.xmm[0] = {0x3, 1ull << 2}; c.xmm[1] = {1ull << 1, 0}; c.d1 = 1; c.d2 = 1; v.push_back(c);
  c = {}; c.name = "selftest 9: SEND_IPI_EX slow, HV_GENERIC_SET_ALL (all VPs)";
  c.rcx = ctl(HVCALL_SEND_IPI_EX, false, 0); c.input = slow_ex(kVec, 1, 0, {}); c.d1 = 1; c.d2 = 1; v.push_back(c);
  c = {}; c.name = "selftest 10: SEND_IPI_EX XMM fast, HV_GENERIC_SET_ALL (all VPs)";
  c.rcx = ctl(HVCALL_SEND_IPI_EX, true, 0); c.rdx = kVec; c.r8 = 1; c.load_xmm = true; c.xmm[0] = {0, 0};
  c.d1 = 1; c.d2 = 1; v.push_back(c);
  // ---- hyperv_features validation cases (guest_test_hcalls_access), zeroed input page.
  c = {}; c.name = "features 0: call code 0xBEEF -> INVALID_HYPERCALL_CODE";
  c.rcx = ctl(0xBEEF, false); c.expected_status = kInvalidCode; v.push_back(c);
  c = {}; c.name = "features 13: SEND_IPI slow, vector 0 -> INVALID_HYPERCALL_INPUT";
  c.rcx = ctl(HVCALL_SEND_IPI, false); c.expected_status = kInvalidInput; v.push_back(c);
  c = {}; c.name = "features 14: SEND_IPI_EX sparse, no banks, vector 0 -> SUCCESS, nothing delivered";
  c.rcx = ctl(HVCALL_SEND_IPI_EX, false, 0); v.push_back(c);
  // ---- Extra acceptance cases (read from kvm_hv_hypercall / kvm_hv_send_ipi; in no selftest).
  c = {}; c.name = "varhead 1 != popcount(valid_bank_mask 0x3) -> INVALID_HYPERCALL_INPUT";
  c.rcx = ctl(HVCALL_SEND_IPI_EX, false, 1); c.input = slow_ex(kVec, 0, 0x3, {1ull << 2, 1ull << 1});
  c.expected_status = kInvalidInput; v.push_back(c);
  c = {}; c.name = "SEND_IPI with varhead 1 -> INVALID_HYPERCALL_INPUT";
  c.rcx = ctl(HVCALL_SEND_IPI, false, 1); c.input = slow_ipi(kVec, 1ull << 2); c.expected_status = kInvalidInput;
  v.push_back(c);
  c = {}; c.name = "SEND_IPI with rep count 1 -> INVALID_HYPERCALL_INPUT";
  c.rcx = ctl(HVCALL_SEND_IPI, false, 0, 1); c.input = slow_ipi(kVec, 1ull << 2); c.expected_status = kInvalidInput;
  v.push_back(c);
  c = {}; c.name = "reserved control bit 27 -> INVALID_HYPERCALL_INPUT";
  c.rcx = ctl(HVCALL_SEND_IPI, true, 0, 0, 1ull << 27); c.rdx = kVec; c.r8 = 1ull << 2;
  c.expected_status = kInvalidInput; v.push_back(c);
  c = {}; c.name = "reserved control bit 31 (Linux HV_HYPERCALL_NESTED) -> INVALID_HYPERCALL_INPUT";
  c.rcx = ctl(HVCALL_SEND_IPI, true, 0, 0, 1ull << 31); c.rdx = kVec; c.r8 = 1ull << 2;
  c.expected_status = kInvalidInput; v.push_back(c);
  c = {}; c.name = "fast SEND_IPI with RDX[63:32] != 0 (TargetVtl) -> INVALID_HYPERCALL_INPUT";
  c.rcx = ctl(HVCALL_SEND_IPI, true); c.rdx = kVec | (1ull << 32); c.r8 = 1ull << 2;
  c.expected_status = kInvalidInput; v.push_back(c);
  c = {}; c.name = "XMM Ex with 12 banks -> INVALID_HYPERCALL_INPUT";
  c.rcx = ctl(HVCALL_SEND_IPI_EX, true, 12); c.rdx = kVec; c.r8 = 0; c.load_xmm = true; c.xmm[0] = {0xFFF, 0};
  c.expected_status = kInvalidInput; v.push_back(c);
  c = {}; c.name = "vector 0x0F -> INVALID_HYPERCALL_INPUT";
  c.rcx = ctl(HVCALL_SEND_IPI, true); c.rdx = 0x0F; c.r8 = 1ull << 2; c.expected_status = kInvalidInput;
  v.push_back(c);
  c = {}; c.name = "vector 0x100 (slow) -> INVALID_HYPERCALL_INPUT";
  c.rcx = ctl(HVCALL_SEND_IPI, false); c.input = slow_ipi(0x100, 1ull << 2); c.expected_status = kInvalidInput;
  v.push_back(c);
  c = {}; c.name = "vector 0x10 -> delivered to VP 2";
  c.rcx = ctl(HVCALL_SEND_IPI, true); c.rdx = 0x10; c.r8 = 1ull << 2; c.d1 = 1; v.push_back(c);
  c = {}; c.name = "vector 0xFF -> delivered to VP 2";
  c.rcx = ctl(HVCALL_SEND_IPI, true); c.rdx = 0xFF; c.r8 = 1ull << 2; c.d1 = 1; v.push_back(c);
  c = {}; c.name = "mask bit for a nonexistent VP (5) -> SUCCESS, nothing delivered";
  c.rcx = ctl(HVCALL_SEND_IPI, true); c.rdx = kVec; c.r8 = 1ull << 5; v.push_back(c);
  c = {}; c.name = "format 2 on an IPI -> treated as sparse (VP 2)";
  c.rcx = ctl(HVCALL_SEND_IPI_EX, false, 1); c.input = slow_ex(kVec, 2, 0x1, {1ull << 2}); c.d1 = 1; v.push_back(c);
  c = {}; c.name = "slow input GPA outside guest memory -> INVALID_HYPERCALL_INPUT";
  c.rcx = ctl(HVCALL_SEND_IPI, false); c.rdx = 1ull << 30; c.expected_status = kInvalidInput; v.push_back(c);
  c = {}; c.name = "Ex banks running past the end of guest memory -> INVALID_HYPERCALL_INPUT";
  c.rcx = ctl(HVCALL_SEND_IPI_EX, false, 1); c.rdx = kGuestMemBytes - 24; c.expected_status = kInvalidInput;
  v.push_back(c);
  return v;
}

// Loads XMM0..5 from a scratch block written with integer stores, using MOVDQU only: on the PVM
// backend every SSE instruction traps and KVM emulates it, and KVM's emulator knows MOVDQU but not
// MOVQ/PINSRQ (docs/kvm-harness.md).
constexpr std::uint64_t kXmmScratchGpa = kHcallGpa + 0x3000;
void emit_load_xmm(GuestProgram& g, const std::array<std::array<std::uint64_t, 2>, 6>& xmm) {
  const Xbyak::Xmm regs[6] = {xmm0, xmm1, xmm2, xmm3, xmm4, xmm5};
  g.mov(rdi, kXmmScratchGpa);
  for (std::size_t x = 0; x < 6; ++x) {
    g.mov(rax, xmm[x][0]);
    g.mov(qword[rdi + 16 * x], rax);
    g.mov(rax, xmm[x][1]);
    g.mov(qword[rdi + 16 * x + 8], rax);
    g.movdqu(regs[x], ptr[rdi + 16 * x]);
  }
}

// The interrupt handler of every vCPU: count the interrupt in the vCPU's line, EOI.
void emit_counting_handler(GuestProgram& g, Xbyak::Label& handler) {
  g.push(rax); g.push(rcx); g.push(rdx);
  g.eoi_and_count_irq();
  g.pop(rdx); g.pop(rcx); g.pop(rax);
  g.iretq();
  for (unsigned vec : {unsigned{kVec}, 0x10u, 0xFFu}) g.set_vector(vec, handler);
}

// A receiver: publish its VP index (HV_X64_MSR_VP_INDEX), then halt with interrupts on until `stop`.
void emit_receiver(GuestProgram& g) {
  g.init_cpu();
  g.mov(rbx, rdi);
  g.shl(rbx, 6);
  g.enable_hv_hypercalls(kIpilabGuestOsId);
  g.mov(ecx, kHvMsrVpIndex);
  g.rdmsr();
  g.shl(rdx, 32);
  g.or_(rax, rdx);
  g.mov(qword[r15 + rbx + disp32(offsetof(SharedArea, vp_index))], rax);
  g.mov(qword[r15 + rbx + disp32(offsetof(SharedArea, ready))], 1);
  {
    Xbyak::Label loop, out;
    g.L(loop);
    g.cli();
    g.cmp(qword[r15 + disp32(offsetof(SharedArea, stop))], 0);
    g.jne(out);
    g.sti();
    g.hlt();
    g.jmp(loop);
    g.L(out);
  }
}

// One case on the sender: the input page, the registers, the call, the status check, then the wait
// for the expected deliveries (bounded) and a little longer for extra ones.
void emit_case(GuestProgram& g, const Case& c, std::size_t i, std::uint64_t cum1, std::uint64_t cum2) {
  g.mov(rdi, kHcallGpa);
  g.xor_(eax, eax);
  g.mov(ecx, 512);
  g.rep();
  g.stosq();
  for (std::size_t q = 0; q < c.input.size(); ++q) {
    g.mov(rax, c.input[q]);
    g.mov(rdi, kHcallGpa + 8 * q);
    g.mov(qword[rdi], rax);
  }
  if (c.load_xmm) emit_load_xmm(g, c.xmm);
  g.mov(rcx, c.rcx);
  g.mov(rdx, c.rdx);
  g.mov(r8, c.r8);
  g.mov(rax, kHypercallPageGpa);
  g.call(rax);
  g.movzx(eax, ax);
  g.mov(qword[r15 + disp32(offsetof(SharedArea, status) + i * sizeof(Line))], rax);
  g.check_eq(rax, c.expected_status, 100 + i);
  // Wait for the expected counts (bounded), then a little longer for extra deliveries.
  Xbyak::Label wait, settled, settle;
  g.rdtsc_ordered();
  g.mov(r12, rax);
  g.L(wait);
  g.mov(r11, cum1);
  g.cmp(qword[r15 + disp32(offsetof(SharedArea, irqs) + 1 * sizeof(Line))], r11);
  Xbyak::Label not_yet;
  g.jne(not_yet);
  g.mov(r11, cum2);
  g.cmp(qword[r15 + disp32(offsetof(SharedArea, irqs) + 2 * sizeof(Line))], r11);
  g.je(settled);
  g.L(not_yet);
  g.rdtsc_ordered();
  g.sub(rax, r12);
  g.cmp(rax, qword[r15 + disp32(offsetof(SharedArea, param) + 16)]);
  g.jb(wait);
  g.L(settled);
  g.rdtsc_ordered();
  g.mov(r12, rax);
  g.L(settle);
  g.rdtsc_ordered();
  g.sub(rax, r12);
  g.cmp(rax, qword[r15 + disp32(offsetof(SharedArea, param) + 24)]);
  g.jb(settle);
  g.mov(rdi, i);
  g.ucall(UcallCmd::Sync);
}

// Wake both receivers so they see `stop` (a valid call, not counted by the host checks).
void emit_wake_receivers(GuestProgram& g) {
  g.mov(rcx, ctl(hv::HVCALL_SEND_IPI, true));
  g.mov(rdx, kVec);
  g.mov(r8, (1ull << 2));
  g.mov(rax, kHypercallPageGpa);
  g.call(rax);
  g.mov(rcx, ctl(hv::HVCALL_SEND_IPI_EX, false, 2));
  g.mov(rdi, kHcallGpa);
  g.mov(qword[rdi], kVec);
  g.mov(qword[rdi + 8], 0);
  g.mov(qword[rdi + 16], 0x3);
  g.mov(qword[rdi + 24], 1 << 2);
  g.mov(qword[rdi + 32], 1 << 1);
  g.mov(rdx, kHcallGpa);
  g.mov(r8, kHcallGpa + 4096);
  g.mov(rax, kHypercallPageGpa);
  g.call(rax);
}

}  // namespace

std::vector<HvCaseResult> run_hyperv_ipi_cases() {
  const std::vector<Case> cs = cases();
  VmConfig vc;
  vc.vcpus = 3;
  vc.signature = HypervisorSignature::HyperV;
  vc.user_msrs = HypervVmm::trapped_msrs();
  vc.host_pus = {0, 1, 1};
  vc.timeout = std::chrono::milliseconds(20000);
  Vm vm(vc);
  hv::PartitionConfig pc;
  pc.vp_index_of_vcpu = {0, 2, 65};
  HypervVmm hvm(pc, {0, 1, 2});
  vm.set_exit_handler(&hvm);
  SharedArea& sh = vm.shared();
  const std::uint64_t khz = vm.tsc_khz();
  // Up to 2 s for the expected deliveries (the wait ends as soon as they are in; on a loaded host a
  // receiver vCPU thread can go unscheduled for tens of ms, which a 20 ms bound mistook for a
  // missing delivery).
  sh.param[2] = 2000 * khz;
  sh.param[3] = khz / 5;        // 0.2 ms: then catch extra deliveries

  GuestProgram g(3);
  Xbyak::Label handler, sender, receiver;
  g.L(handler);  // count per vCPU, EOI
  emit_counting_handler(g, handler);
  g.L(receiver);
  emit_receiver(g);
  g.done();

  g.L(sender);
  g.init_cpu();
  g.enable_hv_hypercalls(kIpilabGuestOsId);
  for (unsigned r : {1u, 2u}) {
    Xbyak::Label w;
    g.L(w);
    g.pause();
    g.cmp(qword[r15 + disp32(offsetof(SharedArea, ready) + r * sizeof(Line))], 0);
    g.je(w);
  }
  std::uint64_t cum1 = 0, cum2 = 0;
  std::vector<HvCaseResult> results;
  for (std::size_t i = 0; i < cs.size(); ++i) {
    const Case& c = cs[i];
    cum1 += c.d1;
    cum2 += c.d2;
    results.push_back({c.name, c.expected_status, 0, cum1, cum2, 0, 0});
    emit_case(g, c, i, cum1, cum2);
  }
  g.mov(qword[r15 + disp32(offsetof(SharedArea, stop))], 1);
  emit_wake_receivers(g);
  g.done();

  g.set_entry(0, sender);
  g.set_entry(1, receiver);
  g.set_entry(2, receiver);
  vm.load(g.image());
  vm.set_sync_handler([&](unsigned vcpu, std::uint64_t stage) {
    if (vcpu != 0 || stage >= results.size()) throw std::runtime_error("unexpected sync");
    HvCaseResult& r = results[stage];
    r.status = static_cast<std::uint16_t>(sh.status[stage].v);
    r.r1 = sh.irqs[1].v;
    r.r2 = sh.irqs[2].v;
    if (!r.passed())
      throw std::runtime_error(fmt::format("case {} ({}): status {:#x} (expected {:#x}), R1 {} (expected {}), R2 {} "
                                           "(expected {})", stage, r.name, r.status, r.expected_status, r.r1,
                                           r.expected_r1, r.r2, r.expected_r2));
  });
  vm.run();
  if (sh.vp_index[1].v != 2 || sh.vp_index[2].v != 65)
    throw std::runtime_error(fmt::format("receivers read VP indices {} and {}, expected 2 and 65",
                                         sh.vp_index[1].v, sh.vp_index[2].v));
  return results;
}

bool run_hyperv_xmm_without_cpuid_gets_ud() {
  VmConfig vc;
  vc.vcpus = 2;
  vc.signature = HypervisorSignature::HyperV;
  vc.hyperv_xmm_input = false;
  vc.user_msrs = HypervVmm::trapped_msrs();
  vc.timeout = std::chrono::milliseconds(5000);
  Vm vm(vc);
  hv::PartitionConfig pc = hv::PartitionConfig::identity(2);
  pc.enforce_cpuid = true;
  pc.xmm_input_available = false;
  HypervVmm hvm(pc, {0, 1});
  vm.set_exit_handler(&hvm);
  GuestProgram g(2);
  Xbyak::Label ud, e0, e1;
  g.L(ud);  // #UD handler: status[0] = 1, resume (at the page's RET, which returns to the caller)
  g.push(rax);
  g.mov(rax, kSharedGpa);
  g.mov(qword[rax + disp32(offsetof(SharedArea, status))], 1);
  g.pop(rax);
  g.iretq();
  g.set_vector(6, ud);
  g.L(e0);
  g.init_cpu();
  g.enable_hv_hypercalls(kIpilabGuestOsId);
  emit_load_xmm(g, {{{0x1, 1ull << 1}}});
  g.mov(rcx, ctl(hv::HVCALL_SEND_IPI_EX, true, 1));
  g.mov(rdx, kVec);
  g.xor_(r8d, r8d);
  g.mov(rax, 0x5A5A);  // must survive: #UD leaves RAX untouched
  g.mov(r11, kHypercallPageGpa);
  g.call(r11);
  g.mov(qword[r15 + disp32(offsetof(SharedArea, status) + sizeof(Line))], rax);
  g.done();
  g.L(e1);
  g.done();
  g.set_entry(0, e0);
  g.set_entry(1, e1);
  vm.load(g.image());
  vm.run();
  return vm.shared().status[0].v == 1 && vm.shared().status[1].v == 0x5A5A && hvm.stats().injected_ud == 1;
}

}  // namespace ipilab::kvm
