// ipilab/cli/run_args.h — a tool command run from a word list, as tests call it: the options
// registered on a bare CLI::App, the words parsed, the tool run on the filled options struct.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace ipilab::cli {

/// Parses `args` (the words after the command, in order) with the options `add` registers and
/// returns `run(options)`. Throws what the parse or the tool throws (CLI::ParseError, InputError).
template <class Options, class Add, class Run>
auto run_args(const char* description, const char* name, const std::vector<std::string>& args, Add add, Run run) {
  CLI::App app{description, name};
  Options options;
  add(app, options);
  std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 takes them last-first
  app.parse(reversed);
  return run(options);
}

}  // namespace ipilab::cli
