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

std::vector<fs::path> render_each(const std::vector<fs::path>& finals, output::ImageFormat format,
                                  const std::string& temp_name, const std::string& data_prefix,
                                  const std::string& data_suffix, const std::function<bool(std::size_t)>& wanted,
                                  const DrawImage& draw, output::OutputSet& outs) {
  std::vector<fs::path> done;
  output::TempDir tmp(temp_name);
  for (std::size_t i = 0; i < finals.size(); ++i) {
    if (!wanted(i)) continue;
    const fs::path data = tmp.file(fmt::format("{}-{}{}", data_prefix, i, data_suffix));
    output::AtomicFile& image = outs.add(finals[i], "--plot");
    output::render(image, format, tmp, "--plot", [&](const std::string& image_file) {
      ImageText t = draw(i, data.string(), image_file, format == output::ImageFormat::Png);
      tmp.write(data.filename().string(), t.data);
      return std::move(t.script);
    });
    done.push_back(finals[i]);
  }
  return done;
}

std::vector<fs::path> render_each(const std::vector<ScenarioResult>& rs, const std::string& requested,
                                  const std::string& temp_name, const std::string& data_prefix,
                                  const std::string& data_suffix, const std::function<bool(std::size_t)>& wanted,
                                  const DrawImage& draw, output::OutputSet& outs) {
  check_plot_path(requested);
  require_gnuplot();
  const output::ImageFormat format = output::image_format_of(requested, "--plot");
  return render_each(plot_paths(rs, requested), format, temp_name, data_prefix, data_suffix, wanted, draw, outs);
}

std::vector<fs::path> render_plots(const std::vector<ScenarioResult>& rs, const fs::path& requested,
                                   output::OutputSet& outs) {
  const output::ImageFormat format = output::image_format_of(requested, "--plot");
  require_gnuplot();
  return render_each(
      plot_paths(rs, requested), format, "ipilab-plot", "data", ".txt", [](std::size_t) { return true; },
      [&](std::size_t i, const std::string& data_file, const std::string& image_file, bool png) {
        PlotScript ps = plot_script(rs[i], data_file, image_file, png);
        return ImageText{std::move(ps.script), std::move(ps.data)};
      },
      outs);
}

}  // namespace ipilab::scenario
