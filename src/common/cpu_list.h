// ipilab/common/cpu_list.h — CPU numbers written as the kernel's cpulist format ("0-3,8"; Linux
// Documentation/admin-guide/cputopology.rst): runs of consecutive numbers as ranges.
#pragma once

#include <string>
#include <vector>

#include <fmt/format.h>

namespace ipilab {

/// `cpus` in the given order (ascending for the canonical form), consecutive runs as "a-b".
template <class Int>
std::string format_cpu_ranges(const std::vector<Int>& cpus) {
  std::string out;
  for (std::size_t i = 0; i < cpus.size();) {
    std::size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += j == i ? fmt::format("{}", cpus[i]) : fmt::format("{}-{}", cpus[i], cpus[j]);
    i = j + 1;
  }
  return out;
}

}  // namespace ipilab
