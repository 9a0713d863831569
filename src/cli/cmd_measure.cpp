// ipilab measure — real measurements on this machine: IPI round trips in KVM guests (src/kvm) and the
// core-to-core cache-line latency matrix (src/measure/c2c.h); optional cost-profile output.
#include <cstdio>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cli/commands.h"
#include "common/error.h"
#include "common/file.h"
#include "measure/c2c.h"
#include "measure/report.h"

namespace ipilab::cli {

namespace {

constexpr const char* kDescription = R"(Measure IPIs on this machine, for real.

  kvm   IPI micro-benchmarks in a 2-vCPU KVM guest built by ipilab's own VMM (vCPU threads pinned to
        host CPUs 0 and 1). Workloads: ipi-roundtrip (send, target handler acks through a shared flag:
        the kvm-unit-tests `ipi` shape) and call-single (smp_call_function_single-like, a queued CSD).
        Target states: spin (target loops with interrupts on) and halt (target in HLT). Send mechanisms:
        x2apic (WRMSR 0x830), kvm-pv (KVM_HC_SEND_IPI), hv-fast / hv-ex (Hyper-V
        HvCallSendSyntheticClusterIpi[Ex], executed by ipilab's VMM in user space: one exit per call).
        Per case: median, p99, mean (TSC cycles and ns) and CV of the batch medians, plus the exits to
        user space the VMM saw inside the timed loop. Also the cost of one VM exit (CPUID).
  c2c   One-way core-to-core latency matrix (ns) between host CPUs: CAS ping-pong on one cache line,
        round trip / 2 (the core-to-core-latency method).
  all   Both (the default).

Units: cycles are guest TSC cycles (frequency from KVM_GET_TSC_KHZ); ns = cycles / TSC GHz.
Without /dev/kvm (or without permission) `kvm` exits with status 3 and says why.

Examples:
  ipilab measure
  ipilab measure kvm --iterations 2000 --json out.json --profile-out profiles/this-host.toml
  ipilab measure c2c --csv c2c.csv --heatmap c2c.png)";

}  // namespace

void add_measure_command(CLI::App& root) {
  auto* cmd = root.add_subcommand("measure", "Measure IPI round trips in real KVM guests and core-to-core latency");
  cmd->description(kDescription);
  struct Opts {
    std::string what = "all";
    std::uint64_t iterations = 1000;
    unsigned batches = 5;
    double budget = 1.5;
    double halt_gap_us = 30;
    std::string json, profile_out, csv, heatmap;
    std::vector<unsigned> cpus;
  };
  auto o = std::make_shared<Opts>();
  cmd->add_option("what", o->what, "kvm, c2c or all")->check(CLI::IsMember({"kvm", "c2c", "all"}))->capture_default_str();
  cmd->add_option("--iterations", o->iterations,
                  "KVM: timed iterations per batch; c2c: round trips per sample")->capture_default_str();
  cmd->add_option("--batches", o->batches, "KVM: batches per case (CV is over batch medians)")->capture_default_str();
  cmd->add_option("--budget", o->budget, "KVM: time budget per case's timed loop, seconds (0 = none)")
      ->capture_default_str();
  cmd->add_option("--halt-gap-us", o->halt_gap_us, "KVM halt cases: idle time between sends, µs")->capture_default_str();
  cmd->add_option("--json", o->json, "also write the full report as JSON to FILE");
  cmd->add_option("--profile-out", o->profile_out,
                  "write a cost profile (TOML, src/cost format) of the measured primitives with provenance");
  cmd->add_option("--csv", o->csv, "c2c: write the matrix of mean one-way ns as CSV to FILE");
  cmd->add_option("--heatmap", o->heatmap, "c2c: write a heat map PNG (gnuplot) to FILE");
  cmd->add_option("--cpus", o->cpus, "c2c: host CPUs (hwloc PU indices) to measure; default all");
  cmd->callback([o] {
    if (o->iterations == 0) throw InputError("--iterations", "must be > 0");
    if (o->batches == 0) throw InputError("--batches", "must be > 0");
    if (o->budget < 0) throw InputError("--budget", "must be >= 0");
    if (o->halt_gap_us < 0) throw InputError("--halt-gap-us", "must be >= 0");
    measure::MeasureOptions mo;
    mo.kvm = o->what != "c2c";
    mo.c2c = o->what != "kvm";
    mo.iterations = o->iterations;
    mo.batches = o->batches;
    mo.max_seconds_per_case = o->budget;
    mo.halt_gap_us = o->halt_gap_us;
    measure::MeasureReport r;
    if (mo.c2c && !o->cpus.empty()) {
      // c2c on a CPU subset: run it separately so --cpus applies.
      measure::MeasureOptions kv = mo;
      kv.c2c = false;
      if (mo.kvm) r = measure::run_measure(kv);
      else r.host = measure::probe_host();
      measure::C2cConfig cc;
      cc.pus = o->cpus;
      cc.round_trips = static_cast<unsigned>(o->iterations);
      r.c2c = measure::measure_c2c(cc);
    } else {
      r = measure::run_measure(mo);
    }
    std::fputs(measure::to_table(r).c_str(), stdout);
    if (!o->json.empty()) write_file_atomically(o->json, measure::to_json(r).dump(2) + "\n");
    if (!o->profile_out.empty()) write_file_atomically(o->profile_out, measure::to_profile_toml(r));
    if (r.c2c && !o->csv.empty()) write_file_atomically(o->csv, measure::c2c_csv(*r.c2c));
    if (r.c2c && !o->heatmap.empty()) measure::c2c_heatmap_png(*r.c2c, o->heatmap);
  });
}

}  // namespace ipilab::cli
