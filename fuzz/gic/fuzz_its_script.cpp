// libFuzzer target: arbitrary text into the `ipilab gic its` script parser, and every script it accepts
// (small enough to run quickly) into the runner.
// Seed corpus: fuzz/corpus/its_script/ (the shipped examples of docs/examples/its/ and small scripts).
//
// Checks (trap on failure): the parser either returns a script or throws InputError whose place is
// "fuzz.its:LINE" with LINE inside the input; a parsed script runs without throwing, gives one result
// per step plus the bring-up, and CREADR / CWRITER stay inside each ITS's queue.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/error.h"
#include "gic/its_script.h"

using namespace ipilab::gic;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  ItsScript script;
  try {
    script = parse_its_script(text, "fuzz.its");
  } catch (const ipilab::InputError& e) {
    const std::string& place = e.place();
    if (place.rfind("fuzz.its:", 0) != 0) __builtin_trap();
    const long line = std::stol(place.substr(9));
    const long lines = 1 + static_cast<long>(std::count(text.begin(), text.end(), '\n'));
    if (line < 1 || line > lines) __builtin_trap();
    return 0;
  }
  if (script.steps.size() > 64 || script.system.sockets * script.system.cpus_per_socket > 64) return 0;
  const ItsScriptResult r = run_its_script(script);
  if (r.steps.size() != script.steps.size() + 1) __builtin_trap();
  for (const StepResult& s : r.steps)
    for (const ItsView& v : s.state.its) {
      const std::uint64_t queue = ((v.cbaser & 0xFF) + 1) * 4096;
      if ((v.creadr & 0xFFFE0) >= queue && v.creadr != 0) __builtin_trap();
      (void)v.cwriter;  // CWRITER may be written out of range: the queue is then invalid, not an error
    }
  return 0;
}
