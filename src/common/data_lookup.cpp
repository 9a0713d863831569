#include "common/data_lookup.h"

#include <cstdlib>
#include <fstream>
#include <system_error>

#ifndef IPILAB_BIN_TO_DATA
#define IPILAB_BIN_TO_DATA "../share/ipilab"
#endif

namespace ipilab {

namespace fs = std::filesystem;

namespace {

DataPlace look(std::string where, const fs::path& path, std::string unset_status) {
  DataPlace p{std::move(where), path, false, {}};
  std::error_code ec;
  if (path.empty()) p.status = std::move(unset_status);
  else if (!fs::is_directory(path, ec)) p.status = "no such folder";
  else if (fs::is_directory(path / "scenarios", ec) || fs::is_directory(path / "profiles", ec)) p.has_data = true;
  else p.status = "no scenarios/ or profiles/ in it";
  return p;
}

}  // namespace

DataLookup locate_data(const DataLookupInputs& in) {
  DataLookup r;
  const fs::path beside = in.exe.empty() ? fs::path() : (in.exe.parent_path() / in.bin_to_data).lexically_normal();
  r.places.push_back(look("beside the binary", beside, "the executable's path is unknown"));
  r.places.push_back(look("$IPILAB_DATA", in.env_data, "not set"));
  if (!in.env_data_dir.empty()) r.places.push_back(look("$IPILAB_DATA_DIR", in.env_data_dir, "not set"));
  r.places.push_back(look("source tree", in.source_tree, "no ipilab-source-tree file beside the binary (an installed binary has none)"));
  for (std::size_t i = 0; i < r.places.size(); ++i) {
    DataPlace& p = r.places[i];
    if (!p.has_data) continue;
    if (r.used < 0) {
      r.used = static_cast<int>(i);
      p.status = "used";
    } else {
      p.status = "has data, not used: an earlier place comes first";
    }
  }
  if (r.used >= 0) {
    r.dir = r.places[static_cast<std::size_t>(r.used)].path;
  } else {
    for (const auto& p : r.places)
      if (!p.path.empty()) {
        r.dir = p.path;
        break;
      }
    if (r.dir.empty()) r.dir = ".";
  }
  return r;
}

DataLookupInputs process_data_inputs() {
  DataLookupInputs in;
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) in.exe = exe;
  in.bin_to_data = IPILAB_BIN_TO_DATA;
  if (const char* v = std::getenv("IPILAB_DATA")) in.env_data = v;
  if (const char* v = std::getenv("IPILAB_DATA_DIR")) in.env_data_dir = v;
  // The build folder's bin/ipilab-source-tree names the tree it was built from (CMakeLists.txt).
  if (!in.exe.empty()) {
    std::ifstream f(in.exe.parent_path() / "ipilab-source-tree");
    std::string line;
    if (f && std::getline(f, line) && !line.empty()) in.source_tree = line;
  }
  return in;
}

DataLookup locate_data() { return locate_data(process_data_inputs()); }

}  // namespace ipilab
