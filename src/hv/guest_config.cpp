// Guest configuration: validation and the derived kernel values (see guest_config.h).
#include "hv/guest_config.h"

#include <algorithm>
#include <set>

#include "common/error.h"

namespace ipilab::hv {

GuestConfig GuestConfig::identity(unsigned ncpus, unsigned nr_cpus) {
  GuestConfig c;
  c.nr_cpus = nr_cpus;
  c.cpumask_offstack = nr_cpus > 512;
  c.nr_cpu_ids = ncpus;
  for (unsigned i = 0; i < ncpus; ++i) {
    c.present.push_back(i);
    c.online.push_back(i);
    c.hv_vp_index.push_back(i);
  }
  c.validate();
  return c;
}

void GuestConfig::validate() const {
  if (nr_cpus == 0 || nr_cpus > kMaxNrCpus) {
    throw InputError("guest: nr_cpus", "NR_CPUS must be 1.." + std::to_string(kMaxNrCpus) + ", got " +
                                           std::to_string(nr_cpus));
  }
  if (nr_cpu_ids == 0 || nr_cpu_ids > nr_cpus) {
    throw InputError("guest: nr_cpu_ids", "must be 1..NR_CPUS (" + std::to_string(nr_cpus) + "), got " +
                                              std::to_string(nr_cpu_ids));
  }
  if (hv_vp_index.size() != nr_cpu_ids) {
    throw InputError("guest: hv_vp_index", "needs one entry per possible CPU (" + std::to_string(nr_cpu_ids) +
                                               "), got " + std::to_string(hv_vp_index.size()));
  }
  std::uint32_t max_vp = 0;
  for (unsigned cpu = 0; cpu < hv_vp_index.size(); ++cpu) {
    const std::uint32_t vp = hv_vp_index[cpu];
    if (vp == VP_INVAL) continue;
    if (vp > 0x7FFFFFFFu) {
      throw InputError("guest: hv_vp_index[" + std::to_string(cpu) + "]",
                       "VP index " + std::to_string(vp) + " reads as a negative int in Linux; use < 2^31 or VP_INVAL");
    }
    max_vp = std::max(max_vp, vp);
  }
  if (hv_max_vp_index && *hv_max_vp_index < max_vp) {
    throw InputError("guest: hv_max_vp_index", "must be >= the largest VP index in hv_vp_index (" +
                                                   std::to_string(max_vp) + ")");
  }
  std::set<unsigned> pres;
  for (unsigned cpu : present) {
    if (cpu >= nr_cpu_ids) {
      throw InputError("guest: present", "CPU " + std::to_string(cpu) + " >= nr_cpu_ids " + std::to_string(nr_cpu_ids));
    }
    pres.insert(cpu);
  }
  for (unsigned cpu : online) {
    if (!pres.count(cpu)) {
      throw InputError("guest: online", "CPU " + std::to_string(cpu) + " is not present");
    }
  }
}

unsigned GuestConfig::scan_bits() const noexcept {
  if (bits_rule == CpumaskBitsRule::kNrCpumaskBits) return cpumask_offstack ? nr_cpu_ids : nr_cpus;
  return nr_cpus <= kBitsPerLong ? nr_cpus : nr_cpu_ids;
}

unsigned GuestConfig::copy_bits() const noexcept {
  if (bits_rule == CpumaskBitsRule::kNrCpumaskBits) return cpumask_offstack ? nr_cpu_ids : nr_cpus;
  return nr_cpus <= 4 * kBitsPerLong ? nr_cpus : nr_cpu_ids;
}

std::uint32_t GuestConfig::max_vp_index() const noexcept {
  if (hv_max_vp_index) return *hv_max_vp_index;
  std::uint32_t m = 0;
  for (std::uint32_t vp : hv_vp_index) {
    if (vp != VP_INVAL) m = std::max(m, vp);
  }
  return m;
}

std::int32_t GuestConfig::vp_number(unsigned cpu) const {
  if (cpu >= hv_vp_index.size()) {
    throw InputError("guest: cpu", "CPU " + std::to_string(cpu) + " >= nr_cpu_ids " + std::to_string(nr_cpu_ids));
  }
  return static_cast<std::int32_t>(hv_vp_index[cpu]);
}

std::optional<unsigned> GuestConfig::cpu_of_vp(std::uint32_t vp) const noexcept {
  if (vp == VP_INVAL) return std::nullopt;
  for (unsigned cpu = 0; cpu < hv_vp_index.size(); ++cpu) {
    if (hv_vp_index[cpu] == vp) return cpu;
  }
  return std::nullopt;
}

Cpumask GuestConfig::present_mask() const { return Cpumask::of(nr_cpus, present); }
Cpumask GuestConfig::online_mask() const { return Cpumask::of(nr_cpus, online); }

}  // namespace ipilab::hv
