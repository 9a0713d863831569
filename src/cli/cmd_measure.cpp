// ipilab measure kvm | c2c | all — real measurements on this machine: IPI round trips in a KVM guest
// (src/kvm, interleaved rounds) and the core-to-core cache-line latency matrix (src/measure/c2c.h);
// JSON, CSV, a heat map and a complete cost profile (src/measure/profile_writer.h). This file parses
// and prints; the measuring and the statistics live in src/measure.
#include <unistd.h>

#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/commands.h"
#include "common/error.h"
#include "common/file.h"
#include "common/suggest.h"
#include "measure/c2c.h"
#include "measure/outputs.h"
#include "measure/profile_writer.h"
#include "measure/recorded.h"
#include "measure/report.h"
#include "measure/this_host.h"

namespace ipilab::cli {

namespace {

constexpr const char* kDefaultBase = "kvm-skylake-pv-ipi";

constexpr const char* kMeasureHelp = R"(Measure IPIs on this machine, for real.

  ipilab measure kvm   IPI round trips and call-single in a 2-vCPU KVM guest run by ipilab's own VMM
  ipilab measure c2c   one-way core-to-core cache-line latency between host CPUs
  ipilab measure all   both; a bare 'ipilab measure [options]' is 'ipilab measure all [options]'

Each has its own --help. Without /dev/kvm (or without permission) kvm exits 3 and says why.)";

constexpr const char* kKvmHelp = R"(How: one VM holds every case; the sender visits them in interleaved rounds
(A B C ... A B C ...) so slow drift of the host hits all alike. Cases: counter-read (one LFENCE;RDTSC;LFENCE
pair, reported apart), loop (the batch loop itself), cpuid-exit (one exit handled in KVM: the reference of
the ratios), and workload x target x mechanism: ipi-roundtrip (the kvm-unit-tests `ipi` shape) and
call-single (a queued CSD, smp_call_function_single-like); target spin or halt; mechanisms named as the
simulator's (ipilab list --mechanisms): x2apic-physical (WRMSR 0x830), kvm-pv (KVM_HC_SEND_IPI), hyperv
(HvCallSendSyntheticClusterIpi, the fast call Linux uses for VP < 64) and hyperv-ex (the Ex call, memory
input), both executed by ipilab's VMM in user space: one exit per call. The old names x2apic, hv-fast and
hv-ex still work.
Timing: a pilot round sizes each case's batch so the counter read is at most --max-bias of a sample (one
timestamp pair per batch, the sample is the batch's per-iteration mean); a case is timed per iteration only
where its operation is that long anyway, or the target is halted (the idle gap before each send stays out of
the timed window). The table says which, per case.
Per case: iterations run, median and p99 (cycles), the median in ns with its 95 % bootstrap interval over
rounds, and the ratio to --reference with a paired interval (ratios survive the host's drift; absolute
figures here move 15-40 % from run to run). A time budget that stops rounds early is marked '*'.
Units: guest TSC cycles (frequency from KVM_GET_TSC_KHZ); ns = cycles / TSC GHz.
Modelling: --profile-out writes a profile of this machine (the measured entries over --base, plus the values
fitted to measured cases); --compare also runs the built-in this-host scenario on that profile in the same
process and prints measured and modelled medians side by side, per case: fitted (one value each), predicted
(no fit of its own: the 10 % target), not covered (e.g. a spinning target on PVM) or unavailable.
--from FILE.json does both for a recorded measurement, without KVM.

Examples (from any directory):
  ipilab measure kvm
  ipilab measure kvm --mechanisms x2apic-physical,hyperv --targets halt --rounds 30 --json /tmp/kvm.json
  ipilab measure kvm --profile-out /tmp/this-host.toml --base kvm-skylake-pv-ipi
  ipilab measure kvm --compare --json /tmp/compare.json
  ipilab measure kvm --from /tmp/kvm.json --compare
  ipilab measure kvm --json - | jq '.kvm.cases[] | {name, ratio: .ratio_to_reference.value}')";

constexpr const char* kC2cHelp = R"(How: two threads pinned with hwloc CAS one cache line back and forth; one
steady_clock pair times a whole sample of --round-trips round trips (one-way = time / 2 / round trips);
every CPU pair is visited once per round, --rounds rounds, so drift hits all pairs alike. Table of mean ±
stddev per pair; a pair whose spread exceeds its mean is named in the warnings.

Examples (from any directory):
  ipilab measure c2c
  ipilab measure c2c --cpus 0,1 --rounds 50 --csv /tmp/c2c.csv --heatmap /tmp/c2c.svg
  ipilab measure c2c --json - | jq .c2c.median_pair_ns)";

constexpr const char* kAllHelp = R"(Both 'kvm' and 'c2c' (see their --help); --profile-out then holds the
measured KVM primitives, the cache-line transfer and the fitted values; --compare simulates the measured cases
on it (see 'ipilab measure kvm --help'). A bare 'ipilab measure [options]' is 'ipilab measure all [options]'.

Examples (from any directory):
  ipilab measure
  ipilab measure --compare
  ipilab measure --json /tmp/measure.json --profile-out /tmp/this-host.toml --base kvm-skylake-pv-ipi
  ipilab run this-host --profile myhost.toml   # a profile written by 'ipilab measure --profile-out myhost.toml')";

struct Opts {
  // kvm
  unsigned rounds = 20;
  std::uint64_t samples = 200;
  double budget = 2.0;
  double halt_gap_us = 30;
  std::uint64_t warmup = 5;
  double max_bias = 0.001;
  std::vector<std::string> mechanisms{"x2apic-physical", "kvm-pv", "hyperv", "hyperv-ex"};
  std::vector<std::string> workloads{"ipi-roundtrip", "call-single"};
  std::vector<std::string> targets{"spin", "halt"};
  std::string reference = "cpuid-exit";
  std::vector<unsigned> vcpu_cpus;
  unsigned resamples = 1000;
  std::uint64_t seed = 1;
  // c2c
  std::vector<unsigned> cpus;
  unsigned round_trips = 1000;
  unsigned c2c_rounds = 30;
  std::string csv, heatmap;
  // outputs
  std::string json, profile_out, base;
  // modelling
  bool compare = false;
  std::string from;                    ///< a recorded measurement instead of measuring
  std::vector<CLI::Option*> measuring; ///< options that only mean something when measuring
};

enum Which : unsigned { kKvm = 1, kC2c = 2 };

void add_options(CLI::App* cmd, Opts& o, unsigned which) {
  const std::size_t first = cmd->get_options().size();
  if (which & kKvm) {
    cmd->add_option("--rounds", o.rounds, "KVM: interleaved rounds (after one pilot round)")
        ->check(CLI::Range(1u, 100000u))
        ->capture_default_str();
    cmd->add_option("--samples", o.samples, "KVM: samples per case and round")
        ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{262144}))
        ->capture_default_str();
    cmd->add_option("--budget", o.budget, "KVM: time budget per case over all rounds, seconds (0 = none)")
        ->check(CLI::Range(0.0, 86400.0))
        ->capture_default_str();
    cmd->add_option("--halt-gap-us", o.halt_gap_us, "KVM halt cases: sender idle time before each send, us")
        ->check(CLI::Range(0.0, 1e6))
        ->capture_default_str();
    cmd->add_option("--warmup", o.warmup, "KVM: untimed iterations at the start of each case's chunk")
        ->check(CLI::Range(std::uint64_t{0}, std::uint64_t{1000000}))
        ->capture_default_str();
    cmd->add_option("--max-bias", o.max_bias, "KVM: largest share of a sample the counter read may take")
        ->check(CLI::Range(1e-6, 0.5))
        ->capture_default_str();
    cmd->add_option("--mechanisms", o.mechanisms, "KVM: send mechanisms, comma-separated")
        ->delimiter(',')
        ->check(CLI::Validator(
            [](std::string& name) -> std::string {
              if (kvm::mechanism_from_string(name)) return {};
              std::vector<std::string> names;
              for (std::string_view n : kvm::mechanism_names()) names.emplace_back(n);
              return fmt::format("'{}' is not a mechanism here{}: {} (the old names x2apic, hv-fast, hv-ex still work)",
                                 name, did_you_mean(name, names), fmt::join(names, ", "));
            },
            "MECHANISM"))
        ->capture_default_str();
    cmd->add_option("--workloads", o.workloads, "KVM: workloads, comma-separated")
        ->delimiter(',')
        ->check(CLI::IsMember({"ipi-roundtrip", "call-single"}))
        ->capture_default_str();
    cmd->add_option("--targets", o.targets, "KVM: target states, comma-separated")
        ->delimiter(',')
        ->check(CLI::IsMember({"spin", "halt"}))
        ->capture_default_str();
    cmd->add_option("--reference", o.reference, "KVM: the case every ratio divides by (a case name of the table)")
        ->capture_default_str();
    cmd->add_option("--vcpu-cpus", o.vcpu_cpus, "KVM: host CPUs (hwloc PU indices) of the sender and target vCPUs")
        ->delimiter(',')
        ->expected(2);
    cmd->add_option("--resamples", o.resamples, "KVM: bootstrap resamples for the intervals")
        ->check(CLI::Range(1u, 1000000u))
        ->capture_default_str();
    cmd->add_option("--seed", o.seed, "KVM: bootstrap RNG seed (the intervals are reproducible from the JSON)")
        ->capture_default_str();
  }
  if (which & kC2c) {
    cmd->add_option("--cpus", o.cpus, "c2c: host CPUs (hwloc PU indices), comma-separated; default all")->delimiter(',');
    cmd->add_option("--round-trips", o.round_trips, "c2c: round trips per sample")
        ->check(CLI::Range(1u, 10000000u))
        ->capture_default_str();
    cmd->add_option(which & kKvm ? "--c2c-rounds" : "--rounds", o.c2c_rounds, "c2c: interleaved rounds (samples per pair)")
        ->check(CLI::Range(1u, 100000u))
        ->capture_default_str();
    cmd->add_option("--csv", o.csv, "c2c: write the matrix of mean one-way ns as CSV to FILE")->type_name("FILE");
    cmd->add_option("--heatmap", o.heatmap, "c2c: write a heat map with gnuplot; the extension names the format")
        ->type_name("FILE.png|.svg|.pdf");
  }
  for (std::size_t i = first; i < cmd->get_options().size(); ++i) {
    CLI::Option* opt = cmd->get_options()[i];
    if (opt->get_name() != "--csv" && opt->get_name() != "--heatmap") o.measuring.push_back(opt);
  }
  cmd->add_option("--json", o.json, "write the full report as JSON to FILE ('-' = stdout instead of the table)")
      ->type_name("FILE|-");
  cmd->add_option("--profile-out", o.profile_out,
                  "write a complete cost profile: the measured primitives (empirical histograms, provenance) and the "
                  "values fitted to measured cases, over --base")
      ->type_name("FILE.toml");
  cmd->add_option("--base", o.base,
                  fmt::format("with --profile-out or --compare: the profile the measured entries override (shipped "
                              "name or file; default {})", kDefaultBase))
      ->type_name("PROFILE");
  if (which & kKvm) {
    cmd->add_flag("--compare", o.compare,
                  "simulate the measured cases (the this-host scenario on the measured profile, in this process) and "
                  "print measured and modelled side by side");
    cmd->add_option("--from", o.from,
                    "use a recorded measurement (the JSON of 'ipilab measure --json') instead of measuring: for "
                    "--compare and --profile-out without KVM")
        ->type_name("FILE.json");
  }
}

template <class E, class F>
std::vector<E> parse_list(const std::vector<std::string>& names, F from_string) {
  std::vector<E> v;
  for (const std::string& n : names)
    if (const auto e = from_string(n)) v.push_back(*e);
  return v;
}

measure::MeasureOptions measure_options(const Opts& o, unsigned which) {
  measure::MeasureOptions mo;
  mo.kvm = which & kKvm;
  mo.c2c = which & kC2c;
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
void check_request(const Opts& o, const measure::MeasureOptions& mo) {
  if (!o.from.empty()) {
    for (const CLI::Option* opt : o.measuring)
      if (opt->count() > 0)
        throw InputError(opt->get_name(), fmt::format("means nothing with --from: '{}' was measured already", o.from));
  } else {
    measure::check_options(mo);
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

void check_kvm_for_compare(const Opts& o) {
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

measure::MeasureReport measure_or_load(const Opts& o, unsigned which, measure::MeasureOptions& mo,
                                       const std::function<void(const std::string&)>& progress) {
  measure::MeasureReport r;
  if (!o.from.empty()) {
    r = measure::load_recorded(o.from);
    if ((which & kKvm) && r.kvm.empty() && (o.compare || !(which & kC2c)))
      throw InputError("--from", fmt::format("'{}' holds no KVM cases{}", o.from,
                                             r.kvm_unavailable.empty() ? "" : ": " + r.kvm_unavailable));
  } else {
    mo.progress = progress;
    r = measure::run_measure(mo);
  }
  return r;
}

void print_report(const Opts& o, const measure::MeasureReport& r, const std::optional<measure::ThisHostModel>& model,
                  const nlohmann::json& j) {
  if (o.json == "-") {
    std::fputs((j.dump(2) + "\n").c_str(), stdout);
    for (const std::string& w : r.warnings) fmt::print(stderr, "ipilab: warning: {}\n", w);
  } else {
    if (!o.from.empty()) fmt::print("Recorded measurement: {}\n", o.from);
    std::fputs(measure::to_table(r).c_str(), stdout);
    if (o.compare && model) std::fputs(("\n" + measure::compare_table(*model)).c_str(), stdout);
  }
  std::fflush(stdout);
}

// Every file to its temporary file first, renamed together once all were written.
void write_files(const Opts& o, const measure::MeasureReport& r, const std::optional<measure::BaseProfile>& base,
                 const std::string& profile_text, const nlohmann::json& j) {
  output::OutputSet files_out;
  if (o.json != "-" && !o.json.empty()) files_out.write(o.json, "--json", j.dump(2) + "\n");
  if (base && !o.profile_out.empty()) files_out.write(o.profile_out, "--profile-out", profile_text);
  if (r.c2c && !o.csv.empty()) files_out.write(o.csv, "--csv", measure::c2c_csv(*r.c2c));
  if (r.c2c && !o.heatmap.empty()) measure::c2c_heatmap(*r.c2c, o.heatmap, files_out);
  files_out.commit_all();
}

void run(const Opts& o, unsigned which) {
  measure::MeasureOptions mo = measure_options(o, which);
  check_request(o, mo);
  std::optional<measure::BaseProfile> base;
  if (!o.profile_out.empty() || o.compare) base = measure::load_base_profile(o.base.empty() ? kDefaultBase : o.base);
  check_kvm_for_compare(o);

  std::function<void(const std::string&)> progress;
  if (::isatty(2) == 1) progress = [](const std::string& line) { fmt::print(stderr, "\r{:<70}", line); };
  const measure::MeasureReport r = measure_or_load(o, which, mo, progress);

  // The model: the fits and, with --compare, the this-host scenario on the profile (the same text
  // --profile-out writes). Without KVM cases the profile has only what was measured.
  std::optional<measure::ThisHostModel> model;
  std::string profile_text;
  if (base && !r.kvm.empty()) {
    measure::ModelOptions mopt;
    mopt.progress = progress;
    model = measure::model_this_host(r, *base, mopt);
    profile_text = model->profile_text;
  } else if (base) {
    profile_text = measure::to_profile_toml(r, *base);
  }
  if (progress) fmt::print(stderr, "\r{:<70}\r", "");

  // Outputs: all computed first, then written (each atomically).
  nlohmann::json j = measure::to_json(r);
  if (o.compare && model) j["compare"] = measure::compare_json(*model);
  if (!o.from.empty()) j["recorded_from"] = o.from;
  print_report(o, r, model, j);
  write_files(o, r, base, profile_text, j);
  if (base && !o.profile_out.empty()) {
    fmt::print(stderr, "ipilab: wrote {} (measured entries{} over '{}'; run it: ipilab run this-host --profile {})\n",
               o.profile_out,
               model && !model->fitted_entries.empty() ? fmt::format(" and {} fitted", model->fitted_entries.size()) : "",
               base->reference, o.profile_out);
  }
  const auto failed = r.failed_cases();
  if (!failed.empty()) {
    std::string names;
    for (const std::string& n : failed) names += (names.empty() ? "" : ", ") + n;
    throw CheckFailed(fmt::format("{} case{} produced no samples: {}", failed.size(), failed.size() == 1 ? "" : "s",
                                  names));
  }
}

// Options given to 'measure' itself belong to the bare form (= measure all); with a subcommand they would
// be silently dropped, so that is an error naming the first one.
void refuse_parent_options(const CLI::App* parent, const char* sub) {
  for (const CLI::Option* opt : parent->get_options())
    if (opt->count() > 0 && opt->get_name() != "--help")
      throw InputError(opt->get_name(), fmt::format("given before '{0}': options of 'ipilab measure {0}' go after it "
                                                    "(ipilab measure {0} {1} ...)",
                                                    sub, opt->get_name()));
}

}  // namespace

void add_measure_command(CLI::App& root) {
  auto* cmd = root.add_subcommand("measure", "Measure IPI round trips in a real KVM guest and core-to-core latency");
  // The one-line summary above is what 'ipilab --help' lists; the long text is this command's own help.
  cmd->footer(std::string(kMeasureHelp) + "\n\n" + kAllHelp);
  cmd->require_subcommand(0, 1);
  auto bare_o = std::make_shared<Opts>();
  add_options(cmd, *bare_o, kKvm | kC2c);  // 'ipilab measure --json x' = 'ipilab measure all --json x'
  struct Sub {
    const char* name;
    const char* summary;
    const char* help;
    unsigned parts;
  };
  static constexpr Sub kSubs[] = {
      {"kvm", "IPI micro-benchmarks in a KVM guest, interleaved rounds, ratios with intervals", kKvmHelp, kKvm},
      {"c2c", "One-way core-to-core cache-line latency matrix between host CPUs", kC2cHelp, kC2c},
      {"all", "Both kvm and c2c", kAllHelp, kKvm | kC2c}};
  for (const Sub& s : kSubs) {
    auto* sub = cmd->add_subcommand(s.name, s.summary);
    sub->footer(s.help);
    auto o = std::make_shared<Opts>();
    add_options(sub, *o, s.parts);
    sub->callback([cmd, o, &s] {
      refuse_parent_options(cmd, s.name);
      run(*o, s.parts);
    });
  }
  cmd->callback([cmd, bare_o] {
    if (cmd->get_subcommands().empty()) run(*bare_o, kKvm | kC2c);  // bare 'ipilab measure [options]'
  });
}

}  // namespace ipilab::cli
