// __cpumask_to_vpset as a state machine over the guest's input page (see guest_vpset.h).
#include "hv/guest_vpset.h"

#include <array>
#include <stdexcept>

namespace ipilab::hv {

namespace {

void put_u64(FlatGuestMemory& page, std::uint64_t gpa, std::uint64_t v) {
  std::array<std::uint8_t, 8> b{};
  for (unsigned i = 0; i < 8; ++i) b[i] = static_cast<std::uint8_t>(v >> (8 * i));
  if (!page.write(gpa, b)) throw std::logic_error("guest vpset: write outside the input page");
}

std::uint64_t get_u64(const FlatGuestMemory& page, std::uint64_t gpa) {
  std::array<std::uint8_t, 8> b{};
  if (!page.read(gpa, b)) throw std::logic_error("guest vpset: read outside the input page");
  std::uint64_t v = 0;
  for (unsigned i = 0; i < 8; ++i) v |= static_cast<std::uint64_t>(b[i]) << (8 * i);
  return v;
}

}  // namespace

int cpumask_to_vpset(FlatGuestMemory& page, std::uint64_t vpset_gpa, const Cpumask& cpus,
                     std::optional<unsigned> skip_cpu, const GuestConfig& config, CpumaskOps& ops,
                     WorkRecord& work) {
  const std::uint64_t valid_mask_gpa = vpset_gpa + 8;
  const std::uint64_t banks_gpa = vpset_gpa + 16;
  const std::uint32_t max_bank = config.max_vp_index() / HV_VCPUS_PER_SPARSE_BANK;
  if (max_bank >= HV_MAX_SPARSE_VCPU_BANKS) return 0;

  for (std::uint32_t bank = 0; bank <= max_bank; ++bank) {
    put_u64(page, banks_gpa + 8ull * bank, 0);
    ++work.vpset_banks_cleared;
  }

  int nr_bank = 1;
  for (unsigned cpu = ops.next(-1, cpus); cpu < config.nr_cpu_ids; cpu = ops.next(static_cast<int>(cpu), cpus)) {
    if (skip_cpu && cpu == *skip_cpu) continue;
    ++work.vp_lookups;
    const std::int32_t vcpu = config.vp_number(cpu);
    if (vcpu == static_cast<std::int32_t>(VP_INVAL)) return -1;
    const auto bank = static_cast<std::uint32_t>(vcpu) / HV_VCPUS_PER_SPARSE_BANK;
    const auto offset = static_cast<std::uint32_t>(vcpu) % HV_VCPUS_PER_SPARSE_BANK;
    const std::uint64_t gpa = banks_gpa + 8ull * bank;
    put_u64(page, gpa, get_u64(page, gpa) | (1ull << offset));
    if (static_cast<int>(bank) >= nr_bank) nr_bank = static_cast<int>(bank) + 1;
  }
  // GENMASK_ULL(nr_bank - 1, 0); nr_bank <= 64 here because every VP <= hv_max_vp_index < 4096.
  const std::uint64_t valid = nr_bank >= 64 ? ~0ull : ((1ull << nr_bank) - 1);
  put_u64(page, valid_mask_gpa, valid);
  work.vpset_banks_built += static_cast<std::uint32_t>(nr_bank);
  return nr_bank;
}

}  // namespace ipilab::hv
