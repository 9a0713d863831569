// ipilab/topology/toml_read.h — strict reading of TOML tables with errors that name the place.
//
// Every ipilab TOML reader (hosts, VMs, cost profiles; scenarios later) goes through TableReader so
// that errors look alike: InputError whose place is "FILE:LINE:COLUMN: dotted.key" (line and column
// from toml++'s source regions; omitted when toml++ has none, e.g. for implicit tables) and whose
// reason says what was expected and what was found. Unknown keys are errors (finish()).
//
// Usage:
//   TableReader r(table, "hosts/x.toml", "host");
//   auto n = r.req_int("sockets", 1, 64);      // marks "sockets" as known
//   auto d = r.opt_string("description");
//   r.finish();                                 // any key not asked for -> InputError "unknown key"
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <toml++/toml.h>

namespace ipilab::toml_read {

/// Parses TOML text; a syntax error becomes InputError("FILE:LINE:COLUMN", description).
toml::table parse(std::string_view text, std::string_view file);
/// Reads and parses a file (InputError if missing/unreadable, see common/file.h).
toml::table parse_file(const std::string& path);

/// "FILE:LINE:COLUMN: KEY" for a node's source region (":LINE:COLUMN" omitted if unknown).
std::string place(std::string_view file, const toml::source_region& where, std::string_view key);
/// The TOML type name of a node ("integer", "string", "table", ...).
std::string_view type_name(const toml::node& n);

class TableReader {
 public:
  /// `path` is the dotted key of `table` in its document ("" for the root), used in messages.
  TableReader(const toml::table& table, std::string file, std::string path);

  const toml::table& table() const noexcept { return *table_; }
  const std::string& file() const noexcept { return file_; }
  /// Dotted key of a member ("host.layout.sockets").
  std::string key_path(std::string_view key) const;
  /// Place of a member (its key's source position if present, else the table's).
  std::string place(std::string_view key) const;
  /// Throws InputError(place(key), reason).
  [[noreturn]] void fail(std::string_view key, std::string_view reason) const;

  bool has(std::string_view key) const { return table_->contains(key); }
  /// The raw node (marks the key known), or nullptr if absent.
  const toml::node* node(std::string_view key);

  std::optional<std::int64_t> opt_int(std::string_view key, std::int64_t min = INT64_MIN,
                                      std::int64_t max = INT64_MAX);
  std::int64_t req_int(std::string_view key, std::int64_t min = INT64_MIN, std::int64_t max = INT64_MAX);
  /// Accepts TOML integers and floats.
  std::optional<double> opt_double(std::string_view key);
  double req_double(std::string_view key);
  std::optional<std::string> opt_string(std::string_view key);
  std::string req_string(std::string_view key);
  std::optional<bool> opt_bool(std::string_view key);
  const toml::table* opt_table(std::string_view key);
  const toml::array* opt_array(std::string_view key);

  /// Throws InputError "unknown key" for the first member (in document order) never asked for.
  /// `known` lists the accepted keys for the message.
  void finish() const;

 private:
  /// `as` (the node's as_table()/as_array()) when not null, else fail "expected <what>, got <type>".
  template <class T>
  const T* checked(std::string_view key, const toml::node& n, const T* as, std::string_view what) const {
    if (!as) fail(key, fmt::format("expected {}, got {}", what, type_name(n)));
    return as;
  }
  void mark(std::string_view key);
  const toml::table* table_;
  std::string file_;
  std::string path_;
  std::vector<std::string> known_;
};

/// Integer value of an array element or other node; InputError at `place` if not an integer in
/// [min, max].
std::int64_t node_int(const toml::node& n, std::string_view file, std::string_view key,
                      std::int64_t min = INT64_MIN, std::int64_t max = INT64_MAX);
/// Number (integer or float) value of a node.
double node_double(const toml::node& n, std::string_view file, std::string_view key);

/// `s` as a TOML basic string: in double quotes, with \" \\ \n \t and \uXXXX for the other control
/// characters (TOML v1.0.0, "String").
std::string quoted(std::string_view s);

}  // namespace ipilab::toml_read
