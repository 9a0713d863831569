#include "scenario/runner.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <set>
#include <stdexcept>

#include <fmt/format.h>

#include "common/error.h"
#include "common/file.h"
#include "common/suggest.h"
#include "scenario/file_names.h"
#include "sim/engine.h"
#include "topology/host_toml.h"
#include "topology/presets.h"
#include "topology/toml_read.h"
#include "workload/counters.h"

namespace ipilab::scenario {

namespace fs = std::filesystem;
using toml_read::TableReader;

namespace {

std::string join(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : ", ") + s;
  return out.empty() ? "none" : out;
}

// Re-throws an InputError with the variant named (the place stays the same).
[[noreturn]] void rethrow_for_variant(const InputError& e, const std::string& scenario, const std::string& variant) {
  throw InputError(e.place(), fmt::format("{} [scenario '{}', variant '{}']", e.reason(), scenario, variant));
}

// A run that needed more simulated time than the engine holds: named by the scenario file, with
// what the time is made of (iterations, the profile's largest cost) so the out-of-range value can
// be found.
InputError horizon_error(const PreparedScenario& p, const PreparedVariant& v, const sim::HorizonError& e) {
  std::string largest;
  sim::Ps top{0};
  for (const auto& key : v.spec.profile.keys()) {
    const cost::Cost& c = v.spec.profile.get(key);
    if (c.mean <= top) continue;
    top = c.mean;
    largest = fmt::format("{}: cost.{} = {:g} {}", c.from == v.profile_path ? v.profile_file : c.from, key, c.value,
                          cost::unit_name(c.unit));
  }
  return InputError(p.file, fmt::format("{}; {} + {} warm-up iterations; the profile's largest cost: {} [scenario '{}', variant '{}']",
                                        e.reason(), p.iterations, p.warmup, largest.empty() ? "none" : largest, p.name, v.name));
}

// A path as shown in tables and JSON: relative to the data folder when it lies there (so output does
// not depend on where ipilab was built), else as resolved.
std::string shown_path(const fs::path& p) {
  const std::string rel = path_in_data_dir(p);
  return rel.empty() ? p.string() : rel;
}

std::unique_ptr<topology::Host> build_host(const toml::table& doc, const std::string& file, const fs::path& dir) {
  const toml::node* hn = doc.get("host");
  if (!hn)
    throw InputError(file, "missing [host] table (preset = \"NAME\", file = \"PATH\" or inline host tables; "
                           "'ipilab list --presets' shows the presets)");
  const toml::table& ht = *hn->as_table();
  if (!ht.contains("preset") && !ht.contains("file"))
    return std::make_unique<topology::Host>(topology::parse_host(ht, file, "host"));
  TableReader r(ht, file, "host");
  for (const auto& [k, n] : ht) {
    (void)n;
    if (k.str() != "preset" && k.str() != "file")
      r.fail(k.str(), "host.preset / host.file exclude inline host tables: give one of the three forms");
  }
  const auto preset = r.opt_string("preset");
  const auto path = r.opt_string("file");
  if (preset && path) r.fail("file", "give either host.preset or host.file, not both");
  if (preset) {
    try {
      return std::make_unique<topology::Host>(topology::load_preset(*preset));
    } catch (const InputError& e) {
      throw InputError(r.place("preset"), e.reason());
    }
  }
  const fs::path p = resolve_data_path(*path, dir, r.place("file"));
  return std::make_unique<topology::Host>(topology::load_host_file(p.string()));
}

bool parse_unit(std::string_view s, cost::Unit& u) {
  if (s == "cycles") u = cost::Unit::Cycles;
  else if (s == "ns") u = cost::Unit::Ns;
  else if (s == "ps") u = cost::Unit::Ps;
  else if (s == "us") u = cost::Unit::Us;
  else return false;
  return true;
}

// [profile.override] entries: a table with `value` is one cost; any other table nests one more key
// level, so both `override."its.sgir_process" = {...}` and `override.its.sgir_process = {...}`
// work.
// Each cost set is listed in `set` (key, place).
void apply_overrides(cost::Profile& p, const toml::table& t, const std::string& file, const std::string& prefix,
                     std::vector<std::pair<std::string, std::string>>& set) {
  for (const auto& [k, n] : t) {
    const std::string key = prefix.empty() ? std::string(k.str()) : fmt::format("{}.{}", prefix, k.str());
    const std::string path = fmt::format("profile.override.{}", key);
    const toml::table* et = n.as_table();
    if (!et)
      throw InputError(toml_read::place(file, k.source().begin ? k.source() : n.source(), path),
                       fmt::format("expected a table {{ value, unit, spread?, source? }}, got {}",
                                   toml_read::type_name(n)));
    if (!et->contains("value")) {
      apply_overrides(p, *et, file, key, set);
      continue;
    }
    TableReader r(*et, file, path);
    const double value = r.req_double("value");
    const std::string unit_text = r.req_string("unit");
    cost::Unit unit{};
    if (!parse_unit(unit_text, unit)) r.fail("unit", fmt::format("'{}' is not a unit: cycles, ns, ps or us", unit_text));
    double spread = 0;
    if (p.has(key)) spread = p.get(key).spread;  // keep the profile's spread unless given
    if (auto sp = r.opt_double("spread")) spread = *sp;
    const std::string where = r.place("value");
    std::string source = r.opt_string("source").value_or("");
    if (source.empty()) {
      const auto& b = n.source().begin;
      source = b ? fmt::format("scenario override at {}:{}", file, b.line) : fmt::format("scenario override in {}", file);
    }
    r.finish();
    p.set(key, value, unit, spread, std::move(source), where);
    set.emplace_back(key, where);
  }
}

struct ProfileChoice {
  cost::Profile profile;
  std::string shown;
  std::string replaced = {};  ///< with --profile: the scenario's own profile file, as shown
  std::vector<std::pair<std::string, std::string>> overrides = {};  ///< apply_overrides' list
};

ProfileChoice build_profile(const toml::table& doc, const std::string& file, const fs::path& dir,
                            std::map<std::string, cost::Profile>& cache, const RunOverrides& ov) {
  const toml::node* pn = doc.get("profile");
  if (!pn) throw InputError(file, "missing [profile] table (file = \"profiles/NAME.toml\")");
  TableReader r(*pn->as_table(), file, "profile");
  const std::string rel = r.req_string("file");
  const toml::table* over = r.opt_table("override");
  r.finish();
  const fs::path path = resolve_data_path(rel, dir, r.place("file"));
  if (ov.profile) {  // --profile: the scenario's file is replaced, its overrides still apply
    ProfileChoice c{*ov.profile, ov.profile_shown};
    c.replaced = shown_path(path);
    if (over) apply_overrides(c.profile, *over, file, "", c.overrides);
    return c;
  }
  auto it = cache.find(path.string());
  if (it == cache.end()) it = cache.emplace(path.string(), cost::Profile::load_file(path.string())).first;
  ProfileChoice c{it->second, shown_path(path)};
  if (over) apply_overrides(c.profile, *over, file, "", c.overrides);
  return c;
}

std::string host_label(const topology::Host& h) {
  std::string s = fmt::format("{} ({} socket{}, {} CPUs", h.name.empty() ? "inline host" : h.name, h.sockets,
                              h.sockets == 1 ? "" : "s", h.cpus.size());
  if (!h.its.empty()) s += fmt::format(", {} ITS{}", h.its.size(), h.its.size() == 1 ? "" : "s");
  return s + ")";
}

std::string vm_label(const topology::Vm& vm) {
  std::vector<int> pcpus, halted, polling, preempted;
  std::string remap;
  for (const auto& v : vm.vcpus) {
    pcpus.push_back(v.pcpu);
    if (v.initial_state == topology::VcpuState::Halted) halted.push_back(v.cpu);
    if (v.initial_state == topology::VcpuState::Polling) polling.push_back(v.cpu);
    if (v.initial_state == topology::VcpuState::Preempted) preempted.push_back(v.cpu);
    if (v.vp_index != static_cast<std::uint32_t>(v.cpu))
      remap += fmt::format("{}{}->{}", remap.empty() ? "" : ",", v.cpu, topology::vp_index_text(v.vp_index));
  }
  std::vector<int> sorted = pcpus;
  std::sort(sorted.begin(), sorted.end());
  const bool in_order = sorted == pcpus && std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end();
  std::string s = fmt::format("{} vCPU{} on host CPUs {}, NR_CPUS={}", vm.size(), vm.size() == 1 ? "" : "s",
                              in_order ? topology::Host::format_cpu_list(pcpus) : fmt::format("{}", fmt::join(pcpus, ",")),
                              vm.nr_cpus);
  if (!halted.empty()) s += fmt::format(", vCPUs idle in HLT: {}", topology::Host::format_cpu_list(halted));
  if (!polling.empty()) s += fmt::format(", vCPUs idle polling: {}", topology::Host::format_cpu_list(polling));
  if (!preempted.empty()) s += fmt::format(", vCPUs preempted when idle: {}", topology::Host::format_cpu_list(preempted));
  if (!remap.empty()) s += fmt::format(", VP index map {}", remap);
  return s;
}

void check_params(const toml::table& t, const workload::WorkloadInfo& info, const std::string& file) {
  for (const auto& [k, n] : t) {
    const std::string_view key = k.str();  // clang 14 cannot capture structured bindings
    const bool known = std::any_of(info.params.begin(), info.params.end(),
                                   [key](const workload::ParamInfo& p) { return p.name == key; });
    if (known) continue;
    std::vector<std::string> names;
    for (const auto& p : info.params) names.push_back(p.name);
    throw InputError(toml_read::place(file, k.source().begin ? k.source() : n.source(), fmt::format("workload.{}", k.str())),
                     fmt::format("unknown key: workload '{}' has no parameter '{}' (parameters: {})", info.name,
                                 k.str(), join(names)));
  }
}

// A what-if override of a cost the variant never read changes nothing: say so (a user would
// otherwise read "no change" as "this cost does not matter").
void note_unread_overrides(const PreparedVariant& v, workload::RunResult& r) {
  if (v.overrides.empty()) return;
  std::set<std::string> read;
  if (const auto it = r.provenance.find("costs"); it != r.provenance.end() && it->is_array())
    for (const auto& c : *it)
      if (c.contains("key") && c["key"].is_string()) read.insert(c["key"].get<std::string>());
  for (const auto& [key, place] : v.overrides)
    if (!read.count(key))
      r.notes.push_back(fmt::format("{}: the override of {} changes nothing here: this variant never reads that cost "
                                    "(its workload and mechanism price no step with it)",
                                    place, key));
}

bool within(double actual, double expected, double tolerance) {
  return std::fabs(actual - expected) <= tolerance * std::fabs(expected) + 1e-12 * std::fabs(expected);
}

}  // namespace

PreparedScenario prepare(Scenario&& s, const RunOverrides& overrides, const WorkloadLookup& lookup) {
  PreparedScenario p;
  static_cast<ScenarioHeading&>(p) = s;
  p.seed = overrides.seed.value_or(s.seed);
  p.iterations = overrides.iterations.value_or(s.iterations);
  p.scenario_iterations = s.iterations;
  p.warmup = s.warmup;
  p.info = &lookup(s.workload, s.workload_place);

  std::vector<std::string> all, quoted;
  for (const auto& v : s.variants) {
    all.push_back(v.name);
    quoted.push_back("'" + v.name + "'");
  }
  for (const auto& want : overrides.variants)
    if (std::find(all.begin(), all.end(), want) == all.end())
      throw InputError("--variant", fmt::format("scenario '{}' ({}) has no variant '{}'{} (variants: {})", s.name, s.file,
                                                want, did_you_mean(want, all), join(quoted)));
  auto selected = [&](const std::string& name) {
    return overrides.variants.empty() ||
           std::find(overrides.variants.begin(), overrides.variants.end(), name) != overrides.variants.end();
  };

  std::map<std::string, cost::Profile> profiles;
  for (auto& v : s.variants) {
    if (!selected(v.name)) continue;
    PreparedVariant pv;
    pv.name = v.name;
    pv.description = v.description;
    try {
      pv.host = build_host(v.doc, s.file, s.dir);
      const toml::node* vn = v.doc.get("vm");
      if (!vn) throw InputError(s.file, "missing [vm] table (vcpus = N, pin = ...; see scenarios/README.md)");
      pv.spec.vm = topology::parse_vm(*vn->as_table(), *pv.host, s.file, "vm");
      ProfileChoice pc = build_profile(v.doc, s.file, s.dir, profiles, overrides);
      pv.spec.profile = std::move(pc.profile);
      pv.profile_file = pc.shown;
      pv.profile_replaced = pc.replaced;
      pv.overrides = std::move(pc.overrides);
      pv.profile_path = pv.spec.profile.file();
      toml::table params;
      if (toml::node* wn = v.doc.get("workload")) params = std::move(*wn->as_table());
      pv.spec.params = workload::Params(std::move(params), s.file, "workload");
      if (p.info->validate) p.info->validate(pv.spec.params);
      else check_params(pv.spec.params.table(), *p.info, s.file);
    } catch (const InputError& e) {
      if (s.variants.size() == 1) throw;
      rethrow_for_variant(e, s.name, v.name);
    }
    pv.spec.scenario = s.name;
    pv.spec.variant = v.name;
    pv.spec.host = pv.host.get();
    pv.spec.seed = p.seed;
    pv.spec.iterations = p.iterations;
    pv.spec.warmup = p.warmup;
    pv.host_label = host_label(*pv.host);
    pv.vm_label = vm_label(pv.spec.vm);
    pv.profile_label = pv.profile_replaced.empty()
                           ? fmt::format("{} ({})", pv.spec.profile.name(), pv.profile_file)
                           : fmt::format("{} ({}, from --profile instead of {})", pv.spec.profile.name(),
                                         pv.profile_file, pv.profile_replaced);
    p.variants.push_back(std::move(pv));
  }
  for (auto& e : s.expect)
    if (selected(e.variant)) p.expect.push_back(std::move(e));
  return p;
}

bool ScenarioResult::checks_pass() const {
  return std::all_of(checks.begin(), checks.end(), [](const CheckOutcome& c) { return c.pass; });
}

std::size_t ScenarioResult::checks_evaluated() const {
  return static_cast<std::size_t>(std::count_if(checks.begin(), checks.end(), [](const CheckOutcome& c) { return c.skipped.empty(); }));
}

std::size_t ScenarioResult::checks_passed() const {
  return static_cast<std::size_t>(
      std::count_if(checks.begin(), checks.end(), [](const CheckOutcome& c) { return c.skipped.empty() && c.pass; }));
}

std::optional<double> observed_value(const workload::RunResult& r, const Expectation& e) {
  for (const auto& m : r.metrics) {
    if (m.name != e.key) continue;
    const sim::Summary& s = m.summary;
    if (e.stat == "mean") return s.mean;
    if (e.stat == "p50") return s.p50;
    if (e.stat == "p90") return s.p90;
    if (e.stat == "p99") return s.p99;
    if (e.stat == "p999") return s.p999;
    if (e.stat == "min") return s.min;
    if (e.stat == "max") return s.max;
    return std::nullopt;
  }
  if (e.stat != "mean") return std::nullopt;
  if (auto it = r.counters.find(e.key); it != r.counters.end()) return static_cast<double>(it->second);
  // A counter of the catalog that the run does not report counted nothing: a run reports the
  // counters its mechanism and workload register (a family member, `hypercalls.<name>`, only when
  // non-zero), and the tables show any other as 0. Anything else is unknown.
  if (workload::find_counter(e.key)) return 0.0;
  return std::nullopt;
}

ScenarioResult run(const PreparedScenario& p, const ProgressFn& progress) {
  ScenarioResult out;
  static_cast<ScenarioRunHeading&>(out) = p;
  for (std::size_t i = 0; i < p.variants.size(); ++i) {
    const PreparedVariant& v = p.variants[i];
    const auto t0 = std::chrono::steady_clock::now();
    VariantResult vr;
    static_cast<VariantHeading&>(vr) = v;
    try {
      const std::unique_ptr<workload::Workload> w = p.info->make();
      vr.result = w->run(v.spec);
    } catch (const sim::HorizonError& e) {
      throw horizon_error(p, v, e);
    } catch (const InputError& e) {
      rethrow_for_variant(e, p.name, v.name);
    }
    if (vr.result.metrics.empty())
      throw std::runtime_error(fmt::format("workload '{}' returned no metric for variant '{}'", p.workload, v.name));
    for (const auto& m : vr.result.metrics)
      if (std::find(p.info->metrics.begin(), p.info->metrics.end(), m.name) == p.info->metrics.end())
        throw std::logic_error(fmt::format("workload '{}' reported metric '{}', which its WorkloadInfo::metrics does not declare",
                                           p.workload, m.name));
    note_unread_overrides(v, vr.result);
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (progress) progress(p.name, v.name, i, p.variants.size(), secs);
    out.variants.push_back(std::move(vr));
  }
  for (const auto& e : p.expect) {
    const auto it = std::find_if(out.variants.begin(), out.variants.end(),
                                 [&](const VariantResult& v) { return v.name == e.variant; });
    if (it == out.variants.end()) continue;
    const auto got = observed_value(it->result, e);
    if (!got) {
      std::vector<std::string> names;
      for (const auto& m : it->result.metrics) names.push_back(m.name);
      for (const auto& [k, c] : it->result.counters) { (void)c; names.push_back(k); }
      throw InputError(e.place, fmt::format("variant '{}' reports no metric{} '{}' (metrics and counters: {})",
                                            e.variant, e.stat == "mean" ? " or counter" : "", e.key, join(names)));
    }
    const bool is_metric = std::any_of(it->result.metrics.begin(), it->result.metrics.end(),
                                       [&](const workload::Metric& m) { return m.name == e.key; });
    CheckOutcome c{e, *got, within(*got, e.value, e.tolerance), !is_metric, {}};
    // A count is a count of this many iterations; a metric is a statistic, comparable at any length.
    if (c.counter && p.iterations != p.scenario_iterations) {
      c.pass = true;
      c.skipped = fmt::format("the expected count is for the scenario's {} iterations, this run had {}",
                              p.scenario_iterations, p.iterations);
    }
    out.checks.push_back(std::move(c));
  }
  return out;
}

}  // namespace ipilab::scenario
