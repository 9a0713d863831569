#include "scenario/command.h"

#include <filesystem>
#include <ostream>

#include <fmt/format.h>

#include "common/error.h"
#include "common/file.h"
#include "scenario/catalog.h"
#include "scenario/plot.h"
#include "scenario/report.h"

namespace ipilab::scenario {

namespace fs = std::filesystem;

namespace {

// The JSON of every result, with the extension's additions.
nlohmann::ordered_json results_json(const std::vector<ScenarioResult>& results, const std::vector<std::shared_ptr<RunExtension>>& exts) {
  nlohmann::ordered_json j = to_json(results);
  for (const auto& ext : exts) {
    if (results.size() == 1) {
      ext->json(j, 0);
    } else {
      for (std::size_t i = 0; i < results.size(); ++i) ext->json(j["scenarios"][i], i);
    }
  }
  return j;
}

// The first extension that draws --plot, or the CDFs.
std::vector<fs::path> draw_plots(const std::vector<ScenarioResult>& results, const CommandOptions& opts, output::OutputSet& outs) {
  std::vector<fs::path> plots;
  for (const auto& ext : opts.extensions)
    if (ext->plots(results, opts.plot, outs, plots)) return plots;
  return render_plots(results, opts.plot, outs);
}

}  // namespace

void run_command(const CommandOptions& opts, std::ostream& out, std::ostream& err, const WorkloadLookup& lookup) {
  // 1. Arguments and output targets.
  if (opts.iterations && *opts.iterations == 0) throw InputError("--iterations", "must be at least 1");
  if (opts.iterations && *opts.iterations > 1'000'000'000)
    throw InputError("--iterations", fmt::format("{} is more than 1e9", *opts.iterations));
  const std::vector<std::string> names = opts.scenarios.empty() ? default_scenarios() : opts.scenarios;
  std::vector<std::string> files;
  for (const auto& n : names) files.push_back(resolve_scenario(n));
  if (!opts.plot.empty()) {
    output::image_format_of(opts.plot, "--plot");
    require_gnuplot();
  }
  check_timeline_options(opts.timeline);
  {
    // Every output checked at once: folders, one file per output, no output over an input.
    std::vector<output::OutputRequest> outs = {{"--json", opts.json, true}, {"--plot", opts.plot, false}};
    for (auto& r : output_requests(opts.timeline)) outs.push_back(std::move(r));
    std::vector<output::InputFile> ins = {{"--profile", opts.profile}};
    for (const auto& f : files) ins.push_back({"scenario", f});
    output::check_outputs(outs, ins);
  }

  // 2. Parse and prepare everything before running anything.
  RunOverrides ov;
  ov.seed = opts.seed;
  ov.iterations = opts.iterations;
  ov.variants = opts.variants;
  if (!opts.profile.empty()) {
    std::error_code ec;
    if (!fs::is_regular_file(opts.profile, ec))
      throw InputError("--profile", fmt::format("'{}': no such profile file", opts.profile));
    ov.profile = std::make_shared<const cost::Profile>(cost::Profile::load_file(opts.profile));
    ov.profile_shown = opts.profile;
  }
  std::vector<PreparedScenario> prepared;
  for (const auto& f : files) prepared.push_back(prepare(load_scenario(f), ov, lookup));
  SimTimeline timeline(opts.timeline, SimTimeline::Unit::Iterations, "ipilab run");
  for (auto& p : prepared)
    for (auto& v : p.variants) timeline.observe(v.spec, p.name, v.name, p.info->default_mechanism);

  // 3. Run.
  ProgressFn progress;
  if (opts.progress)
    progress = [&err](const std::string& sc, const std::string& v, std::size_t i, std::size_t n, double secs) {
      err << fmt::format("[{}] {} ({}/{}): {:.2f} s\n", sc, v, i + 1, n, secs) << std::flush;
    };
  std::vector<ScenarioResult> results;
  for (const auto& p : prepared) results.push_back(run(p, progress));
  for (const auto& ext : opts.extensions)
    for (std::size_t i = 0; i < prepared.size(); ++i) ext->analyse(prepared[i], results[i], i, err);

  // 4. Output: every file written to its temporary file first (plots, JSON, timeline), renamed
  // together only when all were written; then stdout.
  output::OutputSet files_out;
  std::vector<fs::path> plots;
  if (!opts.plot.empty()) plots = draw_plots(results, opts, files_out);
  if (!opts.json.empty() && opts.json != "-")
    files_out.write(opts.json, "--json", results_json(results, opts.extensions).dump(2) + "\n");
  const std::string timeline_note = timeline.write(files_out);
  files_out.commit_all();
  err << timeline_note << std::flush;
  if (opts.json == "-") {
    out << results_json(results, opts.extensions).dump(2) << "\n";
  } else {
    TextOptions topt;
    topt.breakdown = opts.breakdown;
    topt.details = opts.details;
    for (std::size_t i = 0; i < results.size(); ++i) {
      if (i) out << "\n";
      out << format_text(results[i], topt);
      for (const auto& ext : opts.extensions) out << ext->text(i, opts.details);
    }
    if (!opts.json.empty()) out << fmt::format("\nJSON written to {}\n", opts.json);
    for (const auto& p : plots) out << fmt::format("plot written to {}\n", p.string());
  }
  out.flush();

  // 5. Checks.
  if (opts.check) {
    std::size_t missed = 0, total = 0;
    std::string first;
    for (const auto& r : results)
      for (const auto& c : r.checks) {
        if (!c.skipped.empty()) continue;
        ++total;
        if (c.pass) continue;
        if (!missed)
          first = fmt::format("{} / {}: {}{} = {} vs expected {} ±{:g}%", r.name, c.expect.variant, c.expect.key,
                              c.counter ? "" : " " + c.expect.stat, format_number(c.actual),
                              format_number(c.expect.value), c.expect.tolerance * 100);
        ++missed;
      }
    if (total == 0) err << "ipilab: note: --check: these scenarios state no expectations\n";
    if (missed) throw CheckFailed(fmt::format("{} of {} expectations missed; first: {}", missed, total, first));
  }
}

}  // namespace ipilab::scenario
