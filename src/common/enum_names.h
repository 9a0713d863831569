// ipilab/common/enum_names.h — an enum's printed names as one table of {value, name} pairs, read by
// one lookup (instead of a switch per enum).
#pragma once

#include <cstddef>
#include <string_view>

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

}  // namespace ipilab
