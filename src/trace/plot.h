// ipilab/trace/plot.h — `ipilab trace --plot`: latency distributions per kind and a source x target
// heat map, drawn by gnuplot (run as a subprocess; Debian package gnuplot-nox).
#pragma once

#include <filesystem>

#include "common/output.h"
#include "trace/analysis.h"

namespace ipilab::trace {

/// Draws two panels into `output` (.svg or .png, chosen by the extension): left, the cumulative
/// distribution of send -> entry latency (ns, log scale) per kind, from the histogram buckets; right,
/// the number of IPIs per (source CPU, target CPU). The image is drawn into a temporary file in the
/// output's folder and renamed over `output` only when gnuplot succeeded, so nothing half-written
/// remains. Throws InputError("--plot", ...) for a bad extension or folder, UnavailableError when
/// gnuplot is not installed, CheckFailed-free: a gnuplot failure is an std::runtime_error with its
/// stderr.
void plot_trace(const IpiAnalysis& analysis, const std::filesystem::path& output);
/// The same, drawn into the temporary file of an output added to `outs` (committed by the caller
/// with the command's other outputs; common/output.h).
void plot_trace(const IpiAnalysis& analysis, const std::filesystem::path& output, output::OutputSet& outs);

/// The gnuplot script plot_trace runs (data files named in it); exposed for tests.
std::string plot_script(const IpiAnalysis& analysis, const std::filesystem::path& data_dir,
                        const std::filesystem::path& image, bool svg);

}  // namespace ipilab::trace
