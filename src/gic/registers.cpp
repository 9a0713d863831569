#include "gic/registers.h"

#include <type_traits>
#include <variant>

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

// A register's modelled fields as one table (name as the GIC specification, IHI 0069, spells it; bits
// [hi:lo]; the struct member): the encoder, the decoder and the mask of modelled bits all read it.
template <class R>
struct RegField {
  std::string_view name;
  unsigned hi, lo;
  std::variant<bool R::*, std::uint8_t R::*, std::uint16_t R::*, std::uint32_t R::*> member;
};

template <class R, std::size_t N>
constexpr std::uint64_t modelled_mask(const RegField<R> (&fields)[N]) {
  std::uint64_t m = 0;
  for (const auto& f : fields) m |= bits::mask(f.hi, f.lo);
  return m;
}

/// Every field of `r` put in place; InputError("<reg>.<name>") for a value that does not fit.
template <class R, std::size_t N>
std::uint64_t encode_fields(std::string_view reg, const R& r, const RegField<R> (&fields)[N]) {
  std::uint64_t v = 0;
  for (const auto& f : fields)
    v |= std::visit([&](auto m) { return bits::checked_put(reg, f.name, std::uint64_t{r.*m}, f.hi, f.lo); }, f.member);
  return v;
}

template <class R, std::size_t N>
void decode_fields(std::uint64_t v, R& r, const RegField<R> (&fields)[N]) {
  for (const auto& f : fields)
    std::visit([&](auto m) { r.*m = static_cast<std::remove_reference_t<decltype(r.*m)>>(bits::get(v, f.hi, f.lo)); },
               f.member);
}

constexpr RegField<GitsTyper> kGitsTyper[] = {
    {"Physical", 0, 0, &GitsTyper::physical}, {"Virtual", 1, 1, &GitsTyper::vlpis},
    {"PTA", 19, 19, &GitsTyper::pta},         {"VMOVP", 37, 37, &GitsTyper::vmovp},
    {"VSGI", 39, 39, &GitsTyper::vsgi},       {"VMAPP", 40, 40, &GitsTyper::vmapp},
    {"SVPET", 42, 41, &GitsTyper::svpet},     {"nID", 43, 43, &GitsTyper::nid}};
constexpr RegField<GicrTyper> kGicrTyper[] = {{"PLPIS", 0, 0, &GicrTyper::plpis},
                                              {"VLPIS", 1, 1, &GicrTyper::vlpis},
                                              {"Dirty", 2, 2, &GicrTyper::dirty},
                                              {"DirectLPI", 3, 3, &GicrTyper::direct_lpi},
                                              {"Last", 4, 4, &GicrTyper::last},
                                              {"RVPEID", 7, 7, &GicrTyper::rvpeid},
                                              {"Processor_Number", 23, 8, &GicrTyper::processor_number},
                                              {"CommonLPIAff", 25, 24, &GicrTyper::common_lpi_aff},
                                              {"VSGI", 26, 26, &GicrTyper::vsgi},
                                              {"Affinity", 63, 32, &GicrTyper::affinity}};
// Physical_Address [51:12] is not shifted down: Cbaser::pa is the address itself.
constexpr RegField<Cbaser> kCbaser[] = {{"Valid", 63, 63, &Cbaser::valid},
                                        {"InnerCache", 61, 59, &Cbaser::inner_cache},
                                        {"OuterCache", 55, 53, &Cbaser::outer_cache},
                                        {"Shareability", 11, 10, &Cbaser::shareability},
                                        {"Size", 7, 0, &Cbaser::size}};
constexpr RegField<Vpendbaser> kVpendbaser[] = {{"Valid", 63, 63, &Vpendbaser::valid},
                                                {"Doorbell", 62, 62, &Vpendbaser::doorbell},
                                                {"PendingLast", 61, 61, &Vpendbaser::pending_last},
                                                {"Dirty", 60, 60, &Vpendbaser::dirty},
                                                {"VGrp0En", 59, 59, &Vpendbaser::vgrp0_en},
                                                {"VGrp1En", 58, 58, &Vpendbaser::vgrp1_en},
                                                {"vPEID", 15, 0, &Vpendbaser::vpeid}};

constexpr std::uint64_t kCbaserModelled = modelled_mask(kCbaser) | bits::mask(51, 12);
constexpr std::uint64_t kQueuePtrModelled = bits::mask(19, 5) | bits::mask(0, 0);

std::uint64_t other_bits(std::string_view reg, std::uint64_t other, std::uint64_t modelled) {
  if ((other & modelled) != 0)
    throw InputError(fmt::format("{}.other", reg),
                     fmt::format("{:#x} overlaps modelled fields (mask {:#x})", other, other & modelled));
  return other;
}

/// A register of fields `fields` and verbatim `other` bits, both ways.
template <class R, std::size_t N>
std::uint64_t encode_register(std::string_view reg, const R& r, const RegField<R> (&fields)[N]) {
  return other_bits(reg, r.other, modelled_mask(fields)) | encode_fields(reg, r, fields);
}
template <class R, std::size_t N>
R decode_register(std::uint64_t v, const RegField<R> (&fields)[N]) {
  R r;
  decode_fields(v, r, fields);
  r.other = v & ~modelled_mask(fields);
  return r;
}

}  // namespace

std::uint64_t encode_gits_typer(const GitsTyper& t) { return encode_register("GITS_TYPER", t, kGitsTyper); }
GitsTyper decode_gits_typer(std::uint64_t v) { return decode_register(v, kGitsTyper); }

std::uint64_t encode_gicr_typer(const GicrTyper& t) { return encode_register("GICR_TYPER", t, kGicrTyper); }
GicrTyper decode_gicr_typer(std::uint64_t v) { return decode_register(v, kGicrTyper); }

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
  return other_bits("GITS_CBASER", c.other, kCbaserModelled) | encode_fields("GITS_CBASER", c, kCbaser) |
         (c.pa & bits::mask(51, 12));
}

Cbaser decode_cbaser(std::uint64_t v) {
  Cbaser c;
  decode_fields(v, c, kCbaser);
  c.pa = v & bits::mask(51, 12);
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

std::uint64_t encode_vpendbaser(const Vpendbaser& v) { return encode_register("GICR_VPENDBASER", v, kVpendbaser); }
Vpendbaser decode_vpendbaser(std::uint64_t v) { return decode_register(v, kVpendbaser); }

}  // namespace ipilab::gic
