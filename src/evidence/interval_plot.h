// ipilab/evidence/interval_plot.h — `ipilab run --uncertainty [N] --plot FILE.svg|.png`: each
// variant's main metric with its 90 % interval as error bars, drawn by gnuplot (the same file
// naming, temporary files and all-or-nothing commit as scenario/plot.h's CDFs).
//
// Two panels, stacked. Top: one row per variant (the first on top), a dot at the point value (the
// unmoved run's mean, what the table prints) and a horizontal error bar over the interval; the
// interval's bounds are written beside it. Bottom (with two or more variants): each variant's
// difference against the first variant in % of the first's point value, with the interval of that
// difference (made draw by draw, common random numbers) as an error bar and a line at zero, so a
// bar that crosses the line is a change that may not matter. A variant whose draws had no samples
// has no bar; its row says so.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "evidence/propagate.h"
#include "scenario/plot.h"

namespace ipilab::evidence {

/// The gnuplot script and data of one scenario's interval plot (exposed for tests).
struct IntervalScript {
  std::string script;
  std::string data;
};
IntervalScript interval_script(const scenario::ScenarioResult& r, const Propagation& p, const std::string& data_file,
                               const std::string& image_file, bool png);

/// Renders one image per scenario with a propagation (paths as scenario::plot_paths) into outputs
/// added to `outs` (the caller commits them); returns the final paths.
std::vector<std::filesystem::path> render_interval_plots(const std::vector<scenario::ScenarioResult>& rs,
                                                         const std::vector<const Propagation*>& p, const std::string& requested,
                                                         output::OutputSet& outs);

}  // namespace ipilab::evidence
