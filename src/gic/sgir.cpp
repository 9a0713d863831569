#include "gic/sgir.h"

#include <fmt/format.h>

#include "common/error.h"
#include "gic/bits.h"

namespace ipilab::gic {

std::uint64_t encode_sgir(const Sgir& sgir) {
  if (!bits::fits(sgir.vintid, 3, 0))
    throw InputError("GITS_SGIR.vINTID", fmt::format("{} is not an SGI number (0..15)", sgir.vintid));
  return bits::put(sgir.vintid, 3, 0) | bits::put(sgir.vpeid, 47, 32);
}

SgirDecode decode_sgir(std::uint64_t value) {
  SgirDecode out;
  out.sgir.vintid = static_cast<std::uint8_t>(bits::get(value, 3, 0));
  out.sgir.vpeid = static_cast<std::uint16_t>(bits::get(value, 47, 32));
  out.res0_set = value & kSgirRes0Mask;
  return out;
}

}  // namespace ipilab::gic
