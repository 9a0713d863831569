// ipilab/measure/outputs.h — the output files of `ipilab measure`, checked before anything is measured
// (a measurement can take a minute; an unwritable path must fail at once, exit 2, nothing written).
// The files themselves go through common/output.h.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/output.h"

namespace ipilab::measure {

using output::ImageFormat;

/// The image format a path's extension names: .png, .svg or .pdf (any case). Anything else is
/// InputError(option, ...): an image is written only in the format its name promises.
ImageFormat image_format_of(const std::string& path, std::string_view option);
/// The gnuplot `set terminal` line body for `f` (pngcairo / svg / pdfcairo, with a size).
const char* gnuplot_terminal(ImageFormat f);

using output::OutputRequest;
using output::check_outputs;

}  // namespace ipilab::measure
