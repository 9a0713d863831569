// ipilab/cli/commands.h — one function per subcommand family; each lives in cmd_<name>.cpp.
//
// Each add_*_command registers a CLI11 subcommand on `root` with a callback. Callbacks report bad
// input by throwing ipilab::InputError, a missing machine capability by UnavailableError, a failed
// user-requested check by CheckFailed; main() turns those into the documented exit statuses.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

namespace ipilab::cli {

void add_hv_command(CLI::App& root);       // ipilab hv call / hv send   (cmd_hv.cpp)
void add_gic_command(CLI::App& root);      // ipilab gic decode         (cmd_gic.cpp)
void add_kvm_command(CLI::App& root);      // ipilab kvm call           (cmd_kvm.cpp)
void add_run_command(CLI::App& root);      // ipilab run [SCENARIO]     (cmd_run.cpp)
void add_list_command(CLI::App& root);     // ipilab list               (cmd_list.cpp)
void add_topo_command(CLI::App& root);     // ipilab topo               (cmd_topo.cpp)
void add_trace_command(CLI::App& root);    // ipilab trace / trace record (cmd_trace.cpp)
void add_replay_command(CLI::App& root);   // ipilab replay             (cmd_replay.cpp)
void add_measure_command(CLI::App& root);  // ipilab measure            (cmd_measure.cpp)
void add_sweep_command(CLI::App& root);    // ipilab sweep SPEC         (cmd_sweep.cpp)
void add_validate_command(CLI::App& root); // ipilab validate [FILE]    (cmd_validate.cpp)
void add_calibrate_command(CLI::App& root); // ipilab calibrate         (cmd_calibrate.cpp)

/// Hidden: help-man, help-completion bash|zsh, help-names KIND (cmd_help.cpp). Register last, so
/// that the man page and completions see every command.
void add_help_commands(CLI::App& root, const std::string& exit_statuses);

}  // namespace ipilab::cli
