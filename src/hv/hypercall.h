// ipilab/hv/hypercall.h — the boundary between a Hyper-V guest and the hypervisor: the register
// state at the hypercall instruction and the guest memory the hypervisor may read.
//
// The guest side (guest_policy.h) produces a HypercallRegs (+ the bytes it wrote into its input page);
// the host side (partition.h) consumes exactly this. The KVM harness fills HypercallRegs from a real
// vCPU's registers. Sources: TLFS "Hypercall Interface" register conventions; KVM kvm_hv_hypercall
// (arch/x86/kvm/hyperv.c), which reads them.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "hv/abi.h"

namespace ipilab::hv {

/// Register state of the calling VP at VMCALL/VMMCALL (64-bit convention).
struct HypercallRegs {
  std::uint64_t rcx = 0;  ///< control word (abi.h encode_control)
  std::uint64_t rdx = 0;  ///< slow: input GPA; fast: input bytes 0-7
  std::uint64_t r8 = 0;   ///< slow: output GPA; fast: input bytes 8-15
  std::array<std::array<std::uint64_t, 2>, HV_HYPERCALL_MAX_XMM_REGISTERS> xmm{};  ///< {lo, hi}
  unsigned cpl = 0;        ///< current privilege level; hypercalls are legal only at CPL0 (TLFS)
  bool protected_mode = true;  ///< CR0.PE; false => #UD (kvm_hv_hypercall)
  friend bool operator==(const HypercallRegs&, const HypercallRegs&) = default;
};

/// Guest physical memory as seen by the hypervisor. `read` copies [gpa, gpa + out.size()) or returns
/// false when any byte of it is not backed (the hypervisor then fails the call; never reads out of
/// bounds). Implementations must handle gpa + size overflow.
class GuestMemory {
 public:
  virtual ~GuestMemory() = default;
  virtual bool read(std::uint64_t gpa, std::span<std::uint8_t> out) const = 0;
};

/// A contiguous region of guest memory [base_gpa, base_gpa + bytes.size()).
class FlatGuestMemory final : public GuestMemory {
 public:
  FlatGuestMemory() = default;
  FlatGuestMemory(std::uint64_t base_gpa, std::vector<std::uint8_t> bytes)
      : base_gpa_(base_gpa), bytes_(std::move(bytes)) {}
  bool read(std::uint64_t gpa, std::span<std::uint8_t> out) const override;
  /// Writes `data` at `gpa`; returns false (writing nothing) when it does not fit the region.
  bool write(std::uint64_t gpa, std::span<const std::uint8_t> data);
  std::uint64_t base_gpa() const noexcept { return base_gpa_; }
  std::size_t size() const noexcept { return bytes_.size(); }

 private:
  std::uint64_t base_gpa_ = 0;
  std::vector<std::uint8_t> bytes_;
};

}  // namespace ipilab::hv
