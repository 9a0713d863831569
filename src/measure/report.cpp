#include "measure/report.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/error.h"

namespace ipilab::measure {

namespace {

using kvm::BenchCase;
using kvm::CaseKind;
using kvm::TimingRule;

std::vector<double> pooled(const kvm::CaseResult& r) {
  std::vector<double> v;
  for (const auto& round : r.rounds) v.insert(v.end(), round.begin(), round.end());
  return v;
}

std::string timing_note(const kvm::CaseResult& r, double counter, double max_bias, double halt_gap_us,
                        std::optional<double> median) {
  const double share = median && *median > 0 ? 100.0 * counter / *median : 0;
  switch (r.timing) {
    case TimingRule::ByDefinition:
      return "per iteration by definition: an empty timed region is what one counter-read pair costs";
    case TimingRule::IdleGap:
      return fmt::format("per iteration: the sender idles {} us before each send so the target is back in HLT, "
                         "and that gap must stay outside the timed window; one counter read is {:.2f} % of the "
                         "median", halt_gap_us, share);
    case TimingRule::LongOperation:
      return fmt::format("per iteration: the operation ({:.0f} cycles in the pilot) is at least {:.0f} x the "
                         "counter read ({:.1f} cycles), so a pair per iteration costs at most {:.2g} % of it",
                         r.pilot_op, 1.0 / max_bias, counter, 100.0 * max_bias);
    case TimingRule::Batch:
      return fmt::format("batch: one counter-read pair per {} iterations; the read adds {:.4g} cycles per "
                         "iteration (at most {:.2g} % of the pilot's {:.4g} cycles)",
                         r.batch_n, counter / static_cast<double>(r.batch_n), 100.0 * max_bias, r.pilot_op);
  }
  return "";
}


double ns(double cycles, std::uint64_t khz) { return cycles_to_ns(cycles, khz); }

// `text` wrapped at `width` columns, the first line after `first`, the others after `rest`.
std::string wrap(const std::string& text, const std::string& first, const std::string& rest, std::size_t width) {
  std::string out, line = first;
  std::size_t pos = 0;
  bool empty = true;
  while (pos < text.size()) {
    std::size_t end = text.find(' ', pos);
    if (end == std::string::npos) end = text.size();
    const std::string word = text.substr(pos, end - pos);
    if (!empty && line.size() + 1 + word.size() > width) {
      out += line + "\n";
      line = rest;
      empty = true;
    }
    line += (empty ? "" : " ") + word;
    empty = false;
    pos = end + 1;
  }
  return out + line + "\n";
}

nlohmann::json bins_json(const std::vector<Bin>& bins, double scale) {
  nlohmann::json a = nlohmann::json::array();
  for (const Bin& b : bins) a.push_back({b.lo * scale, b.hi * scale, b.count});
  return a;
}

}  // namespace

const char* to_string(CaseStatus s) {
  switch (s) {
    case CaseStatus::Ok: return "ok";
    case CaseStatus::Unavailable: return "unavailable";
    case CaseStatus::Failed: return "failed";
  }
  return "?";
}

std::vector<BenchCase> planned_cases(const KvmOptions& k) {
  std::vector<BenchCase> v{BenchCase::counter_read(), BenchCase::loop(), BenchCase::cpuid_exit()};
  for (kvm::Mechanism m : k.mechanisms)
    for (kvm::Workload w : k.workloads)
      for (kvm::TargetState t : k.targets) {
        const BenchCase b = BenchCase::ipi(m, w, t);
        if (std::find(v.begin(), v.end(), b) == v.end()) v.push_back(b);
      }
  return v;
}

void check_options(const MeasureOptions& o) {
  if (o.kvm) {
    const KvmOptions& k = o.k;
    if (k.rounds == 0) throw InputError("--rounds", "must be > 0");
    if (k.samples_per_round == 0) throw InputError("--samples", "must be > 0");
    if (k.samples_per_round > kvm::kMaxChunkRecords)
      throw InputError("--samples", fmt::format("at most {} per round", kvm::kMaxChunkRecords));
    if (k.budget_seconds_per_case < 0) throw InputError("--budget", "must be >= 0");
    if (k.halt_gap_us < 0) throw InputError("--halt-gap-us", "must be >= 0");
    if (!(k.max_bias > 0 && k.max_bias < 1)) throw InputError("--max-bias", "must be in (0, 1)");
    const auto cases = planned_cases(k);
    if (cases.size() > kvm::kMaxBenchCases)
      throw InputError("--mechanisms", fmt::format("at most {} cases in one run", kvm::kMaxBenchCases));
    bool found = false;
    std::string names;
    const auto ref = kvm::case_from_name(k.reference);
    for (const BenchCase& b : cases) {
      found |= ref && b == *ref;
      names += (names.empty() ? "" : ", ") + b.name();
    }
    if (!found) throw InputError("--reference", fmt::format("no measured case is called '{}'; the cases: {}", k.reference, names));
    for (std::size_t i = 0; i < k.host_pus.size(); ++i)
      for (std::size_t j = 0; j < i; ++j)
        if (k.host_pus[i] == k.host_pus[j])
          throw InputError("--vcpu-cpus",
                           fmt::format("CPU {} is named twice: the sender and the target vCPU would take turns on one "
                                       "host CPU, and an IPI between them would time the host's scheduler, not the "
                                       "delivery",
                                       k.host_pus[i]));
  }
  if (o.c2c)  // before measuring anything (measure_c2c checks again, for topo --measure)
    for (std::size_t i = 0; i < o.c2c_config.pus.size(); ++i)
      for (std::size_t j = 0; j < i; ++j)
        if (o.c2c_config.pus[i] == o.c2c_config.pus[j])
          throw InputError("--cpus", fmt::format("CPU {} is named twice: a CPU against itself is no core-to-core latency",
                                                 o.c2c_config.pus[i]));
  if (o.c2c && (o.c2c_config.round_trips == 0 || o.c2c_config.samples == 0))
    throw InputError("--round-trips", "round trips and rounds must be > 0");
  if (o.bootstrap.resamples == 0) throw InputError("--resamples", "must be > 0");
}

const CaseReport* MeasureReport::find(std::string_view name) const {
  const auto want = kvm::case_from_name(name);
  if (!want) return nullptr;
  for (const CaseReport& c : kvm)
    if (c.result.bench == *want) return &c;
  return nullptr;
}

std::vector<std::string> MeasureReport::failed_cases() const {
  std::vector<std::string> v;
  for (const CaseReport& c : kvm)
    if (c.status == CaseStatus::Failed) v.push_back(c.name());
  return v;
}

MeasureReport analyze(HostInfo host, const MeasureOptions& o, const std::optional<kvm::RoundsResult>& kvm_res,
                      std::string kvm_unavailable, std::optional<C2cMatrix> c2c) {
  MeasureReport r;
  r.host = std::move(host);
  r.options = o;
  if (const auto ref = kvm::case_from_name(o.k.reference)) r.options.k.reference = ref->name();  // an old alias
  r.kvm_unavailable = std::move(kvm_unavailable);
  r.c2c = std::move(c2c);
  if (kvm_res) {
    r.tsc_khz = kvm_res->tsc_khz;
    r.rounds = kvm_res->rounds;
    r.counter_read_cycles = kvm_res->counter_read;
    r.host_pus = kvm_res->host_pus;
    for (const kvm::CaseResult& res : kvm_res->cases) {
      CaseReport c;
      c.result = res;
      c.rounds_timed = res.rounds.size();
      if (!res.available) {
        c.status = CaseStatus::Unavailable;
        c.reason = res.unavailable_reason;
        r.kvm.push_back(std::move(c));
        continue;
      }
      const std::vector<double> all = pooled(res);
      c.cycles = summarize(all);
      if (!c.cycles) {
        c.status = CaseStatus::Failed;
        c.reason = res.rounds.empty() ? "no timed round ran" : "no samples in any timed round";
      } else {
        c.median_ci = bootstrap_median(res.rounds, o.bootstrap);
        c.histogram_cycles = log_bins(all);
      }
      c.timing_note = timing_note(res, kvm_res->counter_read, o.k.max_bias, o.k.halt_gap_us,
                                  c.cycles ? std::optional<double>(c.cycles->median) : std::nullopt);
      r.kvm.push_back(std::move(c));
    }
    const CaseReport* ref = r.find(o.k.reference);
    if (ref && ref->status == CaseStatus::Ok) {
      const auto ref_rounds = ref->result.rounds;
      for (CaseReport& c : r.kvm)
        if (c.status == CaseStatus::Ok) c.ratio = bootstrap_ratio(c.result.rounds, ref_rounds, o.bootstrap);
    }
  }
  r.warnings = measurement_warnings(r);
  return r;
}

MeasureReport run_measure(const MeasureOptions& o) {
  check_options(o);
  const auto t0 = std::chrono::steady_clock::now();
  HostInfo host = probe_host();
  std::string unavailable;
  std::optional<kvm::RoundsResult> kres;
  if (o.kvm) {
    try {
      kvm::check_kvm_available(false);
    } catch (const UnavailableError& e) {
      if (!o.c2c) throw;
      unavailable = e.what();
    }
  }
  if (o.kvm && unavailable.empty()) {
    kvm::RoundsConfig rc;
    rc.cases = planned_cases(o.k);
    rc.rounds = o.k.rounds;
    rc.samples_per_round = o.k.samples_per_round;
    rc.pilot_samples = o.k.pilot_samples;
    rc.warmup = o.k.warmup;
    rc.halt_gap_us = o.k.halt_gap_us;
    rc.budget_seconds_per_case = o.k.budget_seconds_per_case;
    rc.max_bias = o.k.max_bias;
    rc.host_pus = o.k.host_pus;
    if (o.progress)
      rc.progress = [&](unsigned done, unsigned total) {
        o.progress(fmt::format("kvm: round {}/{}{}", done, total, done == 1 ? " (pilot: sizes the batches)" : ""));
      };
    kres = kvm::run_bench_rounds(rc);
  }
  std::optional<C2cMatrix> m;
  if (o.c2c) {
    if (o.progress) o.progress("c2c: measuring the core-to-core matrix");
    m = measure_c2c(o.c2c_config);
  }
  MeasureReport r = analyze(std::move(host), o, kres, unavailable, std::move(m));
  r.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

std::vector<std::string> measurement_warnings(const MeasureReport& r) {
  std::vector<std::string> w;
  const HostInfo& h = r.host;
  if (h.nested)
    w.push_back(fmt::format("this host is itself a virtual machine (CPUID hypervisor bit{}): its CPUs are the L0 "
                            "hypervisor's vCPUs and a KVM guest here is nested (every exit also costs the L0's "
                            "work); these are this VM's figures, not bare metal's",
                            h.hypervisor_vendor.empty() ? "" : fmt::format(", L0 \"{}\"", h.hypervisor_vendor)));
  if (h.kvm_backend == "kvm_pvm" && (!r.kvm.empty() || !r.kvm_unavailable.empty()))
    w.push_back("KVM backend is PVM (kvm_pvm, no VMX): VMCALL never completes (KVM PV send-IPI cannot run), and a "
                "spinning target sees an IPI only at its next VM exit, so '/spin' figures measure when that exit "
                "comes, not interrupt delivery; '/halt' figures are the meaningful ones");
  if (h.cpufreq_governors.empty())
    w.push_back(fmt::format("CPU frequency scaling cannot be checked (no cpufreq in sysfs, usual inside a VM){}",
                            h.constant_tsc ? ": the TSC is invariant (constant_tsc), so cycles are wall time, but "
                                             "the core clock may change under the measurement"
                                           : ""));
  else
    for (const std::string& g : h.cpufreq_governors)
      if (g != "performance") {
        std::string all;
        for (const std::string& x : h.cpufreq_governors) all += (all.empty() ? "" : ", ") + x;
        w.push_back(fmt::format("CPU frequency governor '{}': the core clock scales with load; the 'performance' "
                                "governor gives steadier figures", all));
        break;
      }
  if (h.load_average >= 0.5)
    w.push_back(fmt::format("the 1-minute load average was {:.2f} on {} CPUs when measuring began: other work "
                            "competes for the CPUs the measurement runs on",
                            h.load_average, h.cpus));
  if (const CaseReport* loop = r.find("loop"); loop && loop->cycles && loop->cycles->median > 10)
    w.push_back(fmt::format("the guest does not run at native speed: one iteration of the empty batch loop (DEC; "
                            "JNZ: two instructions) takes {:.0f} cycles (natively about 1): this KVM traps or "
                            "emulates ordinary guest instructions, so every figure here includes that, not just "
                            "exits and interrupt delivery",
                            loop->cycles->median));
  if (!h.constant_tsc && (!r.kvm.empty()))
    w.push_back("the TSC is not invariant (no constant_tsc flag): TSC cycles are not wall time");
  if (r.c2c) {
    const auto noisy = r.c2c->noisy_pairs();
    if (!noisy.empty()) {
      std::string pairs;
      for (const auto& [a, b] : noisy) pairs += fmt::format("{}{}-{}", pairs.empty() ? "" : ", ", a, b);
      w.push_back(fmt::format("core-to-core: the spread is above the mean (stddev > mean) for CPU pairs {}: those "
                              "latencies are not trustworthy on this host", pairs));
    }
  }
  std::string wide, cut, failed, heavy_read;
  for (const CaseReport& c : r.kvm) {
    if (c.cycles && c.result.batch_n == 1 && c.result.bench.kind != CaseKind::CounterRead && c.cycles->median > 0 &&
        r.counter_read_cycles / c.cycles->median > r.options.k.max_bias)
      heavy_read += fmt::format("{}{} {:.2g} %", heavy_read.empty() ? "" : ", ", c.name(),
                                100.0 * r.counter_read_cycles / c.cycles->median);
    if (c.status == CaseStatus::Failed) failed += (failed.empty() ? "" : ", ") + c.name();
    if (c.cycles && c.median_ci && c.cycles->median > 0 &&
        (c.median_ci->hi - c.median_ci->lo) / c.cycles->median > 0.10)
      wide += (wide.empty() ? "" : ", ") + c.name();
    if (c.result.rounds_truncated > 0)
      cut += fmt::format("{}{} ({} of {} rounds)", cut.empty() ? "" : ", ", c.name(), c.result.rounds_truncated,
                         c.result.rounds.size());
  }
  if (!failed.empty()) w.push_back("no samples (the case failed): " + failed);
  if (!heavy_read.empty())
    w.push_back(fmt::format("timed per iteration, these carry one counter read ({:.0f} cycles) in every sample, more "
                            "than --max-bias of their median: {}; subtract the counter-read row's median to compare "
                            "them with batch-timed figures",
                            r.counter_read_cycles, heavy_read));
  if (!cut.empty())
    w.push_back("the time budget stopped rounds early (fewer iterations than planned; raise --budget): " + cut);
  if (!wide.empty())
    w.push_back("wide 95 % intervals (wider than 10 % of the median): " + wide +
                "; more rounds or a quieter host would narrow them");
  const CaseReport* ref = r.find(r.options.k.reference);
  if (!r.kvm.empty() && (!ref || ref->status != CaseStatus::Ok))
    w.push_back(fmt::format("the reference case '{}' has no samples: no ratios", r.options.k.reference));
  return w;
}

nlohmann::json to_json(const MeasureReport& r) {
  nlohmann::json j;
  j["host"] = to_json(r.host);
  j["warnings"] = r.warnings;
  j["wall_seconds"] = r.wall_seconds;
  if (!r.kvm_unavailable.empty()) j["kvm_unavailable"] = r.kvm_unavailable;
  if (!r.kvm.empty()) {
    const KvmOptions& k = r.options.k;
    const double khz = static_cast<double>(r.tsc_khz);
    nlohmann::json kv;
    kv["tsc_khz"] = r.tsc_khz;
    kv["host_pus"] = r.host_pus;
    kv["method"] = {
        {"rounds", r.rounds},
        {"pilot_round", "one more round first, one iteration per sample, discarded: it sizes the batches"},
        {"samples_per_round", k.samples_per_round},
        {"pilot_samples", k.pilot_samples},
        {"warmup_per_chunk", k.warmup},
        {"halt_gap_us", k.halt_gap_us},
        {"budget_seconds_per_case", k.budget_seconds_per_case},
        {"max_bias", k.max_bias},
        {"order", "interleaved: every case once per round, in the order of 'cases'"},
        {"interval", fmt::format("{:.0f} % percentile bootstrap over rounds, {} resamples, seed {}",
                                 100 * r.options.bootstrap.level, r.options.bootstrap.resamples,
                                 r.options.bootstrap.seed)},
        {"counter", "LFENCE; RDTSC; LFENCE at both ends of a sample"}};
    kv["counter_read_cycles"] = r.counter_read_cycles;
    kv["counter_read_ns"] = ns(r.counter_read_cycles, r.tsc_khz);
    kv["reference"] = k.reference;
    nlohmann::json cases = nlohmann::json::array();
    for (const CaseReport& c : r.kvm) {
      const kvm::CaseResult& x = c.result;
      nlohmann::json e = {{"name", c.name()},
                          {"kind", x.bench.kind == CaseKind::Ipi           ? "ipi"
                                   : x.bench.kind == CaseKind::CounterRead ? "counter-read"
                                   : x.bench.kind == CaseKind::Loop        ? "loop"
                                                                           : "cpuid-exit"},
                          {"status", to_string(c.status)}};
      if (x.bench.kind == CaseKind::Ipi) {
        e["mechanism"] = kvm::to_string(x.bench.mechanism);
        e["workload"] = kvm::to_string(x.bench.workload);
        e["target"] = kvm::to_string(x.bench.target);
      }
      if (c.status == CaseStatus::Unavailable) {
        e["reason"] = c.reason;
        cases.push_back(e);
        continue;
      }
      if (c.status == CaseStatus::Failed) e["reason"] = c.reason;
      e["timing"] = {{"rule", kvm::to_string(x.timing)},
                     {"iterations_per_sample", x.batch_n},
                     {"why", c.timing_note},
                     {"pilot_operation_cycles", x.pilot_op}};
      e["iterations_planned"] = x.iterations_planned;
      e["iterations_run"] = x.iterations_run;
      e["truncated_by_time_budget"] = x.rounds_truncated > 0;
      e["rounds_truncated"] = x.rounds_truncated;
      e["rounds"] = x.rounds.size();
      nlohmann::json rm = nlohmann::json::array(), rn = nlohmann::json::array();
      for (const auto& round : x.rounds) {
        rn.push_back(round.size());
        rm.push_back(round.empty() ? nlohmann::json(nullptr) : nlohmann::json(median(round)));
      }
      e["round_medians_cycles"] = rm;
      e["round_samples"] = rn;
      auto stat = [&](double scale) -> nlohmann::json {
        if (!c.cycles) return nullptr;
        const SampleStats& s = *c.cycles;
        nlohmann::json o = {{"median", s.median * scale}, {"p99", s.p99 * scale}, {"mean", s.mean * scale},
                            {"min", s.min * scale},       {"max", s.max * scale}, {"stddev", s.stddev * scale}};
        o["median_ci95"] = c.median_ci ? nlohmann::json{c.median_ci->lo * scale, c.median_ci->hi * scale}
                                       : nlohmann::json(nullptr);
        return o;
      };
      e["samples"] = c.cycles ? c.cycles->count : 0;
      e["cycles"] = stat(1.0);
      e["ns"] = stat(khz > 0 ? 1e6 / khz : 0.0);
      e["histogram_ns"] = bins_json(c.histogram_cycles, khz > 0 ? 1e6 / khz : 0.0);
      if (c.ratio)
        e["ratio_to_reference"] = {{"value", c.ratio->value},
                                   {"ci95", {c.ratio->ci.lo, c.ratio->ci.hi}},
                                   {"paired_rounds", c.ratio->rounds}};
      else
        e["ratio_to_reference"] = nullptr;
      e["sender_user_exits"] = x.sender_exits;
      e["loop_iterations"] = x.loop_iterations;
      if (x.bench.kind == CaseKind::Ipi) {
        e["target_irqs"] = x.target_irqs;
        if (x.bench.workload == kvm::Workload::CallSingle) e["csd_calls"] = x.csd_calls;
      }
      if (x.bench.is_hyperv_ipi())
        e["note"] = "Hyper-V hypercalls are executed by ipilab's VMM in user space: one exit per hypercall";
      cases.push_back(e);
    }
    kv["cases"] = cases;
    j["kvm"] = kv;
  }
  if (r.c2c) j["c2c"] = c2c_json(*r.c2c);
  return j;
}

std::string to_table(const MeasureReport& r) {
  const HostInfo& h = r.host;
  std::string o = fmt::format("Host: {} | {} CPUs | kernel {} | KVM backend {} | nested: {}{}\n", h.cpu_model, h.cpus,
                              h.kernel, h.kvm_backend.empty() ? "none" : h.kvm_backend, h.nested ? "yes" : "no",
                              h.nested ? fmt::format(" (L0 hypervisor \"{}\")", h.hypervisor_vendor) : "");
  if (!r.kvm_unavailable.empty()) o += fmt::format("KVM: unavailable: {}\n", r.kvm_unavailable);
  if (!r.kvm.empty()) {
    const KvmOptions& k = r.options.k;
    const std::uint64_t khz = r.tsc_khz;
    o += fmt::format("KVM guest, vCPUs on host PUs {}: {} interleaved rounds (after a pilot round), up to {} samples "
                     "per case and round; TSC {:.3f} GHz\n",
                     fmt::join(r.host_pus, ", "), r.rounds, k.samples_per_round, static_cast<double>(khz) / 1e6);
    o += fmt::format("Counter read (LFENCE; RDTSC; LFENCE, a pair): {:.1f} cycles = {:.1f} ns, the pilot round's "
                     "median, which sized the batches (the counter-read row: the measured rounds) — kept out of batch "
                     "samples, once in each per-iteration sample\n\n",
                     r.counter_read_cycles, ns(r.counter_read_cycles, khz));
    o += fmt::format("{:<34} {:>9} {:>10} {:>11} {:>11} {:>11} {:>23} {:>25}  {}\n", "case", "per pair", "iterations",
                     "median", "p99", "median", "95 % CI of median", fmt::format("ratio to {}", k.reference),
                     "user exits (sender)");
    o += fmt::format("{:<34} {:>9} {:>10} {:>11} {:>11} {:>11} {:>23} {:>25}\n", "", "(iter.)", "", "cycles",
                     "cycles", "ns", "ns", "[95 % CI]");
    for (const CaseReport& c : r.kvm) {
      const kvm::CaseResult& x = c.result;
      if (c.status == CaseStatus::Unavailable) {
        o += fmt::format("{:<34} unavailable on this KVM: {}\n", c.name(),
                         x.bench.mechanism == kvm::Mechanism::KvmPv ? "VMCALL does not complete (PVM backend)"
                                                                    : c.reason);
        continue;
      }
      const std::string iters = x.bench.kind == CaseKind::CounterRead ? "-" : fmt::format("{}", x.iterations_run);
      if (c.status == CaseStatus::Failed) {
        o += fmt::format("{:<34} {:>9} {:>10}  FAILED: {}\n", c.name(), x.batch_n, iters, c.reason);
        continue;
      }
      const SampleStats& s = *c.cycles;
      std::string exits;
      for (const auto& [key, v] : x.sender_exits) exits += fmt::format("{}{}={}", exits.empty() ? "" : " ", key, v);
      if (exits.empty()) exits = "0";
      const std::string ci = c.median_ci ? fmt::format("[{:.1f}, {:.1f}]", ns(c.median_ci->lo, khz),
                                                       ns(c.median_ci->hi, khz))
                                         : "-";
      std::string ratio = "-";
      if (c.name() == k.reference) ratio = "1 (reference)";
      else if (c.ratio) ratio = fmt::format("{:.4g} [{:.4g}, {:.4g}]", c.ratio->value, c.ratio->ci.lo, c.ratio->ci.hi);
      o += fmt::format("{:<34} {:>9} {:>10}{} {:>11.1f} {:>11.1f} {:>11.1f} {:>23} {:>25}  {}\n", c.name(), x.batch_n,
                       iters, x.rounds_truncated > 0 ? "*" : " ", s.median, s.p99, ns(s.median, khz), ci, ratio,
                       exits);
    }
    // Why each case is timed the way it is (full sentences per case in the JSON, timing.why).
    std::string batch, long_op, gap;
    for (const CaseReport& c : r.kvm) {
      if (c.status == CaseStatus::Unavailable) continue;
      const std::string n = c.name();
      switch (c.result.timing) {
        case TimingRule::Batch: batch += fmt::format("{}{} (N={})", batch.empty() ? "" : ", ", n, c.result.batch_n); break;
        case TimingRule::LongOperation: long_op += (long_op.empty() ? "" : ", ") + n; break;
        case TimingRule::IdleGap: gap += (gap.empty() ? "" : ", ") + n; break;
        case TimingRule::ByDefinition: break;
      }
    }
    o += "\nTiming per case (one LFENCE;RDTSC;LFENCE pair per sample of N iterations; the sample is the batch's "
         "per-iteration mean):\n";
    if (!batch.empty())
      o += wrap(fmt::format("batch, N sized so the counter read is <= {:.2g} % of a sample: {}", 100 * k.max_bias,
                            batch), "  ", "    ", 110);
    if (!long_op.empty())
      o += wrap(fmt::format("per iteration, the operation is >= {:.0f} x the counter read: {}", 1 / k.max_bias,
                            long_op), "  ", "    ", 110);
    if (!gap.empty())
      o += wrap(fmt::format("per iteration, a halted target needs an idle gap ({} us) before each send, outside the "
                            "timed window: {}", k.halt_gap_us, gap), "  ", "    ", 110);
    o += "  counter-read: per iteration by definition (an empty timed region)\n";
    o += "* = the time budget stopped some rounds early (fewer iterations than planned; JSON: rounds_truncated).\n"
         "hyperv/hyperv-ex run through ipilab's user-space Hyper-V (hv::Partition): one exit per hypercall; x2apic-physical and "
         "kvm-pv must show 0.\n";
  }
  if (r.c2c) o += "\n" + c2c_table(*r.c2c);
  if (!r.warnings.empty()) {
    o += "\nWarnings (where this measurement is weak):\n";
    for (const std::string& w : r.warnings) o += wrap(w, "  - ", "    ", 110);
  }
  o += fmt::format("\n(total {:.1f} s)\n", r.wall_seconds);
  return o;
}

}  // namespace ipilab::measure
