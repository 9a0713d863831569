// Linux cpumask helpers with word counting (see guest_cpumask.h for the loops they follow).
#include "hv/guest_cpumask.h"

#include <algorithm>
#include <bit>
#include <stdexcept>
#include <string>

namespace ipilab::hv {

Cpumask::Cpumask(unsigned nr_cpus) : nr_cpus_(nr_cpus) {
  if (nr_cpus == 0 || nr_cpus > kMaxNrCpus) {
    throw std::invalid_argument("cpumask: NR_CPUS must be 1.." + std::to_string(kMaxNrCpus) + ", got " +
                                std::to_string(nr_cpus));
  }
}

Cpumask Cpumask::of(unsigned nr_cpus, std::initializer_list<unsigned> cpus) {
  Cpumask m(nr_cpus);
  for (unsigned c : cpus) m.set(c);
  return m;
}

Cpumask Cpumask::of(unsigned nr_cpus, const std::vector<unsigned>& cpus) {
  Cpumask m(nr_cpus);
  for (unsigned c : cpus) m.set(c);
  return m;
}

bool Cpumask::test(unsigned cpu) const noexcept {
  return cpu < nr_cpus_ && ((bits_[cpu / kBitsPerLong] >> (cpu % kBitsPerLong)) & 1u) != 0;
}

void Cpumask::set(unsigned cpu) {
  if (cpu >= nr_cpus_) {
    throw std::invalid_argument("cpumask: CPU " + std::to_string(cpu) + " >= NR_CPUS " + std::to_string(nr_cpus_));
  }
  bits_[cpu / kBitsPerLong] |= 1ull << (cpu % kBitsPerLong);
}

void Cpumask::clear(unsigned cpu) {
  if (cpu >= nr_cpus_) {
    throw std::invalid_argument("cpumask: CPU " + std::to_string(cpu) + " >= NR_CPUS " + std::to_string(nr_cpus_));
  }
  bits_[cpu / kBitsPerLong] &= ~(1ull << (cpu % kBitsPerLong));
}

std::uint64_t Cpumask::word(unsigned index) const noexcept {
  return index < bits_to_longs(nr_cpus_) ? bits_[index] : 0;
}

std::uint64_t& Cpumask::word_ref(unsigned index) {
  if (index >= bits_to_longs(nr_cpus_)) throw std::invalid_argument("cpumask: word index out of range");
  return bits_[index];
}

std::vector<unsigned> Cpumask::cpus() const {
  std::vector<unsigned> out;
  unsigned n = 0;
  for (unsigned w = 0; w < bits_to_longs(nr_cpus_); ++w)
    if (bits_[w] != 0) n += static_cast<unsigned>(std::popcount(bits_[w]));
  out.reserve(n);
  for (unsigned w = 0; w < bits_to_longs(nr_cpus_); ++w) {
    std::uint64_t v = bits_[w];
    while (v != 0) {
      out.push_back(w * kBitsPerLong + static_cast<unsigned>(std::countr_zero(v)));
      v &= v - 1;
    }
  }
  return out;
}

unsigned Cpumask::count() const noexcept {
  unsigned n = 0;
  for (unsigned w = 0; w < bits_to_longs(nr_cpus_); ++w) n += static_cast<unsigned>(std::popcount(bits_[w]));
  return n;
}

bool Cpumask::any() const noexcept {
  for (unsigned w = 0; w < bits_to_longs(nr_cpus_); ++w) {
    if (bits_[w] != 0) return true;
  }
  return false;
}

unsigned Cpumask::end() const noexcept {
  for (unsigned w = bits_to_longs(nr_cpus_); w-- > 0;) {
    if (bits_[w] != 0) return w * kBitsPerLong + 64 - static_cast<unsigned>(std::countl_zero(bits_[w]));
  }
  return 0;
}

bool operator==(const Cpumask& a, const Cpumask& b) noexcept {
  return a.nr_cpus_ == b.nr_cpus_ && a.bits_ == b.bits_;
}

CpumaskWork& CpumaskWork::operator+=(const CpumaskWork& o) noexcept {
  empty += o.empty;
  last += o.last;
  for_each += o.for_each;
  equal += o.equal;
  weight += o.weight;
  test += o.test;
  copy += o.copy;
  set_clear += o.set_clear;
  return *this;
}

namespace {
// BITMAP_LAST_WORD_MASK(nbits): the valid bits of the last word.
constexpr std::uint64_t last_word_mask(unsigned nbits) noexcept {
  return (nbits % kBitsPerLong) == 0 ? ~0ull : ((1ull << (nbits % kBitsPerLong)) - 1);
}
}  // namespace

unsigned CpumaskOps::bits_for(const Cpumask& m, unsigned want) const noexcept {
  return std::min(want, m.nr_cpus());
}

bool CpumaskOps::empty(const Cpumask& m) {
  // bitmap_empty -> find_first_bit: for (idx = 0; idx * 64 < size; idx++) if (addr[idx]) return ...
  const unsigned nbits = bits_for(m, scan_bits_);
  for (unsigned idx = 0; idx * kBitsPerLong < nbits; ++idx) {
    ++work_.empty;
    std::uint64_t v = m.word(idx);
    if ((idx + 1) * kBitsPerLong > nbits) v &= last_word_mask(nbits);
    if (v != 0) return false;
  }
  return true;
}

unsigned CpumaskOps::last(const Cpumask& m) {
  // find_last_bit: idx = (size-1)/64, val = LAST_WORD_MASK; do { val &= addr[idx]; ... } while (idx--)
  const unsigned nbits = bits_for(m, scan_bits_);
  if (nbits == 0) return nbits;
  unsigned idx = (nbits - 1) / kBitsPerLong;
  std::uint64_t mask = last_word_mask(nbits);
  for (;;) {
    ++work_.last;
    const std::uint64_t v = m.word(idx) & mask;
    if (v != 0) return idx * kBitsPerLong + 63 - static_cast<unsigned>(std::countl_zero(v));
    mask = ~0ull;
    if (idx == 0) break;
    --idx;
  }
  return scan_bits_;
}

unsigned CpumaskOps::next(int n, const Cpumask& m) {
  // find_next_bit(addr, nbits, start = n + 1): nothing loaded when start >= nbits.
  const unsigned nbits = bits_for(m, scan_bits_);
  const unsigned start = static_cast<unsigned>(n + 1);
  if (start >= nbits) return scan_bits_;
  unsigned idx = start / kBitsPerLong;
  ++work_.for_each;
  std::uint64_t v = m.word(idx) & (~0ull << (start % kBitsPerLong));
  while (v == 0) {
    if ((idx + 1) * kBitsPerLong >= nbits) return scan_bits_;
    ++idx;
    ++work_.for_each;
    v = m.word(idx);
  }
  const unsigned bit = idx * kBitsPerLong + static_cast<unsigned>(std::countr_zero(v));
  return bit < nbits ? bit : scan_bits_;
}

unsigned CpumaskOps::weight(const Cpumask& m) {
  const unsigned nbits = bits_for(m, scan_bits_);
  unsigned w = 0;
  for (unsigned idx = 0; idx < bits_to_longs(nbits); ++idx) {
    ++work_.weight;
    std::uint64_t v = m.word(idx);
    if ((idx + 1) * kBitsPerLong > nbits) v &= last_word_mask(nbits);
    w += static_cast<unsigned>(std::popcount(v));
  }
  return w;
}

bool CpumaskOps::equal(const Cpumask& a, const Cpumask& b) {
  // __bitmap_equal: full words first, stop at the first difference; then the masked tail word.
  const unsigned nbits = std::min(bits_for(a, scan_bits_), bits_for(b, scan_bits_));
  const unsigned full = nbits / kBitsPerLong;
  for (unsigned k = 0; k < full; ++k) {
    ++work_.equal;
    if (a.word(k) != b.word(k)) return false;
  }
  if (nbits % kBitsPerLong != 0) {
    ++work_.equal;
    if (((a.word(full) ^ b.word(full)) & last_word_mask(nbits)) != 0) return false;
  }
  return true;
}

bool CpumaskOps::test_cpu(unsigned cpu, const Cpumask& m) {
  ++work_.test;
  return m.test(cpu);
}

void CpumaskOps::copy(Cpumask& dst, const Cpumask& src) {
  const unsigned nbits = std::min(bits_for(src, copy_bits_), dst.nr_cpus());
  for (unsigned idx = 0; idx < bits_to_longs(nbits); ++idx) {
    ++work_.copy;
    dst.word_ref(idx) = src.word(idx);
  }
}

void CpumaskOps::set_cpu(unsigned cpu, Cpumask& m) {
  ++work_.set_clear;
  m.set(cpu);
}

void CpumaskOps::clear_cpu(unsigned cpu, Cpumask& m) {
  ++work_.set_clear;
  m.clear(cpu);
}

}  // namespace ipilab::hv
