// ipilab/cli/command_tree.h — the CLI11 command tree as plain data, for the generated man page and
// shell completions (man_page.h, completion.h): they read the same tree `--help` prints, so they
// cannot drift from it. Hidden subcommands and options (empty group) are left out.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace ipilab::cli {

struct OptionDoc {
  std::vector<std::string> names;   ///< "-h", "--help" (short first), or the positional's name
  bool positional = false;
  std::string type;                 ///< as --help shows it: "UINT", "FILE|-", "TEXT:{kvm,c2c,all}"; "" for a flag
  std::string default_value;        ///< "" when none is shown
  std::string description;
  bool takes_value = false;
  bool repeatable = false;          ///< takes several values (shown with "...")
  bool required = false;
  std::vector<std::string> choices; ///< from a {a,b,c} set in the type (CLI::IsMember)
};

struct CommandDoc {
  std::vector<std::string> path;    ///< {"trace", "record"}; {} for the root
  std::string name;                 ///< "ipilab", "record"
  std::string description;
  std::string footer;               ///< the long help text after the options
  std::vector<OptionDoc> options;   ///< named options, in --help order (the help flag included)
  std::vector<OptionDoc> positionals;
  std::vector<CommandDoc> subcommands;
  bool subcommand_required = false;

  /// "ipilab trace record"
  std::string full_name() const;
  /// "ipilab run [OPTIONS] [scenario...]", as CLI11's Usage line.
  std::string usage() const;
};

/// The tree under `app` (whose name is the program name).
CommandDoc describe(const CLI::App& app);

/// Every command of the tree, depth first, the root first.
std::vector<const CommandDoc*> flatten(const CommandDoc& root);

}  // namespace ipilab::cli
