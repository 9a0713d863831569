// ipilab/gic/its_report.h — the report of an ITS script run (`ipilab gic its`): the text, one block
// per step (events, then the ITS / redistributor / vPE state), and the JSON with every step's full
// state (contract: docs/gic-its.md).
#pragma once

#include <iosfwd>

#include "gic/its_script.h"

namespace ipilab::gic {

/// The text report. `quiet`: the state only after the bring-up, the events after every step.
void write_its_text(const ItsScriptResult& res, bool quiet, std::ostream& out);
/// The JSON report (2-space indent, a newline at the end).
void write_its_json(const ItsScriptResult& res, std::ostream& out);

}  // namespace ipilab::gic
