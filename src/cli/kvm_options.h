// ipilab/cli/kvm_options.h — the CLI11 side of `ipilab kvm call`: which option fills which field of
// x86::tool::KvmCallOptions (src/x86/kvm_call_tool.h), and the command run from a word list (what
// the subcommand does minus printing; used by tests).
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "x86/kvm_call_tool.h"

namespace ipilab::cli {

/// Registers `kvm call`'s options on `cmd` (the subcommand, or a bare CLI::App in tests).
void add_kvm_call_options(CLI::App& cmd, x86::tool::KvmCallOptions& options);

/// Parses `args` (the words after "ipilab kvm call") and runs. Throws InputError or CLI::ParseError.
x86::tool::KvmCallResult run_kvm_call_args(const std::vector<std::string>& args);

}  // namespace ipilab::cli
