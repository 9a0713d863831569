#include "evidence/validate.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>

#include <fmt/format.h>

#include "common/error.h"
#include "common/file.h"
#include "cost/profile.h"
#include "cost/shipped.h"
#include "evidence/propagate.h"
#include "scenario/catalog.h"
#include "topology/toml_read.h"

namespace ipilab::evidence {

namespace fs = std::filesystem;
using toml_read::TableReader;

std::string_view kind_name(FigureKind k) {
  switch (k) {
    case FigureKind::Fitted: return "fitted";
    case FigureKind::Predicted: return "predicted";
    case FigureKind::Missed: return "missed";
    case FigureKind::NotModelled: return "not-modelled";
  }
  return "?";
}

double relative_change_percent(double value, double base) { return 100.0 * (value - base) / base; }

bool within_tolerance(const Figure& f, double model) {
  if (!f.relative_to.empty()) return std::fabs(model - f.value) <= f.tolerance + 1e-9;
  return std::fabs(model - f.value) <= f.tolerance * std::fabs(f.value) + 1e-12 * std::fabs(f.value);
}

std::string shipped_figures_file() { return (data_dir() / "validation" / "figures.toml").string(); }

namespace {

// The figure's metric in one variant of the run (checked: the variant runs the figure's profile,
// reports the metric, in the figure's unit unless the figure is relative).
double observed_in(const Figure& f, const std::string& variant, const scenario::PreparedScenario& p, const scenario::ScenarioResult& res) {
  std::size_t vi = 0;
  while (vi < res.variants.size() && res.variants[vi].name != variant) ++vi;
  if (vi == res.variants.size())
    throw InputError(f.place + ".variant", fmt::format("figure {}: scenario {} ran no variant '{}'", f.id, p.name, variant));
  const auto& vr = res.variants[vi];
  if (p.variants[vi].spec.profile.name() != f.profile)
    throw InputError(f.place + ".profile", fmt::format("figure {} says profile '{}', but variant '{}' of {} runs profile '{}'", f.id, f.profile,
                                                       variant, p.name, p.variants[vi].spec.profile.name()));
  const auto m = std::find_if(vr.result.metrics.begin(), vr.result.metrics.end(), [&](const workload::Metric& x) { return x.name == f.metric; });
  if (m == vr.result.metrics.end())
    throw InputError(f.place + ".metric", fmt::format("variant '{}' of {} reports no metric '{}'", variant, p.name, f.metric));
  if (f.relative_to.empty() && m->unit != f.unit)
    throw InputError(f.place + ".unit", fmt::format("'{}': the metric {} is in {}; give the published figure in {}", f.unit, f.metric, m->unit, m->unit));
  scenario::Expectation e;
  e.key = f.metric;
  e.stat = f.stat;
  const auto got = scenario::observed_value(vr.result, e);
  if (!got) throw InputError(f.place + ".stat", fmt::format("'{}' is not a statistic of metric {}", f.stat, f.metric));
  return *got;
}

}  // namespace

FigureResult evaluate_figure(const Figure& f, const scenario::PreparedScenario& p, const scenario::ScenarioResult& r) {
  FigureResult row;
  row.figure = f;
  row.model = f.relative_to.empty() ? observed_in(f, f.variant, p, r)
                                    : relative_change_percent(observed_in(f, f.variant, p, r), observed_in(f, f.relative_to, p, r));
  if (!f.relative_to.empty()) row.error = row.model - f.value;
  else row.error = f.value != 0 ? (row.model - f.value) / f.value : 0.0;
  if (has_tolerance(f.kind)) row.within = within_tolerance(f, row.model);
  return row;
}

namespace {

Figure read_figure(const toml::table& t, const std::string& file, std::size_t i) {
  TableReader r(t, file, fmt::format("figure[{}]", i));
  Figure f;
  f.place = toml_read::place(file, t.source(), fmt::format("figure[{}]", i));
  f.id = r.req_string("id");
  f.profile = r.req_string("profile");
  f.figure = r.req_string("figure");
  f.value = r.req_double("value");
  f.unit = r.req_string("unit");
  f.source = r.req_string("source");
  if (f.source.empty()) r.fail("source", "is empty: a published figure says where it was published");
  const std::string kind = r.req_string("kind");
  if (kind == "fitted") f.kind = FigureKind::Fitted;
  else if (kind == "predicted") f.kind = FigureKind::Predicted;
  else if (kind == "missed") f.kind = FigureKind::Missed;
  else if (kind == "not-modelled") f.kind = FigureKind::NotModelled;
  else r.fail("kind", fmt::format("'{}' is not a kind: fitted, predicted, missed or not-modelled", kind));
  f.note = r.opt_string("note").value_or("");
  if (f.kind == FigureKind::NotModelled) {
    f.reason = r.opt_string("reason").value_or("");
    if (f.reason.empty()) r.fail("reason", "missing: a not-modelled figure says why no scenario models it");
    r.finish();
    return f;
  }
  f.scenario = r.req_string("scenario");
  f.variant = r.req_string("variant");
  f.metric = r.req_string("metric");
  f.stat = r.opt_string("stat").value_or("mean");
  if (f.kind == FigureKind::Fitted) {
    const toml::array* a = r.opt_array("fitted_into");
    if (!a || a->empty()) r.fail("fitted_into", "missing: a fitted figure names the profile's cost keys fitted to it");
    for (const auto& n : *a) {
      const auto s = n.value<std::string>();
      if (!s) r.fail("fitted_into", "expected an array of cost keys (strings)");
      f.fitted_into.push_back(*s);
    }
  } else if (const auto rel = r.opt_string("relative_to")) {
    f.relative_to = *rel;
    if (f.relative_to.empty() || f.relative_to == f.variant)
      r.fail("relative_to", "names the variant the change is measured from: another variant of the same scenario");
    if (f.unit != "%") r.fail("unit", fmt::format("'{}': a relative figure (relative_to) is a change in %: unit = \"%\"", f.unit));
    if (r.opt_double("tolerance")) r.fail("tolerance", "a relative figure states tolerance_points (percentage points), not a relative tolerance");
    const std::optional<double> tol = r.opt_double("tolerance_points");
    if (!tol || !(*tol >= 0) || *tol > 100) r.fail("tolerance_points", "missing or not in [0, 100]: a relative figure states its tolerance in percentage points");
    f.tolerance = *tol;
  } else {
    if (r.opt_double("tolerance_points")) r.fail("tolerance_points", "only for a relative figure (relative_to); an absolute one states tolerance");
    const std::optional<double> tol = r.opt_double("tolerance");
    if (!tol || !(*tol >= 0) || *tol > 1) r.fail("tolerance", "missing or not in [0, 1]: a predicted figure states its relative tolerance");
    f.tolerance = *tol;
  }
  if (has_tolerance(f.kind)) {
    f.tolerance_reason = r.opt_string("tolerance_reason").value_or("");
    if (f.tolerance_reason.empty()) r.fail("tolerance_reason", "missing: say why the tolerance is that wide (the source's precision or spread)");
  }
  if (f.kind == FigureKind::Missed) {
    f.reason = r.opt_string("reason").value_or("");
    if (f.reason.empty()) r.fail("reason", "missing: a missed figure says by how much it misses and what decides the miss");
  }
  r.finish();
  return f;
}

std::string profile_file(const std::string& name) { return (data_dir() / "profiles" / (name + ".toml")).string(); }

// Checks the fitted figures against the profile's fitted costs (see validate.h).
void check_fits(ProfileSummary& ps, const cost::Profile& prof, const std::vector<Figure>& figures, const std::string& file) {
  std::map<std::string, std::vector<const Figure*>> named;  // fitted cost -> figures naming it
  for (const auto& f : figures) {
    if (f.profile != ps.name || f.kind != FigureKind::Fitted) continue;
    for (const auto& k : f.fitted_into) {
      if (!prof.has(k) || prof.get(k).cls != cost::CostClass::Fitted)
        throw InputError(f.place + ".fitted_into", fmt::format("'{}' is not a fitted cost of profile '{}' ({})", k, ps.name, ps.file));
      named[k].push_back(&f);
    }
  }
  for (const auto& k : ps.fitted_values) {
    const auto it = named.find(k);
    if (it == named.end())
      throw InputError(file, fmt::format("profile '{}' has the fitted value cost.{} but no fitted figure of this set names it in "
                                         "fitted_into: add the figure it was fitted to",
                                         ps.name, k));
    const std::string& src = prof.get(k).source;
    const bool cites = std::any_of(it->second.begin(), it->second.end(), [&](const Figure* f) { return src.find(f->id) != std::string::npos; });
    if (!cites)
      throw InputError(file, fmt::format("profile '{}': the source of fitted cost.{} (\"{}\") names none of the figures fitted into it ({})",
                                         ps.name, k, src, it->second.front()->id));
  }
}

// Runs one scenario's needed variants and fills the figures' results.
void run_scenario(const std::string& name, std::vector<FigureResult*>& rows, const ValidateOptions& opt,
                  const scenario::WorkloadLookup& lookup) {
  scenario::RunOverrides ov;
  auto need = [](std::vector<std::string>& v, const std::string& name) {
    if (!name.empty() && std::find(v.begin(), v.end(), name) == v.end()) v.push_back(name);
  };
  for (const auto* r : rows) {
    need(ov.variants, r->figure.variant);
    need(ov.variants, r->figure.relative_to);
  }
  std::string path;
  try {
    path = scenario::resolve_scenario(name);
  } catch (const InputError& e) {
    throw InputError(rows.front()->figure.place + ".scenario", e.reason());
  }
  scenario::PreparedScenario p;
  try {
    p = scenario::prepare(scenario::load_scenario(path), ov, lookup);
  } catch (const InputError& e) {
    if (e.place() == "--variant") throw InputError(rows.front()->figure.place + ".variant", e.reason());
    throw;
  }
  const scenario::ScenarioResult res = scenario::run(p);
  // The intervals: draws of the variants with a predicted figure only (the fitted ones need none).
  scenario::RunOverrides pov;
  for (const auto* r : rows)
    if (has_tolerance(r->figure.kind) && r->figure.relative_to.empty())
      need(pov.variants, r->figure.variant);
  std::optional<Propagation> prop;
  if (!pov.variants.empty() && opt.draws >= 2) {
    const scenario::PreparedScenario pp = scenario::prepare(scenario::load_scenario(path), pov, lookup);
    prop = propagate(pp, scenario::run(pp), PropagateOptions{opt.draws, opt.jobs, 0});
  }
  for (FigureResult* row : rows) {
    const Figure& f = row->figure;
    *row = evaluate_figure(f, p, res);
    if (prop && has_tolerance(f.kind) && f.stat == "mean" && f.relative_to.empty())
      for (const auto& pv : prop->variants)
        if (pv.variant == f.variant)
          for (const auto& mi : pv.metrics)
            if (mi.name == f.metric && mi.has_interval) row->interval = mi.interval;
  }
}

}  // namespace

namespace {

std::vector<Figure> figures_of(const toml::table& root, const std::string& path) {
  TableReader r(root, path, "");
  const toml::array* arr = r.opt_array("figure");
  r.finish();
  if (!arr || arr->empty()) throw InputError(path, "no [[figure]] entries: a validation file lists published figures");
  std::vector<Figure> out;
  std::set<std::string> ids;
  for (std::size_t i = 0; i < arr->size(); ++i) {
    const toml::table* t = (*arr)[i].as_table();
    if (!t) throw InputError(toml_read::place(path, (*arr)[i].source(), fmt::format("figure[{}]", i)), "expected a table ([[figure]])");
    Figure f = read_figure(*t, path, i);
    if (!ids.insert(f.profile + "/" + f.id).second)
      throw InputError(f.place + ".id", fmt::format("duplicate figure id '{}' for profile '{}'", f.id, f.profile));
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace

std::vector<Figure> load_figures(const std::string& path) { return figures_of(toml_read::parse_file(path), path); }

std::vector<Figure> parse_figures(std::string_view text, const std::string& file) { return figures_of(toml_read::parse(text, file), file); }

bool Validation::pass() const {
  return std::all_of(figures.begin(), figures.end(), [](const FigureResult& r) { return r.figure.kind != FigureKind::Predicted || r.within; });
}

Validation validate(const std::string& file, const std::vector<Figure>& figures, const ValidateOptions& opt,
                    const scenario::WorkloadLookup& lookup) {
  Validation v;
  v.file = file;
  v.draws = opt.draws >= 2 ? opt.draws : 0;
  std::set<std::string> names;
  if (opt.all_profiles)
    for (const auto& n : cost::shipped_profile_names()) names.insert(n);
  for (const auto& f : figures) names.insert(f.profile);
  for (const auto& n : names) {
    ProfileSummary ps;
    ps.name = n;
    ps.file = profile_file(n);
    std::error_code ec;
    if (!fs::is_regular_file(ps.file, ec)) {
      const auto it = std::find_if(figures.begin(), figures.end(), [&](const Figure& f) { return f.profile == n; });
      throw InputError(it->place + ".profile", fmt::format("no shipped profile '{}' ({})", n, ps.file));
    }
    const cost::Profile prof = cost::Profile::load_file(ps.file);
    for (const auto& k : prof.keys())
      if (prof.get(k).cls == cost::CostClass::Fitted) ps.fitted_values.push_back(k);
    check_fits(ps, prof, figures, file);
    ps.file = "profiles/" + n + ".toml";
    v.profiles.push_back(std::move(ps));
  }
  for (const auto& f : figures) {
    FigureResult r;
    r.figure = f;
    v.figures.push_back(std::move(r));
  }
  std::map<std::string, std::vector<FigureResult*>> by_scenario;
  for (auto& r : v.figures)
    if (r.figure.kind != FigureKind::NotModelled) by_scenario[r.figure.scenario].push_back(&r);
  for (auto& [name, rows] : by_scenario) run_scenario(name, rows, opt, lookup);
  for (auto& ps : v.profiles)
    for (const auto& r : v.figures) {
      if (r.figure.profile != ps.name) continue;
      if (r.figure.kind == FigureKind::Fitted) ++ps.fitted;
      if (r.figure.kind == FigureKind::NotModelled) ++ps.not_modelled;
      if (r.figure.kind == FigureKind::Missed) {
        ++ps.missed;
        if (r.within) ++ps.missed_now_within;
      }
      if (r.figure.kind == FigureKind::Predicted) {
        ++ps.predicted;
        if (r.within) ++ps.predicted_within;
      }
    }
  return v;
}

}  // namespace ipilab::evidence
