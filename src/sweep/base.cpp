#include "sweep/base.h"

#include <algorithm>
#include <exception>
#include <filesystem>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/error.h"
#include "common/file.h"
#include "scenario/catalog.h"
#include "scenario/scenario.h"

namespace ipilab::sweep {

namespace fs = std::filesystem;

namespace {

// The dotted key an InputError's place names: its last ": "-separated part.
std::string error_key(const std::string& place) {
  const auto pos = place.rfind(": ");
  return pos == std::string::npos ? std::string() : place.substr(pos + 2);
}

bool key_covers(const std::string& set, const std::string& err) {
  if (err.size() < set.size() || err.compare(0, set.size(), set) != 0) return false;
  return err.size() == set.size() || err[set.size()] == '.' || err[set.size()] == '[';
}

}  // namespace

Base Base::load(const Spec& spec) {
  Base b;
  std::error_code ec;
  const fs::path beside = spec.dir / spec.scenario;
  std::string file;
  if (fs::path(spec.scenario).is_relative() && fs::is_regular_file(beside, ec)) {
    file = beside.lexically_normal().string();
  } else {
    try {
      file = scenario::resolve_scenario(spec.scenario);
    } catch (const InputError& e) {
      throw InputError(spec.scenario_place, e.what());
    }
  }
  b.file_ = file;
  b.shown_ = display_path(file);
  b.text_ = read_text_file(file);
  const scenario::Scenario s = b.parse();
  b.name_ = s.name;
  b.title_ = s.title;
  b.workload_ = s.workload;
  b.seed_ = s.seed;
  b.iterations_ = s.iterations;
  b.warmup_ = s.warmup;
  if (spec.variant) {
    const auto it = std::find_if(s.variants.begin(), s.variants.end(),
                                 [&](const scenario::Variant& v) { return v.name == *spec.variant; });
    if (it == s.variants.end()) {
      std::string names;
      for (const auto& v : s.variants) names += (names.empty() ? "'" : ", '") + v.name + "'";
      throw InputError(spec.variant_place, fmt::format("scenario '{}' ({}) has no variant '{}' (variants: {})", s.name,
                                                       file, *spec.variant, names));
    }
    b.variant_index_ = static_cast<std::size_t>(it - s.variants.begin());
  }
  b.variant_ = s.variants[b.variant_index_].name;
  return b;
}

scenario::Scenario Base::parse() const {
  // Messages name the scenario by its display path; relative paths inside it resolve from its folder.
  scenario::Scenario s = scenario::parse_scenario(text_, shown_);
  s.dir = fs::path(file_).parent_path();
  return s;
}

InputError Base::place_error(const Spec& spec, const Point& p, const InputError& e) const {
  const std::string key = error_key(e.place());
  // The scenario layer names the variant (here: the point) at the end; the sweep names the point itself.
  std::string reason = e.reason();
  if (const auto at = reason.rfind(" [scenario '"); at != std::string::npos && reason.back() == ']') reason.erase(at);
  for (std::size_t a = 0; a < spec.axes.size() && !key.empty(); ++a) {
    const AxisValue& v = spec.axes[a].values[p.value[a]];
    std::vector<std::string> ks;
    leaf_keys(v.set, '.', ks);  // as written in scenario messages ("vm.vcpus")
    for (const auto& k : ks)
      if (key_covers(k, key)) {
        const bool compound = spec.axes[a].key.empty();
        const std::string what = compound ? fmt::format("value '{}' sets {}", v.label, key)
                                          : fmt::format("{} = {}{}", spec.axes[a].key, v.canonical,
                                                        v.canonical == nlohmann::json(v.label).dump() || v.canonical == v.label
                                                            ? "" : fmt::format(" ('{}')", v.label));
        return InputError(v.place, fmt::format("{}: {} [scenario '{}']", what, reason, name_));
      }
  }
  return InputError(spec.scenario_place, e.place().empty() ? reason : e.place() + ": " + reason);
}

scenario::PreparedScenario Base::build(const Spec& spec, const Point& p, std::uint64_t iterations, std::uint64_t warmup,
                                       const scenario::WorkloadLookup& lookup) const {
  try {
    scenario::Scenario s = parse();
    scenario::Variant v = std::move(s.variants[variant_index_]);
    scenario::merge_variant_overrides(v, point_overrides(spec, p));
    v.name = p.label;
    v.description.clear();
    s.variants.clear();
    s.variants.push_back(std::move(v));
    s.expect.clear();  // the base scenario's expectations are about its own variants
    s.warmup = warmup;
    scenario::RunOverrides ov;
    ov.seed = p.seed;
    ov.iterations = iterations ? iterations : iterations_;
    return scenario::prepare(std::move(s), ov, lookup);
  } catch (const InputError& e) {
    throw place_error(spec, p, e);
  }
}

std::string Base::check(const Spec& spec, const Point& p, const scenario::WorkloadLookup& lookup) const {
  try {
    const scenario::PreparedScenario ps = build(spec, p, 1, 0, lookup);
    try {
      (void)scenario::run(ps);
    } catch (const InputError& e) {
      // run() names the variant; place it like a build error.
      throw place_error(spec, p, e);
    }
  } catch (const InputError& e) {
    return e.what();  // the point's label is the caller's to add (a skip reason is shared by many points)
  } catch (const std::exception&) {
    // Not a spec error: the real run reports it as a failed point.
  }
  return {};
}

PointResult Base::run_point(const Spec& spec, const Point& p, std::uint64_t iterations,
                            const scenario::WorkloadLookup& lookup) const {
  PointResult out;
  try {
    const scenario::PreparedScenario ps = build(spec, p, iterations, warmup_, lookup);
    const scenario::ScenarioResult sr = scenario::run(ps);
    const scenario::VariantResult& vr = sr.variants.at(0);
    for (const auto& m : vr.result.metrics) out.metrics.push_back({m.name, m.unit, m.description, m.summary});
    out.counters = vr.result.counters;
    out.settings = vr.result.settings;
    out.notes = vr.result.notes;
    out.events = vr.result.events;
    out.host = vr.host_label;
    out.vm = vr.vm_label;
    out.profile = vr.profile_label;
    out.status = PointResult::Status::Ok;
  } catch (const std::exception& e) {
    out = PointResult{};
    out.status = PointResult::Status::Failed;
    out.error = e.what();
  } catch (...) {
    out = PointResult{};
    out.status = PointResult::Status::Failed;
    out.error = "unknown exception";
  }
  return out;
}

}  // namespace ipilab::sweep
