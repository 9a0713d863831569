// PLACEHOLDER: the 'trace' command is being built; this file is replaced by its real implementation.
#include "cli/commands.h"
#include "common/error.h"

namespace ipilab::cli {

void add_trace_command(CLI::App& root) {
  auto* cmd = root.add_subcommand("trace", "(not built yet)");
  cmd->callback([] { throw UnavailableError("'ipilab trace' is not built yet"); });
}

}  // namespace ipilab::cli
