// ipilab/gic/guest_memory.h — the physical memory the ITS reads its command queue from.
//
// Arm IHI 0069H.b §5.2 (The ITS): the command queue is a circular buffer in memory that software fills
// and the ITS reads through GITS_CBASER.Physical_Address + GITS_CREADR.Offset. It is ordinary memory:
// writing GITS_CBASER (or disabling the ITS) changes which address the ITS reads, never the bytes
// there. This class is that memory, sparse (4 KiB pages allocated on first write); bytes never
// written read as 0. Addresses are 52-bit physical addresses (the widest a GICv3/v4 table names).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <unordered_map>

namespace ipilab::gic {

class GuestMemory {
 public:
  static constexpr std::uint64_t kPageBytes = 4096;
  static constexpr std::uint64_t kAddressLimit = std::uint64_t{1} << 52;  ///< first address not modelled

  /// Copies `bytes` to [pa, pa + size). Returns false, writing nothing, when the range leaves the
  /// 52-bit physical address space.
  bool write(std::uint64_t pa, std::span<const std::uint8_t> bytes);
  /// Copies [pa, pa + out.size()) into `out` (0 for bytes never written). Returns false, filling
  /// `out` with zeros, when the range leaves the 52-bit physical address space.
  bool read(std::uint64_t pa, std::span<std::uint8_t> out) const;
  /// Pages written so far (each kPageBytes).
  std::size_t pages() const { return pages_.size(); }

 private:
  static bool in_range(std::uint64_t pa, std::size_t size);
  std::unordered_map<std::uint64_t, std::array<std::uint8_t, kPageBytes>> pages_;  // page number -> bytes
};

}  // namespace ipilab::gic
