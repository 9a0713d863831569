#include "evidence/calibrate.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <filesystem>
#include <map>
#include <memory>

#include <Eigen/Dense>
#include <unsupported/Eigen/NonLinearOptimization>
#include <unsupported/Eigen/NumericalDiff>
#include <fmt/format.h>

#include "common/error.h"
#include "common/file.h"
#include "evidence/draws.h"
#include "scenario/catalog.h"

namespace ipilab::evidence {

namespace {

constexpr double kZ90 = 1.6448536269514722;  // the standard normal's 95th percentile

// The figures' scenarios, prepared once, and the model: factors (log) -> each figure's value.
class Model {
 public:
  Model(const std::vector<Figure>& figs, const CalibrateOptions& opt, const std::vector<std::string>& keys,
        const std::shared_ptr<const cost::Profile>& prof, const std::string& prof_file, const scenario::WorkloadLookup& lookup)
      : figs_(figs), keys_(keys), run_{opt.jobs, opt.iterations, figs.front().stat == "median"} {
    std::map<std::string, std::vector<std::string>> variants;
    for (const auto& f : figs_) {
      auto& v = variants[f.scenario];
      if (std::find(v.begin(), v.end(), f.variant) == v.end()) v.push_back(f.variant);
    }
    for (auto& [name, vs] : variants) {
      scenario::RunOverrides ov;
      ov.variants = vs;
      if (opt.run_on_profile) {
        ov.profile = prof;
        ov.profile_shown = prof_file;
      }
      auto p = std::make_unique<scenario::PreparedScenario>(scenario::prepare(scenario::load_scenario(scenario::resolve_scenario(name)), ov, lookup));
      for (const auto& v : p->variants)
        if (v.spec.profile.name() != prof->name())
          throw InputError(fmt::format("{}: variant '{}'", name, v.name),
                           fmt::format("runs profile '{}', not '{}': calibrate fits one profile at a time", v.spec.profile.name(), prof->name()));
      index_[name] = scenarios_.size();
      scenarios_.push_back(std::move(p));
    }
  }
  /// The model's value of every figure with the costs scaled by exp(x).
  std::vector<double> operator()(const Eigen::VectorXd& x) const {
    ++evaluations;
    std::vector<double> factors(static_cast<std::size_t>(x.size()));
    for (Eigen::Index i = 0; i < x.size(); ++i) factors[static_cast<std::size_t>(i)] = std::exp(x[i]);
    std::vector<std::vector<MetricMeans>> runs;
    for (const auto& p : scenarios_) runs.push_back(run_scaled(*p, keys_, {factors}, run_)[0]);
    std::vector<double> out;
    for (const auto& f : figs_) {
      const auto& p = *scenarios_[index_.at(f.scenario)];
      std::size_t vi = 0;
      while (p.variants[vi].name != f.variant) ++vi;
      const auto& m = runs[index_.at(f.scenario)][vi];
      const auto it = m.find(f.metric);
      if (it == m.end()) throw InputError(f.place + ".metric", fmt::format("variant '{}' reports no metric '{}'", f.variant, f.metric));
      out.push_back(it->second);
    }
    return out;
  }
  mutable int evaluations = 0;

 private:
  const std::vector<Figure>& figs_;
  std::vector<std::string> keys_;
  RunOptions run_;
  std::vector<std::unique_ptr<scenario::PreparedScenario>> scenarios_;
  std::map<std::string, std::size_t> index_;
};

// Eigen's functor shape for LevenbergMarquardt + NumericalDiff: relative residuals of `use`.
struct Residuals {
  using Scalar = double;
  enum { InputsAtCompileTime = Eigen::Dynamic, ValuesAtCompileTime = Eigen::Dynamic };
  using InputType = Eigen::VectorXd;
  using ValueType = Eigen::VectorXd;
  using JacobianType = Eigen::MatrixXd;
  const Model* model;
  const std::vector<Figure>* figs;
  std::vector<std::size_t> use;  // the figures fitted (all but the one left out)
  int n;
  int inputs() const { return n; }
  int values() const { return static_cast<int>(use.size()); }
  int operator()(const Eigen::VectorXd& x, Eigen::VectorXd& fvec) const {
    const std::vector<double> m = (*model)(x);
    for (std::size_t i = 0; i < use.size(); ++i) {
      const double pub = (*figs)[use[i]].value;
      fvec[static_cast<Eigen::Index>(i)] = std::isfinite(m[use[i]]) ? m[use[i]] / pub - 1.0 : 1e3;
    }
    return 0;
  }
};

struct Solved {
  Eigen::VectorXd x;
  bool converged = false;
  std::string info;
};

// Residuals with a forward-difference Jacobian of a fixed step in log-factor, for medians: a
// simulated median is a histogram percentile (steps of about 1/256 of its value), so NumericalDiff's
// step, relative to |x| and tiny near the profile's value (x = 0), would see only the steps.
struct FixedStepResiduals : Residuals {
  double step = 0.03;
  int df(const Eigen::VectorXd& x, Eigen::MatrixXd& jac) const {
    Eigen::VectorXd f0(values()), fh(values());
    (*this)(x, f0);
    for (Eigen::Index j = 0; j < x.size(); ++j) {
      Eigen::VectorXd xh = x;
      xh[j] += step;
      (*this)(xh, fh);
      jac.col(j) = (fh - f0) / step;
    }
    return 0;
  }
};

template <class Functor>
Solved minimise(Functor& f, const Eigen::VectorXd& x0) {
  Eigen::LevenbergMarquardt<Functor> lm(f);
  lm.parameters.maxfev = 400;
  Solved s;
  s.x = x0;
  const auto status = lm.minimize(s.x);
  using namespace Eigen::LevenbergMarquardtSpace;
  s.converged = status == RelativeReductionTooSmall || status == RelativeErrorTooSmall || status == RelativeErrorAndReductionTooSmall ||
                status == CosinusTooSmall || status == FtolTooSmall || status == XtolTooSmall || status == GtolTooSmall;
  s.info = fmt::format("Eigen LevenbergMarquardt status {}", static_cast<int>(status));
  return s;
}

// The step of the ranges' Jacobian and of the medians' fit, in log-factor.
double jacobian_step(const std::vector<Figure>& figs) { return figs.front().stat == "median" ? 0.03 : 0.01; }

Solved solve(const Model& model, const std::vector<Figure>& figs, std::vector<std::size_t> use, const Eigen::VectorXd& x0) {
  Residuals r{&model, &figs, std::move(use), static_cast<int>(x0.size())};
  if (figs.front().stat == "median") {
    FixedStepResiduals fr{r, jacobian_step(figs)};
    return minimise(fr, x0);
  }
  // A forward step of 1 % in log-factor (epsfcn 1e-4): costs are integer picoseconds, so a finer
  // step would measure the rounding.
  Eigen::NumericalDiff<Residuals> nd(r, 1e-4);
  return minimise(nd, x0);
}

std::vector<std::string> default_keys(const cost::Profile& prof) {
  std::vector<std::string> out;
  for (const auto& k : prof.keys())
    if (prof.get(k).cls == cost::CostClass::Fitted) out.push_back(k);
  return out;
}

}  // namespace

namespace {

// The base: a shipped profile by name, or a file (a name ending in .toml or holding '/', as
// `extends` reads it).
void open_base(Calibration& c, const std::string& arg) {
  const bool is_file = arg.find('/') != std::string::npos || (arg.size() > 5 && arg.ends_with(".toml"));
  if (!is_file) {
    c.base_file = (data_dir() / "profiles" / (arg + ".toml")).string();
    c.base_ref = arg;
    return;
  }
  std::error_code ec;
  const auto abs = std::filesystem::absolute(arg, ec);
  c.base_file = arg;
  c.base_ref = ec ? arg : abs.lexically_normal().string();
}

// The figures of `set` that this calibration fits to.
std::vector<Figure> chosen_figures(const std::vector<Figure>& set, const CalibrateOptions& opt, const std::string& name) {
  std::vector<Figure> figs;
  const auto named = [&](const Figure& f) { return std::find(opt.figure_ids.begin(), opt.figure_ids.end(), f.id) != opt.figure_ids.end(); };
  for (const auto& f : set) {
    const bool mine = f.profile == opt.profile || f.profile == name;
    if (!mine || (opt.figure_ids.empty() ? f.kind != FigureKind::Fitted : !named(f))) continue;
    if (f.kind == FigureKind::NotModelled) throw InputError(f.place, fmt::format("figure {} is not modelled by any scenario", f.id));
    if (f.stat != "mean" && !(f.stat == "median" && f.unit == "ns"))
      throw InputError(f.place + ".stat", fmt::format("'{}' {}: calibrate fits means (in the metric's unit) or medians in ns", f.stat, f.unit));
    if (!figs.empty() && figs.front().stat != f.stat)
      throw InputError(f.place + ".stat", fmt::format("'{}', but {} is a {}: one fit takes one statistic", f.stat, figs.front().id, figs.front().stat));
    figs.push_back(f);
  }
  for (const auto& id : opt.figure_ids)
    if (std::none_of(figs.begin(), figs.end(), [&](const Figure& f) { return f.id == id; }))
      throw InputError("--figure", fmt::format("no figure '{}' of profile '{}' in the set", id, opt.profile));
  return figs;
}

}  // namespace

Calibration calibrate(const std::vector<Figure>& set, const CalibrateOptions& opt, const scenario::WorkloadLookup& lookup) {
  Calibration c;
  c.precision = opt.precision;
  c.figures_from = opt.figures_from;
  c.measured = opt.measured;
  open_base(c, opt.profile);
  const auto prof = std::make_shared<cost::Profile>(cost::Profile::load_file(c.base_file));
  c.profile = prof->name();
  const std::vector<std::string> keys = opt.keys.empty() ? default_keys(*prof) : opt.keys;
  if (keys.empty()) throw InputError("--fit", fmt::format("profile '{}' has no fitted values; name the values to fit with --fit", opt.profile));
  for (const auto& k : keys)
    if (!prof->has(k)) throw InputError("--fit", fmt::format("profile '{}' has no cost.{}", opt.profile, k));
  const std::vector<Figure> figs = chosen_figures(set, opt, c.profile);
  if (figs.empty()) throw InputError("--figure", fmt::format("no figure of profile '{}' to fit to", opt.profile));
  if (figs.size() < keys.size())
    throw InputError("--figure", fmt::format("{} values cannot be fitted to {} figures (underdetermined)", keys.size(), figs.size()));

  const Model model(figs, opt, keys, prof, c.base_file, lookup);
  const Eigen::Index n = static_cast<Eigen::Index>(keys.size());
  const Eigen::VectorXd x0 = Eigen::VectorXd::Constant(n, std::log(opt.start));
  std::vector<std::size_t> all(figs.size());
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
  const Solved s = solve(model, figs, all, x0);
  c.converged = s.converged;
  c.solver_info = s.info;

  // Jacobian of the relative residuals in log-factors at the solution, for the ranges.
  const std::vector<double> at = model(s.x);
  Eigen::MatrixXd J(static_cast<Eigen::Index>(figs.size()), n);
  const double h = jacobian_step(figs);
  for (Eigen::Index j = 0; j < n; ++j) {
    Eigen::VectorXd xh = s.x;
    xh[j] += h;
    const std::vector<double> mh = model(xh);
    for (std::size_t i = 0; i < figs.size(); ++i) J(static_cast<Eigen::Index>(i), j) = (mh[i] - at[i]) / figs[i].value / h;
  }
  const Eigen::MatrixXd JtJ = J.transpose() * J;
  const Eigen::FullPivLU<Eigen::MatrixXd> lu(JtJ);
  const bool determined = lu.rank() == n;
  const Eigen::MatrixXd cov = determined ? Eigen::MatrixXd(opt.precision * opt.precision * lu.inverse()) : Eigen::MatrixXd();
  for (Eigen::Index j = 0; j < n; ++j) {
    const std::string& k = keys[static_cast<std::size_t>(j)];
    const cost::Cost& base = prof->get(k);
    FittedValue fv{k, std::string(cost::unit_name(base.unit)), base.value * opt.start, base.value * std::exp(s.x[j]), {}, {}, base};
    if (determined) {
      const double sd = std::sqrt(std::max(0.0, cov(j, j)));
      fv.lo = fv.value * std::exp(-kZ90 * sd);
      fv.hi = fv.value * std::exp(kZ90 * sd);
    }
    c.values.push_back(fv);
  }
  for (std::size_t i = 0; i < figs.size(); ++i) c.figures.push_back(FigureFit{figs[i], at[i], at[i] / figs[i].value - 1.0, {}, {}});

  c.loo_possible = figs.size() > keys.size();
  if (opt.leave_one_out && c.loo_possible)
    for (std::size_t k = 0; k < figs.size(); ++k) {
      std::vector<std::size_t> rest;
      for (std::size_t i = 0; i < figs.size(); ++i)
        if (i != k) rest.push_back(i);
      const Solved sk = solve(model, figs, rest, x0);
      const double pred = model(sk.x)[k];
      c.figures[k].loo_model = pred;
      c.figures[k].loo_error = pred / figs[k].value - 1.0;
    }
  c.evaluations = model.evaluations;
  return c;
}

}  // namespace ipilab::evidence
