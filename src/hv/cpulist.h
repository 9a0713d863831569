// ipilab/hv/cpulist.h — the two list formats `ipilab hv send` reads, as pure parsers.
//
// Cpulist: Linux's "cpu lists" notation (Documentation/admin-guide/kernel-parameters.rst, parsed by
// bitmap_parselist): comma-separated decimal CPU numbers and inclusive ranges, "0-3,8". The empty
// string is the empty mask. Overlaps are allowed (a set). Not accepted, and said so: the ":used/group"
// stride form, the "N" (last CPU) and "all" shorthands, spaces, signs, empty items.
// VP list (--cpu-vp): comma-separated values, one per CPU 0, 1, ...: a decimal VP index or `inval`
// (VP_INVAL, Linux's "not read yet", U32_MAX); 4294967295 is the same value.
// Errors: InputError(place, reason) naming the item ("item 3 '9-2'") and what is wrong.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ipilab::hv {

/// CPUs of `text`, ascending and unique; each must be below `limit` (nr_cpu_ids).
std::vector<unsigned> parse_cpulist(std::string_view text, unsigned limit, std::string_view place);

/// One 32-bit value per item; `inval` -> VP_INVAL. At least one item; at most 8192 (NR_CPUS).
std::vector<std::uint32_t> parse_vp_list(std::string_view text, std::string_view place);

/// "0-3,8" for {0,1,2,3,8}; "" for none. Input ascending and unique.
std::string format_cpulist(const std::vector<unsigned>& cpus);

}  // namespace ipilab::hv
