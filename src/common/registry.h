// ipilab/common/registry.h — lookups over an explicit registry: a vector of descriptions, each with
// a `name` (the workloads, the mechanisms), listed in place by the registry's own file.
#pragma once

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

namespace ipilab {

/// `all` sorted by name: the order a registry lists its entries in.
template <class Info>
std::vector<Info> sorted_by_name(std::vector<Info> all) {
  std::sort(all.begin(), all.end(), [](const Info& a, const Info& b) { return a.name < b.name; });
  return all;
}

/// Every entry's name, in order, separated by ", ".
template <class Info>
std::string names_of(const std::vector<Info>& all) {
  std::string out;
  for (const auto& i : all) out += (out.empty() ? "" : ", ") + std::string(i.name);
  return out;
}

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
