#include "topology/toml_read.h"

#include <algorithm>

#include <fmt/format.h>

#include "common/error.h"
#include "common/number.h"
#include "common/file.h"

namespace ipilab::toml_read {

toml::table parse(std::string_view text, std::string_view file) {
  try {
    return toml::parse(text, file);
  } catch (const toml::parse_error& e) {
    const auto& b = e.source().begin;
    throw InputError(b ? fmt::format("{}:{}:{}", file, b.line, b.column) : std::string(file),
                     fmt::format("TOML syntax error: {}", e.description()));
  }
}

toml::table parse_file(const std::string& path) { return parse(read_text_file(path), path); }

std::string place(std::string_view file, const toml::source_region& where, std::string_view key) {
  std::string p(file);
  if (where.begin) p += fmt::format(":{}:{}", where.begin.line, where.begin.column);
  if (!key.empty()) p += fmt::format(": {}", key);
  return p;
}

std::string_view type_name(const toml::node& n) {
  switch (n.type()) {
    case toml::node_type::table: return "table";
    case toml::node_type::array: return "array";
    case toml::node_type::string: return "string";
    case toml::node_type::integer: return "integer";
    case toml::node_type::floating_point: return "float";
    case toml::node_type::boolean: return "boolean";
    case toml::node_type::date: return "date";
    case toml::node_type::time: return "time";
    case toml::node_type::date_time: return "date-time";
    default: return "nothing";
  }
}

TableReader::TableReader(const toml::table& table, std::string file, std::string path)
    : table_(&table), file_(std::move(file)), path_(std::move(path)) {}

std::string TableReader::key_path(std::string_view key) const {
  if (path_.empty()) return std::string(key);
  if (key.empty()) return path_;
  return fmt::format("{}.{}", path_, key);
}

std::string TableReader::place(std::string_view key) const {
  if (auto it = table_->find(key); it != table_->end()) {
    const toml::source_region& ks = it->first.source();
    if (ks.begin) return toml_read::place(file_, ks, key_path(key));
    return toml_read::place(file_, it->second.source(), key_path(key));
  }
  return toml_read::place(file_, table_->source(), key_path(key));
}

void TableReader::fail(std::string_view key, std::string_view reason) const {
  throw InputError(place(key), std::string(reason));
}

void TableReader::mark(std::string_view key) {
  if (std::find(known_.begin(), known_.end(), key) == known_.end()) known_.emplace_back(key);
}

const toml::node* TableReader::node(std::string_view key) {
  mark(key);
  return table_->get(key);
}

std::int64_t node_int(const toml::node& n, std::string_view file, std::string_view key, std::int64_t min,
                      std::int64_t max) {
  const auto* v = n.as_integer();
  if (!v) throw InputError(place(file, n.source(), key), fmt::format("expected an integer, got {}", type_name(n)));
  const std::int64_t x = v->get();
  if (x < min || x > max)
    throw InputError(place(file, n.source(), key), fmt::format("{} is out of range [{}, {}]", x, min, max));
  return x;
}

double node_double(const toml::node& n, std::string_view file, std::string_view key) {
  if (const auto* i = n.as_integer()) return static_cast<double>(i->get());
  if (const auto* f = n.as_floating_point()) {
    // TOML 1.0 has nan and inf literals; no quantity ipilab reads is one (common/number.h).
    number::check_finite(f->get(), place(file, n.source(), key));
    return f->get();
  }
  throw InputError(place(file, n.source(), key), fmt::format("expected a number, got {}", type_name(n)));
}

std::optional<std::int64_t> TableReader::opt_int(std::string_view key, std::int64_t min, std::int64_t max) {
  const toml::node* n = node(key);
  if (!n) return std::nullopt;
  return node_int(*n, file_, key_path(key), min, max);
}

std::int64_t TableReader::req_int(std::string_view key, std::int64_t min, std::int64_t max) {
  auto v = opt_int(key, min, max);
  if (!v) fail(key, "missing (an integer is required)");
  return *v;
}

std::optional<double> TableReader::opt_double(std::string_view key) {
  const toml::node* n = node(key);
  if (!n) return std::nullopt;
  return node_double(*n, file_, key_path(key));
}

double TableReader::req_double(std::string_view key) {
  auto v = opt_double(key);
  if (!v) fail(key, "missing (a number is required)");
  return *v;
}

std::optional<std::string> TableReader::opt_string(std::string_view key) {
  const toml::node* n = node(key);
  if (!n) return std::nullopt;
  const auto* s = n->as_string();
  if (!s) fail(key, fmt::format("expected a string, got {}", type_name(*n)));
  return s->get();
}

std::string TableReader::req_string(std::string_view key) {
  auto v = opt_string(key);
  if (!v) fail(key, "missing (a string is required)");
  return *v;
}

std::optional<bool> TableReader::opt_bool(std::string_view key) {
  const toml::node* n = node(key);
  if (!n) return std::nullopt;
  const auto* b = n->as_boolean();
  if (!b) fail(key, fmt::format("expected a boolean, got {}", type_name(*n)));
  return b->get();
}

const toml::table* TableReader::opt_table(std::string_view key) {
  const toml::node* n = node(key);
  return n ? checked(key, *n, n->as_table(), "a table") : nullptr;
}

const toml::array* TableReader::opt_array(std::string_view key) {
  const toml::node* n = node(key);
  return n ? checked(key, *n, n->as_array(), "an array") : nullptr;
}

void TableReader::finish() const {
  for (const auto& [k, v] : *table_) {
    if (std::find(known_.begin(), known_.end(), k.str()) != known_.end()) continue;
    std::string list;
    for (const auto& s : known_) list += (list.empty() ? "" : ", ") + s;
    throw InputError(toml_read::place(file_, k.source(), key_path(k.str())),
                     fmt::format("unknown key (known here: {})", list));
  }
}

std::string quoted(std::string_view s) {
  std::string out = "\"";
  for (char ch : s) {
    switch (ch) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(ch) < 0x20)
          out += fmt::format("\\u{:04X}", static_cast<unsigned char>(ch));
        else
          out += ch;
    }
  }
  return out + "\"";
}

}  // namespace ipilab::toml_read
