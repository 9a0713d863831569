// ipilab calibrate — fit a profile's values to published figures (src/evidence/calibrate.h does the work).
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "cli/commands.h"
#include "common/error.h"
#include "common/file.h"
#include "common/output.h"
#include "evidence/calibrate.h"
#include "evidence/measured_figures.h"
#include "measure/recorded.h"
#include "scenario/catalog.h"
#include "scenario/scenario.h"
#include "sweep/exec.h"
#include "workload/workload.h"

namespace ipilab::cli {

namespace {

constexpr const char* kCalibrateHelp = R"(Fits the chosen values of a cost profile to published figures by least squares (Eigen's
Levenberg-Marquardt; every evaluation runs the figures' scenario variants), and prints the fitted
values with their 90 % ranges, the residual of every figure and, when there are more figures than
values, each figure's leave-one-out error (fit without it, predict it). With as many values as
figures it says that no leave-one-out prediction exists: such a fit reproduces, it does not
predict. --profile-out writes the result as a profile layer that `extends` the base (the format
'ipilab measure --profile-out' writes), for 'ipilab run --profile FILE'.

Figures come from a validation file (default: validation/figures.toml in the data folder); by
default the profile's figures of kind fitted, and the profile's values of class fitted.

Or from a measurement (--measured FILE.json, what 'ipilab measure --json' wrote): each measured KVM
case MECHANISM/WORKLOAD/TARGET is the this-host scenario's variant of the same name, metric `sample`,
its median in ns; the scenario then runs on --profile (the measured profile 'ipilab measure
--profile-out' wrote, or a shipped one), and --fit is required. counter-read, loop and the c2c pairs
are profile entries, not figures; cpuid-exit is one only when named with --figure; a case that was
not measured, or a spinning target on the PVM backend, maps to nothing: named with --figure it is
refused (exit 2), otherwise listed as left out with the reason (docs/uncertainty.md).

Examples:
  ipilab calibrate --profile hyperv-ws2019 --start 1.5 --profile-out hv.toml   # refit seed 000's four values
  ipilab run seed000-send-ipi-one --profile hv.toml --check
  ipilab calibrate --profile kunpeng920-2s --fit its.sgir_process --figure G2 --figure G2-after-s0 --figure G2-after-s1
  ipilab measure --json mymeasure.json --profile-out myhost.toml
  ipilab calibrate --measured mymeasure.json --profile myhost.toml --fit vcpu.halt_wakeup --fit guest.callback --profile-out myfit.toml
  ipilab run this-host --profile myfit.toml)";

}  // namespace

void add_calibrate_command(CLI::App& root) {
  auto* cmd = root.add_subcommand("calibrate", "Fit a profile's values to published figures (least squares, leave-one-out)");
  cmd->footer(kCalibrateHelp);
  auto opt = std::make_shared<evidence::CalibrateOptions>();
  auto file = std::make_shared<std::string>();
  auto out = std::make_shared<std::string>();
  auto measured = std::make_shared<std::string>();
  auto no_loo = std::make_shared<bool>(false);
  cmd->add_option("--profile", opt->profile, "The profile to calibrate: a shipped name, or a file (FILE.toml)")->required();
  auto* figs = cmd->add_option("--figures", *file, "Validation file with the figures (default: validation/figures.toml)")->type_name("FILE.toml");
  cmd->add_option("--measured", *measured, "Fit to the cases of an 'ipilab measure --json' result instead (this-host scenario)")
      ->type_name("FILE.json")
      ->excludes(figs);
  cmd->add_option("--figure", opt->figure_ids, "Fit to this figure id (repeatable; default: the profile's fitted figures)")
      ->type_name("ID")
      ->allow_extra_args(false);
  cmd->add_option("--fit", opt->keys, "Fit this cost key (repeatable; default: the profile's values of class fitted)")
      ->type_name("KEY")
      ->allow_extra_args(false);
  cmd->add_option("--precision", opt->precision, "The figures' assumed relative standard error, for the ranges")
      ->default_str("0.02")
      ->check(CLI::Range(1e-6, 1.0));
  cmd->add_option("--start", opt->start, "Start every value at this factor of the profile's (1: the profile's values)")
      ->default_str("1")
      ->check(CLI::Range(0.01, 100.0));
  cmd->add_flag("--no-leave-one-out", *no_loo, "Skip the leave-one-out fits");
  cmd->add_option("--profile-out", *out, "Write the fitted values as a profile layer extending the base")->type_name("FILE.toml");
  cmd->add_option("--iterations", opt->iterations, "Iterations per model run (default: each scenario's)")->check(CLI::Range(1ull, 100000000ull));
  cmd->add_option("-j,--jobs", opt->jobs, "Worker threads for the model's runs (default: every CPU)")->check(CLI::Range(1u, 1024u));
  cmd->callback([=] {
    evidence::CalibrateOptions o = *opt;
    o.leave_one_out = !*no_loo;
    if (o.jobs == 0) o.jobs = sweep::available_cpus();
    const auto lookup = [](std::string_view name, std::string_view place) -> const workload::WorkloadInfo& {
      return workload::find_workload(name, place);
    };
    std::vector<evidence::Figure> figures;
    std::vector<std::string> left_out;
    if (!measured->empty()) {
      if (o.keys.empty()) throw InputError("--fit", "required with --measured: a measurement does not say which values it should move");
      const auto report = measure::load_recorded(*measured);
      std::vector<std::string> variants;
      for (const auto& v : scenario::load_scenario(scenario::resolve_scenario(evidence::kMeasuredScenario)).variants) variants.push_back(v.name);
      auto mf = evidence::measured_figures(report, *measured, o.profile, o.figure_ids, variants);
      figures = std::move(mf.figures);
      left_out = std::move(mf.left_out);
      o.run_on_profile = o.measured = true;
      o.figures_from = fmt::format("{}, measured on {}", *measured, mf.host);
    } else {
      figures = evidence::load_figures(file->empty() ? evidence::shipped_figures_file() : *file);
    }
    const auto c = evidence::calibrate(figures, o, lookup);
    if (!out->empty()) output::write_file(*out, evidence::calibration_profile(c), "--profile-out");
    std::cout << evidence::format_calibration(c);
    for (const auto& l : left_out) std::cout << "  left out: " << l << "\n";
    if (!out->empty()) std::cout << fmt::format("\nprofile layer written to {} (ipilab run SCENARIO --profile {})\n", *out, *out);
  });
}

}  // namespace ipilab::cli
