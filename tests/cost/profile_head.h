// The smallest valid [profile] table, for tests that append cost entries to it. It is 4 lines, so
// an error in an appended entry names line 5 or later.
#pragma once

#include <string>

#include "cost/profile.h"

namespace ipilab::cost::testdata {

inline constexpr const char* kProfileHead = "[profile]\nname = \"t\"\nclock_ghz = 2.0\nclock_source = \"test\"\n";

/// kProfileHead + body, parsed as the file p.toml.
inline Profile parse_after_head(const std::string& body) { return Profile::parse(std::string(kProfileHead) + body, "p.toml"); }

}  // namespace ipilab::cost::testdata
