#include "x86/cpumask.h"

#include <bit>
#include <stdexcept>
#include <string>

namespace ipilab::x86 {

Cpumask::Cpumask(std::uint32_t nbits) : nbits_(nbits), bits_((nbits + 63u) / 64u, 0) {
  if (nbits == 0) throw std::invalid_argument("a cpumask needs nbits >= 1");
}

Cpumask Cpumask::of(std::uint32_t nbits, std::initializer_list<std::uint32_t> cpus) {
  Cpumask m(nbits);
  for (auto c : cpus) m.set(c);
  return m;
}

Cpumask Cpumask::of(std::uint32_t nbits, const std::vector<std::uint32_t>& cpus) {
  Cpumask m(nbits);
  for (auto c : cpus) m.set(c);
  return m;
}

Cpumask Cpumask::first_n(std::uint32_t nbits, std::uint32_t n) {
  Cpumask m(nbits);
  for (std::uint32_t c = 0; c < n; ++c) m.set(c);
  return m;
}

void Cpumask::set(std::uint32_t cpu) {
  if (cpu >= nbits_) {
    throw std::out_of_range("cpu " + std::to_string(cpu) + " >= nbits " + std::to_string(nbits_));
  }
  bits_[cpu / 64] |= 1ull << (cpu % 64);
}

void Cpumask::clear(std::uint32_t cpu) {
  if (cpu >= nbits_) {
    throw std::out_of_range("cpu " + std::to_string(cpu) + " >= nbits " + std::to_string(nbits_));
  }
  bits_[cpu / 64] &= ~(1ull << (cpu % 64));
}

bool Cpumask::test(std::uint32_t cpu) const {
  return cpu < nbits_ && ((bits_[cpu / 64] >> (cpu % 64)) & 1u) != 0;
}

bool Cpumask::empty() const {
  for (auto w : bits_) {
    if (w != 0) return false;
  }
  return true;
}

std::uint32_t Cpumask::weight() const {
  std::uint32_t n = 0;
  for (auto w : bits_) n += static_cast<std::uint32_t>(std::popcount(w));
  return n;
}

std::vector<std::uint32_t> Cpumask::cpus() const {
  std::vector<std::uint32_t> out;
  for (std::uint32_t w = 0; w < bits_.size(); ++w) {
    for (std::uint64_t x = bits_[w]; x != 0; x &= x - 1) {
      out.push_back(w * 64 + static_cast<std::uint32_t>(std::countr_zero(x)));
    }
  }
  return out;
}

void Cpumask::andnot(const Cpumask& other) {
  if (other.nbits_ != nbits_) throw std::invalid_argument("cpumask andnot: nbits differ");
  for (std::size_t w = 0; w < bits_.size(); ++w) bits_[w] &= ~other.bits_[w];
}

namespace {

template <typename WordAt>
std::uint32_t find_from(std::uint32_t nbits, std::uint32_t start, std::uint64_t* words_read,
                        WordAt word_at) {
  if (start >= nbits) return nbits;
  std::uint32_t w = start / 64;
  std::uint64_t x = word_at(w) & (~0ull << (start % 64));
  const std::uint32_t nwords = (nbits + 63u) / 64u;
  for (;;) {
    if (words_read != nullptr) ++*words_read;
    if (x != 0) {
      const std::uint32_t bit = w * 64 + static_cast<std::uint32_t>(std::countr_zero(x));
      return bit < nbits ? bit : nbits;
    }
    if (++w >= nwords) return nbits;
    x = word_at(w);
  }
}

}  // namespace

std::uint32_t Cpumask::find_next(std::uint32_t start, std::uint64_t* words_read) const {
  return find_from(nbits_, start, words_read, [this](std::uint32_t w) { return bits_[w]; });
}

std::uint32_t Cpumask::find_next_and(const Cpumask& other, std::uint32_t start,
                                     std::uint64_t* words_read) const {
  if (other.nbits_ != nbits_) throw std::invalid_argument("cpumask find_next_and: nbits differ");
  return find_from(nbits_, start, words_read,
                   [this, &other](std::uint32_t w) { return bits_[w] & other.bits_[w]; });
}

}  // namespace ipilab::x86
