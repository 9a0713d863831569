// ipilab/kvm/hyperv_cases.h — the KVM selftest hyperv_ipi cases (tools/testing/selftests/kvm/x86/
// hyperv_ipi.c), the hyperv_features access stages (guest_test_hcalls_access) and extra validation
// cases read from KVM's kvm_hv_hypercall / kvm_hv_send_ipi, run as real guest code against ipilab's
// VMM and its user-space Hyper-V (hyperv_vmm.h -> hv::Partition).
//
// Setup (as in the hyperv_ipi selftest): three vCPUs — sender (vCPU 0, VP 0), R1 (vCPU 1, VP index
// 2), R2 (vCPU 2, VP index 65, in bank 1); the VP indices live in the partition and the guests read
// them back from HV_X64_MSR_VP_INDEX. Receivers loop on `sti; hlt`, count interrupts per vCPU in
// shared memory and EOI. The sender issues each call through the hypercall page, checks the returned
// HV_STATUS (low 16 bits) in the guest (a mismatch is a guest check failure naming the case), waits
// until the receivers' counts reach the expected totals (or 20 ms pass, then 0.2 ms more to catch
// extra deliveries), and syncs; the host asserts the exact counts at every sync.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ipilab::kvm {

struct HvCaseResult {
  std::string name;            ///< e.g. "selftest 5: Ex slow, valid_bank_mask 0x2 (VP 65)"
  std::uint16_t expected_status = 0;
  std::uint16_t status = 0;    ///< what the guest got (low 16 bits of RAX)
  std::uint64_t expected_r1 = 0, expected_r2 = 0;  ///< cumulative interrupt counts after the case
  std::uint64_t r1 = 0, r2 = 0;                    ///< counts seen at the sync
  bool passed() const { return status == expected_status && r1 == expected_r1 && r2 == expected_r2; }
};

/// Runs every case in one 3-vCPU VM. Returns one result per case (all of them when the guest ran to
/// the end). Throws UnavailableError without KVM or without KVM_CAP_X86_USER_SPACE_MSR / MSR filter;
/// GuestError when a guest check fails (the message names the case number) or a count is wrong.
std::vector<HvCaseResult> run_hyperv_ipi_cases();

/// The XMM gate (the analogue for SEND_IPI_EX of hyperv_features stages 17/18, which test it on a
/// flush call): with enforce-CPUID and no XMM-input CPUID bit, an XMM fast
/// HvCallSendSyntheticClusterIpiEx gets #UD. Returns true when the guest's #UD handler ran (and RAX
/// was left untouched), false when the call returned a status instead.
bool run_hyperv_xmm_without_cpuid_gets_ud();

}  // namespace ipilab::kvm
