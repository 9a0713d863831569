#include "gic/table_registers.h"

#include <fmt/format.h>

#include "common/enum_names.h"
#include "common/error.h"
#include "gic/bits.h"

namespace ipilab::gic {

std::uint64_t table_page_bytes(TablePageSize size) {
  switch (size) {
    case TablePageSize::K4: return 4096;
    case TablePageSize::K16: return 16384;
    case TablePageSize::K64: return 65536;
    case TablePageSize::Reserved: return 0;
  }
  return 0;
}

constexpr EnumName<TablePageSize> kTablePageNames[] = {
    {TablePageSize::K4, "4K"},
    {TablePageSize::K16, "16K"},
    {TablePageSize::K64, "64K"},
    {TablePageSize::Reserved, "reserved"},
};

std::string_view table_page_name(TablePageSize size) { return name_of(kTablePageNames, size); }
std::uint64_t encode_gits_baser(const GitsBaser& b) {
  constexpr std::string_view reg = "GITS_BASER";
  if (b.other != 0) throw InputError("GITS_BASER.other", "every bit of GITS_BASER<n> is a field");
  if (b.entry_bytes < 1 || b.entry_bytes > 32)
    throw InputError("GITS_BASER.Entry_Size", fmt::format("{} bytes is not in 1..32", b.entry_bytes));
  if (b.pages < 1 || b.pages > 256)
    throw InputError("GITS_BASER.Size", fmt::format("{} pages is not in 1..256", b.pages));
  std::uint64_t addr = 0;
  if (b.page_size == TablePageSize::K64) {
    if ((b.pa & 0xFFFF) != 0 || b.pa >= (std::uint64_t{1} << 52))
      throw InputError("GITS_BASER.Physical_Address", fmt::format("{:#x} is not a 64 KiB aligned address below 2^52", b.pa));
    addr = (b.pa & bits::mask(47, 16)) | (bits::get(b.pa, 51, 48) << 12);
  } else {
    // The field holds PA[47:12]; page alignment is the model's check (GicSystem), not the codec's.
    if ((b.pa & 0xFFF) != 0 || b.pa >= (std::uint64_t{1} << 48))
      throw InputError("GITS_BASER.Physical_Address",
                       fmt::format("{:#x} is not a 4 KiB aligned address below 2^48 (page size {})", b.pa,
                                   table_page_name(b.page_size)));
    addr = b.pa & bits::mask(47, 12);
  }
  return bits::put(b.valid, 63, 63) | bits::put(b.indirect, 62, 62) | bits::checked_put(reg, "InnerCache", b.inner_cache, 61, 59) |
         bits::checked_put(reg, "Type", b.type, 58, 56) | bits::checked_put(reg, "OuterCache", b.outer_cache, 55, 53) |
         bits::put(std::uint64_t{b.entry_bytes} - 1, 52, 48) | addr |
         bits::checked_put(reg, "Shareability", b.shareability, 11, 10) |
         bits::put(static_cast<std::uint64_t>(b.page_size), 9, 8) | bits::put(std::uint64_t{b.pages} - 1, 7, 0);
}

GitsBaser decode_gits_baser(std::uint64_t v) {
  GitsBaser b;
  b.valid = bits::bit(v, 63);
  b.indirect = bits::bit(v, 62);
  b.inner_cache = static_cast<std::uint8_t>(bits::get(v, 61, 59));
  b.type = static_cast<std::uint8_t>(bits::get(v, 58, 56));
  b.outer_cache = static_cast<std::uint8_t>(bits::get(v, 55, 53));
  b.entry_bytes = static_cast<std::uint8_t>(bits::get(v, 52, 48) + 1);
  b.page_size = static_cast<TablePageSize>(bits::get(v, 9, 8));
  if (b.page_size == TablePageSize::K64)
    b.pa = (v & bits::mask(47, 16)) | (bits::get(v, 15, 12) << 48);  // Linux GITS_BASER_ADDR_48_to_52
  else
    b.pa = v & bits::mask(47, 12);
  b.shareability = static_cast<std::uint8_t>(bits::get(v, 11, 10));
  b.pages = static_cast<std::uint16_t>(bits::get(v, 7, 0) + 1);
  return b;
}

std::uint64_t encode_gicr_vpropbaser41(const GicrVpropbaser41& v) {
  constexpr std::string_view reg = "GICR_VPROPBASER";
  if ((v.other & ~bits::mask(62, 62)) != 0)
    throw InputError("GICR_VPROPBASER.other", fmt::format("{:#x} overlaps modelled fields", v.other));
  if (v.entry_words < 1 || v.entry_words > 8)
    throw InputError("GICR_VPROPBASER.Entry_Size", fmt::format("{} words is not in 1..8", v.entry_words));
  if (v.pages < 1 || v.pages > 128)
    throw InputError("GICR_VPROPBASER.Size", fmt::format("{} pages is not in 1..128", v.pages));
  if ((v.pa & 0xFFF) != 0 || v.pa >= (std::uint64_t{1} << 52))
    throw InputError("GICR_VPROPBASER.Physical_Address", fmt::format("{:#x} is not a 4 KiB aligned address below 2^52", v.pa));
  return v.other | bits::put(v.valid, 63, 63) | bits::put(std::uint64_t{v.entry_words} - 1, 61, 59) |
         bits::checked_put(reg, "OuterCache", v.outer_cache, 58, 56) | bits::put(v.indirect, 55, 55) |
         bits::put(static_cast<std::uint64_t>(v.page_size), 54, 53) | bits::put(v.z, 52, 52) | v.pa |
         bits::checked_put(reg, "Shareability", v.shareability, 11, 10) | bits::checked_put(reg, "InnerCache", v.inner_cache, 9, 7) |
         bits::put(std::uint64_t{v.pages} - 1, 6, 0);
}

GicrVpropbaser41 decode_gicr_vpropbaser41(std::uint64_t v) {
  GicrVpropbaser41 r;
  r.valid = bits::bit(v, 63);
  r.entry_words = static_cast<std::uint8_t>(bits::get(v, 61, 59) + 1);
  r.outer_cache = static_cast<std::uint8_t>(bits::get(v, 58, 56));
  r.indirect = bits::bit(v, 55);
  r.page_size = static_cast<TablePageSize>(bits::get(v, 54, 53));
  r.z = bits::bit(v, 52);
  r.pa = v & bits::mask(51, 12);
  r.shareability = static_cast<std::uint8_t>(bits::get(v, 11, 10));
  r.inner_cache = static_cast<std::uint8_t>(bits::get(v, 9, 7));
  r.pages = static_cast<std::uint8_t>(bits::get(v, 6, 0) + 1);
  r.other = v & bits::mask(62, 62);
  return r;
}

std::uint64_t vpe_table_capacity(bool indirect, std::uint64_t page_bytes, std::uint64_t pages, std::uint64_t entry_bytes) {
  if (entry_bytes == 0 || page_bytes == 0) return 0;
  const std::uint64_t per_page = page_bytes / entry_bytes;
  if (!indirect) return pages * per_page;
  return pages * (page_bytes / 8) * per_page;
}

}  // namespace ipilab::gic
