// ipilab/common/enum_names.h — an enum's printed names as one table of {value, name} pairs, read by
// one lookup (instead of a switch per enum).
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>
#include <type_traits>

namespace ipilab {

template <class E>
struct EnumName {
  E value;
  std::string_view name;
};

/// The name `names` gives `v`, or `unknown` when the table does not list it.
template <class E, std::size_t N>
constexpr std::string_view name_of(const EnumName<E> (&names)[N], E v, std::string_view unknown = "?") {
  for (const auto& n : names)
    if (n.value == v) return n.name;
  return unknown;
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
