#include "trace/command.h"

#include <unistd.h>

#include <cctype>
#include <filesystem>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "common/error.h"
#include "common/output.h"
#include "trace/analysis.h"
#include "trace/export.h"
#include "trace/live.h"
#include "trace/live_view.h"
#include "trace/plot.h"
#include "trace/record.h"
#include "trace/report.h"

namespace ipilab::trace {

namespace {

// "10ms", "500us", "250000ns", "1s", or a bare number of ns.
std::uint64_t parse_duration_ns(const std::string& text, const std::string& option) {
  std::size_t i = 0;
  while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.')) ++i;
  const std::string num = text.substr(0, i), unit = text.substr(i);
  double v = 0;
  try {
    std::size_t used = 0;
    v = std::stod(num, &used);
    if (used != num.size()) throw std::invalid_argument("x");
  } catch (...) {
    throw InputError(option, fmt::format("'{}': expected a duration such as 10ms, 500us or 250000ns", text));
  }
  double scale = 0;
  if (unit.empty() || unit == "ns") scale = 1;
  else if (unit == "us") scale = 1e3;
  else if (unit == "ms") scale = 1e6;
  else if (unit == "s") scale = 1e9;
  else throw InputError(option, fmt::format("'{}': unit '{}' (use ns, us, ms or s)", text, unit));
  const double ns = v * scale;
  if (!(ns >= 1) || ns > 3.6e12) throw InputError(option, fmt::format("'{}': must be between 1 ns and 1 h", text));
  return static_cast<std::uint64_t>(ns);
}

void check_trace_outputs(const TraceOptions& opts) {
  if (!opts.plot.empty()) output::image_format_of(opts.plot, "--plot");
  output::check_outputs({{"--json", opts.json, true},
                         {"--plot", opts.plot, false},
                         {"--events", opts.events, false},
                         {"--perfetto", opts.perfetto, false},
                         {"--save", opts.save, false}},
                        {{"FILE", opts.file == "-" ? std::string() : opts.file}});
  if (!opts.events.empty()) row_format(opts.events);
  if (!opts.perfetto.empty() && std::filesystem::path(opts.perfetto).extension() != ".json")
    throw InputError("--perfetto", fmt::format("'{}': the file name must end in .json", opts.perfetto));
}

// The outputs asked for and the report (text on `out`, or the JSON with --json -).
void write_trace_outputs(const TraceOptions& opts, const TraceAnalysis& analysis, const ReadInfo& info,
                         const std::string& name, TraceExports& exports, std::ostream& out, std::ostream& err,
                         std::string_view before_report = {}) {
  const auto buffers = analysis.buffers();
  // Every file to its temporary file first; renamed together only when all were written.
  output::OutputSet files_out;
  if (!opts.plot.empty()) {
    if (buffers.size() > 1)
      throw InputError("--plot", "this trace has IPI events in several buffers: pick one with --buffer NAME");
    plot_trace(*buffers.front().second, opts.plot, files_out);
  }
  std::string doc;
  if (!opts.json.empty())
    doc = report_json(analysis, info, name).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  if (!opts.json.empty() && opts.json != "-") files_out.write(opts.json, "--json", doc);
  exports.prepare();
  files_out.prepare_all();
  exports.commit();
  files_out.commit_all();
  if (!opts.perfetto.empty())
    err << fmt::format("ipilab: wrote {} ({} flows send -> arrival); open it in ui.perfetto.dev\n", opts.perfetto,
                       exports.flows());
  if (!opts.events.empty()) err << fmt::format("ipilab: wrote {} ({} rows)\n", opts.events, exports.rows());
  if (opts.json == "-") {
    out << before_report << doc;
    return;
  }
  const std::string text = report_text(analysis, info, name);
  out << before_report << text;
}

void trace_file(const TraceOptions& opts, std::ostream& out, std::ostream& err) {
  // Check every option before the (possibly long) analysis.
  check_trace_outputs(opts);
  AnalysisOptions opt;
  opt.pair_limit_ns = parse_duration_ns(opts.pair_limit, "--pair-limit");
  const RowFormat rows = opts.events.empty() ? RowFormat::Csv : row_format(opts.events);
  const std::string name = opts.file == "-" ? std::string("<stdin>") : opts.file;
  TraceExports exports(opts.events, rows, opts.perfetto, fmt::format("ipilab trace {}", name));
  TraceAnalysis::ObserverFactory factory;
  if (exports.any()) factory = [&](std::string_view b) { return exports.observer_for(b); };
  TraceAnalysis analysis(opt, {}, {}, factory);
  const ReadInfo info = analyse_trace(opts.file, analysis, opts.buffer);
  write_trace_outputs(opts, analysis, info, name, exports, out, err);
}

// --live: streams from tracefs (trace/live.h), a table refreshed in place on a terminal or one line
// per interval on `err`, then the full report of what was streamed and the outputs asked for.
void trace_live(const TraceOptions& opts, std::ostream& out, std::ostream& err) {
  if (!opts.file.empty()) throw InputError("FILE", "--live reads this machine's tracefs: give no FILE");
  if (opts.buffer) throw InputError("--buffer", "--live streams its own tracefs instance: no --buffer");
  check_trace_outputs(opts);
  AnalysisOptions opt;
  opt.pair_limit_ns = parse_duration_ns(opts.pair_limit, "--pair-limit");
  const RowFormat rows = opts.events.empty() ? RowFormat::Csv : row_format(opts.events);
  const std::string name = "this machine";
  TraceExports exports(opts.events, rows, opts.perfetto, "ipilab trace --live");
  LiveView view;
  std::vector<std::unique_ptr<TeeAnalysisObserver>> tees;
  auto factory = [&](std::string_view b) -> AnalysisObserver* {
    tees.push_back(std::make_unique<TeeAnalysisObserver>());
    tees.back()->to.push_back(&view);
    if (auto* x = exports.observer_for(b)) tees.back()->to.push_back(x);
    return tees.back().get();
  };
  TraceAnalysis analysis(opt, {}, {}, factory);
  LiveOptions lo;
  lo.duration_s = opts.duration_s;
  lo.save = opts.save;
  const long ncpu = ::sysconf(_SC_NPROCESSORS_CONF);
  const auto cpus = static_cast<std::uint32_t>(ncpu > 0 ? ncpu : 0);
  auto tick = [&](double elapsed) {
    if (opts.terminal) out << "\x1b[H\x1b[2J" << view.table(elapsed, cpus);
    else err << view.line(elapsed);
    out.flush();
    view.next_interval(elapsed);
  };
  const LiveResult r = live_trace(lo, analysis, tick);
  err << fmt::format("ipilab: streamed {} events ({} lost) on {} CPUs in {:.3f} s: {} IPI sends, {} queued calls{}\n",
                     r.record.events, r.record.lost, r.record.cpus, r.record.seconds, view.ipis(), view.calls(),
                     opts.save.empty() ? std::string() : fmt::format("; raw events saved in {}", opts.save));
  if (!r.record.missing.empty()) {
    std::string m;
    for (const auto& e : r.record.missing) m += " " + e;
    err << fmt::format("ipilab: this kernel lacks:{}\n", m);
  }
  // The table is cleared with the report's first line, after the lines above on `err` (as stdout's
  // line buffer held it back when this was printed with stdio); if the outputs fail, it is left for
  // the flush at exit, after the error message.
  const std::string_view clear = opts.terminal ? "\x1b[H\x1b[2J" : "";
  try {
    analysis.finish(r.info, name);
    write_trace_outputs(opts, analysis, r.info, name, exports, out, err, clear);
  } catch (...) {
    out << clear;
    throw;
  }
}

}  // namespace

void trace_command(const TraceOptions& opts, std::ostream& out, std::ostream& err) {
  if (opts.live) return trace_live(opts, out, err);
  if (opts.duration_s > 0 || !opts.save.empty())
    throw InputError(opts.save.empty() ? "--duration" : "--save", "only with --live");
  if (opts.file.empty())
    throw InputError("FILE", "a trace file is required, or --live for this machine's tracefs (see 'ipilab trace --help')");
  trace_file(opts, out, err);
}

void record_command(const RecordCommandOptions& opts, std::ostream& err) {
  RecordOptions opt;
  opt.output = opts.output;
  opt.duration_s = opts.duration_s;
  opt.command = opts.command;
  opt.instance = opts.top_level ? std::string() : opts.instance;
  opt.buffer_kb = opts.buffer_kb;
  opt.text = opts.text;
  const RecordResult r = record_trace(opt);
  err << fmt::format("ipilab: recorded {} events ({} lost) on {} CPUs in {:.3f} s into {}\n", r.events, r.lost,
                     r.cpus, r.seconds, opts.output);
  if (!r.missing.empty()) {
    err << "ipilab: this kernel lacks:";
    for (const auto& m : r.missing) err << " " << m;
    err << "\n";
  }
  if (r.command_status != 0) throw CheckFailed(fmt::format("the command exited with status {}", r.command_status));
}

}  // namespace ipilab::trace
