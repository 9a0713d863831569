// ipilab/topology/vm.h — a VM placed on a host: vCPUs, pinning, VP indexes, guest NR_CPUS, state.
//
// Terms: vCPU i is the guest's CPU number i (Linux's smp_processor_id() in the guest). Its VP index
// is the Hyper-V virtual processor index the guest must use in hypercalls (TLFS; Linux keeps it in
// hv_vp_index[cpu]); identity by default, overridable per CPU to model hosts where they differ
// (the "CPU below 64 with VP index >= 64" case of __send_ipi_one's fast path, Linux commit
// b264f57fde0c). nr_cpus is the guest kernel's CONFIG_NR_CPUS,
// which sizes every cpumask the guest walks (8192 on distribution kernels). Each vCPU has a state:
// what it does when it has nothing to run (the simulator's idle state, workload/vm_run.h):
//   running  spinning in guest code (micro-bench's cpu_relax loop): an interrupt is injected
//   halted   idle in HLT/WFI: an interrupt wakes it (vcpu.halt_wakeup), then it halts again
//   polling  idle polling with TIF_POLLING_NRFLAG (guest idle=poll / the polling phase of
//            haltpoll): running guest code, and a sender may skip its IPI (set_nr_if_polling)
//   preempted  overcommit: when it has nothing to run, the host has given its pCPU to another
//            thread (the vCPU thread is runnable but scheduled out; KVM's steal-time record has
//            KVM_VCPU_PREEMPTED set): an interrupt waits until the host runs it again
//            (vcpu.preempted_wait), and KVM PV TLB flush skips it (kvm_flush_tlb_multi)
// This is the one description of a VM: the models' own views (x86::X86Vm, hv::GuestConfig, the
// GIC's vPE map) are built from it by the mechanisms (src/workload/mechanisms/).
//
// TOML form, the [vm] table (profiles/README.md, "VMs"):
//   [vm]
//   name = "seed003-guest"      # optional
//   vcpus = 4                   # 1..65536
//   nr_cpus = 8192              # guest CONFIG_NR_CPUS, >= vcpus; default 8192
//   pin = [32, 33, 34, 35]      # host CPU of each vCPU, or "socket:N" / "node:N" (the first vcpus
//                               # CPUs of that socket/node by id), or "first" (default: the first
//                               # vcpus CPUs of the host by id)
//   state = "running"           # state of every vCPU: "running" (default), "halted" or "polling"
//   halted = [1, 2]             # optional: these vCPUs are "halted" (others take `state`)
//   polling = [3]               # optional: these vCPUs are "polling" (a vCPU in both is an error)
//   preempted = [4]             # optional: these vCPUs are "preempted" (in one list at most)
//   vp_index = { 3 = 64, 5 = "inval" }  # optional overrides, guest CPU -> VP index (keys are CPU
//                               # numbers): 0..2147483647 or "inval" (VP_INVAL, see below)
//
// VP indices (the Hyper-V view; only the hyperv mechanism reads them): any value below 2^31 (Linux
// keeps them as int; larger ones would index bitmaps with a negative number, undefined), "inval"
// (VP_INVAL: the guest has not read HV_X64_MSR_VP_INDEX for that CPU yet; hv_cpu_init runs after the
// CPU is marked online), indices >= 4096 (which no KVM vCPU can hold: a host write of
// HV_X64_MSR_VP_INDEX must be below KVM_MAX_VCPUS; the hyperv mechanism's host then has no vCPU for
// that CPU, as `ipilab hv send` models it), and repeats (KVM allows them: kvm_hv_set_msr checks only
// the bound, and kvm_hv_send_ipi_to_many delivers to every vCPU holding a targeted index).
//
// Errors (InputError, place "FILE:LINE:COLUMN: vm.key[i]"): a vCPU pinned to a host CPU that does
// not exist, a pin list of the wrong length, a socket/node too small for the VM, a VP index that is
// neither 0..2^31-1 nor "inval", a vCPU number out of range in halted/vp_index, vcpus > nr_cpus,
// unknown keys, wrong types.
// Two vCPUs on one host CPU are allowed (overcommit); the workload decides what that costs.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <toml++/toml.h>

#include "topology/host.h"

namespace ipilab::topology {

/// Linux's VP_INVAL (include/asm-generic/mshyperv.h: U32_MAX): hv_vp_index[cpu] not read yet.
inline constexpr std::uint32_t kVpInval = 0xFFFFFFFFu;
/// "inval" for VP_INVAL, else the number.
std::string vp_index_text(std::uint32_t vp);

enum class VcpuState { Running, Halted, Polling, Preempted };
std::string_view vcpu_state_name(VcpuState s);

struct Vcpu {
  int cpu = 0;                  ///< guest CPU number (= index in Vm::vcpus)
  int pcpu = 0;                 ///< host CPU id it is pinned to
  std::uint32_t vp_index = 0;   ///< Hyper-V VP index (kVpInval: not read yet; may repeat)
  VcpuState initial_state = VcpuState::Running;
  friend bool operator==(const Vcpu&, const Vcpu&) = default;
};

struct Vm {
  std::string name;
  int nr_cpus = 8192;
  std::vector<Vcpu> vcpus;
  /// Where each vm.vp_index override was written ("FILE:LINE:COL: vm.vp_index.3"), by guest CPU, for
  /// errors a mechanism finds later (a sender without a host vCPU).
  std::map<int, std::string> vp_index_places;

  int size() const noexcept { return static_cast<int>(vcpus.size()); }
  /// VP index of guest CPU `cpu` (std::out_of_range if no such vCPU).
  std::uint32_t vp_index_of(int cpu) const { return vcpus.at(static_cast<std::size_t>(cpu)).vp_index; }
  /// The lowest guest CPU whose VP index is `vp`, or -1 (also for kVpInval).
  int cpu_of_vp_index(std::uint32_t vp) const noexcept;
  /// Every guest CPU whose VP index is `vp`, ascending (several when indices repeat).
  std::vector<int> cpus_of_vp_index(std::uint32_t vp) const;
  /// The place of CPU `cpu`'s vm.vp_index override, else "<fallback>: vm.vp_index.<cpu>".
  std::string vp_index_place(int cpu, std::string_view fallback) const;
  /// Host CPU of guest CPU `cpu`.
  int pcpu_of(int cpu) const { return vcpus.at(static_cast<std::size_t>(cpu)).pcpu; }

  /// A VM of `n` running vCPUs pinned to `pcpus` (size n) with identity VP indexes; validated
  /// against `host` (InputError(place "vm", ...) if a CPU does not exist).
  static Vm make(const Host& host, int n, const std::vector<int>& pcpus, int nr_cpus = 8192);

  friend bool operator==(const Vm&, const Vm&) = default;
};

/// Parses a [vm] table at dotted key `key` of a document read from `file`, placed on `host`.
Vm parse_vm(const toml::table& vm_table, const Host& host, std::string_view file, std::string_view key = "vm");

}  // namespace ipilab::topology
