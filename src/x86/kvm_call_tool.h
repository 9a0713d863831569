// ipilab/x86/kvm_call_tool.h — the logic of `ipilab kvm call`: one KVM paravirtual hypercall
// (KVM_HC_SEND_IPI or KVM_HC_SCHED_YIELD) from its registers, against a modelled VM and KVM version
// (kvm_pv_version.h), rendered as text or JSON. Pure: the CLI11 side is src/cli/cmd_kvm.cpp.
//
// Numbers: vCPU counts, vCPU lists, APIC IDs and CPL are decimal; registers and --call codes are hex
// (common/hex.h rules: "0xff" == "ff"), as in `ipilab hv call` and register dumps: `--rax 10` is
// 0x10, not KVM_HC_SEND_IPI (10 = 0xa), and the report says so. A register not given is 0 and the
// report names it; a register given an empty value is an error. Errors: InputError naming the
// option (exit 2).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "x86/kvm_pv_version.h"

namespace ipilab::x86::tool {

struct KvmCallOptions {
  std::uint32_t vcpus = 4;                  ///< --vcpus N: APIC ID = vCPU index (ignored with --apic-ids)
  std::vector<std::uint32_t> apic_ids;      ///< --apic-ids 0,1,2,300
  std::vector<std::uint32_t> apic_disabled; ///< --apic-disabled VCPU,...: software-disabled APICs
  std::optional<std::string> call;          ///< --call send-ipi|sched-yield|HEX (sets RAX)
  std::optional<std::string> rax, rbx, rcx, rdx, rsi;  ///< --rax .. --rsi, hex; nullopt: not given (0)
  bool mode32 = false;                      ///< --32-bit: the caller is not in long mode
  unsigned cpl = 0;                         ///< --cpl N
  bool no_pv_send_ipi = false;              ///< --no-pv-send-ipi: guest CPUID lacks the feature (enforced)
  bool no_pv_sched_yield = false;           ///< --no-pv-sched-yield
  bool no_apic_map = false;                 ///< --no-apic-map: kvm->arch.apic_map is NULL
  std::vector<std::uint32_t> ready;         ///< --ready VCPU,...: vCPUs preempted while runnable
  std::string kvm = "mainline";             ///< --kvm VERSION ("list" is the CLI's)
  bool json = false;
};

struct KvmCallResult {
  nlohmann::ordered_json json;
  std::string text;
};

/// Validates, runs kvm_emulate_pv_hypercall, renders. Throws InputError naming the option.
KvmCallResult run_kvm_call(const KvmCallOptions& options);

/// The --help description (what it does, number formats, worked examples per KVM version).
std::string kvm_call_help();
/// `ipilab kvm call --kvm list`.
std::string kvm_pv_list_text();

}  // namespace ipilab::x86::tool
