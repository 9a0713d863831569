#include "scenario/plot.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>

#include "common/error.h"
#include "common/file.h"
#include "scenario/report.h"

namespace ipilab::scenario {

namespace fs = std::filesystem;

void check_plot_path(const fs::path& requested) {
  output::image_format_of(requested, "--plot");
  output::check_outputs({{"--plot", requested.string(), false}});
}

std::vector<fs::path> plot_paths(const std::vector<ScenarioResult>& rs, const fs::path& requested) {
  if (rs.size() <= 1) return {requested};
  std::vector<fs::path> out;
  for (const auto& r : rs) {
    fs::path p = requested;
    std::string safe = r.name;  // a file-name-safe form of the scenario name
    for (char& c : safe)
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') c = '_';
    p.replace_filename(fmt::format("{}-{}{}", requested.stem().string(), safe, requested.extension().string()));
    out.push_back(p);
  }
  return out;
}

std::vector<fs::path> render_plots(const std::vector<ScenarioResult>& rs, const fs::path& requested,
                                   output::OutputSet& outs) {
  const output::ImageFormat format = output::image_format_of(requested, "--plot");
  require_gnuplot();
  const auto finals = plot_paths(rs, requested);
  output::TempDir tmp("ipilab-plot");
  for (std::size_t i = 0; i < rs.size(); ++i) {
    const fs::path data = tmp.file(fmt::format("data-{}.txt", i));
    output::AtomicFile& image = outs.add(finals[i], "--plot");
    output::render(image, format, tmp, "--plot", [&](const std::string& image_file) {
      const PlotScript ps = plot_script(rs[i], data.string(), image_file, format == output::ImageFormat::Png);
      tmp.write(data.filename().string(), ps.data);
      return ps.script;
    });
  }
  return finals;
}

}  // namespace ipilab::scenario
