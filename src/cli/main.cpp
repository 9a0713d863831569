// ipilab — entry point: builds the CLI11 command tree and maps errors to exit statuses.
#include <cstdio>
#include <exception>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli/commands.h"
#include "common/error.h"

namespace {

constexpr const char* kFooter = R"(Exit statuses:
  0  success
  1  internal error, or a check you asked for failed
  2  bad input: command line, scenario, profile, trace or hex (the message names the place)
  3  this machine cannot do it (no /dev/kvm, no permission, no tracefs)

Run 'ipilab <command> --help' for the details of a command.)";

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "ipilab: models, emulates and measures inter-processor interrupt (IPI) delivery in virtual machines.\n"
      "Hyper-V enlightened IPIs (HvCallSendSyntheticClusterIpi[Ex]) and GICv4.1 direct vSGI (GITS_SGIR),\n"
      "the Linux guest policies before and after each upstream change, a discrete-event simulator of\n"
      "multi-socket hosts, real KVM measurements and real ftrace IPI traces.",
      "ipilab"};
  app.footer(kFooter);
  app.require_subcommand(0, 1);
  app.set_version_flag("--version", "ipilab 0.1.0");

  ipilab::cli::add_run_command(app);
  ipilab::cli::add_list_command(app);
  ipilab::cli::add_topo_command(app);
  ipilab::cli::add_hv_command(app);
  ipilab::cli::add_gic_command(app);
  ipilab::cli::add_trace_command(app);
  ipilab::cli::add_replay_command(app);
  ipilab::cli::add_measure_command(app);

  try {
    app.parse(argc, argv);
    if (app.get_subcommands().empty()) {
      std::fputs(app.help().c_str(), stdout);
      return 0;
    }
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
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
