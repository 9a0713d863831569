// libFuzzer target: sweep spec files (sweep/spec.h) and the point expansion behind them. Any bytes
// must give a spec or an InputError naming a place; never a crash, a hang or a leak.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "common/error.h"
#include "sweep/points.h"
#include "sweep/spec.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const ipilab::sweep::Spec s = ipilab::sweep::parse_spec(text, "fuzz.toml");
    if (s.point_count() <= 4096) {
      const auto points = ipilab::sweep::expand(s, 1);
      for (const auto& p : points) (void)ipilab::sweep::point_overrides(s, p);
    }
  } catch (const ipilab::InputError&) {
  }
  return 0;
}
