// ipilab/x86/guest_send.h — what one Linux guest IPI send does on x86: the exact MSR writes and KVM
// hypercalls it issues (each one a VM exit unless the hardware virtualizes it) and the guest-side
// work the simulator prices.
#pragma once

#include <cstdint>
#include <vector>

#include "x86/apic_icr.h"

namespace ipilab::x86 {

/// One WRMSR: x2APIC ICR (MSR 0x830, the full 64-bit value) or SELF IPI (MSR 0x83F, the vector).
struct MsrWrite {
  std::uint32_t msr = 0;
  std::uint64_t value = 0;
  friend bool operator==(const MsrWrite&, const MsrWrite&) = default;
};

/// One VMCALL/VMMCALL KVM_HC_SEND_IPI (RAX = 10): the four arguments in RBX, RCX, RDX, RSI.
/// a0 = bitmap bits 0..63, a1 = bitmap bits 64..127, a2 = min APIC ID (bit i names APIC ID min + i),
/// a3 = ICR low word (vector and delivery mode).
struct PvIpiHypercall {
  std::uint64_t a0 = 0;
  std::uint64_t a1 = 0;
  std::uint64_t a2 = 0;
  std::uint64_t a3 = 0;
  friend bool operator==(const PvIpiHypercall&, const PvIpiHypercall&) = default;
};

/// Guest-side work of one send, in counts (no time: the simulator prices these).
struct SendWork {
  std::uint32_t icr_writes = 0;              ///< WRMSR 0x830
  std::uint32_t self_ipi_writes = 0;         ///< WRMSR 0x83F
  std::uint32_t hypercalls = 0;              ///< KVM_HC_SEND_IPI calls
  std::uint32_t cpus_visited = 0;            ///< iterations of the outer for_each_cpu loop
  std::uint64_t cpumask_words_walked = 0;    ///< words read by find_next_bit / find_next_and_bit
  std::uint64_t cpumask_words_written = 0;   ///< words written by cpumask_copy / cpumask_andnot
  friend bool operator==(const SendWork&, const SendWork&) = default;
};

/// Everything one guest send does, in program order.
struct GuestSend {
  std::vector<MsrWrite> msr_writes;
  std::vector<PvIpiHypercall> hypercalls;
  /// xAPIC mode (guest_xapic.h): each IPI is the MMIO pair ICR2 (0x310, destination) then ICR
  /// (0x300, the write that sends), in program order.
  std::vector<XapicIcr> mmio_writes;
  SendWork work;
  /// Exits the send causes with APICv and no IPI virtualization (no IPIv/AVIC): one per WRMSR, per
  /// VMCALL and per xAPIC ICR write (an APIC-write exit; the ICR2 write is virtualised).
  std::uint32_t exits() const {
    return static_cast<std::uint32_t>(msr_writes.size() + hypercalls.size() + mmio_writes.size());
  }
};

}  // namespace ipilab::x86
