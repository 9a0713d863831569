// ipilab/scenario/sample_hypercall.h — the "sample hypercall" section of a variant's report: the
// first send of the run shown exactly (workload.h SampleHypercall), as a self-contained piece of the
// text report and of the JSON contract (docs/json.md, "sample_hypercall").
//
// Text (empty when the variant has no sample): a `sample` line naming the send, the `ipilab hv send`
// command that reproduces it, then `ipilab hv send`'s lines for it from `call` on (each hypercall's
// control word decoded, RDX/R8 or the input QWORDs with their TLFS meaning, the host's answer, the
// guest's judgement of RAX, the fallback, the oracle), indented under the label.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "workload/workload.h"

namespace ipilab::scenario {

/// The section for one variant; `indent` starts every line (the label column follows it).
std::string format_sample_hypercall(const workload::RunResult& r, const std::string& indent);

/// The JSON value of "sample_hypercall": the SampleHypercall's object, or null.
nlohmann::ordered_json sample_hypercall_json(const workload::RunResult& r);

}  // namespace ipilab::scenario
