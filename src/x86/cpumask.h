// ipilab/x86/cpumask.h — a Linux-style cpumask (an array of 64-bit words) that counts the words
// the kernel's bitmap walks read, so the guest policies can report their cpumask work.
//
// Counting rule (include/linux/find.h find_next_bit / find_next_and_bit, lib/find_bit.c): a search
// that starts at bit `start` reads word start/64, then each following word until it finds a set bit
// or passes the end; every word it reads counts once. A for_each_cpu over k set bits therefore reads
// at least ceil(nbits/64) words and re-reads a word once per extra set bit it holds.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <vector>

namespace ipilab::x86 {

class Cpumask {
 public:
  /// An empty mask over CPUs [0, nbits). `nbits` plays nr_cpu_ids (the walk bound); a copy or
  /// andnot touches words() words. Throws std::invalid_argument if nbits == 0.
  explicit Cpumask(std::uint32_t nbits);
  /// A mask with exactly `cpus` set. Throws std::out_of_range for a CPU >= nbits.
  static Cpumask of(std::uint32_t nbits, std::initializer_list<std::uint32_t> cpus);
  static Cpumask of(std::uint32_t nbits, const std::vector<std::uint32_t>& cpus);
  /// CPUs [0, n) set (cpu_online_mask of an n-CPU guest with nbits == n).
  static Cpumask first_n(std::uint32_t nbits, std::uint32_t n);

  std::uint32_t nbits() const { return nbits_; }
  std::uint32_t words() const { return static_cast<std::uint32_t>(bits_.size()); }
  /// Throw std::out_of_range for cpu >= nbits.
  void set(std::uint32_t cpu);
  void clear(std::uint32_t cpu);
  bool test(std::uint32_t cpu) const;
  bool empty() const;
  std::uint32_t weight() const;
  std::vector<std::uint32_t> cpus() const;
  const std::vector<std::uint64_t>& raw() const { return bits_; }
  void andnot(const Cpumask& other);   ///< this &= ~other (same nbits required)

  /// First set bit >= start, or nbits() if none; adds the words read to *words_read.
  std::uint32_t find_next(std::uint32_t start, std::uint64_t* words_read) const;
  /// First bit >= start set in both this and `other`, or nbits(); counts word pairs read.
  std::uint32_t find_next_and(const Cpumask& other, std::uint32_t start,
                              std::uint64_t* words_read) const;

  friend bool operator==(const Cpumask&, const Cpumask&) = default;

 private:
  std::uint32_t nbits_;
  std::vector<std::uint64_t> bits_;
};

}  // namespace ipilab::x86
