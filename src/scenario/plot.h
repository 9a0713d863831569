// ipilab/scenario/plot.h — `ipilab run --plot FILE.svg|.png`: the main metric's distribution of every
// variant as cumulative curves (CDF), one plot per scenario, drawn by gnuplot (Debian gnuplot-nox).
//
// What the plot shows (plot_script.cpp):
//   curves   a variant's main metric's quantiles read from the histogram (sim/histogram.h, relative
//            error <= 1/256) at q = 0, 0.5, ..., 99, 99.1, ..., 99.9, 99.95, 99.99, 100; y: % of
//            iterations <= x; a dot on each curve at the model's mean. A variant without samples
//            (e.g. every IPI lost) has no curve: it is named in the title and the legend ("no
//            samples, not drawn"), never drawn as a line at 0.
//   published figures  each expectation of the scenario on the main metric ([scenario.expect]) is
//            marked: a mean as a dashed vertical line with its tolerance band, a percentile as a
//            point at its height with the tolerance as an error bar; one legend entry per distinct
//            value, naming its variant (or how many share it). Expectations on other metrics or
//            counters are named under the x axis (they are checked in the table, not drawable here).
//   x axis   the metric's unit, or the next larger time unit when the values pass 10,000 of it
//            (ns -> us, us -> ms, ps -> ns; axis_unit()); cut at the largest p99.9 of the variants
//            (said under the axis) but wide enough for the published figures; logarithmic when the
//            drawn values span a factor of 20 or more.
//
// gnuplot runs through common/output.h: the data sit in a temporary folder, the image is written to
// the temporary file of an output::AtomicFile beside the target, checked, and renamed with the
// run's other outputs only after everything was written, so a failure leaves no partial output.
// Errors: a FILE not ending in .svg or .png, or a folder that does not exist -> InputError("--plot");
// gnuplot not installed -> UnavailableError (hint: apt-get install gnuplot-nox); gnuplot failing ->
// std::runtime_error with its message.
#pragma once

#include <cstddef>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "common/output.h"
#include "scenario/runner.h"

namespace ipilab::scenario {

/// Checks the requested path (extension, folder) before anything runs.
void check_plot_path(const std::filesystem::path& requested);
/// Throws UnavailableError when no gnuplot is on PATH (output::require_gnuplot).
inline void require_gnuplot() { output::require_gnuplot("--plot"); }
/// The file of each scenario: `requested` itself for one scenario; with several, the scenario name
/// appended to the stem ("out.svg" -> "out-seed000-hyperv.svg"; characters other than letters,
/// digits, '-', '_' and '.' become '_').
std::vector<std::filesystem::path> plot_paths(const std::vector<ScenarioResult>& rs,
                                              const std::filesystem::path& requested);

/// The unit of the x axis for values up to `largest` in `unit` (see the file comment): the unit the
/// axis shows and what a value in `unit` is divided by to get it.
struct AxisUnit {
  std::string unit;
  double divisor = 1;
};
AxisUnit axis_unit(const std::string& unit, double largest);

/// The gnuplot script and data of one scenario's plot (exposed for tests): `data_file` and
/// `image_file` are the paths the script names. `data` holds one block per drawn variant ("# NAME",
/// then "x q" lines), then one block per variant's mean dot and per published mark.
struct PlotScript {
  std::string script;
  std::string data;
  std::vector<std::string> drawn;      ///< variants with a curve, in order
  std::vector<std::string> no_samples; ///< variants left out: their main metric has no sample
  AxisUnit axis;                       ///< the x axis's unit
  bool log_x = false;
};
PlotScript plot_script(const ScenarioResult& r, const std::string& data_file, const std::string& image_file,
                       bool png);

/// One image's gnuplot script and the text of the data file the script reads.
struct ImageText {
  std::string script;
  std::string data;
};
/// draw(i, data_file, image_file, png): scenario i's image, drawn into image_file from data_file.
using DrawImage =
    std::function<ImageText(std::size_t i, const std::string& data_file, const std::string& image_file, bool png)>;
/// The loop every --plot renderer shares: for each scenario i that `wanted(i)`, an output for
/// `finals[i]` added to `outs`, its data file "<data_prefix>-<i><data_suffix>" in one temporary
/// folder named `temp_name`, the image rendered by `draw` (output::render); returns the paths drawn.
std::vector<std::filesystem::path> render_each(const std::vector<std::filesystem::path>& finals, output::ImageFormat format,
                                               const std::string& temp_name, const std::string& data_prefix,
                                               const std::string& data_suffix, const std::function<bool(std::size_t)>& wanted,
                                               const DrawImage& draw, output::OutputSet& outs);
/// The same for the images of a `--plot` option given after the run: checks `requested`
/// (check_plot_path) and that gnuplot is there, then draws into plot_paths(rs, requested).
std::vector<std::filesystem::path> render_each(const std::vector<ScenarioResult>& rs, const std::string& requested,
                                               const std::string& temp_name, const std::string& data_prefix,
                                               const std::string& data_suffix, const std::function<bool(std::size_t)>& wanted,
                                               const DrawImage& draw, output::OutputSet& outs);

/// Renders every scenario's plot into the temporary file of an output added to `outs` (the caller
/// commits `outs` with the run's other outputs); returns the final paths.
std::vector<std::filesystem::path> render_plots(const std::vector<ScenarioResult>& rs,
                                                const std::filesystem::path& requested, output::OutputSet& outs);

}  // namespace ipilab::scenario
