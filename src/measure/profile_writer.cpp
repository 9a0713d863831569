#include "measure/profile_writer.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <stdexcept>
#include <string_view>

#include <fmt/format.h>

#include "common/error.h"
#include "common/file.h"
#include "common/suggest.h"
#include "cost/shipped.h"
#include "topology/toml_read.h"

namespace ipilab::measure {

namespace fs = std::filesystem;

namespace {

// A number as written in the file, and back: bins and value are computed from what is printed.
std::string num(double v) { return fmt::format("{:.6g}", v); }
double printed(double v) { return std::stod(num(v)); }
bool in(const std::vector<std::string>& v, const std::string& x) { return std::find(v.begin(), v.end(), x) != v.end(); }

std::string one_line(std::string s) {
  std::replace(s.begin(), s.end(), '\n', ' ');
  return s;
}

// The case's histogram (the one the JSON holds) in ns: a profile written from a live measurement and one
// written from its JSON recording (recorded.h) are the same.
std::vector<Bin> bins_ns(const CaseReport& c, std::uint64_t khz) {
  std::vector<Bin> v;
  for (const Bin& b : c.histogram_cycles) v.push_back({cycles_to_ns(b.lo, khz), cycles_to_ns(b.hi, khz), b.count});
  return v;
}

}  // namespace

double as_written(double v) { return printed(v); }

std::string measured_where(const HostInfo& h) {
  return fmt::format("{} ({}, {} CPUs), kernel {}, KVM backend {}{}", h.hostname.empty() ? "this host" : h.hostname,
                     h.cpu_model, h.cpus, h.kernel, h.kvm_backend.empty() ? "none" : h.kvm_backend,
                     h.nested ? fmt::format(", itself a VM (L0 \"{}\")", h.hypervisor_vendor) : "");
}

BaseProfile load_base_profile(const std::string& arg) {
  if (arg.empty()) throw InputError("--base", "names no profile");
  const bool is_path = arg.find('/') != std::string::npos || fs::path(arg).extension() == ".toml";
  BaseProfile b;
  std::error_code ec;
  if (is_path) {
    if (!fs::is_regular_file(arg, ec)) throw InputError("--base", fmt::format("'{}': no such profile file", arg));
    b.file = arg;
    b.reference = fs::absolute(arg, ec).lexically_normal().string();
  } else {
    const fs::path f = data_dir() / "profiles" / (arg + ".toml");
    if (!fs::is_regular_file(f, ec)) {
      const std::vector<std::string> shipped = cost::shipped_profile_names();
      std::string names;
      for (const std::string& n : shipped) names += (names.empty() ? "" : ", ") + n;
      throw InputError("--base", fmt::format("no shipped profile '{}'{} (shipped: {}); or give a path to a .toml file",
                                             arg, did_you_mean(arg, shipped), names.empty() ? "none found in " + (data_dir() / "profiles").string()
                                                                : names));
    }
    b.file = f.string();
    b.reference = arg;
  }
  b.profile = cost::Profile::load_file(b.file);
  return b;
}

std::vector<MeasuredCost> measured_costs(const MeasureReport& r) {
  std::vector<MeasuredCost> out;
  auto from_case = [&](const char* name, const char* key, std::string method, std::string what) {
    const CaseReport* c = r.find(name);
    if (!c || c->status != CaseStatus::Ok) return;
    MeasuredCost m;
    m.key = key;
    m.bins_ns = bins_ns(*c, r.tsc_khz);
    m.iterations = c->result.bench.kind == kvm::CaseKind::CounterRead
                       ? c->cycles->count
                       : c->result.iterations_run;
    m.method = fmt::format("{}; {} samples{} in {} interleaved rounds{}", method, c->cycles->count,
                           c->result.batch_n > 1 ? fmt::format(" of {} iterations each (batch means)", c->result.batch_n)
                                                 : std::string(" of one iteration"),
                           c->rounds_timed,
                           c->result.rounds_truncated ? fmt::format(", {} cut by the time budget",
                                                                    c->result.rounds_truncated)
                                                      : std::string());
    const double khz = static_cast<double>(r.tsc_khz);
    auto n = [&](double cyc) { return cycles_to_ns(cyc, r.tsc_khz); };
    m.note = fmt::format("{}. Median {} ns, p99 {} ns, sample mean {} ns{}; TSC {} kHz", what, num(n(c->cycles->median)),
                         num(n(c->cycles->p99)), num(n(c->cycles->mean)),
                         c->median_ci ? fmt::format(", 95 % interval of the median [{}, {}] ns", num(n(c->median_ci->lo)),
                                                    num(n(c->median_ci->hi)))
                                      : std::string(),
                         khz);
    out.push_back(std::move(m));
  };
  from_case("cpuid-exit", "vm.exit_entry",
            "CPUID leaf 0 in the guest: one VM exit handled inside KVM and the entry back (the kvm-unit-tests "
            "vmexit `cpuid` shape)",
            "Per iteration of XOR EAX; XOR ECX; CPUID; DEC; JNZ: includes KVM's CPUID handling (a table lookup) and "
            "the loop's DEC; JNZ (guest.bench_loop alone), which natively cost a few cycles next to the exit");
  from_case("counter-read", "guest.counter_read",
            "an empty timed region in the guest: LFENCE; RDTSC; LFENCE at each end",
            "In every per-iteration sample once; in a batch sample once per batch");
  from_case("loop", "guest.bench_loop",
            "the guest's batch loop with nothing in it, timed per batch (loop control per iteration)",
            "ipilab's own benchmark loop (no counter read inside it); a Linux module's loop differs");
  if (r.c2c && r.c2c->pus.size() >= 2) {
    const C2cMatrix& m = *r.c2c;
    std::map<std::string, MeasuredCost> by_key;
    std::map<std::string, std::vector<double>> samples;
    std::map<std::string, unsigned> pairs;
    for (std::size_t i = 0; i < m.pus.size(); ++i)
      for (std::size_t j = 0; j < i; ++j) {
        const std::string key = cost_key(m.pair_class[i][j]);
        MeasuredCost& c = by_key[key];
        c.key = key;
        samples[key].insert(samples[key].end(), m.samples_ns[i][j].begin(), m.samples_ns[i][j].end());
        c.iterations += static_cast<std::uint64_t>(m.round_trips) * m.samples_ns[i][j].size();
        ++pairs[key];
      }
    for (auto& [key, c] : by_key) {
      if (samples[key].empty()) continue;
      c.bins_ns = log_bins(samples[key]);
      c.method = fmt::format("one-way CAS ping-pong between host threads pinned to {} CPU pair{} of this class "
                             "(the core-to-core-latency method): {} samples of {} round trips, one steady_clock "
                             "pair per sample, pairs interleaved over {} rounds",
                             pairs[key], pairs[key] == 1 ? "" : "s", samples[key].size(), m.round_trips, m.samples);
      std::vector<double> sorted = samples[key];
      std::sort(sorted.begin(), sorted.end());
      c.note = fmt::format("Host threads, not vCPUs: the cache-line transfer itself. Median {} ns; clock read {} ns "
                           "per sample ({} % of one)",
                           num(median(sorted)), num(m.clock_overhead_ns),
                           num(100.0 * m.clock_overhead_ns / (2.0 * m.round_trips) / std::max(1e-9, median(sorted))));
      out.push_back(std::move(c));
    }
  }
  return out;
}

std::string to_profile_toml(const MeasureReport& r, const BaseProfile& base, std::span<const FittedCost> fitted) {
  const std::vector<MeasuredCost> costs = measured_costs(r);
  if (costs.empty())
    throw InputError("--profile-out", "nothing was measured that a cost profile can hold (no case has samples)");
  const HostInfo& h = r.host;
  const std::string where = measured_where(h);
  std::string o;
  o += "# Cost profile written by `ipilab measure --profile-out` (docs/measure.md).\n";
  o += fmt::format("# Measured on {} at {}.\n", where, h.date_utc);
  o += fmt::format("# Entries with class = \"measured\" were measured here; every other cost comes from the base "
                   "profile\n# '{}' through `extends` (each listed below as inherited).\n",
                   base.reference);
  for (const std::string& w : r.warnings) o += "# Warning: " + one_line(w) + "\n";
  o += "\n[profile]\nname = \"this-host\"\n";
  o += fmt::format("description = {}\n",
                   toml_read::quoted(fmt::format("measured on {} at {}, over {}", where, h.date_utc, base.reference)));
  o += fmt::format("extends = {}\n", toml_read::quoted(base.reference));
  if (r.tsc_khz > 0)
    o += fmt::format("clock_ghz = {}\nclock_source = {}\n", num(static_cast<double>(r.tsc_khz) / 1e6),
                     toml_read::quoted(fmt::format("guest TSC frequency from KVM_GET_TSC_KHZ ({} kHz); the measured "
                                                   "entries are in ns",
                                                   r.tsc_khz)));
  else
    o += fmt::format("clock_ghz = {}\nclock_source = {}\n", num(base.profile.clock_ghz()),
                     toml_read::quoted(fmt::format("the base profile's clock (no KVM measurement here): {}",
                                                   base.profile.clock_source())));

  const std::string prov = fmt::format("on {}, {}", where, h.date_utc);
  // The comment above a written cost: how it was obtained and what of the base it replaces.
  auto cost_comment = [&](const std::string& key, std::string_view how) {
    if (!base.profile.has(key)) return fmt::format("\n# {}; not in the base\n", how);
    const cost::Cost& was = base.profile.get(key);
    return fmt::format("\n# {}; overrides the base's {} {}\n", how, num(was.value), cost::unit_name(was.unit));
  };
  for (const MeasuredCost& c : costs) {
    std::vector<Bin> bins;
    for (const Bin& b : c.bins_ns) bins.push_back({printed(b.lo), printed(b.hi), b.count});
    const double value = bins_mean(bins);
    o += cost_comment(c.key, "measured");
    o += fmt::format("[cost.{}]\nvalue = {}\nunit = \"ns\"\ndist = \"empirical\"\nbins = [", c.key, num(value));
    for (std::size_t i = 0; i < bins.size(); ++i) {
      if (i % 4 == 0) o += "\n  ";
      o += fmt::format("[{}, {}, {}],{}", num(bins[i].lo), num(bins[i].hi), bins[i].count,
                       i + 1 < bins.size() && i % 4 != 3 ? " " : "");
    }
    o += "\n]\nclass = \"measured\"\n";
    o += fmt::format("source = {}\n",
                     toml_read::quoted(fmt::format("MEASURED by `ipilab measure` {}: {}; {} timed iterations", prov,
                                                   c.method, c.iterations)));
    o += fmt::format("note = {}\n", toml_read::quoted(fmt::format(
                                        "{}. value is the mean of the bins (what sampling them gives)", c.note)));
  }

  std::vector<std::string> measured_keys, fitted_keys;
  for (const MeasuredCost& c : costs) measured_keys.push_back(c.key);
  for (const FittedCost& f : fitted) {
    if (in(measured_keys, f.key) || in(fitted_keys, f.key))
      throw std::logic_error(fmt::format("profile writer: {} is measured or fitted twice", f.key));
    fitted_keys.push_back(f.key);
    o += cost_comment(f.key, "fitted");
    o += fmt::format("[cost.{}]\nvalue = {}\nunit = \"ns\"\ndist = \"fixed\"\nclass = \"fitted\"\nsource = {}\n", f.key,
                     num(f.value_ns), toml_read::quoted(f.source));
    if (!f.note.empty()) o += fmt::format("note = {}\n", toml_read::quoted(f.note));
  }

  // Everything else: the base's.
  o += fmt::format("\n# Inherited from the base '{}' ({}), unchanged:\n", base.reference, base.file);
  for (const std::string& key : base.profile.keys()) {
    if (in(measured_keys, key) || in(fitted_keys, key)) continue;
    const cost::Cost& c = base.profile.get(key);
    o += fmt::format("#   inherited  {} = {} {}  ({})\n", key, num(c.value), cost::unit_name(c.unit), one_line(c.source));
  }

  if (!r.kvm.empty()) {
    o += fmt::format("\n# Measured cases (median ns, 95 % interval of the median, ratio to {} with its paired "
                     "interval);\n# composites, not primitives: what a this-host simulation is compared against "
                     "(the JSON holds them in full).\n",
                     r.options.k.reference);
    for (const CaseReport& c : r.kvm) {
      if (c.status != CaseStatus::Ok) {
        o += fmt::format("#   {:<34} {}\n", c.name(), to_string(c.status));
        continue;
      }
      auto n = [&](double cyc) { return num(cycles_to_ns(cyc, r.tsc_khz)); };
      o += fmt::format("#   {:<34} median {} ns", c.name(), n(c.cycles->median));
      if (c.median_ci) o += fmt::format(" [{}, {}]", n(c.median_ci->lo), n(c.median_ci->hi));
      if (c.ratio) o += fmt::format("  ratio {} [{}, {}]", num(c.ratio->value), num(c.ratio->ci.lo), num(c.ratio->ci.hi));
      if (c.result.bench.kind == kvm::CaseKind::CounterRead) o += fmt::format("  ({} samples)\n", c.cycles->count);
      else o += fmt::format("  ({} iterations)\n", c.result.iterations_run);
    }
  }
  return o;
}

}  // namespace ipilab::measure
