// ipilab/common/enum_names.h — an enum's printed names as one table of {value, name} pairs, read by
// one lookup (instead of a switch per enum). The model that owns an enum owns its table; parameters
// (workload::EnumParam), script parsers and reports read that one table.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string_view>
#include <type_traits>

namespace ipilab {

template <class E>
struct EnumName {
  E value;
  std::string_view name;
  /// An older or alternative spelling: accepted when read (value_named), never printed (name_of
  /// skips it, listings mark it).
  bool alias = false;
};

/// The name `names` gives `v` (its first entry that is not an alias), or `unknown` when the table
/// does not list it.
template <class E>
constexpr std::string_view name_of(std::span<const EnumName<E>> names, E v, std::string_view unknown = "?") {
  for (const auto& n : names)
    if (!n.alias && n.value == v) return n.name;
  return unknown;
}
template <class E, std::size_t N>
constexpr std::string_view name_of(const EnumName<E> (&names)[N], E v, std::string_view unknown = "?") {
  return name_of(std::span<const EnumName<E>>(names), v, unknown);
}

/// The value `names` gives `name` (aliases included), or nullopt.
template <class E>
constexpr std::optional<E> value_named(std::span<const EnumName<E>> names, std::string_view name) {
  for (const auto& n : names)
    if (n.name == name) return n.value;
  return std::nullopt;
}
template <class E, std::size_t N>
constexpr std::optional<E> value_named(const EnumName<E> (&names)[N], std::string_view name) {
  return value_named(std::span<const EnumName<E>>(names), name);
}

/// The same lookups over a table of descriptions (each with a `name`) keyed by the member `Key`:
/// the name of the entry whose key is `v`, or `unknown`.
template <auto Key, class Table, class E>
constexpr std::string_view name_by(const Table& table, E v, std::string_view unknown = "?") {
  for (const auto& i : table)
    if (i.*Key == v) return i.name;
  return unknown;
}

/// The key of the entry named `name`, or nullopt.
template <auto Key, class Table>
constexpr auto key_named(const Table& table, std::string_view name)
    -> std::optional<std::remove_cvref_t<decltype(std::declval<const Table&>().begin()->*Key)>> {
  for (const auto& i : table)
    if (i.name == name) return i.*Key;
  return std::nullopt;
}

}  // namespace ipilab
