// ipilab/kvm/vm.h — a small KVM virtual machine for micro-benchmarks (KVM API, no QEMU).
//
// Shape: N vCPUs (default 2), each run by one host thread pinned with hwloc;
// the in-kernel irqchip (KVM_CREATE_IRQCHIP) with x2APIC advertised in CPUID; 64-bit long mode set up
// by the host (GDT, IDT, identity-mapped first 1 GiB with 2 MiB pages, see guest_layout.h); guest code
// generated at run time with Xbyak (see guest_program.h and docs/kvm-harness.md).
//
// Exits: the guest talks to the VMM only through the ucall port (kUcallPort: stage sync, done,
// assertion failures, exceptions) and, for user-space emulated devices, through the I/O ports and MSRs
// a UserExitHandler claims. Every return of KVM_RUN to user space is counted per vCPU and per reason
// (RunReport::exits) so a benchmark can prove its timed loop took none.
//
// Errors: no /dev/kvm or no permission -> UnavailableError (the CLI exits 3). A guest that faults
// (exception vector reported by the IDT stub), triple-faults (KVM_EXIT_SHUTDOWN), fails VM entry,
// touches unbacked memory, or does not finish within VmConfig::timeout -> GuestError naming the vCPU,
// the exit reason and RIP; all vCPU threads are stopped and joined first, and every fd and mapping is
// released by the destructors (RAII), so a failed VM leaks nothing.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "kvm/fd.h"
#include "kvm/guest_layout.h"

struct kvm_regs;
struct kvm_fpu;
struct kvm_run;

namespace ipilab::kvm {

/// A guest that crashed, hung or broke a guest-side assertion. what() is one line naming the vCPU, the
/// exit reason and RIP.
class GuestError : public std::runtime_error {
 public:
  GuestError(unsigned vcpu, std::string exit_reason, std::uint64_t rip, const std::string& detail);
  unsigned vcpu() const noexcept { return vcpu_; }
  const std::string& exit_reason() const noexcept { return exit_reason_; }
  std::uint64_t rip() const noexcept { return rip_; }

 private:
  unsigned vcpu_;
  std::string exit_reason_;
  std::uint64_t rip_;
};

/// What the guest sees in CPUID leaves 0x40000000 and up.
enum class HypervisorSignature {
  Kvm,     ///< KVM's own leaves ("KVMKVMKVM"), with KVM_FEATURE_PV_SEND_IPI (bit 11 of 0x40000001.EAX)
  HyperV,  ///< Hyper-V leaves ("Microsoft Hv", "Hv#1") emulated in user space, see hyperv_vmm.h
};

struct VmConfig {
  unsigned vcpus = 2;                 ///< number of vCPUs (1..kMaxVcpus)
  /// KVM vCPU ids (= initial x2APIC IDs); empty means 0..vcpus-1.
  std::vector<unsigned> vcpu_ids;
  /// Host PU (hwloc logical index) for vCPU i is host_pus[i % size]; empty means i % (number of PUs).
  std::vector<unsigned> host_pus;
  HypervisorSignature signature = HypervisorSignature::Kvm;
  bool hyperv_xmm_input = true;       ///< Hyper-V: CPUID 0x40000003.EDX bit 4 (XMM fast input)
  std::chrono::milliseconds timeout{10000};  ///< whole run() bound; a hung guest is stopped after it
  /// MSRs (index ranges [first, last]) to trap to the UserExitHandler with KVM_X86_SET_MSR_FILTER.
  std::vector<std::pair<std::uint32_t, std::uint32_t>> user_msrs;
};

/// A vCPU's view given to UserExitHandler callbacks (runs on that vCPU's thread).
class VcpuContext {
 public:
  virtual ~VcpuContext() = default;
  virtual unsigned index() const = 0;    ///< 0..vcpus-1
  virtual unsigned apic_id() const = 0;  ///< initial x2APIC ID (= KVM vCPU id)
  virtual kvm_regs regs() const = 0;
  virtual void set_regs(const kvm_regs& r) = 0;
  virtual kvm_fpu fpu() const = 0;       ///< XMM0..15 live in kvm_fpu::xmm
  /// Guest memory [gpa, gpa+len) or nullptr when any byte of it is not backed.
  virtual std::uint8_t* guest_memory(std::uint64_t gpa, std::uint64_t len) = 0;
  /// Queues exception `vector` (no error code) for delivery at the next KVM_RUN (KVM_SET_VCPU_EVENTS).
  virtual void inject_exception(std::uint8_t vector) = 0;
  /// Injects a fixed, edge-triggered interrupt to x2APIC ID `apic_id` with KVM_SIGNAL_MSI.
  virtual void signal_msi(std::uint32_t apic_id, std::uint8_t vector) = 0;
};

/// Device and MSR emulation in user space. Callbacks run on the exiting vCPU's thread, possibly on
/// several threads at once: implementations lock their own state. Throwing stops the VM (GuestError).
class UserExitHandler {
 public:
  virtual ~UserExitHandler() = default;
  /// RDMSR of a trapped MSR: the value, or nullopt to inject #GP.
  virtual std::optional<std::uint64_t> read_msr(VcpuContext& vcpu, std::uint32_t msr) = 0;
  /// WRMSR of a trapped MSR: false injects #GP.
  virtual bool write_msr(VcpuContext& vcpu, std::uint32_t msr, std::uint64_t value) = 0;
  /// OUT to a port other than kUcallPort: return false if the port is not yours (-> GuestError).
  virtual bool port_out(VcpuContext& vcpu, std::uint16_t port, std::uint32_t value) = 0;
};

/// Exit counts of one vCPU: reason name ("io:ucall", "io:0x1010", "x86_rdmsr", ...) -> count.
using ExitCounts = std::map<std::string, std::uint64_t>;

struct RunReport {
  std::vector<ExitCounts> exits;   ///< per vCPU index, user-space exits seen by the VMM
  std::chrono::nanoseconds wall{};
};

/// Guest code and its entry points, made by GuestProgram (guest_program.h).
struct GuestImage {
  std::vector<std::uint8_t> code;               ///< loaded at kCodeGpa
  std::vector<std::uint64_t> entry;             ///< per vCPU index: entry RIP (GVA)
  std::vector<std::uint64_t> idt;               ///< 256 handler GVAs (0 = not present)
};

/// Opens /dev/kvm and checks the capabilities ipilab's VMM needs. Throws UnavailableError with one
/// line naming what is missing (no device, EACCES, no in-kernel irqchip, no user-space MSR filter...).
void check_kvm_available(bool need_msr_filter = false);

class Vm {
 public:
  /// Creates the VM, its memory and vCPUs. Throws UnavailableError when KVM cannot be used.
  explicit Vm(VmConfig config);
  ~Vm();
  Vm(const Vm&) = delete;
  Vm& operator=(const Vm&) = delete;

  const VmConfig& config() const noexcept { return config_; }
  /// Host pointer to guest memory [gpa, gpa + len); throws std::out_of_range if not backed.
  std::uint8_t* memory(std::uint64_t gpa, std::uint64_t len);
  SharedArea& shared() { return *reinterpret_cast<SharedArea*>(memory(kSharedGpa, sizeof(SharedArea))); }
  /// TSC frequency the guest sees, kHz (KVM_GET_TSC_KHZ).
  std::uint64_t tsc_khz() const;
  /// Host PU (hwloc logical index) vCPU i is pinned to.
  unsigned host_pu(unsigned vcpu) const;

  void load(const GuestImage& image);
  void set_exit_handler(UserExitHandler* handler) { handler_ = handler; }
  /// Called on the vCPU's thread at each Sync ucall (stage in rdi). Throwing stops the VM.
  void set_sync_handler(std::function<void(unsigned vcpu, std::uint64_t stage)> fn) { on_sync_ = std::move(fn); }

  /// Exit counts of vCPU `vcpu` so far. Safe only from that vCPU's sync handler or after run().
  const ExitCounts& exits_so_far(unsigned vcpu) const;

  /// Runs all vCPUs until each reports Done. Throws GuestError on any guest failure or timeout.
  /// May be called once per load().
  RunReport run();

  struct Vcpu;  // defined in vm.cpp

 private:
  VmConfig config_;
  Fd kvm_;
  Fd vm_;
  Mapping mem_;
  std::vector<std::unique_ptr<Vcpu>> vcpus_;
  UserExitHandler* handler_ = nullptr;
  std::function<void(unsigned, std::uint64_t)> on_sync_;
  std::vector<unsigned> pus_;
};

}  // namespace ipilab::kvm
