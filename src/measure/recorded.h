// ipilab/measure/recorded.h — a measurement read back from the JSON `ipilab measure --json` wrote
// (report.h to_json), so what is built on a measurement — the cost profile (profile_writer.h), the
// this-host model and its comparison (this_host.h) — runs on a recorded one exactly as on a live one:
// `ipilab measure --from FILE.json` (no KVM needed), and the tests' fixtures.
//
// What comes back: the host's provenance, the warnings, the method (rounds, samples, halt gap,
// reference, max_bias), and per case its status and reason, timing rule and batch size, iterations,
// rounds and budget cuts, the statistics (median, p99, mean, min, max, stddev, sample count), the
// interval of the median, the ratio to the reference, the histogram, the exit and IRQ counts; the c2c
// matrix with every pair's samples. What the JSON does not hold is absent, never invented: the raw
// samples of each round (CaseReport::result.rounds stays empty, rounds_timed says how many there were;
// nothing can be re-bootstrapped), the pilot round, p10/p90 (left 0 and never shown for a recorded case).
//
// Mechanism and case names are read with their old aliases too (x2apic, hv-fast, hv-ex), so recordings
// made before the names followed the simulator's still load.
//
// Errors: InputError with place "FILE: json.path" (e.g. "m.json: kvm.cases[3].cycles.median") and the
// reason (missing, wrong type, an unknown case name, status or timing rule, a histogram bin that is not
// [lo, hi, count]), or "FILE" for text that is not JSON or a JSON that holds neither kvm nor c2c.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "measure/report.h"

namespace ipilab::measure {

/// The report `j` (to_json's shape) describes; `file` names it in messages.
MeasureReport report_from_json(const nlohmann::json& j, const std::string& file);

/// Reads and parses FILE (InputError naming it when it is missing, not JSON, or malformed).
MeasureReport load_recorded(const std::string& path);

}  // namespace ipilab::measure
