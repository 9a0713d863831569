// CLI11 registration of the `ipilab hv call` / `ipilab hv send` options (see hv_options.h).
#include "cli/hv_options.h"

#include <fmt/format.h>

#include "cli/run_args.h"
#include "common/number.h"
#include "hv/abi.h"

namespace ipilab::cli {

void add_call_options(CLI::App& cmd, hv::tool::CallOptions& o) {
  cmd.add_option("--vcpus", o.vcpus, "number of vCPUs with VP index = vCPU number (decimal; default 4)");
  // A VP index above 4095 cannot be named in an hv_vpset (64 banks of 64, TLFS "Sparse Virtual
  // Processor Set"); said before CLI11 narrows the number to 32 bits.
  auto* vps = cmd.add_option("--vps", o.vps, "VP index of each vCPU, decimal, comma separated (e.g. 0,2,65)")
                  ->delimiter(',')
                  ->check(CLI::Validator(
                      [](std::string& v) -> std::string {
                        if (std::string p = number::problem(v, number::Kind::Unsigned); !p.empty()) return p;
                        if (number::parse_unsigned(v, "--vps") <= hv::HV_MAX_VP_INDEX) return {};
                        return fmt::format("{} exceeds the largest VP index {} (64 sparse banks of 64 VPs)", v,
                                           hv::HV_MAX_VP_INDEX);
                      },
                      ""));
  vps->excludes(cmd.get_option("--vcpus"));
  cmd.add_option("--sender", o.sender, "vCPU that issues the hypercall (decimal; default 0)");
  auto* control = cmd.add_option("--control", o.control, "raw control word (RCX), hex");
  auto* call = cmd.add_option("--call", o.call, "send-ipi | send-ipi-ex | a hex call code (builds RCX)");
  auto* fast = cmd.add_flag("--fast", o.fast, "fast call: input in RDX/R8 (and XMM0..XMM5 for send-ipi-ex)");
  auto* varhead = cmd.add_option("--varhead", o.varhead, "variable header size in QWORDs (decimal)");
  auto* repc = cmd.add_option("--rep-count", o.rep_count, "rep count (decimal)");
  auto* reps = cmd.add_option("--rep-start", o.rep_start, "rep start index (decimal)");
  for (auto* opt : {call, fast, varhead, repc, reps}) control->excludes(opt);
  cmd.add_option("--rdx", o.rdx, "RDX, hex: a fast call's input bytes 0-7 (with --fast; a slow call's RDX is --input-gpa; any with --control)");
  cmd.add_option("--r8", o.r8, "R8, hex: a fast call's input bytes 8-15 (with --fast; the output GPA with --control)");
  for (int i = 0; i < 6; ++i)
    cmd.add_option(fmt::format("--xmm{}", i), o.xmm[static_cast<std::size_t>(i)],
                   fmt::format("XMM{} as LO:HI (hex QWORDs; LO alone means HI = 0)", i));
  auto* input = cmd.add_option("--input", o.input, "input page bytes in memory order, hex (\"fe 00 00 00 ...\")");
  auto* qwords = cmd.add_option("--input-qwords", o.input_qwords,
                                "input as hex QWORDs, comma separated, each stored little-endian")
                     ->delimiter(',');
  input->excludes(qwords);
  cmd.add_option("--input-gpa", o.input_gpa, "GPA where the input is placed, hex (default 0x1000)");
  cmd.add_option("--memory-size", o.memory_size, "bytes of guest memory from GPA 0, hex (default 0x10000)");
  cmd.add_flag("--enforce-cpuid", o.enforce_cpuid, "KVM_CAP_HYPERV_ENFORCE_CPUID: check the CPUID bits below");
  cmd.add_flag("--no-cluster-ipi", o.no_cluster_ipi, "CPUID: HV_X64_CLUSTER_IPI_RECOMMENDED not exposed");
  cmd.add_flag("--no-ex-masks", o.no_ex_masks, "CPUID: HV_X64_EX_PROCESSOR_MASKS_RECOMMENDED not exposed");
  cmd.add_flag("--no-xmm-input", o.no_xmm_input, "CPUID: XMM fast hypercall input not available");
  cmd.add_flag("--no-lapic", o.no_lapic,
               "no in-kernel LAPIC (KVM returns INVALID_HYPERCALL_INPUT; from v6.14 its per-vCPU CPUID drops "
               "HV_X64_CLUSTER_IPI_RECOMMENDED)");
  cmd.add_option("--apic-disabled", o.apic_disabled, "vCPUs whose APIC is disabled (decimal, comma separated)")
      ->delimiter(',');
  cmd.add_option("--max-vcpus", o.max_vcpus, "KVM_MAX_VCPUS, 1..4096 (caps VP indices and slow bank reads)");
  cmd.add_option("--flavor", o.flavor, "kvm (default) or xen (Xen viridian error codes and checks)")
      ->check(CLI::IsMember({"kvm", "xen"}));
  cmd.add_option("--kvm", o.kvm, "KVM version: v5.15, v5.16, v5.18, mainline (default); 'list' explains them");
  cmd.add_option("--cpl", o.cpl, "current privilege level of the caller (decimal; non-zero gives #UD)");
  cmd.add_flag("--real-mode", o.real_mode, "caller not in protected mode (#UD)");
  cmd.add_flag("--json", o.json, "print one JSON object instead of the text report");
}

void add_send_options(CLI::App& cmd, hv::tool::SendOptions& o) {
  cmd.add_option("--linux", o.linux_version, "Linux version: v5.4, seed-v2, v5.10, exclude-self-unfixed, mainline; "
                                             "'list' explains them");
  cmd.add_option("--kvm", o.kvm, "the modelled KVM host: v5.15, v5.16, v5.18, mainline (default)");
  cmd.add_option_function<std::string>(
      "--cpu-vp", [&o](const std::string& v) { o.cpu_vp = v; },
      "VP index of CPU 0, 1, ... (decimal or 'inval'); the length is nr_cpu_ids");
  cmd.add_option_function<std::string>(
      "--present", [&o](const std::string& v) { o.present = v; }, "cpu_present_mask as a cpulist (default: all)");
  cmd.add_option_function<std::string>(
      "--online", [&o](const std::string& v) { o.online = v; }, "cpu_online_mask as a cpulist (default: present)");
  cmd.add_option_function<unsigned>(
      "--self", [&o](const unsigned& v) { o.self = v; }, "the sending CPU (smp_processor_id(), decimal)");
  cmd.add_option_function<unsigned>(
      "--send-ipi", [&o](const unsigned& v) { o.send_ipi = v; }, "apic->send_IPI(CPU, vector)");
  cmd.add_option_function<std::string>(
      "--send-ipi-mask", [&o](const std::string& v) { o.send_ipi_mask = v; }, "apic->send_IPI_mask(CPUS, vector)");
  cmd.add_option_function<std::string>(
      "--send-ipi-mask-allbutself", [&o](const std::string& v) { o.send_ipi_mask_allbutself = v; },
      "apic->send_IPI_mask_allbutself(CPUS, vector)");
  cmd.add_flag("--send-ipi-allbutself", o.send_ipi_allbutself, "apic->send_IPI_allbutself(vector)");
  cmd.add_flag("--send-ipi-all", o.send_ipi_all, "apic->send_IPI_all(vector)");
  cmd.add_flag("--send-ipi-self", o.send_ipi_self, "apic->send_IPI_self(vector)");
  cmd.add_option_function<std::string>(
      "--vector", [&o](const std::string& v) { o.vector = v; }, "the vector, hex, any 32-bit value (e.g. fb)");
  cmd.add_option("--nr-cpus", o.nr_cpus, "CONFIG_NR_CPUS, 1..8192 (default 8192, as with CONFIG_MAXSMP)");
  cmd.add_option_function<std::uint32_t>(
      "--max-vp-index", [&o](const std::uint32_t& v) { o.max_vp_index = v; },
      "hv_max_vp_index (default: the largest valid VP index)");
  cmd.add_flag("--no-ex-masks", o.no_ex_masks, "HV_X64_EX_PROCESSOR_MASKS_RECOMMENDED absent (no Ex hypercall)");
  cmd.add_flag("--no-cluster-ipi", o.no_cluster_ipi,
               "HV_X64_CLUSTER_IPI_RECOMMENDED absent: no hooks, the native APIC callbacks run directly");
  cmd.add_flag("--no-lapic", o.no_lapic,
               "the host has no in-kernel LAPIC: the guest gets KVM's per-vCPU CPUID (v6.14+: no cluster IPI "
               "recommendation, so no hooks)");
  cmd.add_flag("--no-hypercall-page", o.no_hypercall_page, "hv_hypercall_pg is NULL");
  cmd.add_option_function<std::string>(
      "--hypercall-status", [&o](const std::string& v) { o.hypercall_status = v; },
      "force the 64-bit RAX every hypercall returns, hex (status 15:0, reps completed 43:32)");
  cmd.add_flag("--json", o.json, "print the JSON contract (docs/hv.md) instead of the text report");
}

hv::tool::CallResult run_call_args(const std::vector<std::string>& args) {
  return run_args<hv::tool::CallOptions>("hv call", "call", args, add_call_options, hv::tool::run_call);
}

hv::tool::SendToolResult run_send_args(const std::vector<std::string>& args) {
  return run_args<hv::tool::SendOptions>("hv send", "send", args, add_send_options, hv::tool::run_send);
}

}  // namespace ipilab::cli
