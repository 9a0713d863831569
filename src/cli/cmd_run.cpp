// PLACEHOLDER: the 'run' command is being built; this file is replaced by its real implementation.
#include "cli/commands.h"
#include "common/error.h"

namespace ipilab::cli {

void add_run_command(CLI::App& root) {
  auto* cmd = root.add_subcommand("run", "(not built yet)");
  cmd->callback([] { throw UnavailableError("'ipilab run' is not built yet"); });
}

}  // namespace ipilab::cli
