// ipilab/measure/host_info.h — facts about the machine a measurement ran on (its provenance).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace ipilab::measure {

struct HostInfo {
  std::string hostname;
  std::string cpu_model;        ///< /proc/cpuinfo "model name" of CPU 0
  std::string kernel;           ///< uname -r
  std::string kernel_version;   ///< uname -v
  unsigned cpus = 0;            ///< online CPUs (hwloc PUs)
  /// CPUID.1:ECX[31] seen by this process: we run inside a VM, so the KVM we use is nested (L1 KVM on
  /// an L0 hypervisor). /sys/module/kvm_intel/parameters/nested of the L0 is not visible from here.
  bool nested = false;
  std::string hypervisor_vendor;  ///< CPUID 0x40000000 signature of the L0 ("KVMKVMKVM", "Microsoft Hv"...)
  /// Which KVM backend module is loaded: kvm_intel, kvm_amd, kvm_pvm (PVM: no VMX in the guest CPU) or "".
  std::string kvm_backend;
  long halt_poll_ns = -1;       ///< /sys/module/kvm/parameters/halt_poll_ns, -1 if unreadable
  /// /sys/devices/system/cpu/cpu*/cpufreq/scaling_governor, distinct values; empty = no cpufreq here
  /// (common inside VMs): whether the core clock scales cannot be seen.
  std::vector<std::string> cpufreq_governors;
  double load_average = -1;     ///< /proc/loadavg, 1 minute, when probed (-1 if unreadable)
  bool constant_tsc = false;    ///< /proc/cpuinfo flags: the TSC ticks at a fixed rate (cycles = time)
  bool nonstop_tsc = false;     ///< ... and does not stop in deep C-states
  std::string date_utc;         ///< ISO 8601, when the info was taken
};

HostInfo probe_host();
nlohmann::json to_json(const HostInfo& h);

}  // namespace ipilab::measure
