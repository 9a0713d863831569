// ipilab — entry point: builds the CLI11 command tree and maps errors to exit statuses.
#include <cstdio>
#include <exception>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli/commands.h"
#include "cli/parse_errors.h"
#include "common/error.h"
#include "common/number.h"
#include "common/output.h"

#ifndef IPILAB_VERSION
#define IPILAB_VERSION "0.0.0"
#endif

namespace {

constexpr const char* kExitStatuses = R"(Exit statuses:
  0  success
  1  internal error, or a check you asked for failed
  2  bad input: command line, scenario, profile, trace or hex (the message names the place),
     or an output that cannot be written (a full disk, a missing folder)
  3  this machine cannot do it (no /dev/kvm, no permission, no tracefs))";

// Every numeric option goes through the one number parser (common/number.h): NaN, infinities,
// trailing characters, out-of-range and negative values for unsigned options (CLI11 would read
// "-1" as 2^64 - 1) are refused with the reason.
void check_numbers(CLI::App& app) {
  for (CLI::Option* o : app.get_options()) {
    const std::string type = o->get_type_name();
    std::optional<ipilab::number::Kind> kind;
    if (type.rfind("UINT", 0) == 0) kind = ipilab::number::Kind::Unsigned;
    else if (type.rfind("INT", 0) == 0) kind = ipilab::number::Kind::Signed;
    else if (type.rfind("FLOAT", 0) == 0) kind = ipilab::number::Kind::Real;
    if (!kind) continue;
    const bool seed = o->check_lname("seed");
    o->check(CLI::Validator(
        [seed, k = *kind](std::string& v) -> std::string {
          std::string p = ipilab::number::problem(v, k);
          if (seed && !p.empty() && !v.empty() && v[0] == '-')
            return v + " is negative: a seed is a whole number from 0 to 18446744073709551615";
          return p;
        },
        ""));
  }
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) check_numbers(*sub);
}

}  // namespace

namespace {

/// The exit path of an error main() reports: "ipilab: <label>: <what>" on stderr, then its status.
int failed(const char* label, const std::exception& e, ipilab::ExitStatus status) {
  fmt::print(stderr, "ipilab: {}: {}\n", label, e.what());
  return static_cast<int>(status);
}

int run_main(int argc, char** argv) {
  CLI::App app{
      "ipilab: models, emulates and measures inter-processor interrupt (IPI) delivery in virtual machines.\n"
      "Hyper-V enlightened IPIs (HvCallSendSyntheticClusterIpi[Ex]) and GICv4.1 direct vSGI (GITS_SGIR),\n"
      "the Linux guest policies before and after each upstream change, a discrete-event simulator of\n"
      "multi-socket hosts, real KVM measurements and real ftrace IPI traces.",
      "ipilab"};
  app.footer(std::string(kExitStatuses) + "\n\nRun 'ipilab <command> --help' for the details of a command.");
  app.require_subcommand(0, 1);
  app.set_version_flag("--version", "ipilab " IPILAB_VERSION);

  namespace cli = ipilab::cli;
  // In the order 'ipilab --help' lists them (commands.h).
  for (auto add :
       {cli::add_run_command, cli::add_list_command, cli::add_topo_command, cli::add_hv_command, cli::add_gic_command,
        cli::add_kvm_command, cli::add_trace_command, cli::add_replay_command, cli::add_measure_command,
        cli::add_sweep_command, cli::add_validate_command, cli::add_calibrate_command})
    add(app);
  cli::add_help_commands(app, kExitStatuses);  // last: the man page and completions see every command
  check_numbers(app);

  try {
    app.parse(argc, argv);
    if (app.get_subcommands().empty()) {
      std::fputs(app.help().c_str(), stdout);
      return 0;
    }
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) {  // --help, --version
      if (const std::string bad = ipilab::cli::unknown_command_before_help(app, argc, argv); !bad.empty()) {
        fmt::print(stderr, "{}", bad);
        return static_cast<int>(ipilab::ExitStatus::BadInput);
      }
      return app.exit(e);
    }
    fmt::print(stderr, "{}", ipilab::cli::parse_error_message(app, e));
    return static_cast<int>(ipilab::ExitStatus::BadInput);
  } catch (const ipilab::InputError& e) {
    return failed("error", e, ipilab::ExitStatus::BadInput);
  } catch (const ipilab::UnavailableError& e) {
    return failed("unavailable", e, ipilab::ExitStatus::Unavailable);
  } catch (const ipilab::CheckFailed& e) {
    return failed("check failed", e, ipilab::ExitStatus::Failure);
  } catch (const std::exception& e) {
    return failed("internal error", e, ipilab::ExitStatus::Failure);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  ipilab::output::install_checked_stdout();
  ipilab::output::install_cleanup();
  int rc = run_main(argc, argv);
  // Output lost on the way (a full disk, a closed pipe) is a failure, whatever the command did.
  if (const std::string err = ipilab::output::finish_stdout(); !err.empty()) {
    fmt::print(stderr, "ipilab: error: {}\n", err);
    if (rc == 0) rc = static_cast<int>(ipilab::ExitStatus::BadInput);
  }
  return rc;
}
