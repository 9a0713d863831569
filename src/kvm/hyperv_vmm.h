// ipilab/kvm/hyperv_vmm.h — Hyper-V enlightened IPIs emulated in ipilab's VMM, in user space.
//
// This host's KVM has no Hyper-V emulation for IPIs (KVM_CAP_HYPERV = 0 here, and ipilab keeps one
// code path shared with the simulator), so the VMM plays the hypervisor:
//   - CPUID 0x40000000..0x40000005 carry a Hyper-V signature (VmConfig::signature = HyperV):
//     CLUSTER_IPI_RECOMMENDED, EX_PROCESSOR_MASKS_RECOMMENDED, the hypercall and VP_INDEX MSRs and
//     (optionally) XMM fast input.
//   - HV_X64_MSR_GUEST_OS_ID (0x40000000), HV_X64_MSR_HYPERCALL (0x40000001) and HV_X64_MSR_VP_INDEX
//     (0x40000002) are trapped to user space with KVM_CAP_X86_USER_SPACE_MSR + KVM_X86_SET_MSR_FILTER.
//     A guest write of VP_INDEX gets #GP (KVM kvm_hv_set_msr: host-writable only).
//   - Enabling the hypercall page (HYPERCALL bit 0, GPFN in bits 63:12) makes the VMM write a page whose
//     code is `out 0xE4, eax; ret` (kHvHypercallPort). Why not VMCALL: KVM handles VMCALL itself and,
//     without its own Hyper-V emulation enabled, answers with its PV hypercall ABI (-KVM_ENOSYS for an
//     unknown RAX) without ever exiting to user space; an I/O port exit always reaches the VMM.
//   - At the port exit the VMM reads RCX/RDX/R8 (KVM_GET_REGS) and XMM0..5 (KVM_GET_FPU), runs
//     hv::Partition::execute (src/hv/partition.h, KVM's validation order), writes RAX, or injects #UD
//     (KVM_SET_VCPU_EVENTS) when the partition says so, and delivers each IPI with KVM_SIGNAL_MSI to the
//     target vCPU's x2APIC ID (fixed, edge, physical).
//   - Before the guest has written a nonzero GUEST_OS_ID, KVM would not route the call to Hyper-V; we
//     answer like KVM's own hypercall path for an unknown call: RAX = -KVM_ENOSYS (-1000).
// Cost: every Hyper-V hypercall is one exit to user space (two KVM_RUN transitions plus GET_REGS,
// GET_FPU, SET_REGS and one SIGNAL_MSI per target) — an honest but higher cost than an in-kernel
// implementation; `ipilab measure` says so next to the figures.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

#include "hv/abi.h"
#include "hv/hypercall.h"
#include "hv/partition.h"
#include "kvm/vm.h"

namespace ipilab::kvm {

/// What the Linux guest (arch/x86/hyperv/hv_apic.c, __send_ipi_one as merged in v5.5 (commit b264f57fde0c, the v3 posting), and
/// __send_ipi_mask_ex) issues to send `vector` to the VP index `target_vp`: the control word in RCX,
/// RDX/R8 (fast: the input; slow: the input GPA `input_gpa` and the output GPA input_gpa + 4 KiB), and
/// for slow calls the input bytes the guest writes to `input_gpa`.
/// Decision (hv_apic.c __send_ipi_one, __send_ipi_mask_ex): VP < 64 -> fast
/// HvCallSendSyntheticClusterIpi with BIT(vp); otherwise, or with `force_ex`,
/// HvCallSendSyntheticClusterIpiEx in memory, format SPARSE_4K, valid_bank_mask = GENMASK(vp / 64, 0)
/// (Linux's cpumask_to_vpset fills every bank up to the last), varhead = vp / 64 + 1.
struct HvSendPlan {
  hv::HypercallRegs regs;
  std::vector<std::uint8_t> input;  ///< empty for fast calls
};
HvSendPlan linux_hv_send_ipi_one(std::uint32_t target_vp, std::uint8_t vector, bool force_ex,
                                 std::uint64_t input_gpa);

/// The Hyper-V guest OS ID ipilab's guests write (Linux's HV_LINUX_VENDOR_ID 0x8100 << 48 style value).
inline constexpr std::uint64_t kIpilabGuestOsId = 0x8100000000000000ull | 0x0006120000000000ull;

class HypervVmm final : public UserExitHandler {
 public:
  /// `partition` holds the VP-index map; `apic_id_of_vcpu[i]` is vCPU i's x2APIC ID (KVM vCPU id).
  HypervVmm(hv::PartitionConfig partition, std::vector<std::uint32_t> apic_id_of_vcpu);

  /// The MSR range to give VmConfig::user_msrs: HV_X64_MSR_GUEST_OS_ID .. HV_X64_MSR_VP_INDEX.
  static std::vector<std::pair<std::uint32_t, std::uint32_t>> trapped_msrs();

  std::optional<std::uint64_t> read_msr(VcpuContext& vcpu, std::uint32_t msr) override;
  bool write_msr(VcpuContext& vcpu, std::uint32_t msr, std::uint64_t value) override;
  bool port_out(VcpuContext& vcpu, std::uint16_t port, std::uint32_t value) override;

  const hv::Partition& partition() const { return partition_; }

  /// Statistics (thread-safe copies).
  struct Stats {
    std::uint64_t hypercalls = 0;                    ///< port exits executed
    std::uint64_t injected_ud = 0;
    std::uint64_t before_guest_os_id = 0;            ///< answered -KVM_ENOSYS
    std::map<std::uint16_t, std::uint64_t> by_status;  ///< HV_STATUS -> count
    std::uint64_t msis = 0;                          ///< KVM_SIGNAL_MSI calls
  };
  Stats stats() const;

 private:
  hv::Partition partition_;
  std::vector<std::uint32_t> apic_id_of_vcpu_;
  mutable std::mutex mu_;
  std::uint64_t guest_os_id_ = 0;
  std::uint64_t hypercall_msr_ = 0;
  Stats stats_;
};

}  // namespace ipilab::kvm
