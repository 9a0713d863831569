#include "scenario/file_names.h"

#include "common/file.h"

namespace ipilab::scenario {

namespace fs = std::filesystem;

FileHeading read_file_heading(toml_read::TableReader& t, const std::string& file) {
  FileHeading h;
  h.name = t.opt_string("name").value_or(fs::path(file).stem().string());
  if (h.name.empty()) t.fail("name", "must not be empty");
  h.title = t.opt_string("title").value_or(h.name);
  h.description = t.opt_string("description").value_or("");
  return h;
}

std::string path_in_data_dir(const fs::path& p) {
  std::error_code ec;
  const fs::path a = fs::weakly_canonical(p, ec);
  if (ec) return {};
  const fs::path d = fs::weakly_canonical(data_dir(), ec);
  if (ec) return {};
  const fs::path rel = a.lexically_relative(d);
  if (!rel.empty() && *rel.begin() != "..") return rel.string();
  return {};
}

}  // namespace ipilab::scenario
