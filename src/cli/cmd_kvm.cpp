// ipilab kvm call — one KVM paravirtual hypercall (KVM_HC_SEND_IPI, KVM_HC_SCHED_YIELD) against a
// modelled KVM host per KVM version. The logic is in src/x86/kvm_call_tool.h (pure functions); the
// option registration in kvm_options.cpp; this file wires the subcommand and prints.
#include <memory>

#include "cli/commands.h"
#include "cli/kvm_options.h"
#include "cli/tool_print.h"

namespace ipilab::cli {

void add_kvm_command(CLI::App& root) {
  auto* kvm = root.add_subcommand(
      "kvm", "KVM's own paravirtual IPI hypercalls: one call from registers against a modelled host per KVM version");
  kvm->require_subcommand(1);
  auto* call = kvm->add_subcommand(
      "call", "One KVM_HC_SEND_IPI or KVM_HC_SCHED_YIELD against a modelled KVM: RAX, who receives, host bugs");
  call->footer(x86::tool::kvm_call_help());
  auto options = std::make_shared<x86::tool::KvmCallOptions>();
  add_kvm_call_options(*call, *options);
  call->callback([options] {
    if (printed_list(options->kvm, x86::tool::kvm_pv_list_text)) return;
    print_result(x86::tool::run_kvm_call(*options), options->json);
  });
}

}  // namespace ipilab::cli
