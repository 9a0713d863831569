#include "sweep/command.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <ostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/error.h"
#include "common/file.h"
#include "scenario/plot.h"
#include "sweep/base.h"
#include "sweep/output.h"
#include "sweep/plot.h"
#include "sweep/points.h"
#include "sweep/progress.h"
#include "sweep/spec.h"

namespace ipilab::sweep {

namespace fs = std::filesystem;

namespace {

fs::path sweeps_dir() { return data_dir() / "scenarios" / "sweeps"; }

// Errors found on the root only (output targets) travel to the other ranks as "<status> <message>".
std::string encode_error(int status, const std::string& msg) { return fmt::format("{} {}", status, msg); }
[[noreturn]] void throw_encoded(const std::string& e) {
  const int status = e.empty() ? 1 : e[0] - '0';
  const std::string msg = e.size() > 2 ? e.substr(2) : e;
  if (status == 2) throw InputError("", msg);
  if (status == 3) throw UnavailableError(msg);
  throw std::runtime_error(msg);
}

std::vector<std::string> builtin_names() {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(sweeps_dir(), ec))
    if (e.path().extension() == ".toml") names.push_back(e.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace

std::string resolve_spec(const std::string& arg) {
  std::error_code ec;
  if (arg.empty()) throw InputError("SPEC", "empty sweep spec name");
  if (fs::is_regular_file(arg, ec)) return arg;
  const bool looks_like_path = arg.find('/') != std::string::npos || fs::path(arg).extension() == ".toml";
  if (!looks_like_path) {
    const fs::path f = sweeps_dir() / (arg + ".toml");
    if (fs::is_regular_file(f, ec)) return f.string();
  }
  if (looks_like_path) throw InputError(arg, "no such sweep spec file");
  std::string names;
  for (const auto& n : builtin_names()) names += (names.empty() ? "" : ", ") + n;
  throw InputError(arg, fmt::format("no such sweep spec file, and no built-in sweep of that name (built-in: {})",
                                    names.empty() ? "none" : names));
}

std::vector<BuiltinSweep> list_builtin_sweeps() {
  std::vector<BuiltinSweep> out;
  for (const auto& n : builtin_names()) {
    BuiltinSweep b;
    b.name = n;
    b.file = (sweeps_dir() / (n + ".toml")).string();
    try {
      const Spec s = load_spec(b.file);
      b.title = s.title;
      b.description = s.description;
      b.scenario = s.scenario;
      b.points = s.point_count();
    } catch (const InputError& e) {
      b.error = e.what();
    }
    out.push_back(std::move(b));
  }
  return out;
}

namespace {

// The output targets, checked on the root before any point runs; every rank learns the verdict.
void check_targets(const SweepOptions& opts, const std::string& file, Executor& exec) {
  std::string target_error;
  if (exec.is_root()) {
    try {
      if (!opts.plot.empty()) {
        output::image_format_of(opts.plot, "--plot");
        output::require_gnuplot("--plot");
      }
      output::check_outputs({{"--csv", opts.csv, true}, {"--json", opts.json, true}, {"--plot", opts.plot, false}},
                            {{"spec", file}});
    } catch (const InputError& e) {
      target_error = encode_error(2, e.what());
    } catch (const UnavailableError& e) {
      target_error = encode_error(3, e.what());
    }
  }
  target_error = exec.broadcast(target_error);
  if (!target_error.empty()) throw_encoded(target_error);

}

// Every point checked before any runs: invalid ones are an error or (skip_invalid) skipped, on every
// rank alike. False when interrupted.
bool check_points(const SweepOptions& opts, const Spec& spec, const Base& base, std::vector<Point>& points,
                  const std::vector<std::size_t>& todo, unsigned jobs, std::ostream& err,
                  const scenario::WorkloadLookup& lookup, Executor& exec) {
  const std::string& what = spec.name;
  Progress bar(err, opts.progress && exec.is_root(), what + ": checking", todo.size());
  ExecOptions eo;
  eo.jobs = jobs;
  eo.stop = opts.stop;
  eo.on_done = [&bar](std::size_t done, const std::string&) { bar.update(done, 0); };
  const auto checked = exec.run(todo, [&](std::size_t i) { return base.check(spec, points[i], lookup); }, eo);
  bar.finish();
  std::string decision;
  if (exec.is_root()) {
    nlohmann::json d = {{"error", ""}, {"skip", nlohmann::json::array()}, {"stopped", false}};
    for (std::size_t k = 0; k < todo.size(); ++k) {
      if (!checked[k]) {
        d["stopped"] = true;
        continue;
      }
      if (checked[k]->empty()) continue;
      if (!spec.skip_invalid) {
        d["error"] = encode_error(2, fmt::format("{} [point {}] (set skip_invalid = true in [sweep] to skip such points, "
                                                 "or add a [[skip]])", *checked[k], points[todo[k]].label));
        break;
      }
      d["skip"].push_back({todo[k], *checked[k]});
    }
    decision = d.dump();
  }
  const nlohmann::json d = nlohmann::json::parse(exec.broadcast(decision));
  if (!d["error"].get<std::string>().empty()) throw_encoded(d["error"].get<std::string>());
  if (d["stopped"].get<bool>()) {
    if (exec.is_root()) err << "ipilab: sweep interrupted while checking the points: nothing ran, nothing written\n";
    return false;
  }
  for (const auto& e : d["skip"]) points[e[0].get<std::size_t>()].skip = e[1].get<std::string>();
  return true;
}

// The table (or CSV / JSON on stdout) and the files, renamed together once all were written.
void write_outputs(const SweepOptions& opts, const SweepRun& run, const std::vector<PlotSpec>& plots, std::ostream& out,
                   std::ostream& err) {
  std::vector<std::string> notes;
  output::OutputSet files_out;
  std::vector<fs::path> rendered;
  if (!opts.plot.empty()) rendered = render_plots(run, plots, opts.plot, notes, files_out);
  if (!opts.csv.empty() && opts.csv != "-") files_out.write(opts.csv, "--csv", to_csv(run));
  if (!opts.json.empty() && opts.json != "-") files_out.write(opts.json, "--json", to_json(run).dump(2) + "\n");
  files_out.commit_all();
  if (opts.csv == "-") {
    out << to_csv(run);
  } else if (opts.json == "-") {
    out << to_json(run).dump(2) << "\n";
  } else {
    TableOptions to;
    to.max_rows = opts.max_rows;
    out << format_table(run, to);
    if (!opts.csv.empty()) out << fmt::format("\nCSV written to {}\n", opts.csv);
    if (!opts.json.empty()) out << fmt::format("{}JSON written to {}\n", opts.csv.empty() ? "\n" : "", opts.json);
    for (const auto& p : rendered) out << fmt::format("plot written to {}\n", p.string());
  }
  out.flush();
  for (const auto& n : notes) err << "ipilab: note: " << n << "\n";
}

}  // namespace

int sweep_command(const SweepOptions& opts, std::ostream& out, std::ostream& err, const scenario::WorkloadLookup& lookup,
                  Executor& exec) {
  const auto t0 = std::chrono::steady_clock::now();
  // 1. The spec, the base scenario, the points (every rank: the same files give the same points).
  if (opts.iterations && (*opts.iterations == 0 || *opts.iterations > 1'000'000'000))
    throw InputError("--iterations", "must be in 1..1e9");
  if (opts.csv == "-" && opts.json == "-") throw InputError("--csv", "--csv - and --json - both want stdout: give one a file");
  const std::string file = resolve_spec(opts.spec);
  const Spec spec = load_spec(file);
  const Base base = Base::load(spec);
  // Resolve the workload once here, before any worker thread: an unknown name fails early, and the
  // registry's one-time initialisation happens before the threads start (valgrind's helgrind/drd do
  // not see the ordering the C++ runtime gives function-local statics, and reported it as a race).
  (void)lookup(base.workload(), spec.scenario_place);
  const std::uint64_t seed = opts.seed ? *opts.seed : spec.seed ? *spec.seed : base.seed();
  const std::uint64_t iterations = opts.iterations ? *opts.iterations : spec.iterations ? *spec.iterations : base.iterations();
  std::vector<Point> points = expand(spec, seed);
  const std::vector<PlotSpec> plots = spec.plots.empty() ? default_plots(spec) : spec.plots;

  if (opts.list_points) {
    if (exec.is_root()) {
      for (const auto& p : points)
        out << fmt::format("{:>6}  seed {:<20}  {}{}\n", p.index, p.seed, p.label, p.skip ? "  [skip: " + *p.skip + "]" : "");
      out.flush();
    }
    return 0;
  }

  check_targets(opts, file, exec);
  const unsigned jobs = opts.jobs ? opts.jobs : exec.ranks() > 1 ? 1 : available_cpus();
  const std::string what = spec.name;

  // 2. Check every point before any runs.
  std::vector<std::size_t> todo;
  for (const auto& p : points)
    if (!p.skip) todo.push_back(p.index);
  if (!check_points(opts, spec, base, points, todo, jobs, err, lookup, exec)) return 130;
  todo.clear();
  for (const auto& p : points)
    if (!p.skip) todo.push_back(p.index);
  if (todo.empty()) throw InputError(file, fmt::format("every one of the {} points is skipped: nothing to run", points.size()));

  // 3. Run.
  std::atomic<std::size_t> failed{0};
  std::vector<std::optional<std::string>> payloads;
  {
    Progress bar(err, opts.progress && exec.is_root(), what, todo.size());
    ExecOptions eo;
    eo.jobs = jobs;
    eo.stop = opts.stop;
    eo.on_done = [&](std::size_t done, const std::string& payload) {
      if (from_wire(payload).status == PointResult::Status::Failed) ++failed;
      bar.update(done, failed);
    };
    payloads = exec.run(todo, [&](std::size_t i) { return to_wire(base.run_point(spec, points[i], iterations, lookup)); }, eo);
    bar.finish();
  }
  if (!exec.is_root()) return 0;

  // 4. Output (root only).
  SweepRun run;
  run.spec = &spec;
  run.spec_shown = spec.file;
  run.scenario_name = base.name();
  run.scenario_file = base.shown_file();
  run.workload = base.workload();
  run.variant = base.variant();
  run.seed = seed;
  run.iterations = iterations;
  run.warmup = base.warmup();
  run.results.resize(points.size());
  for (std::size_t k = 0; k < todo.size(); ++k)
    if (payloads[k]) run.results[todo[k]] = from_wire(*payloads[k]);
  for (std::size_t i = 0; i < points.size(); ++i)
    if (points[i].skip) {
      run.results[i].status = PointResult::Status::Skipped;
      run.results[i].error = *points[i].skip;
    }
  run.interrupted = opts.stop && opts.stop->load() && run.count(PointResult::Status::NotRun) > 0;
  run.points = std::move(points);

  write_outputs(opts, run, plots, out, err);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const std::size_t ran = run.count(PointResult::Status::Ok) + run.count(PointResult::Status::Failed);
  err << fmt::format("ipilab: sweep {}: {} of {} points ran in {:.2f} s ({:.1f} points/s, {} {} x {} thread{})\n", spec.name,
                     ran, run.points.size(), secs, secs > 0 ? static_cast<double>(ran) / secs : 0.0, exec.ranks(),
                     exec.ranks() == 1 ? "process" : "MPI ranks", jobs, jobs == 1 ? "" : "s");
  if (run.interrupted) {
    err << fmt::format("ipilab: sweep interrupted: {} points did not run; the outputs hold the {} that finished\n",
                       run.count(PointResult::Status::NotRun), ran);
    return 130;
  }
  if (const std::size_t f = run.count(PointResult::Status::Failed)) {
    err << fmt::format("ipilab: {} of {} points failed (their errors are in the table / CSV / JSON)\n", f, ran);
    return 1;
  }
  return 0;
}

}  // namespace ipilab::sweep
