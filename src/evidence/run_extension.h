// ipilab/evidence/run_extension.h — `ipilab run --uncertainty [N] / --sensitivity`: the
// scenario::RunExtension that runs the propagation (propagate.h) and the swings (sensitivity.h)
// after each scenario's own runs, prints them after its report, adds them to its JSON and makes
// --plot draw, instead of the CDF, the tornado (tornado_plot.h) with --sensitivity (the 90 % interval
// as a band behind it with --uncertainty too), or with --uncertainty alone each variant's interval
// as error bars (interval_plot.h).
// Wall time of the analysis goes to stderr with the progress lines (never into the report).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "evidence/propagate.h"
#include "evidence/sensitivity.h"
#include "scenario/command.h"

namespace ipilab::evidence {

struct AnalysisOptions {
  std::optional<std::size_t> draws;   ///< --uncertainty [N]
  bool sensitivity = false;           ///< --sensitivity
  unsigned jobs = 0;                  ///< -j (0: every CPU)
  std::uint64_t iterations = 0;       ///< --draw-iterations (0: the run's)
  bool progress = false;              ///< a line per analysis with its wall time on stderr
};

class AnalysisExtension final : public scenario::RunExtension {
 public:
  explicit AnalysisExtension(AnalysisOptions opt) : opt_(opt) {}
  void analyse(const scenario::PreparedScenario& p, const scenario::ScenarioResult& r, std::size_t index, std::ostream& err) override;
  std::string text(std::size_t index, bool details) const override;
  void json(nlohmann::ordered_json& scenario, std::size_t index) const override;
  bool plots(const std::vector<scenario::ScenarioResult>& rs, const std::string& requested, output::OutputSet& outs,
             std::vector<std::filesystem::path>& finals) const override;

 private:
  struct Done {
    std::optional<Propagation> propagation;
    std::optional<Sensitivity> sensitivity;
  };
  AnalysisOptions opt_;
  std::vector<Done> done_;
};

}  // namespace ipilab::evidence
