// ipilab/sweep/plot.h — `ipilab sweep --plot FILE.svg|.png`: line plots and heat maps of a sweep,
// drawn by gnuplot (Debian gnuplot-nox).
//
//   line     x = one axis (numeric axes placed by value, optionally on a log scale; others in their
//            order, labelled), y = the plot's value (mean / p50 / p99 of the main metric in its unit,
//            change_pct in %, or a counter), one line per value of the `lines` axis;
//   heatmap  x and y = two axes (in their order, labelled), colour = the value, and the value
//            written in each cell (a point without a value is a blank cell).
// The other axes are held at `where` values, else at their first value (for change_pct, an axis
// named in the baseline is held at its first value other than the baseline's, so the plot does not
// compare the baseline with itself). The fixed values are written in the title.
//
// Files: one plot -> FILE itself; several -> FILE-<plot name>.svg each. Rendering goes to temporary
// files beside the targets, renamed over them only when every plot rendered (all or nothing).
#pragma once

#include "common/output.h"

#include <filesystem>
#include <string>
#include <vector>

#include "scenario/plot.h"
#include "sweep/output.h"
#include "sweep/spec.h"

namespace ipilab::sweep {

/// The plots drawn when the spec has none: a line plot along the first axis with more than one
/// value (one line per value of the next such axis if it has at most 12), and with two such axes a
/// heat map of them.
std::vector<PlotSpec> default_plots(const Spec& spec);

/// The image file of each plot (see the file comment).
std::vector<std::filesystem::path> plot_files(const std::vector<PlotSpec>& plots, const std::filesystem::path& requested);

struct SweepPlotScript {
  std::string script;
  std::string data;
  bool empty = false;  ///< no point has a value: nothing to draw
};
/// The gnuplot script and data of one plot (exposed for tests).
SweepPlotScript plot_script(const SweepRun& r, const PlotSpec& p, const std::string& data_file,
                            const std::string& image_file, bool png);

/// Renders every plot into the temporary file of an output added to `outs` (the caller commits it
/// with the sweep's other outputs); returns the final paths. Plots with nothing to draw are left
/// out and named in `notes`.
std::vector<std::filesystem::path> render_plots(const SweepRun& r, const std::vector<PlotSpec>& plots,
                                                const std::filesystem::path& requested, std::vector<std::string>& notes,
                                                output::OutputSet& outs);

}  // namespace ipilab::sweep
