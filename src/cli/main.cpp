// ipilab — entry point: builds the CLI11 command tree and maps errors to exit statuses.
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli/commands.h"
#include "common/error.h"
#include "common/suggest.h"

#ifndef IPILAB_VERSION
#define IPILAB_VERSION "0.0.0"
#endif

namespace {

constexpr const char* kExitStatuses = R"(Exit statuses:
  0  success
  1  internal error, or a check you asked for failed
  2  bad input: command line, scenario, profile, trace or hex (the message names the place)
  3  this machine cannot do it (no /dev/kvm, no permission, no tracefs))";

// CLI11 reads "-1" into an unsigned option as 2^64 - 1; refuse a negative number for every one.
void refuse_negative_unsigned(CLI::App& app) {
  for (CLI::Option* o : app.get_options()) {
    if (o->get_type_name().rfind("UINT", 0) != 0) continue;
    const bool seed = o->check_lname("seed");
    o->check(CLI::Validator(
        [seed](std::string& v) -> std::string {
          const auto b = v.find_first_not_of(" \t");
          if (b == std::string::npos || v[b] != '-') return {};
          return seed ? v + " is negative: a seed is a whole number from 0 to 18446744073709551615"
                      : v + " is negative: a whole number (0 or more) is expected";
        },
        ""));
  }
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) refuse_negative_unsigned(*sub);
}

// For a command line CLI11 refused with words left over ("The following argument was not
// expected", "A subcommand is required"): the closest option of the command given, or the closest
// subcommand; "" when nothing is close.
std::string suggest_for_extras(const CLI::App& app) {
  const CLI::App* cmd = &app;
  while (!cmd->get_subcommands().empty()) cmd = cmd->get_subcommands().front();
  std::string name = cmd->get_name();
  for (const CLI::App* p = cmd->get_parent(); p; p = p->get_parent()) name = p->get_name() + " " + name;
  for (const std::string& extra : app.remaining(true)) {
    std::vector<std::string> names;
    std::string typed = extra;
    if (!extra.empty() && extra[0] == '-') {
      typed = extra.substr(0, extra.find('='));
      for (const CLI::Option* o : cmd->get_options()) {
        if (o->get_group().empty()) continue;
        for (const auto& l : o->get_lnames()) names.push_back("--" + l);
        for (const auto& s : o->get_snames()) names.push_back("-" + s);
      }
    } else {
      for (const CLI::App* s : cmd->get_subcommands([](const CLI::App* s) { return !s->get_group().empty(); }))
        names.push_back(s->get_name());
    }
    const std::string dym = ipilab::did_you_mean(typed, names);
    if (!dym.empty())
      return fmt::format("{}: '{}' is not {}{}", name, typed, extra[0] == '-' ? "an option here" : "a command", dym);
  }
  return {};
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "ipilab: models, emulates and measures inter-processor interrupt (IPI) delivery in virtual machines.\n"
      "Hyper-V enlightened IPIs (HvCallSendSyntheticClusterIpi[Ex]) and GICv4.1 direct vSGI (GITS_SGIR),\n"
      "the Linux guest policies before and after each upstream change, a discrete-event simulator of\n"
      "multi-socket hosts, real KVM measurements and real ftrace IPI traces.",
      "ipilab"};
  app.footer(std::string(kExitStatuses) + "\n\nRun 'ipilab <command> --help' for the details of a command.");
  app.require_subcommand(0, 1);
  app.set_version_flag("--version", "ipilab " IPILAB_VERSION);

  ipilab::cli::add_run_command(app);
  ipilab::cli::add_list_command(app);
  ipilab::cli::add_topo_command(app);
  ipilab::cli::add_hv_command(app);
  ipilab::cli::add_gic_command(app);
  ipilab::cli::add_trace_command(app);
  ipilab::cli::add_replay_command(app);
  ipilab::cli::add_measure_command(app);
  ipilab::cli::add_sweep_command(app);
  ipilab::cli::add_help_commands(app, kExitStatuses);
  refuse_negative_unsigned(app);

  try {
    app.parse(argc, argv);
    if (app.get_subcommands().empty()) {
      std::fputs(app.help().c_str(), stdout);
      return 0;
    }
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    if (const std::string s = suggest_for_extras(app); !s.empty()) fmt::print(stderr, "{}\n", s);
    return rc == 0 ? 0 : static_cast<int>(ipilab::ExitStatus::BadInput);
  } catch (const ipilab::InputError& e) {
    fmt::print(stderr, "ipilab: error: {}\n", e.what());
    return static_cast<int>(ipilab::ExitStatus::BadInput);
  } catch (const ipilab::UnavailableError& e) {
    fmt::print(stderr, "ipilab: unavailable: {}\n", e.what());
    return static_cast<int>(ipilab::ExitStatus::Unavailable);
  } catch (const ipilab::CheckFailed& e) {
    fmt::print(stderr, "ipilab: check failed: {}\n", e.what());
    return static_cast<int>(ipilab::ExitStatus::Failure);
  } catch (const std::exception& e) {
    fmt::print(stderr, "ipilab: internal error: {}\n", e.what());
    return static_cast<int>(ipilab::ExitStatus::Failure);
  }
  return 0;
}
