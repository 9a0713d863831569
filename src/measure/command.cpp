#include "measure/command.h"

#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/error.h"
#include "common/output.h"
#include "kvm/ipi_bench.h"
#include "kvm/vm.h"
#include "measure/c2c.h"
#include "measure/outputs.h"
#include "measure/profile_writer.h"
#include "measure/recorded.h"
#include "measure/report.h"
#include "measure/this_host.h"

namespace ipilab::measure {

namespace {

using Progress = std::function<void(const std::string&)>;

template <class E, class F>
std::vector<E> parse_list(const std::vector<std::string>& names, F from_string) {
  std::vector<E> v;
  for (const std::string& n : names)
    if (const auto e = from_string(n)) v.push_back(*e);
  return v;
}

MeasureOptions measure_options(const CommandOptions& o) {
  MeasureOptions mo;
  mo.kvm = o.kvm;
  mo.c2c = o.c2c;
  mo.k.rounds = o.rounds;
  mo.k.samples_per_round = o.samples;
  mo.k.budget_seconds_per_case = o.budget;
  mo.k.halt_gap_us = o.halt_gap_us;
  mo.k.warmup = o.warmup;
  mo.k.max_bias = o.max_bias;
  mo.k.mechanisms = parse_list<kvm::Mechanism>(o.mechanisms, kvm::mechanism_from_string);
  mo.k.workloads = parse_list<kvm::Workload>(o.workloads, kvm::workload_from_string);
  mo.k.targets = parse_list<kvm::TargetState>(o.targets, kvm::target_from_string);
  mo.k.reference = o.reference;
  mo.k.host_pus = o.vcpu_cpus;
  mo.bootstrap.resamples = o.resamples;
  mo.bootstrap.seed = o.seed;
  mo.c2c_config.pus = o.cpus;
  mo.c2c_config.round_trips = o.round_trips;
  mo.c2c_config.samples = o.c2c_rounds;
  return mo;
}

// Everything that can be wrong with the request is found before measuring.
void check_request(const CommandOptions& o, const MeasureOptions& mo) {
  if (!o.from.empty()) {
    if (!o.measuring_given.empty())
      throw InputError(o.measuring_given.front(),
                       fmt::format("means nothing with --from: '{}' was measured already", o.from));
  } else {
    check_options(mo);
  }
  if (!o.base.empty() && o.profile_out.empty() && !o.compare)
    throw InputError("--base", "only means something with --profile-out or --compare");
  output::check_outputs({{"--json", o.json, true},
                          {"--csv", o.csv, false},
                          {"--heatmap", o.heatmap, false},
                          {"--profile-out", o.profile_out, false}},
                         {{"--from", o.from}, {"--base", o.base}});
  if (!o.heatmap.empty()) {
    measure::image_format_of(o.heatmap, "--heatmap");
    output::require_gnuplot("--heatmap");
  }
}

void check_kvm_for_compare(const CommandOptions& o) {
  if (o.compare && o.from.empty()) {  // before measuring c2c for nothing
    try {
      kvm::check_kvm_available(false);
    } catch (const UnavailableError& e) {
      throw UnavailableError(fmt::format("--compare needs the KVM cases: {} (--from FILE.json models a recorded "
                                         "measurement without KVM)",
                                         e.what()));
    }
  }
}

MeasureReport measure_or_load(const CommandOptions& o, MeasureOptions& mo, const Progress& progress) {
  MeasureReport r;
  if (!o.from.empty()) {
    r = load_recorded(o.from);
    if (o.kvm && r.kvm.empty() && (o.compare || !o.c2c))
      throw InputError("--from", fmt::format("'{}' holds no KVM cases{}", o.from,
                                             r.kvm_unavailable.empty() ? "" : ": " + r.kvm_unavailable));
  } else {
    mo.progress = progress;
    r = run_measure(mo);
  }
  return r;
}

void write_report(const CommandOptions& o, const MeasureReport& r, const std::optional<ThisHostModel>& model,
                  const nlohmann::json& j, std::ostream& out, std::ostream& err) {
  if (o.json == "-") {
    out << j.dump(2) << "\n";
    for (const std::string& w : r.warnings) err << fmt::format("ipilab: warning: {}\n", w);
  } else {
    if (!o.from.empty()) out << fmt::format("Recorded measurement: {}\n", o.from);
    out << to_table(r);
    if (o.compare && model) out << "\n" << compare_table(*model);
  }
  out.flush();
}

// Every file to its temporary file first, renamed together once all were written.
void write_files(const CommandOptions& o, const MeasureReport& r, const std::optional<BaseProfile>& base,
                 const std::string& profile_text, const nlohmann::json& j) {
  output::OutputSet files_out;
  if (o.json != "-" && !o.json.empty()) files_out.write(o.json, "--json", j.dump(2) + "\n");
  if (base && !o.profile_out.empty()) files_out.write(o.profile_out, "--profile-out", profile_text);
  if (r.c2c && !o.csv.empty()) files_out.write(o.csv, "--csv", c2c_csv(*r.c2c));
  if (r.c2c && !o.heatmap.empty()) c2c_heatmap(*r.c2c, o.heatmap, files_out);
  files_out.commit_all();
}

void throw_if_failed(const MeasureReport& r) {
  const auto failed = r.failed_cases();
  if (failed.empty()) return;
  std::string names;
  for (const std::string& n : failed) names += (names.empty() ? "" : ", ") + n;
  throw CheckFailed(fmt::format("{} case{} produced no samples: {}", failed.size(), failed.size() == 1 ? "" : "s",
                                names));
}

}  // namespace

void measure_command(const CommandOptions& opts, std::ostream& out, std::ostream& err) {
  MeasureOptions mo = measure_options(opts);
  check_request(opts, mo);
  std::optional<BaseProfile> base;
  if (!opts.profile_out.empty() || opts.compare)
    base = load_base_profile(opts.base.empty() ? kDefaultBaseProfile : opts.base);
  check_kvm_for_compare(opts);

  Progress progress;
  if (opts.progress) progress = [&err](const std::string& line) { err << fmt::format("\r{:<70}", line); };
  const MeasureReport r = measure_or_load(opts, mo, progress);

  // The model: the fits and, with --compare, the this-host scenario on the profile (the same text
  // --profile-out writes). Without KVM cases the profile has only what was measured.
  std::optional<ThisHostModel> model;
  std::string profile_text;
  if (base && !r.kvm.empty()) {
    ModelOptions mopt;
    mopt.progress = progress;
    model = model_this_host(r, *base, mopt);
    profile_text = model->profile_text;
  } else if (base) {
    profile_text = to_profile_toml(r, *base);
  }
  if (progress) err << fmt::format("\r{:<70}\r", "");

  // Outputs: all computed first, then written (each atomically).
  nlohmann::json j = to_json(r);
  if (opts.compare && model) j["compare"] = compare_json(*model);
  if (!opts.from.empty()) j["recorded_from"] = opts.from;
  write_report(opts, r, model, j, out, err);
  write_files(opts, r, base, profile_text, j);
  if (base && !opts.profile_out.empty()) {
    err << fmt::format("ipilab: wrote {} (measured entries{} over '{}'; run it: ipilab run this-host --profile {})\n",
                       opts.profile_out,
                       model && !model->fitted_entries.empty() ? fmt::format(" and {} fitted", model->fitted_entries.size()) : "",
                       base->reference, opts.profile_out);
  }
  throw_if_failed(r);
}

}  // namespace ipilab::measure
