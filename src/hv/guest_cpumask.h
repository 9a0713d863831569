// ipilab/hv/guest_cpumask.h — Linux `struct cpumask` and the cpumask helpers the Hyper-V IPI send
// paths call, each counting the 64-bit bitmap words it loads the way the kernel's generic C code does.
//
// Why: the seed-000 difference (8043 -> 7761 cycles per smp_call_function_single loop) is the cost of
// building and scanning a cpumask in the pre-seed `__send_ipi_one`. The simulator prices that work from
// the counts recorded here (CpumaskWork), so the counts must follow the kernel's loops exactly:
//   - cpumask_empty  -> bitmap_empty -> find_first_bit: loads words from 0 up to the first non-zero
//                       word (all of them when empty). [lib/find_bit.c, include/linux/bitmap.h, v5.4]
//   - cpumask_last   -> find_last_bit: loads words from the last one down to the first non-zero word.
//   - cpumask_next / for_each_cpu -> find_next_bit(addr, nbits, start): loads nothing when
//                       start >= nbits, else the word holding `start` and the following words up to the
//                       first one with a set bit at or after `start` (or the end).
//   - cpumask_weight -> bitmap_weight: loads every word, BITS_TO_LONGS(nbits).
//   - cpumask_equal  -> bitmap_equal / __bitmap_equal: compares word positions up to and including the
//                       first differing one (every position when equal). Counted in positions.
//   - cpumask_copy   -> bitmap_copy: memcpy of BITS_TO_LONGS(nbits) words. Counted in words copied.
//   - cpumask_test_cpu, cpumask_set_cpu, cpumask_clear_cpu: one word (set/clear are atomic RMW:
//                       set_bit/clear_bit are `lock bts/btr` on x86).
// `nbits` is the kernel's scan length for the helper: nr_cpumask_bits (v5.4) or small/large_cpumask_bits
// (v6.3+); GuestConfig (guest_config.h) decides which and says why.
// Storage is always NR_CPUS bits (`struct cpumask { DECLARE_BITMAP(bits, NR_CPUS); }`): that is what
// CPU_MASK_NONE zeroes on the stack, independent of CONFIG_CPUMASK_OFFSTACK.
#pragma once

#include <array>
#include <cstdint>
#include <initializer_list>
#include <vector>

namespace ipilab::hv {

/// Largest NR_CPUS the model supports: x86_64's NR_CPUS_RANGE_END (8192, arch/x86/Kconfig).
inline constexpr unsigned kMaxNrCpus = 8192;
inline constexpr unsigned kBitsPerLong = 64;
/// BITS_TO_LONGS(n): 64-bit words needed for n bits.
constexpr unsigned bits_to_longs(unsigned nbits) noexcept { return (nbits + kBitsPerLong - 1) / kBitsPerLong; }

/// `struct cpumask` of NR_CPUS bits. Plain accessors (set/clear/test/cpus) do not count work; they
/// build inputs and read results. The counted Linux helpers are in CpumaskOps.
class Cpumask {
 public:
  /// An all-clear mask of `nr_cpus` bits (NR_CPUS). Throws std::invalid_argument for 0 or > 8192.
  explicit Cpumask(unsigned nr_cpus = 64);
  /// A mask of `nr_cpus` bits with `cpus` set. Throws std::invalid_argument for a CPU >= nr_cpus.
  static Cpumask of(unsigned nr_cpus, std::initializer_list<unsigned> cpus);
  static Cpumask of(unsigned nr_cpus, const std::vector<unsigned>& cpus);

  unsigned nr_cpus() const noexcept { return nr_cpus_; }
  /// sizeof(struct cpumask) in bytes: BITS_TO_LONGS(NR_CPUS) * 8 (1024 for NR_CPUS = 8192).
  unsigned size_bytes() const noexcept { return bits_to_longs(nr_cpus_) * 8; }
  bool test(unsigned cpu) const noexcept;           ///< false for cpu >= nr_cpus
  void set(unsigned cpu);                           ///< throws std::invalid_argument for cpu >= nr_cpus
  void clear(unsigned cpu);                         ///< throws std::invalid_argument for cpu >= nr_cpus
  std::uint64_t word(unsigned index) const noexcept;  ///< 0 for index beyond the mask
  std::uint64_t& word_ref(unsigned index);          ///< for CpumaskOps; throws when out of range
  std::vector<unsigned> cpus() const;               ///< set CPUs, ascending
  unsigned count() const noexcept;                  ///< number of set CPUs
  bool any() const noexcept;
  /// Highest set CPU + 1 (0 when empty).
  unsigned end() const noexcept;
  friend bool operator==(const Cpumask& a, const Cpumask& b) noexcept;

 private:
  unsigned nr_cpus_;
  std::array<std::uint64_t, kMaxNrCpus / kBitsPerLong> bits_{};
};

/// Words of cpumask bitmaps loaded (or, for equal/copy, word positions processed), per Linux helper.
struct CpumaskWork {
  std::uint32_t empty = 0;      ///< cpumask_empty -> find_first_bit
  std::uint32_t last = 0;       ///< cpumask_last -> find_last_bit
  std::uint32_t for_each = 0;   ///< for_each_cpu: all find_next_bit calls of the loop, the final one included
  std::uint32_t equal = 0;      ///< cpumask_equal -> __bitmap_equal (positions; each loads one word of each mask)
  std::uint32_t weight = 0;     ///< cpumask_weight -> bitmap_weight (incl. the tracepoint's, when enabled)
  std::uint32_t test = 0;       ///< cpumask_test_cpu
  std::uint32_t copy = 0;       ///< cpumask_copy -> bitmap_copy (words copied)
  std::uint32_t set_clear = 0;  ///< cpumask_set_cpu / cpumask_clear_cpu (atomic read-modify-write)
  std::uint32_t total() const noexcept {
    return empty + last + for_each + equal + weight + test + copy + set_clear;
  }
  CpumaskWork& operator+=(const CpumaskWork& o) noexcept;
  friend bool operator==(const CpumaskWork&, const CpumaskWork&) = default;
};

/// The counted Linux cpumask helpers. `scan_bits` is the length the scanning helpers use
/// (nr_cpumask_bits / small_cpumask_bits), `copy_bits` the length cpumask_copy uses
/// (nr_cpumask_bits / large_cpumask_bits). Both are clamped to each mask's NR_CPUS.
class CpumaskOps {
 public:
  CpumaskOps(unsigned scan_bits, unsigned copy_bits, CpumaskWork& work) noexcept
      : scan_bits_(scan_bits), copy_bits_(copy_bits), work_(work) {}

  unsigned scan_bits() const noexcept { return scan_bits_; }
  bool empty(const Cpumask& m);                        ///< cpumask_empty
  unsigned last(const Cpumask& m);                     ///< cpumask_last; scan_bits when empty
  /// cpumask_next(n, m) = find_next_bit(m, scan_bits, n + 1); n = -1 gives the first CPU.
  /// Returns >= scan_bits when there is none. Counted under for_each.
  unsigned next(int n, const Cpumask& m);
  unsigned weight(const Cpumask& m);                   ///< cpumask_weight
  bool equal(const Cpumask& a, const Cpumask& b);      ///< cpumask_equal
  bool test_cpu(unsigned cpu, const Cpumask& m);       ///< cpumask_test_cpu
  void copy(Cpumask& dst, const Cpumask& src);         ///< cpumask_copy (dst keeps its NR_CPUS)
  void set_cpu(unsigned cpu, Cpumask& m);              ///< cpumask_set_cpu
  void clear_cpu(unsigned cpu, Cpumask& m);            ///< cpumask_clear_cpu

 private:
  unsigned bits_for(const Cpumask& m, unsigned want) const noexcept;
  unsigned scan_bits_;
  unsigned copy_bits_;
  CpumaskWork& work_;
};

}  // namespace ipilab::hv
