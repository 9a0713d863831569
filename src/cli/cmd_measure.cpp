// ipilab measure kvm | c2c | all — real measurements on this machine: IPI round trips in a KVM guest
// (src/kvm, interleaved rounds) and the core-to-core cache-line latency matrix (src/measure/c2c.h);
// JSON, CSV, a heat map and a complete cost profile (src/measure/profile_writer.h). This file parses
// the command line; src/measure/command.h does the work (measuring, statistics, printing).
#include <unistd.h>

#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/commands.h"
#include "common/error.h"
#include "common/suggest.h"
#include "kvm/ipi_bench.h"
#include "measure/command.h"

namespace ipilab::cli {

namespace {

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

// The options of one command (measure, measure kvm | c2c | all) and those of them that only mean
// something when measuring (refused with --from when given).
struct Declared {
  measure::CommandOptions o;
  std::vector<CLI::Option*> measuring;
};

enum Which : unsigned { kKvm = 1, kC2c = 2 };

void add_options(CLI::App* cmd, Declared& d, unsigned which) {
  measure::CommandOptions& o = d.o;
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
    if (opt->get_name() != "--csv" && opt->get_name() != "--heatmap") d.measuring.push_back(opt);
  }
  cmd->add_option("--json", o.json, "write the full report as JSON to FILE ('-' = stdout instead of the table)")
      ->type_name("FILE|-");
  cmd->add_option("--profile-out", o.profile_out,
                  "write a complete cost profile: the measured primitives (empirical histograms, provenance) and the "
                  "values fitted to measured cases, over --base")
      ->type_name("FILE.toml");
  cmd->add_option("--base", o.base,
                  fmt::format("with --profile-out or --compare: the profile the measured entries override (shipped "
                              "name or file; default {})", measure::kDefaultBaseProfile))
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

void run(const Declared& d, unsigned which) {
  measure::CommandOptions o = d.o;
  o.kvm = which & kKvm;
  o.c2c = which & kC2c;
  for (const CLI::Option* opt : d.measuring)
    if (opt->count() > 0) o.measuring_given.push_back(opt->get_name());
  o.progress = ::isatty(2) == 1;
  measure::measure_command(o, std::cout, std::cerr);
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
  auto bare_o = std::make_shared<Declared>();
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
    auto o = std::make_shared<Declared>();
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
