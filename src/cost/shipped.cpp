#include "cost/shipped.h"

#include <algorithm>
#include <filesystem>
#include <system_error>

#include "common/error.h"
#include "common/file.h"
#include "cost/profile.h"

namespace ipilab::cost {

std::vector<ShippedProfile> list_shipped_profiles() {
  namespace fs = std::filesystem;
  const fs::path dir = data_dir() / "profiles";
  std::vector<ShippedProfile> out;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->path().extension() != ".toml" || !it->is_regular_file(ec)) continue;
    ShippedProfile s;
    s.name = it->path().stem().string();
    s.file = it->path().string();
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
  std::sort(out.begin(), out.end(), [](const ShippedProfile& a, const ShippedProfile& b) { return a.name < b.name; });
  return out;
}

std::vector<std::string> shipped_profile_names() {
  namespace fs = std::filesystem;
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(data_dir() / "profiles", ec))
    if (e.path().extension() == ".toml" && e.is_regular_file(ec)) out.push_back(e.path().stem().string());
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace ipilab::cost
