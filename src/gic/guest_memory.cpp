#include "gic/guest_memory.h"

#include <algorithm>

namespace ipilab::gic {

bool GuestMemory::in_range(std::uint64_t pa, std::size_t size) {
  return pa < kAddressLimit && size <= kAddressLimit - pa;
}

bool GuestMemory::write(std::uint64_t pa, std::span<const std::uint8_t> bytes) {
  if (!in_range(pa, bytes.size())) return false;
  std::size_t done = 0;
  while (done < bytes.size()) {
    const std::uint64_t addr = pa + done;
    const std::uint64_t page = addr / kPageBytes;
    const std::size_t off = static_cast<std::size_t>(addr % kPageBytes);
    const std::size_t n = std::min<std::size_t>(bytes.size() - done, kPageBytes - off);
    auto [it, inserted] = pages_.try_emplace(page);
    if (inserted) it->second.fill(0);
    std::copy_n(bytes.begin() + static_cast<std::ptrdiff_t>(done), n, it->second.begin() + static_cast<std::ptrdiff_t>(off));
    done += n;
  }
  return true;
}

bool GuestMemory::read(std::uint64_t pa, std::span<std::uint8_t> out) const {
  std::fill(out.begin(), out.end(), std::uint8_t{0});
  if (!in_range(pa, out.size())) return false;
  std::size_t done = 0;
  while (done < out.size()) {
    const std::uint64_t addr = pa + done;
    const std::uint64_t page = addr / kPageBytes;
    const std::size_t off = static_cast<std::size_t>(addr % kPageBytes);
    const std::size_t n = std::min<std::size_t>(out.size() - done, kPageBytes - off);
    const auto it = pages_.find(page);
    if (it != pages_.end())
      std::copy_n(it->second.begin() + static_cast<std::ptrdiff_t>(off), n, out.begin() + static_cast<std::ptrdiff_t>(done));
    done += n;
  }
  return true;
}

}  // namespace ipilab::gic
