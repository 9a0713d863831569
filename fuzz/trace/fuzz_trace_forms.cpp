// Fuzzes the new text parsers: every cpumask rendering (hex words, CPU lists, empty, ARRAY[]
// bytes), perf script lines, [FAILED TO PARSE] fields, buffer prefixes, and the analysis on top
// (conventions, serving categories, per-buffer pairing, exports). Any input must be analysed or
// rejected with InputError — no crash, no other exception, no sanitizer report.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "common/error.h"
#include "trace/analysis.h"
#include "trace/cpumask.h"
#include "trace/export.h"
#include "trace/report.h"
#include "trace/text_reader.h"

namespace {
// Discards everything (exercises the observer calls without files).
struct NullObserver : ipilab::trace::AnalysisObserver {
  std::uint64_t n = 0;
  void on_ipi(const ipilab::trace::IpiRecord& r) override { n += r.callsite.size() + r.callback.size(); }
  void on_call(const ipilab::trace::CallRecord& r) override { n += r.func.size(); }
};
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::vector<std::uint32_t> cpus;
  (void)ipilab::trace::parse_cpumask_text(std::string_view(text).substr(0, 256), cpus);
  (void)ipilab::trace::decode_cpumask_bitmap(data, size, 8, size & 1, cpus);
  (void)ipilab::trace::decode_cpumask_bitmap(data, size, 4, size & 2, cpus);
  try {
    NullObserver obs;
    ipilab::trace::AnalysisOptions opt;
    opt.pair_limit_ns = 1 + size % 20'000'000;
    ipilab::trace::TraceAnalysis a(opt, std::nullopt, {}, {}, [&](std::string_view) { return &obs; });
    std::istringstream in(text);
    ipilab::trace::ReadInfo info;
    ipilab::trace::read_text_trace(in, "fuzz", a, &info);
    a.finish(info, "fuzz");
    (void)ipilab::trace::report_json(a, info, "fuzz").dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
    (void)ipilab::trace::report_text(a, info, "fuzz");
  } catch (const ipilab::InputError&) {
  }
  return 0;
}
