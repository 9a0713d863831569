// Test helper: the message a validation file's parse refuses with ("" when it parses).
#pragma once

#include <string>

#include "common/error.h"
#include "evidence/validate.h"

namespace ipilab::evidence::testing {

inline std::string parse_refusal(const std::string& text) {
  try {
    parse_figures(text, "f.toml");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace ipilab::evidence::testing
