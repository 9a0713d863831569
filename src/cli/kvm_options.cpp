// CLI11 registration of the `ipilab kvm call` options (see kvm_options.h).
#include "cli/kvm_options.h"

#include "cli/run_args.h"

namespace ipilab::cli {

void add_kvm_call_options(CLI::App& cmd, x86::tool::KvmCallOptions& o) {
  auto* vcpus = cmd.add_option("--vcpus", o.vcpus, "number of vCPUs with APIC ID = vCPU index (decimal; default 4)");
  cmd.add_option("--apic-ids", o.apic_ids, "x2APIC ID of each vCPU, decimal, comma separated (e.g. 0,1,2,300)")
      ->delimiter(',')
      ->excludes(vcpus);
  cmd.add_option("--apic-disabled", o.apic_disabled, "vCPUs whose APIC is software-disabled (decimal, comma separated)")
      ->delimiter(',');
  // Given or not (nullopt: the report names the registers left at 0); an empty value is refused.
  auto reg = [&cmd](const char* name, std::optional<std::string>& field, const char* help) {
    cmd.add_option_function<std::string>(name, [&field](const std::string& v) { field = v; }, help);
  };
  reg("--call", o.call, "send-ipi (RAX 0xa = 10) | sched-yield (RAX 0xb = 11) | a hex hypercall number");
  reg("--rax", o.rax, "RAX, hex: the hypercall number (instead of --call; 'a' is KVM_HC_SEND_IPI, 10 decimal)");
  reg("--rbx", o.rbx, "RBX, hex: SEND_IPI bitmap bits 0..63 (APIC IDs min+i); SCHED_YIELD the APIC ID");
  reg("--rcx", o.rcx, "RCX, hex: SEND_IPI bitmap bits 64..127 (APIC IDs min+64+i)");
  reg("--rdx", o.rdx, "RDX, hex: SEND_IPI min, the APIC ID of bit 0");
  reg("--rsi", o.rsi, "RSI, hex: SEND_IPI ICR low word (vector | delivery mode << 8)");
  cmd.add_flag("--32-bit", o.mode32, "the caller is not in long mode: RAX..RSI truncated to 32 bits, halves of 32");
  cmd.add_option("--cpl", o.cpl, "current privilege level of the caller (decimal; non-zero gives -KVM_EPERM)");
  cmd.add_flag("--no-pv-send-ipi", o.no_pv_send_ipi,
               "guest CPUID lacks KVM_FEATURE_PV_SEND_IPI and KVM_CAP_ENFORCE_PV_FEATURE_CPUID is on (v5.10+)");
  cmd.add_flag("--no-pv-sched-yield", o.no_pv_sched_yield,
               "guest CPUID lacks KVM_FEATURE_PV_SCHED_YIELD and KVM_CAP_ENFORCE_PV_FEATURE_CPUID is on (v5.10+)");
  cmd.add_flag("--no-apic-map", o.no_apic_map, "kvm->arch.apic_map is NULL (not yet built)");
  cmd.add_option("--ready", o.ready, "vCPUs preempted while runnable (kvm_vcpu->ready), decimal, comma separated")
      ->delimiter(',');
  cmd.add_option("--kvm", o.kvm,
                 "KVM version: v4.19-rc2, v4.19, v5.1, v5.4, v6.16, nospec-v1, mainline (default); 'list' explains them");
  cmd.add_flag("--json", o.json, "print one JSON object instead of the text report");
}

x86::tool::KvmCallResult run_kvm_call_args(const std::vector<std::string>& args) {
  return run_args<x86::tool::KvmCallOptions>("kvm call", "call", args, add_kvm_call_options, x86::tool::run_kvm_call);
}

}  // namespace ipilab::cli
