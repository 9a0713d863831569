// ipilab/hv/call_tool.h — the logic of `ipilab hv call`: build a partition, registers and a guest
// memory image from the command's option values, run one hypercall through Partition::execute, and
// render the outcome as text or JSON.
//
// Pure: no command-line framework here. src/cli/hv_options.h registers CallOptions' fields as CLI11
// options (and run_call_args there is the whole command minus printing, for tests). Numbers: vCPU
// counts, VP indices, varhead, rep fields and CPL are decimal; register values, GPAs, sizes, call
// codes and byte strings are hex (common/hex.h rules: "0xfe" == "fe").
// Errors: InputError naming the option (exit 2).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "hv/hypercall.h"
#include "hv/partition.h"

namespace ipilab::hv::tool {

/// Raw option values of `ipilab hv call` (strings where the value is hex).
struct CallOptions {
  std::uint32_t vcpus = 4;                 ///< --vcpus N: identity VP map 0..N-1 (ignored with --vps)
  std::vector<std::uint32_t> vps;          ///< --vps 0,2,65: VP index of each vCPU
  std::uint32_t sender = 0;                ///< --sender VCPU
  std::string control;                     ///< --control HEX (raw RCX)
  std::string call;                        ///< --call send-ipi|send-ipi-ex|HEX-CODE
  bool fast = false;                       ///< --fast
  std::uint32_t varhead = 0;               ///< --varhead N (QWORDs)
  std::uint32_t rep_count = 0;             ///< --rep-count N
  std::uint32_t rep_start = 0;             ///< --rep-start N
  std::string rdx, r8;                     ///< --rdx HEX, --r8 HEX
  std::array<std::string, 6> xmm;          ///< --xmm0..--xmm5 LO:HI
  std::string input;                       ///< --input HEX-BYTES (memory order)
  std::vector<std::string> input_qwords;   ///< --input-qwords Q,Q,... (each written little-endian)
  std::string input_gpa = "0x1000";        ///< --input-gpa HEX
  std::string memory_size = "0x10000";     ///< --memory-size HEX bytes of guest memory at GPA 0
  bool enforce_cpuid = false, no_cluster_ipi = false, no_ex_masks = false, no_xmm_input = false;
  bool no_lapic = false;
  std::vector<std::uint32_t> apic_disabled;  ///< --apic-disabled VCPU,...
  std::uint32_t max_vcpus = KVM_MAX_VCPUS_MAXSMP;
  std::string flavor = "kvm";              ///< --flavor kvm|xen
  std::string kvm = "mainline";            ///< --kvm VERSION (kvm_version.h names; "list" is the CLI's)
  unsigned cpl = 0;                        ///< --cpl N
  bool real_mode = false;                  ///< --real-mode (CR0.PE = 0)
  bool json = false;                       ///< --json
};

/// A fully built request: what Partition::execute needs.
struct CallRequest {
  PartitionConfig config;
  std::uint32_t sender_vcpu = 0;
  HypercallRegs regs;
  FlatGuestMemory memory;
  bool input_given = false;
  std::uint64_t input_gpa = 0;
  std::vector<std::uint8_t> input;
};

/// Validates and builds. Throws InputError naming the option for anything wrong.
CallRequest build_request(const CallOptions& options);

/// The outcome as JSON: status (name, or "#UD"), status_code (number, null for #UD), inject_ud,
/// rax, modelled, rejected_by (null on success), control {...}, input {...}|null, delivered (VP
/// indices), delivered_vcpus, vector, deliveries [{vcpu, vp_index, vector}], dropped_vcpus, work {...}.
nlohmann::ordered_json outcome_json(const HypercallOutcome& outcome);

struct CallResult {
  nlohmann::ordered_json json;  ///< outcome_json plus "partition", "sender_vcpu", "registers"
  std::string text;             ///< the human report
};

/// Builds the request, executes it, renders both forms. Throws InputError.
CallResult run_call(const CallOptions& options);

/// The --help text's description (what it does, number formats, worked examples).
std::string call_help();

/// `ipilab hv call --kvm list`: every KVM version with its releases, commits and what it changes.
std::string kvm_list_text();

}  // namespace ipilab::hv::tool
