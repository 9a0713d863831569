// ipilab/gic/sgir.h — GITS_SGIR, the GICv4.1 direct vSGI generation register (pure codec).
//
// GITS_SGIR is a 64-bit write-only register in the ITS's third 64 KiB frame (ITS base + 0x20020,
// present when GITS_TYPER.VSGI = 1). Linux writes it with one writeq_relaxed of (vPEID << 32 | vINTID)
// from its_sgi_set_irqchip_state(); there is no command queue and no completion wait.
// Layout (Linux arm-gic-v3.h GITS_SGIR_VINTID / GITS_SGIR_VPEID): [3:0] vINTID (SGI 0..15), [47:32] vPEID,
// all other bits RES0.
#pragma once

#include <cstdint>

namespace ipilab::gic {

/// Offset of GITS_SGIR from the ITS base address (its_probe_one maps sgir_base = phys_base + 128 KiB; GITS_SGIR is + 0x20).
inline constexpr std::uint64_t kGitsSgirOffset = 0x20020;
/// Offset of GITS_SGIR inside the vSGI frame as Linux maps it (sgir_base = phys_base + 128 KiB).
inline constexpr std::uint64_t kGitsSgirFrameOffset = 0x20;
/// Bits of GITS_SGIR that are RES0: everything except [3:0] and [47:32].
inline constexpr std::uint64_t kSgirRes0Mask = ~(std::uint64_t{0xF} | (std::uint64_t{0xFFFF} << 32));

/// The two fields of a GITS_SGIR write.
struct Sgir {
  std::uint8_t vintid = 0;   ///< [3:0] virtual SGI number, 0..15
  std::uint16_t vpeid = 0;   ///< [47:32] target vPE
  friend bool operator==(const Sgir&, const Sgir&) = default;
};

/// Encodes a GITS_SGIR value. Throws InputError("GITS_SGIR.vINTID", ...) when vintid > 15.
std::uint64_t encode_sgir(const Sgir& sgir);

/// Result of decoding a GITS_SGIR value: the fields, and which RES0 bits were set (0 when none).
struct SgirDecode {
  Sgir sgir;
  std::uint64_t res0_set = 0;  ///< value & kSgirRes0Mask; hardware ignores these bits
  bool clean() const { return res0_set == 0; }
};

/// Decodes any 64-bit value (total: never throws). RES0 bits are reported, not dropped silently.
SgirDecode decode_sgir(std::uint64_t value);

}  // namespace ipilab::gic
