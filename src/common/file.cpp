#include "common/file.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "common/data_lookup.h"
#include "common/error.h"

namespace ipilab {

std::string read_text_file(const std::filesystem::path& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) throw InputError(path.string(), "no such file");
  if (std::filesystem::is_directory(path, ec)) throw InputError(path.string(), "is a directory, not a file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path.string(), fmt::format("cannot open: {}", std::strerror(errno)));
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) throw InputError(path.string(), "read error");
  return ss.str();
}

std::filesystem::path data_dir() { return locate_data().dir; }

}  // namespace ipilab
