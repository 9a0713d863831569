// Fuzzes the text trace reader and the pairing behind `ipilab trace`: any input must either be
// analysed or rejected with InputError — no crash, no other exception, no sanitizer report.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>

#include "common/error.h"
#include "trace/analysis.h"
#include "trace/reader.h"
#include "trace/report.h"
#include "trace/text_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    (void)ipilab::trace::detect_format(std::string_view(text).substr(0, 4096), "fuzz");
  } catch (const ipilab::InputError&) {
  }
  try {
    ipilab::trace::IpiAnalysis a;
    std::istringstream in(text);
    ipilab::trace::read_text_trace(in, "fuzz", a);
    a.finish(ipilab::trace::ReadInfo{}, "fuzz");
    (void)ipilab::trace::report_json(a, ipilab::trace::ReadInfo{}, "fuzz").dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
    (void)ipilab::trace::report_text(a, ipilab::trace::ReadInfo{}, "fuzz");
  } catch (const ipilab::InputError&) {
  }
  return 0;
}
