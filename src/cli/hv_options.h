// ipilab/cli/hv_options.h — the CLI11 side of `ipilab hv call` and `ipilab hv send`: which option
// fills which field of the pure option structs in src/hv (call_tool.h, send_tool.h), and the two
// commands run from a word list (what the subcommand does minus printing; used by tests).
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "hv/call_tool.h"
#include "hv/send_tool.h"

namespace ipilab::cli {

/// Registers `hv call`'s options on `cmd` (the subcommand, or a bare CLI::App in tests).
void add_call_options(CLI::App& cmd, hv::tool::CallOptions& options);
/// Registers `hv send`'s options on `cmd`.
void add_send_options(CLI::App& cmd, hv::tool::SendOptions& options);

/// Parses `args` (the words after "ipilab hv call", in order) and runs. Throws InputError or
/// CLI::ParseError. (`--kvm list` is the subcommand's; here it is an unknown version.)
hv::tool::CallResult run_call_args(const std::vector<std::string>& args);
/// The same for `ipilab hv send` (`--linux list` likewise is the subcommand's).
hv::tool::SendToolResult run_send_args(const std::vector<std::string>& args);

}  // namespace ipilab::cli
