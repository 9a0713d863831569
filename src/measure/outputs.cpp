#include "measure/outputs.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <system_error>

#include <fmt/format.h>

#include "common/error.h"

namespace ipilab::measure {

namespace fs = std::filesystem;

ImageFormat image_format_of(const std::string& path, std::string_view option) {
  std::string ext = fs::path(path).extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return std::tolower(c); });
  if (ext == ".png") return ImageFormat::Png;
  if (ext == ".svg") return ImageFormat::Svg;
  if (ext == ".pdf") return ImageFormat::Pdf;
  throw InputError(std::string(option),
                   fmt::format("'{}': name the image format with the extension: .png, .svg or .pdf", path));
}

const char* gnuplot_terminal(ImageFormat f) {
  switch (f) {
    case ImageFormat::Png: return "pngcairo size 900,800";
    case ImageFormat::Svg: return "svg size 900,800";
    case ImageFormat::Pdf: return "pdfcairo size 9in,8in";
  }
  return "pngcairo";
}

bool gnuplot_available() { return std::system("command -v gnuplot >/dev/null 2>&1") == 0; }

void check_outputs(const std::vector<OutputRequest>& outputs) {
  std::vector<std::pair<fs::path, std::string>> seen;
  for (const OutputRequest& o : outputs) {
    if (o.path.empty()) continue;
    if (o.path == "-") {
      if (!o.allow_stdout) throw InputError(o.option, "'-' (standard output) is not possible here: name a file");
      continue;
    }
    const fs::path p(o.path);
    const fs::path dir = p.has_parent_path() ? p.parent_path() : fs::path(".");
    std::error_code ec;
    if (!fs::is_directory(dir, ec))
      throw InputError(o.option, fmt::format("'{}': folder '{}' does not exist", o.path, dir.string()));
    if (::access(dir.c_str(), W_OK | X_OK) != 0)
      throw InputError(o.option, fmt::format("'{}': folder '{}' is not writable", o.path, dir.string()));
    if (fs::is_directory(p, ec)) throw InputError(o.option, fmt::format("'{}' is a folder, not a file", o.path));
    if (p.filename().empty() || p.filename() == "." || p.filename() == "..")
      throw InputError(o.option, fmt::format("'{}' names no file", o.path));
    const fs::path canon = fs::weakly_canonical(fs::absolute(p, ec), ec);
    for (const auto& [other, option] : seen)
      if (other == canon)
        throw InputError(o.option, fmt::format("'{}' is also the file of {}: give each output its own file", o.path,
                                               option));
    seen.emplace_back(canon, o.option);
  }
}

}  // namespace ipilab::measure
