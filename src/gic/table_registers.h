// ipilab/gic/table_registers.h — the registers that name vPE tables (pure codecs).
//
//  * GITS_BASER<n> (ITS + 0x100 + 8n): one ITS table; GICv4.1 guarantees the vPE table is GITS_BASER2
//    (Type = 2, "vPE"). Layout as Linux arm-gic-v3.h GITS_BASER_* (Arm IHI 0069H.b, GITS_BASER<n>
//    register description): [63] Valid, [62] Indirect, [61:59] InnerCache, [58:56] Type (RO),
//    [55:53] OuterCache, [52:48] Entry_Size = bytes - 1 (RO), [47:12] Physical_Address, [11:10]
//    Shareability, [9:8] Page_Size (0 4K, 1 16K, 2 64K), [7:0] Size = pages - 1. With 64 KiB pages
//    the address is PA[47:16] in [47:16] and PA[51:48] in [15:12] (Linux GITS_BASER_PHYS_52_to_48).
//  * GICR_VPROPBASER, GICv4.1 form (RD VLPI frame + 0x70): the redistributor's copy of the vPE table
//    (Linux GICR_VPROPBASER_4_1_*): [63] Valid, [61:59] Entry_Size = 8-byte words - 1 (RO), [58:56]
//    OuterCache, [55] Indirect, [54:53] Page_Size, [52] Z (table known to be zero), [51:12]
//    Physical_Address, [11:10] Shareability, [9:7] InnerCache, [6:0] Size = pages - 1.
// Each decode keeps unmodelled bits in `other`; encode(decode(v)) == v for every v. Encoders throw
// InputError("<REG>.<field>", reason) for a field that does not fit or a misaligned address.
#pragma once

#include <cstdint>
#include <string_view>

namespace ipilab::gic {

/// Page_Size codes shared by GITS_BASER<n>[9:8] and GICR_VPROPBASER[54:53].
enum class TablePageSize : std::uint8_t { K4 = 0, K16 = 1, K64 = 2, Reserved = 3 };
/// 4096, 16384, 65536; 0 for Reserved.
std::uint64_t table_page_bytes(TablePageSize size);
std::string_view table_page_name(TablePageSize size);

/// GITS_BASER<n>.Type values (Linux GITS_BASER_TYPE_*).
enum class BaserType : std::uint8_t { None = 0, Device = 1, Vpe = 2, Collection = 4 };

struct GitsBaser {
  bool valid = false;                          ///< [63]
  bool indirect = false;                       ///< [62] two-level table
  std::uint8_t inner_cache = 0;                ///< [61:59]
  std::uint8_t type = 0;                       ///< [58:56] (BaserType; RO in hardware)
  std::uint8_t outer_cache = 0;                ///< [55:53]
  std::uint8_t entry_bytes = 1;                ///< [52:48] + 1 (RO in hardware), 1..32
  std::uint64_t pa = 0;                        ///< table (level 1 when indirect) byte address
  std::uint8_t shareability = 0;               ///< [11:10]
  TablePageSize page_size = TablePageSize::K4; ///< [9:8]
  std::uint16_t pages = 1;                     ///< [7:0] + 1, 1..256
  std::uint64_t other = 0;                     ///< bits outside the fields (none: every bit is a field)
  std::uint64_t bytes() const { return table_page_bytes(page_size) * pages; }
  friend bool operator==(const GitsBaser&, const GitsBaser&) = default;
};
std::uint64_t encode_gits_baser(const GitsBaser& b);
GitsBaser decode_gits_baser(std::uint64_t value);

struct GicrVpropbaser41 {
  bool valid = false;                          ///< [63]
  std::uint8_t entry_words = 1;                ///< [61:59] + 1: entry size in 8-byte words, 1..8 (RO)
  std::uint8_t outer_cache = 0;                ///< [58:56]
  bool indirect = false;                       ///< [55]
  TablePageSize page_size = TablePageSize::K4; ///< [54:53]
  bool z = false;                              ///< [52]
  std::uint64_t pa = 0;                        ///< [51:12] byte address (4 KiB aligned)
  std::uint8_t shareability = 0;               ///< [11:10]
  std::uint8_t inner_cache = 0;                ///< [9:7]
  std::uint8_t pages = 1;                      ///< [6:0] + 1, 1..128
  std::uint64_t other = 0;                     ///< [62] (RES0) kept verbatim
  std::uint64_t bytes() const { return table_page_bytes(page_size) * pages; }
  friend bool operator==(const GicrVpropbaser41&, const GicrVpropbaser41&) = default;
};
std::uint64_t encode_gicr_vpropbaser41(const GicrVpropbaser41& v);
GicrVpropbaser41 decode_gicr_vpropbaser41(std::uint64_t value);

/// Linux GITS_BASER_* / GIC_BASER_* attribute values used by the host driver.
inline constexpr std::uint8_t kCacheRaWb = 3;            ///< GIC_BASER_RaWb
inline constexpr std::uint8_t kCacheRaWaWb = 7;          ///< GIC_BASER_RaWaWb
inline constexpr std::uint8_t kInnerShareable = 1;       ///< GIC_BASER_InnerShareable

/// How many vPEIDs a vPE table of this geometry covers (Linux allocate_vpe_l2_table's limit): a flat
/// table holds pages * page / entry entries; an indirect one has pages * page / 8 level-1 entries, each
/// naming one page of page / entry entries. `entry_bytes` must be > 0.
std::uint64_t vpe_table_capacity(bool indirect, std::uint64_t page_bytes, std::uint64_t pages, std::uint64_t entry_bytes);

}  // namespace ipilab::gic
