// ipilab/evidence/tornado_plot.h — `ipilab run --sensitivity --plot FILE.svg|.png`: the tornado of
// each variant's main metric, drawn by gnuplot (as scenario/plot.h draws the CDFs, with the same
// file naming, temporary files and all-or-nothing commit).
//
// One panel per variant, stacked: a horizontal bar per cost (largest swing on top, at most
// kTornadoRows), from the metric at the cost's low end to the metric at its high end, split at the
// point value (blue: the cost's low end, red: its high end); a vertical line at the point value;
// the cost's name and class on the y axis. With a propagation (--uncertainty too), the main metric's
// 90 % interval is a grey band behind the bars.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include "evidence/propagate.h"
#include "evidence/sensitivity.h"
#include "scenario/plot.h"

namespace ipilab::evidence {

inline constexpr std::size_t kTornadoRows = 10;

/// The gnuplot script and data of one scenario's tornado (exposed for tests).
struct TornadoScript {
  std::string script;
  std::string data;
};
TornadoScript tornado_script(const scenario::ScenarioResult& r, const Sensitivity& s, const std::string& data_file,
                             const std::string& image_file, bool png, const Propagation* p = nullptr);

/// Renders one image per scenario (paths as scenario::plot_paths); a scenario without swings gets
/// none. Each image goes into the temporary file of an output added to `outs` (the caller commits
/// `outs`); returns the final paths.
std::vector<std::filesystem::path> render_tornados(const std::vector<scenario::ScenarioResult>& rs,
                                                   const std::vector<const Sensitivity*>& s, const std::string& requested,
                                                   output::OutputSet& outs, const std::vector<const Propagation*>& p = {});

}  // namespace ipilab::evidence
