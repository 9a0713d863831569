// ipilab/evidence/published_figures.h — what `ipilab run` says of the published figures a shipped
// scenario models: the validation set's figures (validate.h) whose scenario ran, each with its
// kind, the model's value and its error, so that a reader of one run sees which of its numbers
// test the model (predicted), which it reproduces by construction (fitted: a profile value was
// solved from it) and which it misses (missed), without running `ipilab validate`.
//
// The scenario's own `expect` entries (the check column's ✓) are regression checks of the run; a
// fitted figure passes them whatever the model's structure. This block is where the difference
// shows.
//
// A figure is held against the run only when it is the shipped scenario file (a copy elsewhere
// may differ in anything; the block then says the figures were not held against it), its variant
// (and relative_to) ran, and the variant runs the figure's profile from the scenario (not
// `--profile`'s replacement: the block says how many it left out and why).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "evidence/validate.h"
#include "scenario/command.h"

namespace ipilab::evidence {

/// The figures of one scenario's run.
struct ScenarioFigures {
  std::vector<FigureResult> held;   ///< in the validation file's order
  std::size_t other_profile = 0;    ///< figures left out: --profile replaced the profile they test
  std::size_t not_run = 0;          ///< figures left out: their variant was not selected
  bool copy = false;                ///< the scenario is not the shipped file of its name
  std::size_t copy_figures = 0;     ///< with copy: the shipped scenario's figures not held against it
  /// The scenario models no published figure (nothing to print or add).
  bool none() const noexcept { return held.empty() && !other_profile && !not_run && !copy; }
};

/// The figures of `figures` that model scenario `p` (run as `r`), as described above.
ScenarioFigures scenario_figures(const std::vector<Figure>& figures, const scenario::PreparedScenario& p, const scenario::ScenarioResult& r);

/// The block printed after the scenario's report ("" when the scenario models no published figure).
std::string format_scenario_figures(const ScenarioFigures& s, const std::string& file_shown);
/// Adds "published_figures" to the scenario's JSON object (nothing when there are none).
void add_scenario_figures_json(nlohmann::ordered_json& scenario, const ScenarioFigures& s, const std::string& file_shown);

/// The RunExtension `ipilab run` always installs: reads the shipped validation set once (at the
/// first scenario that names a figure) and adds the block and the JSON to each scenario.
class PublishedFiguresExtension final : public scenario::RunExtension {
 public:
  void analyse(const scenario::PreparedScenario& p, const scenario::ScenarioResult& r, std::size_t index, std::ostream& err) override;
  std::string text(std::size_t index, bool details) const override;
  void json(nlohmann::ordered_json& scenario, std::size_t index) const override;
  bool plots(const std::vector<scenario::ScenarioResult>&, const std::string&, output::OutputSet&,
             std::vector<std::filesystem::path>&) const override {
    return false;
  }

 private:
  bool loaded_ = false;
  std::vector<Figure> figures_;
  std::vector<ScenarioFigures> done_;
};

}  // namespace ipilab::evidence
