// Cpulist and VP-list parsers (see cpulist.h).
#include "hv/cpulist.h"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include "common/cpu_list.h"
#include "common/error.h"
#include "hv/abi.h"
#include "hv/guest_cpumask.h"

namespace ipilab::hv {
namespace {

std::vector<std::string_view> split(std::string_view text) {
  std::vector<std::string_view> items;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = text.find(',', start);
    items.push_back(text.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return items;
}

/// Decimal digits only, value <= max; nullopt-like failure via the bool.
bool decimal(std::string_view s, std::uint64_t max, std::uint64_t& out) {
  if (s.empty() || s.size() > 20) return false;
  std::uint64_t v = 0;
  for (const char ch : s) {
    if (ch < '0' || ch > '9') return false;
    const auto d = static_cast<std::uint64_t>(ch - '0');
    if (v > (max - d) / 10) return false;
    v = v * 10 + d;
  }
  out = v;
  return true;
}

std::string item_place(std::string_view place, std::size_t index, std::string_view item) {
  return fmt::format("{} item {} '{}'", place, index + 1, item);
}

std::string why_not_cpu(std::string_view s) {
  if (s.empty()) return "empty item (two commas, or a comma at an end)";
  if (s.find(':') != std::string_view::npos) return "the ':used/group' stride form is not supported; list the CPUs";
  if (s == "N" || s == "all") return "the 'N' / 'all' shorthands are not supported; give CPU numbers";
  return "not a decimal CPU number";
}

}  // namespace

std::vector<unsigned> parse_cpulist(std::string_view text, unsigned limit, std::string_view place) {
  std::vector<unsigned> cpus;
  if (text.empty()) return cpus;
  const auto items = split(text);
  for (std::size_t i = 0; i < items.size(); ++i) {
    const std::string_view it = items[i];
    const std::size_t dash = it.find('-');
    const std::string_view a = dash == std::string_view::npos ? it : it.substr(0, dash);
    const std::string_view b = dash == std::string_view::npos ? it : it.substr(dash + 1);
    std::uint64_t lo = 0, hi = 0;
    if (dash != std::string_view::npos && (a.empty() || b.empty()))
      throw InputError(item_place(place, i, it), "a range needs a first and a last CPU (\"2-5\")");
    if (!decimal(a, UINT32_MAX, lo)) throw InputError(item_place(place, i, it), why_not_cpu(a));
    if (!decimal(b, UINT32_MAX, hi)) throw InputError(item_place(place, i, it), why_not_cpu(b));
    if (hi < lo) throw InputError(item_place(place, i, it), fmt::format("range {}-{} runs backwards", lo, hi));
    if (hi >= limit)
      throw InputError(item_place(place, i, it),
                       fmt::format("CPU {} does not exist: nr_cpu_ids is {} (the length of --cpu-vp)", hi, limit));
    for (std::uint64_t c = lo; c <= hi; ++c) cpus.push_back(static_cast<unsigned>(c));
  }
  std::sort(cpus.begin(), cpus.end());
  cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
  return cpus;
}

std::vector<std::uint32_t> parse_vp_list(std::string_view text, std::string_view place) {
  if (text.empty()) throw InputError(std::string(place), "give one VP index per CPU (e.g. 0,1,70,inval)");
  const auto items = split(text);
  if (items.size() > kMaxNrCpus)
    throw InputError(std::string(place),
                     fmt::format("{} CPUs: more than NR_CPUS can be ({})", items.size(), kMaxNrCpus));
  std::vector<std::uint32_t> vps;
  vps.reserve(items.size());
  for (std::size_t i = 0; i < items.size(); ++i) {
    const std::string_view it = items[i];
    std::string lower(it);
    std::transform(lower.begin(), lower.end(), lower.begin(),
                   [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
    if (lower == "inval" || lower == "vp_inval") {
      vps.push_back(VP_INVAL);
      continue;
    }
    std::uint64_t v = 0;
    if (!decimal(it, UINT32_MAX, v))
      throw InputError(item_place(place, i, it),
                       it.empty() ? "empty item (two commas, or a comma at an end)"
                                  : "not a decimal VP index (0..4294967295) or 'inval'");
    vps.push_back(static_cast<std::uint32_t>(v));
  }
  return vps;
}

std::string format_cpulist(const std::vector<unsigned>& cpus) { return format_cpu_ranges(cpus); }

}  // namespace ipilab::hv
