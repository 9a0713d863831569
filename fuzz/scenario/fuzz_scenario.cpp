// libFuzzer target: the TOML readers users feed by hand — scenario files, cost profiles and host
// descriptions. Any bytes must give a parsed value or an InputError naming a place; never a crash.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "common/error.h"
#include "cost/profile.h"
#include "scenario/scenario.h"
#include "topology/host_toml.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    (void)ipilab::scenario::parse_scenario(text, "fuzz.toml");
  } catch (const ipilab::InputError&) {
  }
  try {
    (void)ipilab::cost::Profile::parse(text, "fuzz.toml");
  } catch (const ipilab::InputError&) {
  }
  try {
    (void)ipilab::topology::load_host_text(text, "fuzz.toml");
  } catch (const ipilab::InputError&) {
  }
  return 0;
}
