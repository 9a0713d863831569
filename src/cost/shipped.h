// ipilab/cost/shipped.h — the cost profiles shipped in the data folder: <data_dir>/profiles/*.toml
// (not profiles/hosts/, which are host presets). A scenario names one as
// [profile] file = "profiles/NAME.toml".
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace ipilab::cost {

struct ShippedProfile {
  std::string name;         ///< file name without .toml
  std::string file;         ///< full path
  std::string title;        ///< [profile] name (normally equal to `name`)
  std::string description;
  std::string host;         ///< the host preset it was calibrated on ("" if none)
  double clock_ghz = 0;
  std::size_t costs = 0;    ///< entries it prices
  std::string error;        ///< the parse error when the file is invalid (it is still listed)
};

/// Every <data_dir>/profiles/*.toml, sorted by name, each parsed.
std::vector<ShippedProfile> list_shipped_profiles();

/// The names alone (file names without .toml) of the same files, sorted; nothing is parsed.
std::vector<std::string> shipped_profile_names();

}  // namespace ipilab::cost
