#include "cost/shipped.h"

#include <algorithm>
#include <filesystem>
#include <system_error>

#include "common/error.h"
#include "common/file.h"
#include "cost/profile.h"

namespace ipilab::cost {

std::vector<ShippedProfile> list_shipped_profiles() {
  std::vector<ShippedProfile> out;
  for (const std::string& name : shipped_profile_names()) {
    ShippedProfile s;
    s.name = name;
    s.file = (data_dir() / "profiles" / (name + ".toml")).string();
    try {
      const Profile p = Profile::load_file(s.file);
      s.title = p.name();
      s.description = p.description();
      s.host = p.host();
      s.clock_ghz = p.clock_ghz();
      s.costs = p.keys().size();
    } catch (const InputError& e) {
      s.error = e.what();
    }
    out.push_back(std::move(s));
  }
  return out;  // sorted by name, as the names are
}

std::vector<std::string> shipped_profile_names() {
  namespace fs = std::filesystem;
  std::vector<std::string> out;
  std::error_code ec;
  for (fs::directory_iterator it(data_dir() / "profiles", ec), end; !ec && it != end; it.increment(ec))
    if (it->path().extension() == ".toml" && it->is_regular_file(ec)) out.push_back(it->path().stem().string());
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace ipilab::cost
