#include "scenario/scenario.h"

#include <algorithm>
#include <array>

#include <fmt/format.h>

#include "common/error.h"
#include "common/file.h"
#include "common/suggest.h"
#include "scenario/file_names.h"
#include "topology/toml_read.h"
#include "workload/counters.h"
#include "workload/workload.h"

namespace ipilab::scenario {

namespace fs = std::filesystem;
using toml_read::TableReader;

namespace {

// The tables of the base document a variant may override, in the order they are built.
constexpr std::array<std::string_view, 4> kSections = {"host", "vm", "profile", "workload"};
constexpr std::array<std::string_view, 7> kStats = {"mean", "p50", "p90", "p99", "p999", "min", "max"};

std::string join_names(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out.empty() ? "none" : out;
}

// Moves `n` into `dst` under `key` (a copy of the key keeps its source region; the node is moved so
// it keeps its own), replacing whatever `dst` held there.
void move_entry(toml::table& dst, const toml::key& key, toml::node& n) {
  toml::key k = key;
  dst.erase(key.str());
  n.visit([&](auto& concrete) { dst.insert(std::move(k), std::move(concrete)); });
}

void check_variant_name(const TableReader& r, const std::string& name) {
  if (name.empty()) r.fail("name", "must not be empty");
  if (name.size() > 48) r.fail("name", fmt::format("'{}' is longer than 48 characters", name));
  for (unsigned char c : name)
    if (c < 0x20 || c == 0x7f) r.fail("name", "must not contain control characters");
}

Expectation read_expect_entry(const std::string& file, const std::string& variant, const toml::key& key,
                              const toml::node& n, double default_tolerance) {
  Expectation e;
  e.variant = variant;
  e.key = std::string(key.str());
  e.tolerance = default_tolerance;
  const std::string path = fmt::format("scenario.expect.{}.{}", variant, e.key);
  e.place = toml_read::place(file, key.source().begin ? key.source() : n.source(), path);
  if (n.is_number()) {
    e.value = toml_read::node_double(n, file, path);
    return e;
  }
  const toml::table* t = n.as_table();
  if (!t)
    throw InputError(e.place, fmt::format("expected a number or a table {{ value, tolerance?, stat?, kind?, reason? }}, got {}",
                                          toml_read::type_name(n)));
  TableReader r(*t, file, path);
  e.value = r.req_double("value");
  if (auto tol = r.opt_double("tolerance")) {
    if (*tol < 0) r.fail("tolerance", fmt::format("must be >= 0 (a relative tolerance, 0.02 = 2%), got {}", *tol));
    e.tolerance = *tol;
  }
  if (auto st = r.opt_string("stat")) {
    if (std::find(kStats.begin(), kStats.end(), *st) == kStats.end())
      r.fail("stat", fmt::format("'{}' is not one of mean, p50, p90, p99, p999, min, max", *st));
    e.stat = *st;
  }
  if (auto k = r.opt_string("kind")) {
    if (*k != "reproduced" && *k != "predicted")
      r.fail("kind", fmt::format("'{}' is not one of reproduced, predicted", *k));
    e.kind = *k;
  }
  if (auto why = r.opt_string("reason")) e.reason = *why;
  if (e.kind == "predicted" && e.reason.empty())
    r.fail("reason", "a predicted figure states why its tolerance is what it is (reason = \"...\")");
  r.finish();
  return e;
}

// An expectation must name a counter of the catalog or a metric the scenario's workload reports.
// (An unknown workload is left to the runner, which names the known ones.)
void check_expect_key(const Expectation& e, std::string_view workload_name) {
  if (workload::find_counter(e.key)) return;
  const auto all = workload::list_workloads();
  const auto w = std::find_if(all.begin(), all.end(), [&](const workload::WorkloadInfo* i) { return i->name == workload_name; });
  if (w == all.end()) return;
  const auto& metrics = (*w)->metrics;
  if (std::find(metrics.begin(), metrics.end(), e.key) != metrics.end()) return;
  std::vector<std::string> names = metrics;
  for (auto& c : workload::counter_names()) names.push_back(std::move(c));
  throw InputError(e.place, fmt::format("'{}' is neither a counter nor a metric of workload '{}'{} (its metrics: {}; "
                                        "counters: 'ipilab list --counters')",
                                        e.key, workload_name, did_you_mean(e.key, names), join_names(metrics)));
}

}  // namespace

void deep_merge(toml::table& base, toml::table&& over) {
  for (auto& [key, node] : over) {
    toml::node* mine = base.get(key.str());
    if (mine && mine->is_table() && node.is_table()) {
      deep_merge(*mine->as_table(), std::move(*node.as_table()));
      continue;
    }
    move_entry(base, key, node);
  }
}

void merge_variant_overrides(Variant& v, toml::table&& over) {
  for (auto& [key, node] : over) {
    toml::table* t = node.as_table();
    if (!t) {
      move_entry(v.doc, key, node);
      continue;
    }
    if (key.str() == "host" && (t->contains("preset") || t->contains("file"))) v.doc.erase("host");
    if (toml::node* mine = v.doc.get(key.str()); mine && mine->is_table()) deep_merge(*mine->as_table(), std::move(*t));
    else move_entry(v.doc, key, node);
  }
}

fs::path resolve_data_path(const std::string& rel, const fs::path& dir, const std::string& place) {
  if (rel.empty()) throw InputError(place, "empty path");
  std::error_code ec;
  const fs::path p(rel);
  if (p.is_absolute()) {
    if (fs::is_regular_file(p, ec)) return p;
    throw InputError(place, fmt::format("no such file '{}'", rel));
  }
  const fs::path beside = (dir.empty() ? fs::path(".") : dir) / p;
  if (fs::is_regular_file(beside, ec)) return beside.lexically_normal();
  const fs::path shipped = data_dir() / p;
  if (fs::is_regular_file(shipped, ec)) return shipped.lexically_normal();
  const std::filesystem::path roots[] = {dir.empty() ? fs::path(".") : dir, data_dir()};
  throw InputError(place, fmt::format("no such file '{}' (looked in {} and {}){}", rel, beside.lexically_normal().string(),
                                      shipped.lexically_normal().string(), did_you_mean_file(p, roots)));
}

namespace {

// The [[variant]] headers (name, description, which sections they override; types checked here),
// or the implicit "base" variant; returns the names in file order.
std::vector<std::string> read_variant_headers(const TableReader& r, const toml::array* variants, const std::string& file,
                                              Scenario& s) {
  std::vector<std::string> names;
  std::vector<std::string> name_places;
  if (variants) {
    if (variants->empty()) throw InputError(r.place("variant"), "an empty variant list; give at least one [[variant]]");
    for (std::size_t i = 0; i < variants->size(); ++i) {
      const toml::node& n = (*variants)[i];
      const std::string path = fmt::format("variant[{}]", i);
      const toml::table* t = n.as_table();
      if (!t)
        throw InputError(toml_read::place(file, n.source(), path),
                         fmt::format("expected a table ([[variant]]), got {}", toml_read::type_name(n)));
      TableReader vr(*t, file, path);
      Variant v;
      v.name = vr.req_string("name");
      check_variant_name(vr, v.name);
      v.place = vr.place("name");
      v.description = vr.opt_string("description").value_or("");
      for (auto k : kSections) vr.opt_table(k);
      vr.finish();
      if (auto it = std::find(names.begin(), names.end(), v.name); it != names.end())
        throw InputError(v.place, fmt::format("duplicate variant name '{}' (first defined at {})", v.name,
                                              name_places[static_cast<std::size_t>(it - names.begin())]));
      names.push_back(v.name);
      name_places.push_back(v.place);
      s.variants.push_back(std::move(v));
    }
  } else {
    Variant v;
    v.name = "base";
    v.place = file;
    names.push_back(v.name);
    s.variants.push_back(std::move(v));
  }
  return names;
}

// [scenario.expect.<variant>]: per variant, a table of expected values and its default tolerance.
void read_expectations(const toml::table& expect, const std::vector<std::string>& names, const std::string& file,
                       Scenario& s) {
  for (const auto& [key, node] : expect) {
    const std::string vname(key.str());
    const std::string path = fmt::format("scenario.expect.{}", vname);
    const std::string place = toml_read::place(file, key.source(), path);
    if (std::find(names.begin(), names.end(), vname) == names.end())
    {
      std::vector<std::string> quoted;
      for (const auto& n : names) quoted.push_back("'" + n + "'");
      throw InputError(place, fmt::format("no variant named '{}' (variants: {})", vname, join_names(quoted)));
    }
    const toml::table* t = node.as_table();
    if (!t)
      throw InputError(place, fmt::format("expected a table of expected values, got {}", toml_read::type_name(node)));
    double tolerance = 0.02;
    if (const toml::node* tn = t->get("tolerance")) {
      tolerance = toml_read::node_double(*tn, file, path + ".tolerance");
      if (tolerance < 0)
        throw InputError(toml_read::place(file, tn->source(), path + ".tolerance"),
                         fmt::format("must be >= 0 (a relative tolerance, 0.02 = 2%), got {}", tolerance));
    }
    for (const auto& [ek, en] : *t) {
      if (ek.str() == "tolerance") continue;
      s.expect.push_back(read_expect_entry(file, vname, ek, en, tolerance));
      check_expect_key(s.expect.back(), s.workload);
    }
  }
}

// Each variant's merged document: the text is parsed again for each variant so that every node is
// a fresh one carrying its source region (toml++ drops source regions on copy, keeps them on move).
void merge_variant_documents(std::string_view text, const std::string& file, bool has_variants, Scenario& s) {
  for (std::size_t i = 0; i < s.variants.size(); ++i) {
    toml::table d = toml_read::parse(text, file);
    toml::table& merged = s.variants[i].doc;
    for (auto k : kSections) {
      auto it = d.find(k);
      if (it != d.end()) move_entry(merged, it->first, it->second);
    }
    if (!has_variants) continue;
    toml::table& vt = *(*d["variant"].as_array())[i].as_table();
    for (auto k : kSections) {
      auto it = vt.find(k);
      if (it == vt.end()) continue;
      toml::table& over = *it->second.as_table();
      if (k == "host" && (over.contains("preset") || over.contains("file"))) merged.erase("host");
      if (toml::node* mine = merged.get(k)) deep_merge(*mine->as_table(), std::move(over));
      else move_entry(merged, it->first, it->second);
    }
  }
}

}  // namespace

Scenario parse_scenario(std::string_view text, const std::string& file) {
  Scenario s;
  s.file = file;
  s.dir = fs::path(file).parent_path();

  const toml::table root = toml_read::parse(text, file);
  TableReader r(root, file, "");
  const toml::table* sc = r.opt_table("scenario");
  for (auto k : kSections) r.opt_table(k);
  const toml::array* variants = r.opt_array("variant");
  r.finish();
  if (!sc) throw InputError(file, "missing [scenario] table (it needs at least workload = \"NAME\")");

  TableReader sr(*sc, file, "scenario");
  FileHeading heading = read_file_heading(sr, file);
  s.name = std::move(heading.name);
  s.title = std::move(heading.title);
  s.description = std::move(heading.description);
  s.workload = sr.req_string("workload");
  s.workload_place = sr.place("workload");
  if (auto v = sr.opt_int("iterations", 1, 1'000'000'000)) s.iterations = static_cast<std::uint64_t>(*v);
  if (auto v = sr.opt_int("warmup", 0, 1'000'000'000)) s.warmup = static_cast<std::uint64_t>(*v);
  if (auto v = sr.opt_int("seed", 0)) s.seed = static_cast<std::uint64_t>(*v);
  s.reproduces = sr.opt_string("reproduces").value_or("");
  const toml::table* expect = sr.opt_table("expect");
  sr.finish();

  const std::vector<std::string> names = read_variant_headers(r, variants, file, s);
  if (expect) read_expectations(*expect, names, file, s);
  merge_variant_documents(text, file, variants != nullptr, s);
  return s;
}

Scenario load_scenario(const std::string& path) { return parse_scenario(read_text_file(path), path); }

}  // namespace ipilab::scenario
