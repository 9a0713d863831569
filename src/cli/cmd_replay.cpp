// PLACEHOLDER: the 'replay' command is being built; this file is replaced by its real implementation.
#include "cli/commands.h"
#include "common/error.h"

namespace ipilab::cli {

void add_replay_command(CLI::App& root) {
  auto* cmd = root.add_subcommand("replay", "(not built yet)");
  cmd->callback([] { throw UnavailableError("'ipilab replay' is not built yet"); });
}

}  // namespace ipilab::cli
