// PLACEHOLDER: the 'hv' command is being built; this file is replaced by its real implementation.
#include "cli/commands.h"
#include "common/error.h"

namespace ipilab::cli {

void add_hv_command(CLI::App& root) {
  auto* cmd = root.add_subcommand("hv", "(not built yet)");
  cmd->callback([] { throw UnavailableError("'ipilab hv' is not built yet"); });
}

}  // namespace ipilab::cli
