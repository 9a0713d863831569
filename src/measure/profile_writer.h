// ipilab/measure/profile_writer.h — `ipilab measure --profile-out F.toml --base PROFILE`: a complete cost
// profile of this host.
//
// What it writes (the profile format of src/cost/profile.h, with its extensions `extends`, `dist`,
// `bins`, `class`):
//   [profile] name = "this-host", extends = the base (a shipped name as given, or a file's absolute
//             path), clock_ghz = the guest TSC (the measured entries are in ns and need no clock).
//   One [cost.KEY] per primitive measured here, class = "measured", dist = "empirical" with the
//   samples' histogram as bins = [[lo, hi, count], ...] (ns; the case's log grid in TSC cycles, stats.h
//   log_bins, as the JSON's histogram_ns has it) and value = the
//   bins' mean (what sampling them gives, within 3 % of the sample mean, which `note` states with the
//   median, p99 and the interval); `source` carries the provenance: host, CPU, kernel, KVM backend,
//   date, method, iterations and rounds.
//     vm.exit_entry      <- cpuid-exit (one exit handled in KVM + entry; includes KVM's CPUID handling)
//     guest.counter_read <- counter-read (one LFENCE; RDTSC; LFENCE pair)
//     guest.bench_loop   <- loop (the batch loop's control per iteration)
//     mem.cacheline_*    <- c2c, pairs grouped by topology class (c2c.h PairClass), one key per class
//   Then the values fitted to measured cases (FittedCost, this_host.h), class = "fitted", dist = "fixed".
//   Every base entry neither measured nor fitted here is listed in a comment as inherited (value, unit, source), so
//   the file says for every key where it comes from; the base itself applies through `extends`.
//   The measured composite cases (round trips, call-single) are listed in comments with their medians,
//   intervals and ratios: they are what a this-host simulation is compared against (the JSON has them
//   in full), not primitives, so they are not cost entries.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "cost/profile.h"
#include "measure/report.h"

namespace ipilab::measure {

struct BaseProfile {
  std::string reference;  ///< what `extends` names: the shipped name as given, or the absolute path
  std::string file;       ///< the file read
  cost::Profile profile;
};

/// Resolves `arg` — a path when it contains '/' or ends in ".toml", else a shipped profile name — and
/// loads it. InputError("--base", ...) for an unknown name (listing the shipped ones) or a missing file;
/// the profile's own errors as cost::Profile reports them.
BaseProfile load_base_profile(const std::string& arg);

/// One primitive measured here, with the key it prices.
struct MeasuredCost {
  std::string key;
  /// The samples' histogram in ns: a KVM case's log_bins (the JSON's histogram_ns, so a recorded
  /// measurement gives the same profile), c2c's log_bins of the pairs' samples.
  std::vector<Bin> bins_ns;
  std::string method;
  std::string note;
  std::uint64_t iterations = 0;    ///< timed iterations behind the samples
};
/// The measured primitives of `r`, in profile order; cases without samples give no entry.
std::vector<MeasuredCost> measured_costs(const MeasureReport& r);

/// A value fitted to a measured case (this_host.h fits them): written after the measured entries as
/// class "fitted", dist "fixed", in ns, with its source (which case, which figure) and note (what it
/// absorbs).
struct FittedCost {
  std::string key;
  double value_ns = 0;  ///< as written (as_written())
  std::string source;   ///< starts with FITTED
  std::string note;
};

/// A number as the profile writes it (6 significant digits): what reading the file back gives.
double as_written(double v);
/// "HOST (CPU, N CPUs), kernel K, KVM backend B[, itself a VM (L0 \"V\")]": where a measurement ran.
std::string measured_where(const HostInfo& h);

/// The profile text. Throws InputError("--profile-out", ...) when nothing was measured that a profile
/// can hold.
std::string to_profile_toml(const MeasureReport& r, const BaseProfile& base, std::span<const FittedCost> fitted = {});

}  // namespace ipilab::measure
