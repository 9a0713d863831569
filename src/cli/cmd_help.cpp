// Hidden commands that turn the command tree into the man page and the shell completions, and
// print the built-in names the completions offer. They are not in --help, the man page or the
// completions (group ""): the build and the completion scripts call them.
#include <cstdio>
#include <memory>
#include <string>

#include "cli/command_tree.h"
#include "cli/commands.h"
#include "cli/completion.h"
#include "cli/man_page.h"
#include "common/data_lookup.h"
#include "cost/shipped.h"
#include "scenario/catalog.h"
#include "topology/presets.h"
#include "workload/workload.h"

#ifndef IPILAB_VERSION
#define IPILAB_VERSION "0.0.0"
#endif

namespace ipilab::cli {

void add_help_commands(CLI::App& root, const std::string& exit_statuses) {
  auto* man = root.add_subcommand("help-man", "Print the ipilab(1) man page (roff), made from this command tree");
  man->group("");
  man->callback([&root, exit_statuses] {
    const ManPageInfo info{IPILAB_VERSION, exit_statuses, process_data_inputs().bin_to_data};
    std::fputs(man_page(describe(root), info).c_str(), stdout);
  });

  auto shell = std::make_shared<std::string>();
  auto* comp = root.add_subcommand("help-completion", "Print the bash or zsh completion script, made from this command tree");
  comp->group("");
  comp->add_option("shell", *shell, "bash or zsh")->required()->check(CLI::IsMember({"bash", "zsh"}));
  comp->callback([&root, shell] {
    const CommandDoc tree = describe(root);
    std::fputs((*shell == "bash" ? bash_completion(tree) : zsh_completion(tree)).c_str(), stdout);
  });

  auto kind = std::make_shared<std::string>();
  auto* names = root.add_subcommand("help-names", "Print the built-in names of a kind, one a line (for the completions)");
  names->group("");
  names->add_option("kind", *kind, "scenarios, presets, profiles or workloads")
      ->required()
      ->check(CLI::IsMember({"scenarios", "presets", "profiles", "workloads"}));
  names->callback([kind] {
    std::string out;
    if (*kind == "scenarios")
      for (const auto& s : scenario::list_builtin()) out += s.name + "\n";
    if (*kind == "presets")
      for (const auto& p : topology::list_presets()) out += p.name + "\n";
    if (*kind == "profiles")
      for (const auto& p : cost::list_shipped_profiles()) out += p.name + "\n";
    if (*kind == "workloads")
      for (const auto* w : workload::list_workloads()) out += w->name + "\n";
    std::fputs(out.c_str(), stdout);
  });
}

}  // namespace ipilab::cli
