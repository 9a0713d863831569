// ipilab validate — the shipped validation set against the model (src/evidence/validate.h does the work).
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "cli/commands.h"
#include "common/error.h"
#include "common/file.h"
#include "common/output.h"
#include "evidence/validate.h"
#include "sweep/exec.h"
#include "workload/workload.h"

namespace ipilab::cli {

namespace {

constexpr const char* kValidateHelp = R"(Runs every published figure of the validation set through the model and prints, per cost
profile and overall: the profile's fitted values, the figures fitted into them (reproduced by
construction: they validate nothing), the figures predicted (nothing fitted to them) with each
one's error, its stated tolerance and whether the 90 % interval over the profile's cost ranges
contains the published value, the figures the model computes but misses (kind missed: run and
printed with their error every time, never failing the run, never validating their profile), and
the published figures no scenario models yet. A profile with
fewer predicted figures than fitted values is reported as NOT VALIDATED.

The set is a data file (validation/figures.toml in the data folder; its header documents the
format): one [[figure]] per published number with its source (commit, Message-ID, paper table),
the scenario variant and metric that model it, and its kind (fitted, predicted, missed, not-modelled).

Examples:
  ipilab validate                         # the shipped set
  ipilab validate --json - | jq '.profiles'
  ipilab validate myfigures.toml --draws 0    # another set, without intervals

Exit status 1 when a predicted figure is outside its tolerance, 2 on bad input (an unknown
scenario, variant or metric, a fitted value of a profile that no figure names, a predicted
figure without a tolerance and its reason).)";

}  // namespace

void add_validate_command(CLI::App& root) {
  auto* cmd = root.add_subcommand("validate", "Check the model against the published figures (fitted vs predicted, per profile)");
  cmd->footer(kValidateHelp);
  auto file = std::make_shared<std::string>();
  auto json = std::make_shared<std::string>();
  auto draws = std::make_shared<std::size_t>(32);
  auto jobs = std::make_shared<unsigned>(0);
  cmd->add_option("file", *file, "Validation file (default: validation/figures.toml in the data folder)")->type_name("FILE.toml");
  cmd->add_option("--json", *json, "Write the result as JSON to FILE ('-' = stdout instead of the table)")->type_name("FILE|-");
  cmd->add_option("--draws", *draws, "Draws for the predicted figures' 90 % intervals (0: none)")
      ->default_str("32")
      ->check(CLI::Range(std::size_t{0}, std::size_t{100'000}));
  cmd->add_option("-j,--jobs", *jobs, "Worker threads for the draws (default: every CPU)")->check(CLI::Range(1u, 1024u));
  cmd->callback([=] {
    const std::string path = file->empty() ? evidence::shipped_figures_file() : *file;
    const auto figures = evidence::load_figures(path);
    evidence::ValidateOptions opt;
    opt.draws = *draws;
    opt.jobs = *jobs ? *jobs : sweep::available_cpus();
    opt.all_profiles = file->empty();
    const auto v = evidence::validate(file->empty() ? "validation/figures.toml" : path, figures, opt,
                                      [](std::string_view name, std::string_view place) -> const workload::WorkloadInfo& {
                                        return workload::find_workload(name, place);
                                      });
    if (*json == "-") {
      std::cout << evidence::validation_json(v).dump(2) << "\n";
    } else {
      if (!json->empty()) output::write_file(*json, evidence::validation_json(v).dump(2) + "\n", "--json");
      std::cout << evidence::format_validation(v);
      if (!json->empty()) std::cout << fmt::format("\nJSON written to {}\n", *json);
    }
    std::cout.flush();
    if (!v.pass()) throw CheckFailed("a predicted figure is outside its stated tolerance (see the table)");
  });
}

}  // namespace ipilab::cli
