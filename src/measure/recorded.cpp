#include "measure/recorded.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "common/error.h"
#include "common/file.h"

namespace ipilab::measure {

namespace {

using nlohmann::json;

// A JSON value with its path, for messages naming the place.
struct At {
  const json& v;
  std::string path;
  const std::string& file;

  [[noreturn]] void fail(const std::string& why) const { throw InputError(file + ": " + path, why); }
  At operator[](std::string_view key) const {
    if (!v.is_object()) fail("expected an object");
    const auto it = v.find(key);
    if (it == v.end()) throw InputError(fmt::format("{}: {}.{}", file, path, key), "missing");
    return {*it, path.empty() ? std::string(key) : fmt::format("{}.{}", path, key), file};
  }
  At operator[](std::size_t i) const {
    if (!v.is_array() || i >= v.size()) fail(fmt::format("expected an array with an element {}", i));
    return {v[i], fmt::format("{}[{}]", path, i), file};
  }
  bool has(std::string_view key) const { return v.is_object() && v.contains(key); }
  bool null() const { return v.is_null(); }
  std::size_t size() const {
    if (!v.is_array()) fail("expected an array");
    return v.size();
  }
  double num() const {
    if (!v.is_number()) fail("expected a number");
    const double x = v.get<double>();
    if (!std::isfinite(x)) fail("expected a finite number");
    return x;
  }
  std::uint64_t count() const {
    if (!v.is_number_unsigned() && !(v.is_number_integer() && v.get<std::int64_t>() >= 0))
      fail("expected a whole number >= 0");
    return v.get<std::uint64_t>();
  }
  std::string str() const {
    if (!v.is_string()) fail("expected a string");
    return v.get<std::string>();
  }
  bool boolean() const {
    if (!v.is_boolean()) fail("expected true or false");
    return v.get<bool>();
  }
  // Optional members: a default when absent.
  std::string str_or(std::string_view key, std::string def) const { return has(key) ? (*this)[key].str() : def; }
  double num_or(std::string_view key, double def) const { return has(key) ? (*this)[key].num() : def; }
};

HostInfo host_from(const At& h) {
  HostInfo o;
  o.hostname = h.str_or("hostname", "");
  o.cpu_model = h.str_or("cpu_model", "");
  o.kernel = h.str_or("kernel", "");
  o.kernel_version = h.str_or("kernel_version", "");
  o.cpus = h.has("cpus") ? static_cast<unsigned>(h["cpus"].count()) : 0;
  o.nested = h.has("nested") && h["nested"].boolean();
  o.hypervisor_vendor = h.str_or("hypervisor_vendor", "");
  o.kvm_backend = h.str_or("kvm_backend", "");
  o.halt_poll_ns = static_cast<long>(h.num_or("halt_poll_ns", -1));
  if (h.has("cpufreq_governors")) {
    const At g = h["cpufreq_governors"];
    for (std::size_t i = 0; i < g.size(); ++i) o.cpufreq_governors.push_back(g[i].str());
  }
  o.load_average = h.num_or("load_average_1min", -1);
  o.constant_tsc = h.has("constant_tsc") && h["constant_tsc"].boolean();
  o.nonstop_tsc = h.has("nonstop_tsc") && h["nonstop_tsc"].boolean();
  o.date_utc = h.str_or("date_utc", "");
  return o;
}

kvm::TimingRule rule_from(const At& a) {
  const std::string s = a.str();
  for (kvm::TimingRule r : {kvm::TimingRule::ByDefinition, kvm::TimingRule::IdleGap, kvm::TimingRule::LongOperation,
                            kvm::TimingRule::Batch})
    if (s == kvm::to_string(r)) return r;
  a.fail(fmt::format("'{}' is not a timing rule (batch, idle-gap, long-operation, by-definition)", s));
}

CaseReport case_from(const At& c, double cycles_per_ns) {
  CaseReport r;
  const std::string name = c["name"].str();
  const auto bench = kvm::case_from_name(name);
  if (!bench) c["name"].fail(fmt::format("'{}' is not a case ipilab measure kvm runs", name));
  r.result.bench = *bench;
  const std::string status = c["status"].str();
  if (status == "ok") r.status = CaseStatus::Ok;
  else if (status == "unavailable") r.status = CaseStatus::Unavailable;
  else if (status == "failed") r.status = CaseStatus::Failed;
  else c["status"].fail(fmt::format("'{}' is not a status (ok, unavailable, failed)", status));
  r.reason = c.str_or("reason", "");
  if (r.status == CaseStatus::Unavailable) {
    r.result.available = false;
    r.result.unavailable_reason = r.reason;
    return r;
  }
  const At t = c["timing"];
  r.result.timing = rule_from(t["rule"]);
  r.result.batch_n = t["iterations_per_sample"].count();
  r.timing_note = t.str_or("why", "");
  r.result.pilot_op = t.num_or("pilot_operation_cycles", 0);
  r.result.iterations_planned = c["iterations_planned"].count();
  r.result.iterations_run = c["iterations_run"].count();
  r.result.rounds_truncated = static_cast<unsigned>(c["rounds_truncated"].count());
  r.rounds_timed = static_cast<std::size_t>(c["rounds"].count());
  if (c.has("loop_iterations")) r.result.loop_iterations = c["loop_iterations"].count();
  if (c.has("target_irqs")) r.result.target_irqs = c["target_irqs"].count();
  if (c.has("csd_calls")) r.result.csd_calls = c["csd_calls"].count();
  if (c.has("sender_user_exits")) {
    const At e = c["sender_user_exits"];
    if (!e.v.is_object()) e.fail("expected an object of exit counts");
    for (const auto& [k, v] : e.v.items()) r.result.sender_exits[k] = At{v, e.path + "." + k, e.file}.count();
  }
  const At cyc = c["cycles"];
  if (cyc.null()) {
    if (r.status == CaseStatus::Ok) cyc.fail("a case with status ok needs its statistics");
    return r;
  }
  SampleStats s;
  s.count = c["samples"].count();
  s.median = cyc["median"].num();
  s.p99 = cyc["p99"].num();
  s.mean = cyc["mean"].num();
  s.min = cyc["min"].num();
  s.max = cyc["max"].num();
  s.stddev = cyc["stddev"].num();
  r.cycles = s;
  if (!cyc["median_ci95"].null()) r.median_ci = Interval{cyc["median_ci95"][0].num(), cyc["median_ci95"][1].num()};
  if (c.has("ratio_to_reference") && !c["ratio_to_reference"].null()) {
    const At q = c["ratio_to_reference"];
    RatioEstimate e;
    e.value = q["value"].num();
    e.ci = {q["ci95"][0].num(), q["ci95"][1].num()};
    e.rounds = static_cast<unsigned>(q["paired_rounds"].count());
    r.ratio = e;
  }
  const At h = c["histogram_ns"];
  double prev_hi = 0;
  for (std::size_t i = 0; i < h.size(); ++i) {
    const At b = h[i];
    if (b.size() != 3) b.fail("expected a bin [lo, hi, count]");
    const double lo = b[0].num(), hi = b[1].num();
    if (!(lo >= 0 && lo < hi && std::isfinite(hi))) b.fail("expected 0 <= lo < hi");
    if (lo < prev_hi) b.fail("bins must be ascending and must not overlap");
    prev_hi = hi;
    r.histogram_cycles.push_back({lo * cycles_per_ns, hi * cycles_per_ns, b[2].count()});
  }
  return r;
}

PairClass class_from(const At& a) {
  const std::string s = a.str();
  for (PairClass c : {PairClass::Smt, PairClass::SameNode, PairClass::SameSocket, PairClass::CrossSocket})
    if (s == cost_key(c)) return c;
  a.fail(fmt::format("'{}' is not a cache-line cost key (mem.cacheline_smt, _same_node, _same_socket, "
                     "_cross_socket)",
                     s));
}

C2cMatrix c2c_from(const At& c) {
  C2cMatrix m;
  const At cpus = c["cpus"];
  for (std::size_t i = 0; i < cpus.size(); ++i) m.pus.push_back(static_cast<unsigned>(cpus[i].count()));
  m.size_for_pus();
  const std::size_t n = m.pus.size();
  m.round_trips = static_cast<unsigned>(c["round_trips_per_sample"].count());
  m.samples = static_cast<unsigned>(c["samples"].count());
  m.clock_overhead_ns = c.num_or("clock_overhead_ns", 0);
  auto index = [&](const At& a) {
    const auto pu = static_cast<unsigned>(a.count());
    for (std::size_t i = 0; i < n; ++i)
      if (m.pus[i] == pu) return i;
    a.fail(fmt::format("CPU {} is not in cpus", pu));
  };
  const At pairs = c["pairs"];
  for (std::size_t k = 0; k < pairs.size(); ++k) {
    const At p = pairs[k];
    const std::size_t i = index(p["cpus"][0]), j = index(p["cpus"][1]);
    m.pair_class[i][j] = m.pair_class[j][i] = class_from(p["cost_key"]);
    m.mean_ns[i][j] = m.mean_ns[j][i] = p["mean_ns"].num();
    m.stddev_ns[i][j] = m.stddev_ns[j][i] = p["stddev_ns"].num();
    m.min_ns[i][j] = m.min_ns[j][i] = p["min_ns"].num();
    const At s = p["samples_ns"];
    for (std::size_t x = 0; x < s.size(); ++x) m.samples_ns[i][j].push_back(s[x].num());
    m.samples_ns[j][i] = m.samples_ns[i][j];
  }
  return m;
}

}  // namespace

MeasureReport report_from_json(const json& j, const std::string& file) {
  const At root{j, "", file};
  if (!j.is_object() || (!j.contains("kvm") && !j.contains("c2c")))
    throw InputError(file, "not a measurement: an object with 'kvm' and/or 'c2c' (what `ipilab measure --json` writes)");
  MeasureReport r;
  r.host = root.has("host") ? host_from(root["host"]) : HostInfo{};
  if (root.has("warnings")) {
    const At w = root["warnings"];
    for (std::size_t i = 0; i < w.size(); ++i) r.warnings.push_back(w[i].str());
  }
  r.wall_seconds = root.num_or("wall_seconds", 0);
  r.kvm_unavailable = root.str_or("kvm_unavailable", "");
  r.options.kvm = root.has("kvm");
  r.options.c2c = root.has("c2c");
  if (root.has("kvm")) {
    const At k = root["kvm"];
    r.tsc_khz = k["tsc_khz"].count();
    if (r.tsc_khz == 0) k["tsc_khz"].fail("must be > 0 (the guest TSC frequency)");
    const double cycles_per_ns = static_cast<double>(r.tsc_khz) / 1e6;
    if (k.has("host_pus")) {
      const At p = k["host_pus"];
      for (std::size_t i = 0; i < p.size(); ++i) r.host_pus.push_back(static_cast<unsigned>(p[i].count()));
    }
    const At m = k["method"];
    KvmOptions& o = r.options.k;
    r.rounds = static_cast<unsigned>(m["rounds"].count());
    o.rounds = r.rounds;
    o.samples_per_round = m["samples_per_round"].count();
    if (m.has("pilot_samples")) o.pilot_samples = m["pilot_samples"].count();
    if (m.has("warmup_per_chunk")) o.warmup = m["warmup_per_chunk"].count();
    o.halt_gap_us = m["halt_gap_us"].num();
    o.budget_seconds_per_case = m.num_or("budget_seconds_per_case", 0);
    o.max_bias = m["max_bias"].num();
    o.mechanisms.clear();
    o.workloads.clear();
    o.targets.clear();
    r.counter_read_cycles = k["counter_read_cycles"].num();
    const std::string ref = k["reference"].str();
    const auto ref_case = kvm::case_from_name(ref);
    if (!ref_case) k["reference"].fail(fmt::format("'{}' is not a case name", ref));
    o.reference = ref_case->name();
    const At cases = k["cases"];
    for (std::size_t i = 0; i < cases.size(); ++i) {
      CaseReport c = case_from(cases[i], cycles_per_ns);
      const kvm::BenchCase& b = c.result.bench;
      if (b.kind == kvm::CaseKind::Ipi) {  // the options the recording was made with
        auto add = [](auto& v, auto x) {
          if (std::find(v.begin(), v.end(), x) == v.end()) v.push_back(x);
        };
        add(o.mechanisms, b.mechanism);
        add(o.workloads, b.workload);
        add(o.targets, b.target);
      }
      r.kvm.push_back(std::move(c));
    }
  }
  if (root.has("c2c")) r.c2c = c2c_from(root["c2c"]);
  return r;
}

MeasureReport load_recorded(const std::string& path) {
  const std::string text = read_text_file(path);
  json j;
  try {
    j = json::parse(text);
  } catch (const json::parse_error& e) {
    throw InputError(path, fmt::format("not JSON: {}", e.what()));
  }
  return report_from_json(j, path);
}

}  // namespace ipilab::measure
