#include "gic/guest_memory.h"

#include <algorithm>

namespace ipilab::gic {

bool GuestMemory::in_range(std::uint64_t pa, std::size_t size) {
  return pa < kAddressLimit && size <= kAddressLimit - pa;
}

namespace {

/// Calls f(page, offset in the page, offset in the buffer, length) for each page [pa, pa + size) touches.
template <class F>
void for_each_page_piece(std::uint64_t pa, std::size_t size, F&& f) {
  std::size_t done = 0;
  while (done < size) {
    const std::uint64_t addr = pa + done;
    const auto off = static_cast<std::size_t>(addr % GuestMemory::kPageBytes);
    const std::size_t n = std::min<std::size_t>(size - done, GuestMemory::kPageBytes - off);
    f(addr / GuestMemory::kPageBytes, static_cast<std::ptrdiff_t>(off), static_cast<std::ptrdiff_t>(done), n);
    done += n;
  }
}

}  // namespace

bool GuestMemory::write(std::uint64_t pa, std::span<const std::uint8_t> bytes) {
  if (!in_range(pa, bytes.size())) return false;
  for_each_page_piece(pa, bytes.size(), [&](std::uint64_t page, std::ptrdiff_t off, std::ptrdiff_t at, std::size_t n) {
    auto [it, inserted] = pages_.try_emplace(page);
    if (inserted) it->second.fill(0);
    std::copy_n(bytes.begin() + at, n, it->second.begin() + off);
  });
  return true;
}

bool GuestMemory::read(std::uint64_t pa, std::span<std::uint8_t> out) const {
  std::fill(out.begin(), out.end(), std::uint8_t{0});
  if (!in_range(pa, out.size())) return false;
  for_each_page_piece(pa, out.size(), [&](std::uint64_t page, std::ptrdiff_t off, std::ptrdiff_t at, std::size_t n) {
    const auto it = pages_.find(page);
    if (it != pages_.end()) std::copy_n(it->second.begin() + off, n, out.begin() + at);
  });
  return true;
}

}  // namespace ipilab::gic
