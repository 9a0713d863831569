#include "measure/outputs.h"

namespace ipilab::measure {

ImageFormat image_format_of(const std::string& path, std::string_view option) {
  return output::image_format_of(path, option, {ImageFormat::Png, ImageFormat::Svg, ImageFormat::Pdf});
}

const char* gnuplot_terminal(ImageFormat f) {
  switch (f) {
    case ImageFormat::Png: return "pngcairo size 900,800";
    case ImageFormat::Svg: return "svg size 900,800";
    case ImageFormat::Pdf: return "pdfcairo size 9in,8in";
  }
  return "pngcairo";
}

}  // namespace ipilab::measure
