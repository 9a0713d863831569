// ipilab/kvm/guest_program.h — guest code generated at run time with Xbyak (see docs/kvm-harness.md).
//
// A GuestProgram is an Xbyak code generator whose output is loaded at kCodeGpa (GVA == GPA). It brings
// the pieces every ipilab guest needs: IDT stubs that report exceptions and unexpected interrupts to
// the VMM through the ucall port, x2APIC enable and EOI, ucalls, and TSC reads. Benchmarks and tests
// (ipi_bench.cpp, hyperv_cases.cpp, tests/kvm/) emit their own code on top and register entry points
// and interrupt handlers, then call image().
//
// Register conventions at a vCPU's entry point: rdi = vCPU index, rsi = x2APIC ID, rsp = top of the
// vCPU's 64 KiB stack, IF = 0. Generated code keeps r15 = kSharedGpa after init_cpu().
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include <xbyak/xbyak.h>

#include "kvm/guest_layout.h"
#include "kvm/vm.h"

namespace ipilab::kvm {

/// MSR numbers used by guest code (Intel SDM vol. 3 §11.12 x2APIC; TLFS for the Hyper-V ones). The
/// ICR's is x86::kMsrX2apicIcr: the guest's sends are the x86 models' MSR writes (x86/guest_send.h).
inline constexpr std::uint32_t kMsrApicBase = 0x1B;
inline constexpr std::uint32_t kMsrX2apicId = 0x802;
inline constexpr std::uint32_t kMsrX2apicEoi = 0x80B;
inline constexpr std::uint32_t kMsrX2apicSvr = 0x80F;
inline constexpr std::uint32_t kHvMsrGuestOsId = 0x40000000;
inline constexpr std::uint32_t kHvMsrHypercall = 0x40000001;
inline constexpr std::uint32_t kHvMsrVpIndex = 0x40000002;

class GuestProgram : public Xbyak::CodeGenerator {
 public:
  explicit GuestProgram(unsigned vcpus);

  /// Guest virtual address of a defined label.
  std::uint64_t gva(const Xbyak::Label& l) const;
  /// Guest virtual address of the next instruction to be emitted.
  std::uint64_t here() const { return kCodeGpa + getSize(); }

  /// vCPU `vcpu` starts at `entry` (must be defined before image()).
  void set_entry(unsigned vcpu, const Xbyak::Label& entry);
  /// IDT vector `vector` (0..255) runs `handler` (an interrupt gate: IF cleared on entry). By default
  /// exceptions 0..31 report to the VMM (GuestError) and other vectors report "unexpected interrupt".
  void set_vector(unsigned vector, const Xbyak::Label& handler);

  // ---- inline snippets --------------------------------------------------------------------------
  /// Per-CPU setup: r15 = kSharedGpa, x2APIC on (IA32_APIC_BASE bits 10-11), APIC software-enabled
  /// (SVR = 0x1FF). Clobbers rax, rcx, rdx.
  void init_cpu();
  /// `out kUcallPort, eax` with eax = cmd. Arguments go in rdi, rsi, rdx beforehand.
  void ucall(UcallCmd cmd);
  /// cli; hlt; in a loop: where a vCPU stops for good after reporting.
  void halt_forever();
  /// x2APIC EOI (WRMSR 0x80B = 0). Clobbers rax, rcx, rdx.
  void eoi();
  /// An interrupt handler's common start: EOI, then ++SharedArea::irqs[this vCPU]. Leaves rax =
  /// kSharedGpa, rcx = the vCPU's offset in irqs' lines (index * 64). Clobbers rax, rcx, rdx.
  void eoi_and_count_irq();
  /// Enables Hyper-V hypercalls (TLFS "Establishing the Hypercall Interface"): HV_X64_MSR_GUEST_OS_ID
  /// = `guest_os_id`, then HV_X64_MSR_HYPERCALL = the page at kHypercallPageGpa with its enable bit.
  /// Clobbers rax, rcx, rdx.
  void enable_hv_hypercalls(std::uint64_t guest_os_id);
  /// rax = TSC, serialized with LFENCE on both sides. Clobbers rdx.
  void rdtsc_ordered();
  /// rax = this vCPU's index, derived from rsp (each vCPU has its own 64 KiB stack).
  void vcpu_index_from_rsp(const Xbyak::Reg64& dst);
  /// If `reg` != `expected`: Fail ucall with rdi = check_id, rsi = reg, rdx = expected.
  void check_eq(const Xbyak::Reg64& reg, std::uint64_t expected, std::uint64_t check_id);
  /// IRETQ (REX.W CF); Xbyak 6.68 has no mnemonic for it.
  void iretq() { db(0x48); db(0xCF); }
  /// VMCALL (0F 01 C1, Intel); Xbyak 6.68 has no mnemonic for it.
  void vmcall() { db(0x0F); db(0x01); db(0xC1); }
  /// LIDT [rax] (0F 01 /3); Xbyak 6.68 has no mnemonic for it.
  void lidt_rax() { db(0x0F); db(0x01); db(0x18); }
  /// Done ucall, then `cli; hlt` forever (the VMM stops the vCPU at Done anyway).
  void done();

  /// The program: code bytes, per-vCPU entry points and the IDT.
  GuestImage image();

 private:
  void emit_stubs();
  unsigned vcpus_;
  std::array<Xbyak::Label, 256> stub_;
  // Copies of the caller's labels (an Xbyak Label copy refers to the same position).
  std::array<Xbyak::Label, 256> vec_;
  std::array<bool, 256> has_vec_{};
  std::array<Xbyak::Label, kMaxVcpus> entry_;
  std::array<bool, kMaxVcpus> has_entry_{};
};

/// A field offset (offsetof) as the 32-bit displacement of an Xbyak memory operand.
constexpr std::uint32_t disp32(std::size_t offset) { return static_cast<std::uint32_t>(offset); }

}  // namespace ipilab::kvm
