#include <algorithm>

#include <fmt/format.h>

#include "common/error.h"
#include "topology/toml_read.h"
#include "workload/params.h"

namespace ipilab::workload {

std::string Params::place(std::string_view key) const {
  const std::string dotted = prefix_.empty() ? std::string(key) : prefix_ + "." + std::string(key);
  if (const toml::node* n = node(key)) return toml_read::place(file_, n->source(), dotted);
  return toml_read::place(file_, table_.source(), dotted);
}

std::string Params::get_string(std::string_view key, std::string_view fallback) const {
  const toml::node* n = node(key);
  if (!n) return std::string(fallback);
  if (!n->is_string())
    throw InputError(place(key), fmt::format("expected a string, found {}", toml_read::type_name(*n)));
  return std::string(*n->value<std::string>());
}

std::string Params::get_choice(std::string_view key, std::string_view fallback,
                               const std::vector<std::string_view>& allowed) const {
  const std::string v = get_string(key, fallback);
  if (std::find(allowed.begin(), allowed.end(), v) != allowed.end()) return v;
  std::string list;
  for (auto a : allowed) list += (list.empty() ? "" : ", ") + std::string("\"") + std::string(a) + "\"";
  throw InputError(place(key), fmt::format("\"{}\" is not one of {}", v, list));
}

std::int64_t Params::get_int(std::string_view key, std::int64_t fallback, std::int64_t min, std::int64_t max) const {
  const toml::node* n = node(key);
  if (!n) return fallback;
  const std::string dotted = prefix_.empty() ? std::string(key) : prefix_ + "." + std::string(key);
  return toml_read::node_int(*n, file_, dotted, min, max);
}

double Params::get_float(std::string_view key, double fallback, double min, double max) const {
  const toml::node* n = node(key);
  if (!n) return fallback;
  const std::string dotted = prefix_.empty() ? std::string(key) : prefix_ + "." + std::string(key);
  const double v = toml_read::node_double(*n, file_, dotted);
  if (v < min || v > max) throw InputError(place(key), fmt::format("{} is outside [{}, {}]", v, min, max));
  return v;
}

bool Params::get_bool(std::string_view key, bool fallback) const {
  const toml::node* n = node(key);
  if (!n) return fallback;
  if (!n->is_boolean())
    throw InputError(place(key), fmt::format("expected true or false, found {}", toml_read::type_name(*n)));
  return *n->value<bool>();
}

std::vector<std::int64_t> Params::get_int_list(std::string_view key, const std::vector<std::int64_t>& fallback) const {
  const toml::node* n = node(key);
  if (!n) return fallback;
  const toml::array* arr = n->as_array();
  if (!arr) throw InputError(place(key), fmt::format("expected a list of integers, found {}", toml_read::type_name(*n)));
  std::vector<std::int64_t> out;
  const std::string dotted = prefix_.empty() ? std::string(key) : prefix_ + "." + std::string(key);
  for (std::size_t i = 0; i < arr->size(); ++i)
    out.push_back(toml_read::node_int(*arr->get(i), file_, fmt::format("{}[{}]", dotted, i)));
  return out;
}

ParamInfo info(const IntParam& p) {
  return {std::string(p.name), "int", p.default_text.empty() ? std::to_string(p.def) : std::string(p.default_text),
          std::string(p.description)};
}
ParamInfo info(const FloatParam& p) {
  return {std::string(p.name), "float", p.default_text.empty() ? fmt::format("{:g}", p.def) : std::string(p.default_text),
          std::string(p.description)};
}
ParamInfo info(const BoolParam& p) {
  return {std::string(p.name), "bool", p.default_text.empty() ? std::string(p.def ? "true" : "false") : std::string(p.default_text),
          std::string(p.description)};
}
ParamInfo choice_info(std::string_view name, std::string_view def, std::span<const std::string_view> names,
                      std::string_view description, std::string_view default_text) {
  std::string d(description);
  std::string list;
  for (auto c : names) list += (list.empty() ? "" : ", ") + std::string(c);
  if (!list.empty()) d += " (one of: " + list + ")";
  return {std::string(name), "string", default_text.empty() ? fmt::format("\"{}\"", def) : std::string(default_text), d};
}

ParamInfo info(const IntListParam& p) {
  return {std::string(p.name), "int list", std::string(p.default_text), std::string(p.description)};
}


void Params::reject_unknown(const std::vector<ParamInfo>& declared, std::string_view owner) const {
  for (const auto& [k, v] : table_) {
    const std::string_view key = k.str();
    const bool known = std::any_of(declared.begin(), declared.end(), [&](const ParamInfo& p) { return p.name == key; });
    if (known) continue;
    std::string list;
    for (const auto& p : declared) list += (list.empty() ? "" : ", ") + p.name;
    throw InputError(place(key), fmt::format("unknown key ({} accepts: {})", owner, list));
  }
}

}  // namespace ipilab::workload
