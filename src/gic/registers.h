// ipilab/gic/registers.h — the ITS and redistributor registers the vSGI path reads (pure codecs).
//
// Bit positions: Linux include/linux/irqchip/arm-gic-v3.h (GITS_TYPER_*, GICR_TYPER_*, GITS_CBASER_*,
// GICR_VPENDBASER_*) and the Arm IHI 0069H.b register descriptions. Each decode keeps the bits it does not model in `other`, so encode(decode(v)) == v
// for every 64-bit v. Encoders throw InputError("<REG>.<field>", reason) for a field that does not fit.
#pragma once

#include <cstdint>

namespace ipilab::gic {

/// An affinity value as in GICR_TYPER[63:32] / MPIDR: Aff3 in [31:24], Aff2 [23:16], Aff1 [15:8], Aff0 [7:0].
constexpr std::uint32_t make_affinity(std::uint8_t aff3, std::uint8_t aff2, std::uint8_t aff1, std::uint8_t aff0) {
  return (std::uint32_t{aff3} << 24) | (std::uint32_t{aff2} << 16) | (std::uint32_t{aff1} << 8) | aff0;
}

/// GITS_TYPER (ITS control frame + 0x8), the bits the v4/v4.1 paths use (arm-gic-v3.h GITS_TYPER_*).
struct GitsTyper {
  bool physical = true;      ///< [0]  physical LPIs
  bool vlpis = false;        ///< [1]  "Virtual": GICv4 vLPIs; Linux is_v4(its)
  bool pta = false;          ///< [19] RDbase is a PA (1) or a processor number (0)
  bool vmovp = false;        ///< [37] one VMOVP to one ITS is enough
  bool vsgi = false;         ///< [39] GITS_SGIR frame present (direct vSGI injection)
  bool vmapp = false;        ///< [40] v4.1 VMAPP form; Linux is_v4_1(its)
  std::uint8_t svpet = 0;    ///< [42:41] vPE-table sharing scope, 0 = not shared (read as a CommonLPIAff value)
  bool nid = false;          ///< [43] individual-doorbell indicator (Linux ignores it)
  std::uint64_t other = 0;   ///< every other bit (ID_bits, Devbits, HCC, CIL, ...) kept verbatim
  friend bool operator==(const GitsTyper&, const GitsTyper&) = default;
};
std::uint64_t encode_gits_typer(const GitsTyper& t);
GitsTyper decode_gits_typer(std::uint64_t value);

/// GICR_TYPER (RD_base + 0x8), the bits the v4.1 paths use (arm-gic-v3.h GICR_TYPER_*).
struct GicrTyper {
  bool plpis = true;                 ///< [0]  physical LPIs
  bool vlpis = false;                ///< [1]  virtual LPIs
  bool dirty = false;                ///< [2]  GICR_VPENDBASER.Dirty supported
  bool direct_lpi = false;           ///< [3]  DirectLPI
  bool last = false;                 ///< [4]  last redistributor in its region
  bool rvpeid = false;               ///< [7]  v4.1 RD: VPENDBASER holds a vPEID; Linux has_rvpeid
  std::uint16_t processor_number = 0;///< [23:8]
  std::uint8_t common_lpi_aff = 0;   ///< [25:24] CommonLPIAff: 0 all RDs, 1 Aff3, 2 Aff3.Aff2, 3 Aff3.Aff2.Aff1
  bool vsgi = false;                 ///< [26] RD supports vSGIs
  std::uint32_t affinity = 0;        ///< [63:32] Aff3.Aff2.Aff1.Aff0 (make_affinity)
  std::uint64_t other = 0;           ///< bits [6:5], [31:27] kept verbatim
  friend bool operator==(const GicrTyper&, const GicrTyper&) = default;
};
std::uint64_t encode_gicr_typer(const GicrTyper& t);
GicrTyper decode_gicr_typer(std::uint64_t value);

/// GITS_CTLR (ITS control frame + 0x0), 32 bits (Arm IHI 0069H.b, GITS_CTLR register description).
struct GitsCtlr {
  bool enabled = false;          ///< [0]  the ITS translates and processes its command queue
  bool imde = false;             ///< [1]  ImDe, GICv4 only (Linux its_probe_one sets it on a v4 ITS; not modelled further)
  std::uint8_t its_number = 0;   ///< [7:4] GICv4 ITSList number for VMOVP (GITS_TYPER.VMOVP = 0)
  bool umsi_irq = false;         ///< [8]  unmapped-MSI reporting interrupt (not modelled)
  bool quiescent = true;         ///< [31] RO: no ITS operation in progress (reset 1)
  std::uint32_t other = 0;       ///< RES0 bits kept verbatim
  friend bool operator==(const GitsCtlr&, const GitsCtlr&) = default;
};
std::uint32_t encode_gits_ctlr(const GitsCtlr& c);
GitsCtlr decode_gits_ctlr(std::uint32_t value);

/// GITS_CBASER (ITS + 0x80): the command queue's memory (IHI 0069H.b §5.2).
struct Cbaser {
  bool valid = false;              ///< [63]
  std::uint8_t inner_cache = 0;    ///< [61:59]
  std::uint8_t outer_cache = 0;    ///< [55:53]
  std::uint64_t pa = 0;            ///< [51:12] physical address (4 KiB aligned; Linux uses 64 KiB)
  std::uint8_t shareability = 0;   ///< [11:10]
  std::uint8_t size = 0;           ///< [7:0] number of 4 KiB pages - 1 (Linux: 15, a 64 KiB queue)
  std::uint64_t other = 0;         ///< RES0 bits [62], [58:56], [52], [9:8] kept verbatim
  std::uint64_t size_bytes() const { return (std::uint64_t{size} + 1) * 4096; }
  friend bool operator==(const Cbaser&, const Cbaser&) = default;
};
std::uint64_t encode_cbaser(const Cbaser& c);
Cbaser decode_cbaser(std::uint64_t value);

/// GITS_CWRITER (ITS + 0x88): [19:5] Offset (a byte offset, 32-byte aligned), [0] Retry.
struct Cwriter {
  std::uint32_t offset = 0;  ///< bytes from the queue base; bits [19:5] of the register
  bool retry = false;        ///< [0] restart a stalled queue
  std::uint64_t other = 0;
  friend bool operator==(const Cwriter&, const Cwriter&) = default;
};
std::uint64_t encode_cwriter(const Cwriter& c);
Cwriter decode_cwriter(std::uint64_t value);

/// GITS_CREADR (ITS + 0x90): [19:5] Offset, [0] Stalled.
struct Creadr {
  std::uint32_t offset = 0;  ///< bytes from the queue base; bits [19:5]
  bool stalled = false;      ///< [0] the ITS stopped on a command error
  std::uint64_t other = 0;
  friend bool operator==(const Creadr&, const Creadr&) = default;
};
std::uint64_t encode_creadr(const Creadr& c);
Creadr decode_creadr(std::uint64_t value);

/// GICR_VPENDBASER, v4.1 form (VLPI frame + 0x78): residency of a vPE on this RD (arm-gic-v3.h GICR_VPENDBASER_4_1_*).
struct Vpendbaser {
  bool valid = false;         ///< [63] a vPE is resident
  bool doorbell = false;      ///< [62] DB: request the default doorbell while descheduled
  bool pending_last = false;  ///< [61]
  bool dirty = false;         ///< [60]
  bool vgrp0_en = false;      ///< [59]
  bool vgrp1_en = false;      ///< [58]
  std::uint16_t vpeid = 0;    ///< [15:0]
  std::uint64_t other = 0;
  friend bool operator==(const Vpendbaser&, const Vpendbaser&) = default;
};
std::uint64_t encode_vpendbaser(const Vpendbaser& v);
Vpendbaser decode_vpendbaser(std::uint64_t value);

/// GITS_MPIDR (ITS + 0x18, v4.1): the ITS's affinity, [31:24] Aff3, [23:16] Aff2, [15:8] Aff1; [7:0] RES0.
/// Returned in the same 32-bit layout as GICR_TYPER.Affinity, so Linux can compare them.
inline constexpr std::uint32_t gits_mpidr_affinity(std::uint64_t value) {
  return static_cast<std::uint32_t>(value) & 0xFFFFFF00u;
}

}  // namespace ipilab::gic
