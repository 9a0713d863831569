#include "kvm/hyperv_vmm.h"

#include <linux/kvm.h>
#include <sys/ioctl.h>

#include <cstring>
#include <stdexcept>

#include "kvm/guest_program.h"

namespace ipilab::kvm {

namespace {

class VcpuGuestMemory final : public hv::GuestMemory {
 public:
  explicit VcpuGuestMemory(VcpuContext& v) : v_(v) {}
  bool read(std::uint64_t gpa, std::span<std::uint8_t> out) const override {
    if (out.empty()) return true;
    const std::uint8_t* p = v_.guest_memory(gpa, out.size());
    if (p == nullptr) return false;
    std::memcpy(out.data(), p, out.size());
    return true;
  }

 private:
  VcpuContext& v_;
};

}  // namespace

HvSendPlan linux_hv_send_ipi_one(std::uint32_t target_vp, std::uint8_t vector, bool force_ex,
                                 std::uint64_t input_gpa) {
  HvSendPlan plan;
  if (target_vp < 64 && !force_ex) {
    const auto fast = hv::encode_send_ipi_fast({.vector = vector, .reserved = 0, .processor_mask = 1ull << target_vp});
    plan.regs.rcx = hv::encode_control({.call_code = hv::HVCALL_SEND_IPI, .fast = true, .var_header_qwords = 0,
                                        .rep_count = 0, .rep_start = 0, .reserved = 0});
    plan.regs.rdx = fast.rdx;
    plan.regs.r8 = fast.r8;
    return plan;
  }
  if (target_vp > hv::HV_MAX_VP_INDEX) throw std::invalid_argument("VP index above 4095 has no vpset");
  const unsigned nr_bank = target_vp / 64 + 1;
  hv::SendIpiExInput in;
  in.vector = vector;
  in.vp_set.format = hv::HV_GENERIC_SET_SPARSE_4K;
  in.vp_set.valid_bank_mask = nr_bank == 64 ? ~0ull : ((1ull << nr_bank) - 1);
  in.vp_set.bank_contents.assign(nr_bank, 0);
  in.vp_set.bank_contents[target_vp / 64] = 1ull << (target_vp % 64);
  plan.input = hv::encode_send_ipi_ex(in);
  plan.regs.rcx = hv::encode_control({.call_code = hv::HVCALL_SEND_IPI_EX, .fast = false,
                                      .var_header_qwords = static_cast<std::uint16_t>(nr_bank), .rep_count = 0,
                                      .rep_start = 0, .reserved = 0});
  plan.regs.rdx = input_gpa;
  plan.regs.r8 = input_gpa + 4096;
  return plan;
}

HypervVmm::HypervVmm(hv::PartitionConfig partition, std::vector<std::uint32_t> apic_id_of_vcpu)
    : partition_(std::move(partition)), apic_id_of_vcpu_(std::move(apic_id_of_vcpu)) {
  if (apic_id_of_vcpu_.size() != partition_.vcpu_count())
    throw std::invalid_argument("HypervVmm: one APIC ID per partition vCPU");
}

std::vector<std::pair<std::uint32_t, std::uint32_t>> HypervVmm::trapped_msrs() {
  return {{kHvMsrGuestOsId, kHvMsrVpIndex}};
}

std::optional<std::uint64_t> HypervVmm::read_msr(VcpuContext& vcpu, std::uint32_t msr) {
  std::lock_guard lk(mu_);
  switch (msr) {
    case kHvMsrGuestOsId: return guest_os_id_;
    case kHvMsrHypercall: return hypercall_msr_;
    case kHvMsrVpIndex: return partition_.vp_index(vcpu.index());
    default: return std::nullopt;
  }
}

bool HypervVmm::write_msr(VcpuContext& vcpu, std::uint32_t msr, std::uint64_t value) {
  std::lock_guard lk(mu_);
  switch (msr) {
    case kHvMsrGuestOsId:
      guest_os_id_ = value;
      return true;
    case kHvMsrHypercall: {
      if (value & 1) {
        // Hypercall page: `out 0xE4, eax; ret`, then INT3 filler.
        std::uint8_t* page = vcpu.guest_memory(value & ~0xFFFull, 4096);
        if (page == nullptr) return false;  // GPFN outside guest memory: #GP
        std::memset(page, 0xCC, 4096);
        page[0] = 0xE7;
        page[1] = static_cast<std::uint8_t>(kHvHypercallPort);
        page[2] = 0xC3;
      }
      hypercall_msr_ = value;
      return true;
    }
    case kHvMsrVpIndex:
      return false;  // host-writable only (KVM: the guest gets #GP)
    default:
      return false;
  }
}

bool HypervVmm::port_out(VcpuContext& vcpu, std::uint16_t port, std::uint32_t) {
  if (port != kHvHypercallPort) return false;
  kvm_regs r = vcpu.regs();
  {
    std::lock_guard lk(mu_);
    ++stats_.hypercalls;
    if (guest_os_id_ == 0) {
      ++stats_.before_guest_os_id;
      r.rax = static_cast<std::uint64_t>(-1000);  // -KVM_ENOSYS
      vcpu.set_regs(r);
      return true;
    }
  }
  hv::HypercallRegs h;
  h.rcx = r.rcx;
  h.rdx = r.rdx;
  h.r8 = r.r8;
  h.cpl = 0;               // our guests run at CPL0 in long mode (the page is reached only from there)
  h.protected_mode = true;
  // XMM input only where a fast call can carry it, as KVM reads it (arch/x86/kvm/hyperv.c,
  // is_xmm_fast_hypercall()): HvCallSendSyntheticClusterIpi's fast input is RDX and R8 alone (TLFS), so
  // its exit skips the KVM_GET_FPU ioctl; every other fast call still gets the registers.
  const hv::HypercallControl control = hv::decode_control(r.rcx);
  if (control.fast && control.call_code != hv::HVCALL_SEND_IPI) {
    const kvm_fpu f = vcpu.fpu();
    for (std::size_t i = 0; i < hv::HV_HYPERCALL_MAX_XMM_REGISTERS; ++i) {
      std::memcpy(&h.xmm[i][0], &f.xmm[i][0], 8);
      std::memcpy(&h.xmm[i][1], &f.xmm[i][8], 8);
    }
  }
  VcpuGuestMemory mem(vcpu);
  const hv::HypercallOutcome out = partition_.execute(vcpu.index(), h, mem);
  if (out.inject_ud) {
    vcpu.inject_exception(6);  // #UD
  } else {
    r.rax = out.rax;
    vcpu.set_regs(r);
  }
  for (const hv::Delivery& d : out.delivered)
    vcpu.signal_msi(apic_id_of_vcpu_.at(d.vcpu), static_cast<std::uint8_t>(d.vector));
  std::lock_guard lk(mu_);
  if (out.inject_ud) ++stats_.injected_ud;
  else ++stats_.by_status[out.status_code()];
  stats_.msis += out.delivered.size();
  return true;
}

HypervVmm::Stats HypervVmm::stats() const {
  std::lock_guard lk(mu_);
  return stats_;
}

}  // namespace ipilab::kvm
