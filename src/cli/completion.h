// ipilab/cli/completion.h — bash and zsh completion scripts, written from the command tree
// (command_tree.h) like the man page, so they know every subcommand and option --help shows.
// The build runs `ipilab help-completion bash|zsh`; the scripts ask the binary being completed
// for the built-in names (`ipilab help-names scenarios|presets|profiles|workloads`).
//
// What a value completes to: the option's {a,b,c} choices; built-in scenario names (and *.toml
// files) for a scenario; host preset names for --preset; profile names (and *.toml files) for
// --profile / --base; nothing for numbers; file names when the option's type or description names a
// file; nothing otherwise.
#pragma once

#include <string>

#include "cli/command_tree.h"

namespace ipilab::cli {

enum class ValueKind { None, Number, File, Choices, Scenario, Preset, Profile };

/// How `o`'s value is completed (see above).
ValueKind value_kind(const OptionDoc& o);

/// A script for bash (bash-completion's completions/ folder, or `source` it): `complete -F _ipilab ipilab`.
std::string bash_completion(const CommandDoc& root);

/// A script for zsh (a `_ipilab` file in $fpath, or `source` it after compinit): `#compdef ipilab`.
std::string zsh_completion(const CommandDoc& root);

}  // namespace ipilab::cli
