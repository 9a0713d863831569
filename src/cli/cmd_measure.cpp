// PLACEHOLDER: the 'measure' command is being built; this file is replaced by its real implementation.
#include "cli/commands.h"
#include "common/error.h"

namespace ipilab::cli {

void add_measure_command(CLI::App& root) {
  auto* cmd = root.add_subcommand("measure", "(not built yet)");
  cmd->callback([] { throw UnavailableError("'ipilab measure' is not built yet"); });
}

}  // namespace ipilab::cli
