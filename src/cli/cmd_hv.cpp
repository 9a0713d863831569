// ipilab hv call / hv send — the Hyper-V enlightened-IPI tools. The logic is in src/hv (call_tool.h,
// send_tool.h: pure functions); the option registration in hv_options.cpp; this file wires the
// subcommands and prints.
#include <memory>

#include <fmt/format.h>

#include "cli/commands.h"
#include "cli/hv_options.h"

namespace ipilab::cli {

void add_hv_command(CLI::App& root) {
  auto* hv = root.add_subcommand(
      "hv", "Hyper-V enlightened IPIs: a Linux guest's send per kernel version (send), one hypercall against a "
            "modelled KVM host per KVM version (call)");
  hv->require_subcommand(1);

  auto* call = hv->add_subcommand("call", hv::tool::call_help());
  auto call_options = std::make_shared<hv::tool::CallOptions>();
  add_call_options(*call, *call_options);
  call->callback([call_options] {
    if (call_options->kvm == "list") {
      fmt::print("{}", hv::tool::kvm_list_text());
      return;
    }
    const auto result = hv::tool::run_call(*call_options);
    if (call_options->json)
      fmt::print("{}\n", result.json.dump(2));
    else
      fmt::print("{}", result.text);
  });

  auto* send = hv->add_subcommand("send", hv::tool::send_help());
  auto send_options = std::make_shared<hv::tool::SendOptions>();
  add_send_options(*send, *send_options);
  send->callback([send_options] {
    if (send_options->linux_version == "list") {
      fmt::print("{}", hv::tool::linux_list_text());
      return;
    }
    if (send_options->kvm == "list") {
      fmt::print("{}", hv::tool::kvm_list_text());
      return;
    }
    const auto result = hv::tool::run_send(*send_options);
    if (send_options->json)
      fmt::print("{}\n", result.json.dump(2));
    else
      fmt::print("{}", result.text);
  });
}

}  // namespace ipilab::cli
