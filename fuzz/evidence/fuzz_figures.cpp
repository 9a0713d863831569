// libFuzzer target: the validation file reader (`ipilab validate FILE`, `calibrate --figures`). Any
// bytes must give figures or an InputError naming a place; never a crash.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "common/error.h"
#include "evidence/validate.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    (void)ipilab::evidence::parse_figures(text, "fuzz.toml");
  } catch (const ipilab::InputError&) {
  }
  return 0;
}
