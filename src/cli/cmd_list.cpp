// PLACEHOLDER: the 'list' command is being built; this file is replaced by its real implementation.
#include "cli/commands.h"
#include "common/error.h"

namespace ipilab::cli {

void add_list_command(CLI::App& root) {
  auto* cmd = root.add_subcommand("list", "(not built yet)");
  cmd->callback([] { throw UnavailableError("'ipilab list' is not built yet"); });
}

}  // namespace ipilab::cli
