// ipilab/hv/guest_vpset.h — Linux's `__cpumask_to_vpset` (include/asm-generic/mshyperv.h; in v5.4
// `cpumask_to_vpset` in arch/x86/include/asm/mshyperv.h), writing the hv_vpset into the guest's
// per-CPU input page exactly as the kernel does.
//
// Order of work, identical in v5.4, the Sep 2021 `_noself` variant and mainline's `_skip`:
//  1. max_bank = hv_max_vp_index / 64; max_bank >= 64 (a VP index >= 4096 exists) -> return 0.
//  2. Zero bank_contents[0..max_bank] (the page is reused between calls).
//  3. for_each_cpu(cpu, cpus): skip self if asked; vp = hv_cpu_number_to_vp_number(cpu);
//     VP_INVAL -> return -1; set bit vp%64 of bank vp/64; nr_bank = max(nr_bank, vp/64 + 1),
//     nr_bank starting at 1 (so an empty or all-skipped set gives nr_bank 1, bank 0 = 0).
//  4. valid_bank_mask = GENMASK_ULL(nr_bank - 1, 0) (dense); return nr_bank.
#pragma once

#include <cstdint>
#include <optional>

#include "hv/guest_config.h"
#include "hv/guest_cpumask.h"
#include "hv/guest_record.h"
#include "hv/hypercall.h"

namespace ipilab::hv {

/// Builds the set at guest physical address `vpset_gpa` in `page` (format is the caller's: only
/// valid_bank_mask at +8 and bank_contents[] from +16 are written). `skip_cpu`: the CPU the `_skip`/
/// `_noself` variant leaves out (nullopt = plain cpumask_to_vpset). Work is added to `work` (VP lookups,
/// banks cleared/built) and to `ops`'s CpumaskWork (for_each scan). Returns nr_bank, 0 or -1 as Linux.
/// Throws std::logic_error if the page is too small (a programming error: the page is 4 KiB).
int cpumask_to_vpset(FlatGuestMemory& page, std::uint64_t vpset_gpa, const Cpumask& cpus,
                     std::optional<unsigned> skip_cpu, const GuestConfig& config, CpumaskOps& ops,
                     WorkRecord& work);
/// The same with hv_max_vp_index given: `max_vp_index` must be config.max_vp_index() (a caller
/// sending many times computes it once).
int cpumask_to_vpset(FlatGuestMemory& page, std::uint64_t vpset_gpa, const Cpumask& cpus,
                     std::optional<unsigned> skip_cpu, const GuestConfig& config, std::uint32_t max_vp_index,
                     CpumaskOps& ops, WorkRecord& work);

}  // namespace ipilab::hv
