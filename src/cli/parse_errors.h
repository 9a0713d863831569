// ipilab/cli/parse_errors.h — the one-line message for a command line CLI11 refused, in the same
// shape as every other bad-input error of ipilab:
//
//   ipilab: error: '--sede' is not an option of 'ipilab run'; did you mean '--seed'?
//   Run 'ipilab run --help' for more.
//
// The reason names the option or word and why; a misspelt command or option gets the close names
// (common/suggest.h); an option that belongs to another command says which ("--heatmap is an
// option of 'measure c2c' and 'measure all'").
#pragma once

#include <string>

#include <CLI/CLI.hpp>

namespace ipilab::cli {

/// The message (both lines, each ending in '\n') for `e`, thrown by `root.parse()`. `root` is read
/// after the failed parse: the deepest command it recorded is the one the message is about.
std::string parse_error_message(const CLI::App& root, const CLI::ParseError& e);

/// For `--help` after a word that is no command ("ipilab nosuch --help", "ipilab kvm call --help"):
/// the message naming it (as parse_error_message), else "" (help is printed as asked).
std::string unknown_command_before_help(const CLI::App& root, int argc, char** argv);

}  // namespace ipilab::cli
