#include "hv/hypercall.h"

#include <algorithm>

namespace ipilab::hv {

bool FlatGuestMemory::read(std::uint64_t gpa, std::span<std::uint8_t> out) const {
  if (gpa < base_gpa_) return false;
  const std::uint64_t offset = gpa - base_gpa_;
  if (offset > bytes_.size() || out.size() > bytes_.size() - offset) return false;
  std::copy_n(bytes_.begin() + static_cast<std::ptrdiff_t>(offset), out.size(), out.begin());
  return true;
}

bool FlatGuestMemory::write(std::uint64_t gpa, std::span<const std::uint8_t> data) {
  if (gpa < base_gpa_) return false;
  const std::uint64_t offset = gpa - base_gpa_;
  if (offset > bytes_.size() || data.size() > bytes_.size() - offset) return false;
  std::copy(data.begin(), data.end(), bytes_.begin() + static_cast<std::ptrdiff_t>(offset));
  return true;
}

}  // namespace ipilab::hv
