// ipilab/measure/outputs.h — the output files of `ipilab measure`, checked before anything is measured
// (a measurement can take a minute; an unwritable path must fail at once, exit 2, nothing written).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace ipilab::measure {

enum class ImageFormat { Png, Svg, Pdf };

/// The image format a path's extension names: .png, .svg or .pdf (any case). Anything else is
/// InputError(option, ...): an image is written only in the format its name promises.
ImageFormat image_format_of(const std::string& path, std::string_view option);
/// The gnuplot `set terminal` line body for `f` (pngcairo / svg / pdfcairo, with a size).
const char* gnuplot_terminal(ImageFormat f);
/// Whether a gnuplot executable is on PATH.
bool gnuplot_available();

struct OutputRequest {
  std::string option;         ///< "--json"
  std::string path;           ///< as given; empty = not requested
  bool allow_stdout = false;  ///< "-" means standard output
};

/// Checks every requested output: the folder exists and is writable (outputs are written to a
/// temporary file there and renamed), the path is not a folder, "-" only where allowed, and no two
/// options name the same file. InputError(option, reason naming the path) for the first problem.
void check_outputs(const std::vector<OutputRequest>& outputs);

}  // namespace ipilab::measure
