// ipilab hv call / hv send — the Hyper-V enlightened-IPI tools. The logic is in src/hv (call_tool.h,
// send_tool.h: pure functions); the option registration in hv_options.cpp; this file wires the
// subcommands and prints.
#include <memory>
#include <string>
#include <utility>
#include <vector>

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

// A version list an option can ask for ('--kvm list'): the option and the list's text.
template <class Options>
struct VersionList {
  std::string Options::*option;
  std::string (*text)();
};

// One tool of `hv`: `add_options` registers its options; run, it prints the first version list an
// option asked for, else the tool's result.
template <class Options, class Run>
void add_tool(CLI::App& hv, const std::string& name, const std::string& summary, const std::string& help,
              void (*add_options)(CLI::App&, Options&), std::vector<VersionList<Options>> lists, Run run) {
  auto* cmd = add_with_long_help(hv, name, summary, help);
  auto options = std::make_shared<Options>();
  add_options(*cmd, *options);
  cmd->callback([options, lists = std::move(lists), run] {
    for (const auto& l : lists)
      if (printed_list((*options).*l.option, l.text)) return;
    print_result(run(*options), options->json);
  });
}

}  // namespace

void add_hv_command(CLI::App& root) {
  auto* hv = root.add_subcommand(
      "hv", "Hyper-V enlightened IPIs: a Linux guest's send per kernel version (send), one hypercall against a "
            "modelled KVM host per KVM version (call)");
  hv->require_subcommand(1);

  using hv::tool::CallOptions;
  using hv::tool::SendOptions;
  add_tool<CallOptions>(*hv, "call", "One hypercall against a modelled KVM (or Xen) host: the HV_STATUS and who receives",
                        hv::tool::call_help(), add_call_options, {{&CallOptions::kvm, hv::tool::kvm_list_text}},
                        hv::tool::run_call);
  add_tool<SendOptions>(*hv, "send", "One Linux guest IPI send on Hyper-V enlightenments, as a given kernel version does it",
                        hv::tool::send_help(), add_send_options,
                        {{&SendOptions::linux_version, hv::tool::linux_list_text}, {&SendOptions::kvm, hv::tool::kvm_list_text}},
                        hv::tool::run_send);
}

}  // namespace ipilab::cli
