// ipilab/measure/command.h — `ipilab measure kvm | c2c | all` as a function: the CLI
// (src/cli/cmd_measure.cpp) only declares the options and calls measure_command().
//
// Order (everything that can be wrong with the request is found before measuring):
//   1. the request: with --from, no option that only means something when measuring
//      (measuring_given); else the measuring options (measure/report.h check_options: counts, the
//      --reference case); --base only with --profile-out or --compare; every output target (folders
//      exist, one file per output, none over --from or --base); --heatmap's format, and gnuplot;
//   2. the base profile (--base, default kDefaultBaseProfile) when --profile-out or --compare needs it;
//      with --compare and no --from, that KVM is there (before measuring c2c for nothing);
//   3. measure (progress lines on `err`, rewritten in place, when opts.progress), or read --from;
//   4. the model: the fits and, with --compare, the this-host scenario on the measured profile;
//   5. the report on `out` (the tables, with --compare the comparison), or the JSON instead with
//      --json - (its warnings on `err`); then the files, each atomically (--json, --profile-out, --csv,
//      --heatmap), and a line on `err` naming the profile written;
//   6. CheckFailed if a measured case produced no samples (after the outputs are written).
// Errors: InputError (exit 2) for a bad request or a bad --from file, UnavailableError (exit 3)
// without KVM (kvm, --compare) or without gnuplot for --heatmap, CheckFailed (exit 1).
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

namespace ipilab::measure {

/// The profile the measured entries override when --base is not given.
inline constexpr const char* kDefaultBaseProfile = "kvm-skylake-pv-ipi";

struct CommandOptions {
  bool kvm = true;  ///< measure the KVM cases (ipilab measure kvm | all)
  bool c2c = true;  ///< measure the core-to-core matrix (ipilab measure c2c | all)
  // kvm
  unsigned rounds = 20;
  std::uint64_t samples = 200;  ///< per case and round
  double budget = 2.0;          ///< seconds per case over all rounds (0 = none)
  double halt_gap_us = 30;
  std::uint64_t warmup = 5;
  double max_bias = 0.001;
  std::vector<std::string> mechanisms{"x2apic-physical", "kvm-pv", "hyperv", "hyperv-ex"};  ///< names (kvm/mechanism names)
  std::vector<std::string> workloads{"ipi-roundtrip", "call-single"};
  std::vector<std::string> targets{"spin", "halt"};
  std::string reference = "cpuid-exit";
  std::vector<unsigned> vcpu_cpus{};  ///< sender and target host PUs; empty = 0 and 1
  unsigned resamples = 1000;
  std::uint64_t seed = 1;
  // c2c
  std::vector<unsigned> cpus{};  ///< empty = all
  unsigned round_trips = 1000;
  unsigned c2c_rounds = 30;
  std::string csv{}, heatmap{};  ///< "" = none
  // outputs
  std::string json{};         ///< "" = none, "-" = stdout instead of the tables
  std::string profile_out{};  ///< "" = none
  std::string base{};         ///< "" = kDefaultBaseProfile
  // modelling
  bool compare = false;
  std::string from{};                          ///< a recorded measurement (JSON) instead of measuring
  std::vector<std::string> measuring_given{};  ///< options given that only mean something when measuring (refused with --from)
  bool progress = false;                       ///< progress lines on `err`
};

/// Runs `ipilab measure` (see the file comment).
void measure_command(const CommandOptions& opts, std::ostream& out, std::ostream& err);

}  // namespace ipilab::measure
