// ipilab/evidence/report.h — --uncertainty and --sensitivity as text (after the scenario's usual
// report, which stays as it is) and as additions to the scenario's JSON object (docs/json.md).
//
// Text: "Uncertainty" — one line on the draws, one on the costs (how many are estimates, how many
// ranges are a class default), then one table per metric: each variant's mean with its 90 %
// interval, "7,759 [7,420 - 8,130]", and its difference against the first variant with the
// difference's interval; a difference whose interval spans zero says "the change may not matter
// here". With details, every used cost with its class, value, range and source.
// "Sensitivity" — per variant, the tornado of its main metric: cost, class, the metric at the low
// and the high end of the cost's range, the swing, the additive share of variance and (with the
// draws) the first-order index; the top `top` rows, then how many more.
//
// JSON (added only with the options): in each variant, metrics.NAME.interval = [lo, hi] beside
// mean, and "difference_vs_first": {NAME: {"mean", "interval", "pct", "interval_pct",
// "may_not_matter"}}; at the scenario level "uncertainty": {"draws", "seed", "level",
// "iterations", "method", "costs_used", "estimates", "default_ranges", "costs": [...]} and
// "sensitivity": [{"variant", "metric", "unit", "mean", "tornado": [{"key", "class", "low",
// "high", "swing", "share", "first_order"?}]}].
#pragma once

#include <cstddef>
#include <string>

#include <nlohmann/json.hpp>

#include "evidence/propagate.h"
#include "evidence/sensitivity.h"

namespace ipilab::evidence {

std::string format_uncertainty(const Propagation& u, bool details);
std::string format_sensitivity(const Sensitivity& s, std::size_t top = 10);

/// Adds the intervals to a scenario object of scenario::to_json (see the file comment).
void add_uncertainty_json(nlohmann::ordered_json& scenario, const Propagation& u);
void add_sensitivity_json(nlohmann::ordered_json& scenario, const Sensitivity& s);

/// "7,759 [7,420 - 8,130]" with one number format for the three (report_format.h).
std::string format_with_interval(double point, const Interval& i);
/// One figure on its own, in the column format a table of that value alone would use.
std::string format_figure_value(double v);

}  // namespace ipilab::evidence
