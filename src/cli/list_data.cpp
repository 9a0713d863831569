#include "cli/list_data.h"

#include <filesystem>
#include <system_error>

#include <fmt/format.h>

#include "common/data_lookup.h"
#include "common/error.h"
#include "cost/shipped.h"

namespace ipilab::cli {

namespace {

namespace fs = std::filesystem;

// Files in dir (not folders) whose extension is `ext` ("" = any except README.md).
std::size_t count_files(const fs::path& dir, const std::string& ext) {
  std::size_t n = 0;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (!it->is_regular_file(ec)) continue;
    const fs::path& p = it->path();
    if (ext.empty() ? p.filename() != "README.md" : p.extension() == ext) ++n;
  }
  return n;
}

std::string plural(std::size_t n, const char* what) { return fmt::format("{} {}{}", n, what, n == 1 ? "" : "s"); }

}  // namespace

void list_data_section(nlohmann::json& j, std::string& text) {
  const DataLookup r = locate_data();
  auto& d = j["data"] = {{"dir", r.dir.string()}, {"found", r.used >= 0}, {"places", nlohmann::json::array()}};
  text += r.used >= 0 ? fmt::format("Data folder (scenarios, profiles, example traces): {}\n", r.dir.string())
                      : "Data folder: none found, so there are no built-in scenarios or profiles. Looked in:\n";
  for (const DataPlace& p : r.places) {
    nlohmann::json e = {{"where", p.where}, {"path", p.path.string()}, {"status", p.status}, {"has_data", p.has_data}};
    std::string found;
    if (p.has_data) {
      const std::size_t s = count_files(p.path / "scenarios", ".toml"), pr = count_files(p.path / "profiles", ".toml"),
                        h = count_files(p.path / "profiles" / "hosts", ".toml"), t = count_files(p.path / "data" / "traces", "");
      e["scenarios"] = s;
      e["profiles"] = pr;
      e["host_presets"] = h;
      e["traces"] = t;
      found = fmt::format(" ({}, {}, {}, {})", plural(s, "scenario"), plural(pr, "profile"), plural(h, "host file"),
                          plural(t, "trace"));
    }
    text += p.path.empty() ? fmt::format("  {:<18} {}\n", p.where, p.status)
                           : fmt::format("  {:<18} {}: {}{}\n", p.where, p.path.string(), p.status, found);
    d["places"].push_back(std::move(e));
  }
}

void list_profiles_section(nlohmann::json& j, std::string& text) {
  auto& arr = j["profiles"] = nlohmann::json::array();
  text += "Cost profiles ([profile] file = \"profiles/NAME.toml\" in a scenario; format: profiles/README.md):\n";
  const auto list = cost::list_shipped_profiles();
  if (list.empty()) text += "  (none: no data folder with profiles/; 'ipilab list --data' shows where it looked)\n";
  for (const auto& p : list) {
    arr.push_back({{"name", p.name}, {"file", p.file}, {"title", p.title}, {"description", p.description}, {"host", p.host},
                   {"clock_ghz", p.clock_ghz}, {"costs", p.costs}, {"error", p.error}});
    if (!p.error.empty()) {
      text += fmt::format("  {:<26} (invalid) {}\n", p.name, p.error);
      continue;
    }
    text += fmt::format("  {:<26} {}\n", p.name, p.description);
    text += fmt::format("  {:<26} {} costs{}{}\n", "", p.costs, p.host.empty() ? "" : "; host " + p.host,
                        p.clock_ghz > 0 ? fmt::format("; clock {} GHz", p.clock_ghz) : "");
  }
}

std::string data_dir_line() {
  const DataLookup r = locate_data();
  if (r.used < 0) throw UnavailableError("no data folder found ('ipilab list --data' shows where it looked)");
  return r.dir.string() + "\n";
}

}  // namespace ipilab::cli
