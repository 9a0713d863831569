// ipilab/cli/man_page.h — the ipilab(1) man page, written from the command tree (command_tree.h):
// every command's usage, options, positionals and long help, as `--help` prints them. The build
// runs `ipilab help-man` to make share/man/man1/ipilab.1, so the page cannot drift from the CLI.
#pragma once

#include <string>

#include "cli/command_tree.h"

namespace ipilab::cli {

struct ManPageInfo {
  std::string version;        ///< "0.1.0"
  std::string exit_statuses;  ///< the root help's exit status table, verbatim lines
  std::string bin_to_data;    ///< "../share/ipilab": the data folder relative to the binary's folder
};

/// The page in roff (man macros): NAME, SYNOPSIS, DESCRIPTION, COMMANDS (one subsection per command
/// with usage, options and its long help), EXIT STATUS, ENVIRONMENT, FILES, SEE ALSO. No date, so
/// the same build gives the same page.
std::string man_page(const CommandDoc& root, const ManPageInfo& info);

/// Text made safe for roff: backslashes escaped, '-' as \- (so options copy as ASCII), a leading
/// '.' or '\'' protected with \&.
std::string roff_escape(const std::string& text);

}  // namespace ipilab::cli
