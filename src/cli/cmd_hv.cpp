// ipilab hv call — run one Hyper-V hypercall against a modelled partition (KVM semantics by default).
// The logic lives in src/hv/call_tool.{h,cpp} so tests can run it in-process; this file only wires it
// into the CLI and prints.
#include <memory>

#include <fmt/format.h>

#include "cli/commands.h"
#include "hv/call_tool.h"

namespace ipilab::cli {

void add_hv_command(CLI::App& root) {
  auto* hv = root.add_subcommand(
      "hv", "Hyper-V enlightened IPIs: run HvCallSendSyntheticClusterIpi[Ex] against a modelled host");
  hv->require_subcommand(1);
  auto* call = hv->add_subcommand("call", hv::tool::call_help());
  auto options = std::make_shared<hv::tool::CallOptions>();
  hv::tool::add_call_options(*call, *options);
  call->callback([options] {
    const auto result = hv::tool::run_call(*options);
    if (options->json)
      fmt::print("{}\n", result.json.dump(2));
    else
      fmt::print("{}", result.text);
  });
}

}  // namespace ipilab::cli
