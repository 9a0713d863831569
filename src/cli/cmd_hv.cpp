// ipilab hv call / hv send — the Hyper-V enlightened-IPI tools. The logic is in src/hv (call_tool.h,
// send_tool.h: pure functions); the option registration in hv_options.cpp; this file wires the
// subcommands and prints.
#include <memory>
#include <string>

#include "cli/commands.h"
#include "cli/hv_options.h"
#include "cli/tool_print.h"

namespace ipilab::cli {

namespace {

// The one-line summary is what 'ipilab hv --help' lists; the long help is the command's own
// (CLI11's footer, after the options).
CLI::App* add_with_long_help(CLI::App& parent, const std::string& name, const std::string& summary,
                             const std::string& help) {
  auto* cmd = parent.add_subcommand(name, summary);
  cmd->footer(help);
  return cmd;
}

}  // namespace

void add_hv_command(CLI::App& root) {
  auto* hv = root.add_subcommand(
      "hv", "Hyper-V enlightened IPIs: a Linux guest's send per kernel version (send), one hypercall against a "
            "modelled KVM host per KVM version (call)");
  hv->require_subcommand(1);

  auto* call = add_with_long_help(
      *hv, "call", "One hypercall against a modelled KVM (or Xen) host: the HV_STATUS and who receives",
      hv::tool::call_help());
  auto call_options = std::make_shared<hv::tool::CallOptions>();
  add_call_options(*call, *call_options);
  call->callback([call_options] {
    if (printed_list(call_options->kvm, hv::tool::kvm_list_text)) return;
    print_result(hv::tool::run_call(*call_options), call_options->json);
  });

  auto* send = add_with_long_help(
      *hv, "send", "One Linux guest IPI send on Hyper-V enlightenments, as a given kernel version does it",
      hv::tool::send_help());
  auto send_options = std::make_shared<hv::tool::SendOptions>();
  add_send_options(*send, *send_options);
  send->callback([send_options] {
    if (printed_list(send_options->linux_version, hv::tool::linux_list_text)) return;
    if (printed_list(send_options->kvm, hv::tool::kvm_list_text)) return;
    print_result(hv::tool::run_send(*send_options), send_options->json);
  });
}

}  // namespace ipilab::cli
