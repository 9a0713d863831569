// ipilab/cli/tool_print.h — how the one-shot model tools (hv call, hv send, kvm call) print: an
// option given as "list" prints the versions it accepts instead of running; a result prints as its
// JSON document with --json, else as its text.
#pragma once

#include <string>

#include <fmt/format.h>

namespace ipilab::cli {

/// When `value` is "list": prints list_text() and returns true.
template <class ListText>
bool printed_list(const std::string& value, ListText&& list_text) {
  if (value != "list") return false;
  fmt::print("{}", list_text());
  return true;
}

/// A tool's result (members `json` and `text`).
template <class Result>
void print_result(const Result& result, bool json) {
  if (json)
    fmt::print("{}\n", result.json.dump(2));
  else
    fmt::print("{}", result.text);
}

}  // namespace ipilab::cli
