// PLACEHOLDER: the 'gic' command is being built; this file is replaced by its real implementation.
#include "cli/commands.h"
#include "common/error.h"

namespace ipilab::cli {

void add_gic_command(CLI::App& root) {
  auto* cmd = root.add_subcommand("gic", "(not built yet)");
  cmd->callback([] { throw UnavailableError("'ipilab gic' is not built yet"); });
}

}  // namespace ipilab::cli
