#include "scenario/catalog.h"

#include <algorithm>
#include <filesystem>
#include <sstream>

#include <fmt/format.h>

#include "common/error.h"
#include "common/file.h"
#include "common/suggest.h"
#include "scenario/scenario.h"

namespace ipilab::scenario {

namespace fs = std::filesystem;

namespace {

fs::path scenarios_dir() { return data_dir() / "scenarios"; }

std::vector<std::string> builtin_names() {
  std::vector<std::string> out;
  std::error_code ec;
  if (!fs::is_directory(scenarios_dir(), ec)) return out;
  for (const auto& e : fs::directory_iterator(scenarios_dir(), ec))
    if (e.path().extension() == ".toml" && e.is_regular_file(ec)) out.push_back(e.path().stem().string());
  std::sort(out.begin(), out.end());
  return out;
}

std::string join(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : ", ") + s;
  return out.empty() ? "none" : out;
}

std::vector<std::string> read_default_list(bool strict) {
  const fs::path f = scenarios_dir() / "default.list";
  std::error_code ec;
  if (!fs::is_regular_file(f, ec)) {
    if (strict) throw InputError(f.string(), "no default scenario list; name a scenario (ipilab list --scenarios)");
    return {};
  }
  std::vector<std::string> out;
  std::istringstream in(read_text_file(f));
  std::string line;
  while (std::getline(in, line)) {
    if (auto h = line.find('#'); h != std::string::npos) line.erase(h);
    const auto b = line.find_first_not_of(" \t\r");
    if (b == std::string::npos) continue;
    const auto e = line.find_last_not_of(" \t\r");
    out.push_back(line.substr(b, e - b + 1));
  }
  if (out.empty() && strict)
    throw InputError(f.string(), "the default scenario list is empty; name a scenario (ipilab list --scenarios)");
  return out;
}

}  // namespace

std::vector<BuiltinInfo> list_builtin() {
  const auto defaults = read_default_list(false);
  std::vector<BuiltinInfo> out;
  for (const auto& name : builtin_names()) {
    BuiltinInfo b;
    b.name = name;
    b.file = (scenarios_dir() / (name + ".toml")).string();
    b.in_default = std::find(defaults.begin(), defaults.end(), name) != defaults.end();
    try {
      const Scenario s = load_scenario(b.file);
      b.title = s.title;
      b.description = s.description;
      b.workload = s.workload;
      b.reproduces = s.reproduces;
    } catch (const InputError& e) {
      b.error = e.what();
    }
    out.push_back(std::move(b));
  }
  return out;
}

std::string resolve_scenario(const std::string& arg) {
  std::error_code ec;
  if (arg.empty()) throw InputError("SCENARIO", "empty scenario name");
  if (fs::is_regular_file(arg, ec)) return arg;
  if (fs::is_directory(arg, ec)) throw InputError(arg, "is a folder, not a scenario file (a .toml file or a built-in name)");
  if (fs::exists(arg, ec)) throw InputError(arg, "is not a regular file, so not a scenario file");
  const bool looks_like_path = arg.find('/') != std::string::npos || fs::path(arg).extension() == ".toml";
  if (!looks_like_path) {
    const fs::path f = scenarios_dir() / (arg + ".toml");
    if (fs::is_regular_file(f, ec)) return f.string();
  }
  if (looks_like_path) throw InputError(arg, "no such scenario file");
  throw InputError(arg, fmt::format("no such scenario file, and no built-in scenario of that name{} (built-in: {})",
                                    did_you_mean(arg, builtin_names()), join(builtin_names())));
}

std::vector<std::string> default_scenarios() { return read_default_list(true); }

}  // namespace ipilab::scenario
