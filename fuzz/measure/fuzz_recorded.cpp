// fuzz_recorded — arbitrary bytes as a recorded measurement (measure/recorded.h): what parses as JSON goes
// through report_from_json; a report that loads is printed (to_table, to_json) and written as a profile
// over a small base, and that profile must load again. Bad input may only ever be an InputError.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include <nlohmann/json.hpp>

#include "common/error.h"
#include "cost/profile.h"
#include "measure/profile_writer.h"
#include "measure/recorded.h"

namespace {

constexpr std::string_view kBase = R"([profile]
name = "fuzz-base"
clock_ghz = 2.0
clock_source = "fuzz"
[cost.vm.exit_entry]
value = 400
unit = "ns"
source = "ESTIMATE: fuzz"
)";

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const nlohmann::json j = nlohmann::json::parse(data, data + size, nullptr, false);
  if (j.is_discarded()) return 0;
  using namespace ipilab;
  measure::MeasureReport r;
  try {
    r = measure::report_from_json(j, "fuzz.json");
  } catch (const InputError&) {
    return 0;
  }
  (void)measure::to_table(r);
  (void)measure::to_json(r).dump();
  static const measure::BaseProfile base{"fuzz-base", "fuzz-base.toml", cost::Profile::parse(kBase, "fuzz-base.toml")};
  try {
    const std::string text = measure::to_profile_toml(r, base);
    (void)cost::Profile::parse(text, "written.toml");
  } catch (const InputError&) {
  }
  return 0;
}
