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

/// Stores bank_contents[0..n) (little-endian QWORDs) at `gpa`.
void put_banks(FlatGuestMemory& page, std::uint64_t gpa, const std::uint64_t* banks, std::uint32_t n) {
  std::array<std::uint8_t, 8 * HV_MAX_SPARSE_VCPU_BANKS> b{};
  for (std::uint32_t k = 0; k < n; ++k)
    for (unsigned i = 0; i < 8; ++i) b[8 * k + i] = static_cast<std::uint8_t>(banks[k] >> (8 * i));
  if (!page.write(gpa, std::span<const std::uint8_t>(b.data(), 8u * n)))
    throw std::logic_error("guest vpset: write outside the input page");
}

}  // namespace

int cpumask_to_vpset(FlatGuestMemory& page, std::uint64_t vpset_gpa, const Cpumask& cpus,
                     std::optional<unsigned> skip_cpu, const GuestConfig& config, CpumaskOps& ops,
                     WorkRecord& work) {
  return cpumask_to_vpset(page, vpset_gpa, cpus, skip_cpu, config, config.max_vp_index(), ops, work);
}

int cpumask_to_vpset(FlatGuestMemory& page, std::uint64_t vpset_gpa, const Cpumask& cpus,
                     std::optional<unsigned> skip_cpu, const GuestConfig& config, std::uint32_t max_vp_index,
                     CpumaskOps& ops, WorkRecord& work) {
  const std::uint64_t valid_mask_gpa = vpset_gpa + 8;
  const std::uint64_t banks_gpa = vpset_gpa + 16;
  const std::uint32_t max_bank = max_vp_index / HV_VCPUS_PER_SPARSE_BANK;
  if (max_bank >= HV_MAX_SPARSE_VCPU_BANKS) return 0;

  // The kernel clears bank_contents[0..max_bank] in the page, then ORs each CPU's bit into its bank
  // there. Every bank it ORs into is one it cleared (vp <= hv_max_vp_index), so the banks are built
  // here from zero and stored once: the page ends up byte for byte as the kernel leaves it, on the
  // VP_INVAL return too.
  std::array<std::uint64_t, HV_MAX_SPARSE_VCPU_BANKS> banks{};
  const std::uint32_t nbanks = max_bank + 1;
  put_banks(page, banks_gpa, banks.data(), nbanks);
  work.vpset_banks_cleared += nbanks;

  int nr_bank = 1;
  for (unsigned cpu = ops.next(-1, cpus); cpu < config.nr_cpu_ids; cpu = ops.next(static_cast<int>(cpu), cpus)) {
    if (skip_cpu && cpu == *skip_cpu) continue;
    ++work.vp_lookups;
    const std::int32_t vcpu = config.vp_number(cpu);
    if (vcpu == static_cast<std::int32_t>(VP_INVAL)) {
      put_banks(page, banks_gpa, banks.data(), nbanks);
      return -1;
    }
    const auto bank = static_cast<std::uint32_t>(vcpu) / HV_VCPUS_PER_SPARSE_BANK;
    const auto offset = static_cast<std::uint32_t>(vcpu) % HV_VCPUS_PER_SPARSE_BANK;
    if (bank >= nbanks) throw std::logic_error("guest vpset: VP index above hv_max_vp_index");
    banks[bank] |= 1ull << offset;
    if (static_cast<int>(bank) >= nr_bank) nr_bank = static_cast<int>(bank) + 1;
  }
  put_banks(page, banks_gpa, banks.data(), nbanks);
  // GENMASK_ULL(nr_bank - 1, 0); nr_bank <= 64 here because every VP <= hv_max_vp_index < 4096.
  const std::uint64_t valid = nr_bank >= 64 ? ~0ull : ((1ull << nr_bank) - 1);
  put_u64(page, valid_mask_gpa, valid);
  work.vpset_banks_built += static_cast<std::uint32_t>(nr_bank);
  return nr_bank;
}

}  // namespace ipilab::hv
