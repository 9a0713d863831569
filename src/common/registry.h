// ipilab/common/registry.h — lookups over an explicit registry: a vector of descriptions, each with
// a `name` (the workloads, the mechanisms), listed in place by the registry's own file.
#pragma once

#include <string_view>
#include <vector>

namespace ipilab {

/// Pointers to every entry of `all`, in its order.
template <class Info>
std::vector<const Info*> entries_of(const std::vector<Info>& all) {
  std::vector<const Info*> out;
  out.reserve(all.size());
  for (const auto& i : all) out.push_back(&i);
  return out;
}

/// The entry named `name`, or nullptr.
template <class Info>
const Info* entry_named(const std::vector<Info>& all, std::string_view name) {
  for (const auto& i : all)
    if (i.name == name) return &i;
  return nullptr;
}

}  // namespace ipilab
