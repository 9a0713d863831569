// ipilab/workload/params.h — parameters of workloads and mechanisms, declared once.
//
// A parameter is a typed constant (SST-ELI style): name, type, default, range or choices and a
// description, in one place. The code reads it through that constant (Params::get(kSender)), so the
// default that runs is the default `ipilab list` prints. Values come from the [workload] table of a
// scenario (after variant overrides); getters validate type and range and throw
// InputError("FILE:LINE:COL: workload.<key>", reason) naming the scenario file, line and column.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <toml++/toml.h>

#include "common/enum_names.h"

namespace ipilab::workload {

/// A declared parameter as listings show it.
struct ParamInfo {
  std::string name;
  std::string type;          ///< "string", "int", "float", "bool", "int list"
  std::string default_text;  ///< as shown in --help / list ("" = required)
  std::string description;   ///< what it does; allowed values; unit
};

struct IntParam {
  std::string_view name;
  std::int64_t def;
  std::int64_t min, max;
  std::string_view description;
  std::string_view default_text = {};  ///< when the default depends on the run (e.g. "every other vCPU")
};
struct FloatParam {
  std::string_view name;
  double def;
  double min, max;
  std::string_view description;
  std::string_view default_text = {};
};
struct BoolParam {
  std::string_view name;
  bool def;
  std::string_view description;
  std::string_view default_text = {};
};
/// A choice among the values of a model's enum, named by the model's own table (common/enum_names.h:
/// hv::kLinuxVersionNames, gic::kFind41PolicyNames, ...), so the names a scenario writes are the
/// names the model prints, listed in one place; Params::get returns the value, never a string to
/// compare again. Aliases in the table are accepted and listed.
template <class E>
struct EnumParam {
  std::string_view name;
  E def;
  std::span<const EnumName<E>> names;
  std::string_view description;
  std::string_view default_text = {};
};
struct IntListParam {
  std::string_view name;
  std::string_view description;
  std::string_view default_text;
};

ParamInfo info(const IntParam& p);
ParamInfo info(const FloatParam& p);
ParamInfo info(const BoolParam& p);
ParamInfo info(const IntListParam& p);
/// The listing of a choice: "(one of: a, b, c)" after the description; the default quoted.
ParamInfo choice_info(std::string_view name, std::string_view def, std::span<const std::string_view> names,
                      std::string_view description, std::string_view default_text);
template <class E>
std::vector<std::string_view> enum_param_names(const EnumParam<E>& p) {
  std::vector<std::string_view> names;
  for (const auto& n : p.names) names.push_back(n.name);
  return names;
}
template <class E>
ParamInfo info(const EnumParam<E>& p) {
  return choice_info(p.name, name_of(p.names, p.def), enum_param_names(p), p.description, p.default_text);
}

/// The [workload] table of a scenario after variant overrides, with the file it came from.
class Params {
 public:
  Params() = default;
  Params(toml::table table, std::string file, std::string key_prefix = "workload")
      : table_(std::move(table)), file_(std::move(file)), prefix_(std::move(key_prefix)) {}

  bool has(std::string_view key) const { return table_.contains(key); }

  std::int64_t get(const IntParam& p) const { return get_int(p.name, p.def, p.min, p.max); }
  /// With a default the run computes (p.default_text says which); the range still applies.
  std::int64_t get(const IntParam& p, std::int64_t def, std::int64_t max) const {
    return get_int(p.name, def, p.min, max);
  }
  double get(const FloatParam& p) const { return get_float(p.name, p.def, p.min, p.max); }
  bool get(const BoolParam& p) const { return get_bool(p.name, p.def); }
  bool get(const BoolParam& p, bool def) const { return get_bool(p.name, def); }
  template <class E>
  E get(const EnumParam<E>& p) const {
    return get(p, p.def);
  }
  /// With a default the run computes (p.default_text says which).
  template <class E>
  E get(const EnumParam<E>& p, E def) const {
    return *value_named(p.names, get_choice(p.name, name_of(p.names, def), enum_param_names(p)));
  }
  std::vector<std::int64_t> get(const IntListParam& p, const std::vector<std::int64_t>& def) const {
    return get_int_list(p.name, def);
  }

  // Untyped getters (the typed ones call these).
  std::string get_string(std::string_view key, std::string_view fallback) const;
  std::string get_choice(std::string_view key, std::string_view fallback,
                         const std::vector<std::string_view>& allowed) const;
  std::int64_t get_int(std::string_view key, std::int64_t fallback, std::int64_t min, std::int64_t max) const;
  double get_float(std::string_view key, double fallback, double min, double max) const;
  bool get_bool(std::string_view key, bool fallback) const;
  std::vector<std::int64_t> get_int_list(std::string_view key, const std::vector<std::int64_t>& fallback) const;

  /// Throws InputError for the first key not in `declared` (naming it and listing the declared ones).
  void reject_unknown(const std::vector<ParamInfo>& declared, std::string_view owner = "this workload") const;
  /// "FILE:LINE:COL: workload.key" for messages (or "FILE: workload.key" without a source position).
  std::string place(std::string_view key) const;
  const toml::table& table() const noexcept { return table_; }
  const std::string& file() const noexcept { return file_; }

 private:
  const toml::node* node(std::string_view key) const { return table_.get(key); }
  toml::table table_;
  std::string file_;
  std::string prefix_;
};

}  // namespace ipilab::workload
