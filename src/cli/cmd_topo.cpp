// PLACEHOLDER: the 'topo' command is being built; this file is replaced by its real implementation.
#include "cli/commands.h"
#include "common/error.h"

namespace ipilab::cli {

void add_topo_command(CLI::App& root) {
  auto* cmd = root.add_subcommand("topo", "(not built yet)");
  cmd->callback([] { throw UnavailableError("'ipilab topo' is not built yet"); });
}

}  // namespace ipilab::cli
