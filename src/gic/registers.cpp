#include "gic/registers.h"

#include <fmt/format.h>

#include "common/error.h"
#include "gic/bits.h"

namespace ipilab::gic {

std::uint64_t bits::checked_put(std::string_view reg, std::string_view name, std::uint64_t value, unsigned hi,
                                unsigned lo) {
  if (!fits(value, hi, lo))
    throw InputError(fmt::format("{}.{}", reg, name), fmt::format("{:#x} does not fit in [{}:{}]", value, hi, lo));
  return put(value, hi, lo);
}

namespace {

constexpr std::uint64_t kGitsTyperModelled =
    bits::mask(0, 0) | bits::mask(1, 1) | bits::mask(19, 19) | bits::mask(37, 37) | bits::mask(39, 39) |
    bits::mask(40, 40) | bits::mask(42, 41) | bits::mask(43, 43);
constexpr std::uint64_t kGicrTyperModelled =
    bits::mask(4, 0) | bits::mask(7, 7) | bits::mask(23, 8) | bits::mask(26, 24) | bits::mask(63, 32);
constexpr std::uint64_t kCbaserModelled =
    bits::mask(63, 63) | bits::mask(61, 59) | bits::mask(55, 53) | bits::mask(51, 12) | bits::mask(11, 10) | bits::mask(7, 0);
constexpr std::uint64_t kQueuePtrModelled = bits::mask(19, 5) | bits::mask(0, 0);
constexpr std::uint64_t kVpendbaserModelled = bits::mask(63, 58) | bits::mask(15, 0);

std::uint64_t other_bits(std::string_view reg, std::uint64_t other, std::uint64_t modelled) {
  if ((other & modelled) != 0)
    throw InputError(fmt::format("{}.other", reg),
                     fmt::format("{:#x} overlaps modelled fields (mask {:#x})", other, other & modelled));
  return other;
}

}  // namespace

std::uint64_t encode_gits_typer(const GitsTyper& t) {
  return other_bits("GITS_TYPER", t.other, kGitsTyperModelled) | bits::put(t.physical, 0, 0) |
         bits::put(t.vlpis, 1, 1) | bits::put(t.pta, 19, 19) | bits::put(t.vmovp, 37, 37) |
         bits::put(t.vsgi, 39, 39) | bits::put(t.vmapp, 40, 40) | bits::checked_put("GITS_TYPER", "SVPET", t.svpet, 42, 41) |
         bits::put(t.nid, 43, 43);
}

GitsTyper decode_gits_typer(std::uint64_t v) {
  GitsTyper t;
  t.physical = bits::bit(v, 0);
  t.vlpis = bits::bit(v, 1);
  t.pta = bits::bit(v, 19);
  t.vmovp = bits::bit(v, 37);
  t.vsgi = bits::bit(v, 39);
  t.vmapp = bits::bit(v, 40);
  t.svpet = static_cast<std::uint8_t>(bits::get(v, 42, 41));
  t.nid = bits::bit(v, 43);
  t.other = v & ~kGitsTyperModelled;
  return t;
}

std::uint64_t encode_gicr_typer(const GicrTyper& t) {
  return other_bits("GICR_TYPER", t.other, kGicrTyperModelled) | bits::put(t.plpis, 0, 0) |
         bits::put(t.vlpis, 1, 1) | bits::put(t.dirty, 2, 2) | bits::put(t.direct_lpi, 3, 3) |
         bits::put(t.last, 4, 4) | bits::put(t.rvpeid, 7, 7) | bits::put(t.processor_number, 23, 8) |
         bits::checked_put("GICR_TYPER", "CommonLPIAff", t.common_lpi_aff, 25, 24) | bits::put(t.vsgi, 26, 26) |
         bits::put(t.affinity, 63, 32);
}

GicrTyper decode_gicr_typer(std::uint64_t v) {
  GicrTyper t;
  t.plpis = bits::bit(v, 0);
  t.vlpis = bits::bit(v, 1);
  t.dirty = bits::bit(v, 2);
  t.direct_lpi = bits::bit(v, 3);
  t.last = bits::bit(v, 4);
  t.rvpeid = bits::bit(v, 7);
  t.processor_number = static_cast<std::uint16_t>(bits::get(v, 23, 8));
  t.common_lpi_aff = static_cast<std::uint8_t>(bits::get(v, 25, 24));
  t.vsgi = bits::bit(v, 26);
  t.affinity = static_cast<std::uint32_t>(bits::get(v, 63, 32));
  t.other = v & ~kGicrTyperModelled;
  return t;
}

std::uint32_t encode_gits_ctlr(const GitsCtlr& c) {
  constexpr std::uint32_t modelled = 0x1u | 0x2u | 0xF0u | 0x100u | 0x8000'0000u;
  if ((c.other & modelled) != 0)
    throw InputError("GITS_CTLR.other", fmt::format("{:#x} overlaps modelled fields", c.other));
  if (c.its_number > 15) throw InputError("GITS_CTLR.ITS_Number", fmt::format("{} does not fit in [7:4]", c.its_number));
  return c.other | (c.enabled ? 1u : 0u) | (c.imde ? 2u : 0u) | (std::uint32_t{c.its_number} << 4) |
         (c.umsi_irq ? 0x100u : 0u) | (c.quiescent ? 0x8000'0000u : 0u);
}

GitsCtlr decode_gits_ctlr(std::uint32_t v) {
  GitsCtlr c;
  c.enabled = (v & 1u) != 0;
  c.imde = (v & 2u) != 0;
  c.its_number = static_cast<std::uint8_t>((v >> 4) & 0xF);
  c.umsi_irq = (v & 0x100u) != 0;
  c.quiescent = (v & 0x8000'0000u) != 0;
  c.other = v & ~(0x1u | 0x2u | 0xF0u | 0x100u | 0x8000'0000u);
  return c;
}

std::uint64_t encode_cbaser(const Cbaser& c) {
  if ((c.pa & bits::mask(11, 0)) != 0 || !bits::fits(c.pa >> 12, 51, 12))
    throw InputError("GITS_CBASER.PA", fmt::format("{:#x} is not a 4 KiB aligned address below 2^52", c.pa));
  return other_bits("GITS_CBASER", c.other, kCbaserModelled) | bits::put(c.valid, 63, 63) |
         bits::checked_put("GITS_CBASER", "InnerCache", c.inner_cache, 61, 59) |
         bits::checked_put("GITS_CBASER", "OuterCache", c.outer_cache, 55, 53) | (c.pa & bits::mask(51, 12)) |
         bits::checked_put("GITS_CBASER", "Shareability", c.shareability, 11, 10) | bits::put(c.size, 7, 0);
}

Cbaser decode_cbaser(std::uint64_t v) {
  Cbaser c;
  c.valid = bits::bit(v, 63);
  c.inner_cache = static_cast<std::uint8_t>(bits::get(v, 61, 59));
  c.outer_cache = static_cast<std::uint8_t>(bits::get(v, 55, 53));
  c.pa = v & bits::mask(51, 12);
  c.shareability = static_cast<std::uint8_t>(bits::get(v, 11, 10));
  c.size = static_cast<std::uint8_t>(bits::get(v, 7, 0));
  c.other = v & ~kCbaserModelled;
  return c;
}

namespace {
std::uint64_t encode_queue_ptr(std::string_view reg, std::uint32_t offset, bool bit0, std::uint64_t other) {
  if ((offset & 0x1F) != 0 || offset > bits::mask(19, 5))
    throw InputError(fmt::format("{}.Offset", reg),
                     fmt::format("{:#x} is not a 32-byte aligned offset below 1 MiB", offset));
  return other_bits(reg, other, kQueuePtrModelled) | offset | bits::put(bit0, 0, 0);
}
}  // namespace

std::uint64_t encode_cwriter(const Cwriter& c) { return encode_queue_ptr("GITS_CWRITER", c.offset, c.retry, c.other); }
Cwriter decode_cwriter(std::uint64_t v) {
  return Cwriter{static_cast<std::uint32_t>(v & bits::mask(19, 5)), bits::bit(v, 0), v & ~kQueuePtrModelled};
}
std::uint64_t encode_creadr(const Creadr& c) { return encode_queue_ptr("GITS_CREADR", c.offset, c.stalled, c.other); }
Creadr decode_creadr(std::uint64_t v) {
  return Creadr{static_cast<std::uint32_t>(v & bits::mask(19, 5)), bits::bit(v, 0), v & ~kQueuePtrModelled};
}

std::uint64_t encode_vpendbaser(const Vpendbaser& v) {
  return other_bits("GICR_VPENDBASER", v.other, kVpendbaserModelled) | bits::put(v.valid, 63, 63) |
         bits::put(v.doorbell, 62, 62) | bits::put(v.pending_last, 61, 61) | bits::put(v.dirty, 60, 60) |
         bits::put(v.vgrp0_en, 59, 59) | bits::put(v.vgrp1_en, 58, 58) | bits::put(v.vpeid, 15, 0);
}

Vpendbaser decode_vpendbaser(std::uint64_t v) {
  Vpendbaser r;
  r.valid = bits::bit(v, 63);
  r.doorbell = bits::bit(v, 62);
  r.pending_last = bits::bit(v, 61);
  r.dirty = bits::bit(v, 60);
  r.vgrp0_en = bits::bit(v, 59);
  r.vgrp1_en = bits::bit(v, 58);
  r.vpeid = static_cast<std::uint16_t>(bits::get(v, 15, 0));
  r.other = v & ~kVpendbaserModelled;
  return r;
}

}  // namespace ipilab::gic
