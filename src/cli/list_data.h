// ipilab/cli/list_data.h — the sections of `ipilab list` about the data folder (where it looked,
// what it found) and the shipped cost profiles. Each appends its text and its JSON member.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace ipilab::cli {

/// "Data folder: DIR" and every place looked at with what it holds; JSON member "data":
/// {"dir", "found", "places": [{"where", "path", "status", "has_data", "scenarios", "profiles",
/// "host_presets", "traces"}]}.
void list_data_section(nlohmann::json& j, std::string& text);

/// The cost profiles in <data>/profiles/*.toml; JSON member "profiles": [{"name", "file", "title",
/// "description", "host", "clock_ghz", "costs", "error"}].
void list_profiles_section(nlohmann::json& j, std::string& text);

/// The data folder alone, for scripts; throws UnavailableError when no place holds data.
std::string data_dir_line();

}  // namespace ipilab::cli
